"""Kafka 0.7 partitions (``<topic>-<n>`` directories of ``%020d.kafka`` segments) read by the
``kafka-segments`` source, one row per message a consumer sees (the inner messages of compressed sets).

``offset`` is the message's logical offset after translation: messages numbered from 0 in log order, as
``kcodec convert --from 0.7`` numbers them, so a 0.7 table and its migrated partition join on ``offset``.
0.7's own offsets, byte positions, come as two extra columns that only a 0.7 read has: ``byteOffset``
(where the message's entry starts, ``kcodec dump``'s ``offset``) and ``nextByteOffset`` (the position a
consumer fetches next, what ZooKeeper stored). Numbering needs the messages of every earlier entry and
0.7 has no index, so a partition is one split, read from its first segment by
:class:`kcodec.log.kafka07.Kafka07Partition` (the one 0.7 reader); partitions run in parallel.

Options about offsets, timestamps, transactions, views or Schema Registry values mean nothing for 0.7 and
are refused at ``load()`` in one line, as is a stream. Damage follows ``onCorrupt``: ``fail`` raises
naming the segment and byte position; ``skip`` reports it and reads on at the next segment (a 0.7 entry
after damage cannot be trusted). The last segment's torn tail is dropped, as 0.7's recovery drops it; a
torn tail in an earlier segment, or segments that do not follow each other, is damage.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from kcodec.errors import KcodecError, TruncatedError
from kcodec.log.kafka07 import Kafka07Partition
from kcodec.records.kafka07 import Kafka07Reader
from kcodec.records.source import open_input
from kcodec.runtime.compression import DEFAULT_MAX_DECOMPRESSED_SIZE
from kcodec.spark.arrow import arrow_schema
from kcodec.spark.options import RANGE_OPTIONS, OptionError, ReadOptions
from kcodec.spark.planning import Split
from kcodec.spark.read import CorruptSegmentError, Reporter

__all__ = ["refuse_for_kafka07", "Kafka07Split", "read_kafka07_split"]

#: Read options a 0.7 read refuses whenever they are given (``isolationLevel``, ``view``, ``startingOffsets``
#: and ``endingOffsets`` only for values other than reading everything).
_REFUSED = (
    *(n for n in RANGE_OPTIONS if n not in ("startingOffsets", "endingOffsets")),
    "startingOffsetsByTimestampStrategy",
    "subscribe",
    "subscribePattern",
    "assign",
    "latest",
    "sizes",
    "sizeSample",
    "txnIndex",
    "valueFormat",
    "keyFormat",
    "schemas",
    "subject",
    "messageName",
    "maxRecordsPerPartition",
)


def refuse_for_kafka07(options: dict, opts: ReadOptions) -> None:
    """One line naming the given options a 0.7 read cannot apply (``options``: lowercased names)."""
    bad = [n for n in _REFUSED if n.lower() in options]
    if opts.read_committed:
        bad.append("isolationLevel=read_committed")
    if opts.view != "records":
        bad.append(f"view={opts.view}")
    if str(options.get("startingoffsets", "earliest")).strip().lower() != "earliest":
        bad.append("startingOffsets")
    if str(options.get("endingoffsets", "latest")).strip().lower() != "latest":
        bad.append("endingOffsets")
    if bad:
        raise OptionError(
            f"kafka-segments: {opts.path} is a Kafka 0.7 log (byte offsets, no timestamps, keys or transactions): "
            f"{', '.join(bad)} cannot apply; it is read whole, one row per message"
        )


class Kafka07Split(InputPartition):
    """One 0.7 partition directory, read whole by one task."""

    def __init__(self, index: int, directory: str):
        super().__init__(index)
        self.index, self.directory = index, directory


def read_kafka07_split(split: Kafka07Split, opts: ReadOptions, columns) -> Iterator[pa.RecordBatch]:
    """The Arrow record batches of one 0.7 partition, holding only ``columns`` ((Column, nullable) pairs)."""
    log = Kafka07Partition(split.directory)
    topic = opts.topic or log.topic
    partition = opts.partition if opts.partition is not None else log.partition
    out = _Rows(columns, topic, partition)
    limit = DEFAULT_MAX_DECOMPRESSED_SIZE if opts.max_decompressed_size is None else opts.max_decompressed_size
    offset = 0  # logical, as kcodec convert --from 0.7 numbers the messages
    for i, seg in enumerate(log.segments):
        reporter = Reporter(Split(split.index, seg.path, topic, partition, seg.base_offset, 0, None), opts)
        try:
            with open_input(seg.path) as opened:
                reader = Kafka07Reader(
                    opened, base_offset=seg.base_offset, verify_crc=opts.verify_crc, max_decompressed_size=limit
                )
                for entry in reader:
                    for m in entry.deep():
                        out.add(entry.message, m, offset, seg.path)
                        offset += 1
                    if out.rows >= opts.max_rows:
                        yield out.flush()
            damage = _damage(log, i, reader.tail)
            if damage is not None:
                raise damage
        except KcodecError as exc:
            if opts.on_corrupt == "fail":
                raise CorruptSegmentError(
                    f"{seg.path}: {exc.message}", position=exc.position, field=exc.field
                ) from None
            reporter.skip(exc.position or 0, None, exc.kind, exc.message)
        finally:
            reporter.close()
    rb = out.flush()
    if rb is not None:
        yield rb


def _damage(log: Kafka07Partition, i: int, tail) -> KcodecError | None:
    """What does not hold together after segment ``i``: a torn tail before the last segment, or a next
    segment that does not start where this one ends. The last segment's torn tail is 0.7's recovery's."""
    seg = log.segments[i]
    if tail is not None:
        if i < len(log.segments) - 1:
            return TruncatedError(
                f"torn tail ({tail.reason}) in a segment that is not the last", position=tail.position
            )
        print(
            f"kcodec: kafka-segments: {seg.path}: dropped a torn tail of {tail.size} bytes at byte {tail.position} "
            f"({tail.reason}), as 0.7's recovery does",
            file=sys.stderr,
            flush=True,
        )
    if i + 1 < len(log.segments) and log.segments[i + 1].base_offset != seg.end_offset:
        nxt = log.segments[i + 1]
        return TruncatedError(
            f"the next segment {os.path.basename(nxt.path)} starts at byte offset {nxt.base_offset}, not where "
            f"this one ends ({seg.end_offset}): bytes are missing between them",
            position=seg.size,
        )
    return None


class _Rows:
    """Spark's rows for 0.7 messages: the record columns a 0.7 message has, null or -1 for the rest."""

    def __init__(self, columns, topic, partition):
        self.columns, self.schema = columns, arrow_schema(columns)
        self.topic, self.partition = topic, partition
        self.values: dict[str, list] = {c.name: [] for c, _ in columns}
        self.rows = 0
        self.base = 0  # logical offset of the current entry's first message

    def add(self, wrapper, message, offset: int, segment: str) -> None:
        if message.inner in (None, 0):
            self.base = offset
        row = {
            "key": None,
            "value": message.payload,
            "topic": self.topic,
            "partition": self.partition,
            "offset": offset,
            "timestamp": None,  # 0.7 had none
            "timestampType": -1,
            "headers": None,
            "magic": wrapper.magic,
            "baseOffset": self.base,
            "producerId": -1,
            "producerEpoch": -1,
            "baseSequence": -1,
            "isTransactional": False,
            "isControl": False,
            "partitionLeaderEpoch": -1,
            "compression": wrapper.compression,
            "batchPosition": wrapper.position,
            "segment": segment,
            "crcValid": wrapper.crc_valid and message.crc_valid,
            "byteOffset": message.offset,
            "nextByteOffset": message.next_offset,
        }
        for name, values in self.values.items():
            values.append(row.get(name))
        self.rows += 1

    def flush(self) -> pa.RecordBatch | None:
        if not self.rows:
            return None
        arrays = [pa.array(self.values[c.name], c.arrow) for c, _ in self.columns]
        self.values = {c.name: [] for c, _ in self.columns}
        self.rows = 0
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)
