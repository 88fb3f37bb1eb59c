"""What the data source should return, computed with kcodec's plain Python reader."""

from __future__ import annotations

import functools
from pathlib import Path

from kcodec.log.partition import Partition, list_partitions
from kcodec.records.reader import read_batches

#: Column order of the records view; Spark rows are read back with the timestamp as microseconds.
COLUMNS = (
    "key",
    "value",
    "topic",
    "partition",
    "offset",
    "timestamp",
    "timestampType",
    "headers",
    "magic",
    "baseOffset",
    "producerId",
    "producerEpoch",
    "baseSequence",
    "isTransactional",
    "isControl",
    "partitionLeaderEpoch",
    "compression",
    "batchPosition",
    "segment",
    "crcValid",
    "lastOffset",
    "deleteHorizonMs",
    "crc",
    "storedTimestampMs",
)


def record_row(batch, r, topic, partition, segment) -> tuple:
    headers = tuple((k, v) for k, v in r.headers) or None
    return (
        r.key,
        r.value,
        topic,
        partition,
        r.offset,
        r.timestamp * 1000,
        int(r.timestamp_type),
        headers,
        batch.magic,
        batch.base_offset,
        batch.producer_id,
        batch.producer_epoch,
        batch.base_sequence,
        batch.is_transactional,
        batch.is_control,
        batch.partition_leader_epoch,
        batch.compression,
        batch.position,
        segment,
        batch.crc_valid,
        batch.last_offset,
        batch.delete_horizon_ms,
        batch.crc,
        stored_timestamp(batch, r, segment),
    )


def stored_timestamp(batch, r, segment: str) -> int | None:
    """storedTimestampMs: in a LogAppendTime v2 batch, the record's own timestamp, read by kafka-python from
    the batch's bytes with the timestamp-type bit cleared (its reader, too, gives LogAppendTime records the
    append time); else None."""
    if batch.magic != 2 or batch.timestamp_type != 1 or batch.is_control:
        return None
    return _stored(segment, batch.position, batch.size)[r.offset]


@functools.lru_cache(maxsize=64)
def _stored(segment: str, position: int, size: int) -> dict[int, int]:
    from kafka.record.default_records import DefaultRecordBatch

    with open(segment, "rb") as f:
        f.seek(position)
        raw = bytearray(f.read(size))
    raw[22] &= ~0x08  # attributes (int16 at byte 21): the timestamp-type bit
    return {rec.offset: rec.timestamp for rec in DefaultRecordBatch(bytes(raw))}


def partition_batches(path: Path):
    """(batch, segment path) of a partition directory, in order."""
    part = Partition(path)
    for seg in part.segments:
        for batch in read_batches(seg.log, strict=True):
            yield batch, str(seg.log)


def expected_rows(log_dir: Path, *, include_control: bool = False, keep=None) -> list[tuple]:
    """Rows of every partition under ``log_dir``; ``keep(batch, record, topic, partition)`` filters."""
    out = []
    for part in list_partitions(log_dir):
        for batch, seg in partition_batches(part.path):
            if batch.is_control and not include_control:
                continue
            for r in batch.records:
                if keep is None or keep(batch, r, part.topic, part.partition):
                    out.append(record_row(batch, r, part.topic, part.partition, seg))
    return out


def spark_rows(df) -> list[tuple]:
    """A records DataFrame collected as tuples in COLUMNS order (timestamp in microseconds)."""
    from pyspark.sql import functions as F

    cols = [F.unix_micros("timestamp").alias("timestamp") if c == "timestamp" else F.col(c) for c in COLUMNS]
    out = []
    for row in df.select(*cols).collect():
        values = list(row)
        h = values[7]
        values[7] = (
            None if h is None else tuple((x["key"], None if x["value"] is None else bytes(x["value"])) for x in h)
        )
        values[0] = None if values[0] is None else bytes(values[0])
        values[1] = None if values[1] is None else bytes(values[1])
        out.append(tuple(values))
    return out


def sort_key(row: tuple):
    return (row[2] or "", row[3] if row[3] is not None else -1, row[18], row[4])


def python_summary(root):
    """What ``kcodec pipeline``'s summary must say of the partitions under ``root``, from the plain Python reader."""
    from kcodec.spark.cost_table import size_as

    out = {}
    for part in list_partitions(root):
        batches = [b for b, _ in partition_batches(part.path)]
        data = [b for b in batches if not b.is_control]
        sizes = {}
        for b in data:
            for k, v in size_as(b).items():
                sizes[k] = sizes.get(k, 0) + v
        out[f"{part.topic}-{part.partition}"] = {
            "batches": len(batches),
            "records": sum(len(b.records) for b in data),
            "control_records": sum(len(b.records) for b in batches if b.is_control),
            "bytes": sum(b.size for b in batches),
            "data_bytes": sum(b.size for b in data),
            "compressed_bytes": sum(b.stored_records_size for b in batches),
            "uncompressed_bytes": sum(b.records_size for b in batches),
            "sizes": sizes,
        }
    return out
