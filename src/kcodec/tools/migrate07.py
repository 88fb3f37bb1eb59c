"""Migrating a Kafka 0.7 partition to logical offsets (``kcodec convert --from 0.7``).

0.7's offsets were byte positions; from 0.8 every message has a logical offset. A migration reads the
0.7 partition (its segments in byte-offset order, deep into compressed sets, the last segment's torn
tail dropped as 0.7's recovery drops it), numbers its messages from 0 and writes them as a v0, v1 or v2
partition directory (segments with their indexes). A compressed 0.7 set becomes one compressed batch
(its own codec unless one is chosen); consecutive plain messages share batches. 0.7 messages have no
key and no timestamp: keys are null, timestamps -1 (none).

The offset translation table says where each 0.7 entry went: one CSV row per entry, ``byte_offset``
(where the entry starts: a consumer's position is always such a boundary), ``offset`` (the logical
offset of its first message) and ``messages`` (how many it holds), and a last row for the log's end
(its byte offset, the next logical offset, 0). With 0.7 consumer positions (ZooKeeper's
``/consumers/<group>/offsets/<topic>/<broker>-<partition>`` values: the byte offset to fetch next), the
same table turns each into the logical offset to fetch next, written as ``__consumer_offsets`` commit
records into the coordinator's partition for the group.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import shutil
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kcodec.errors import EncodeError, KcodecError
from kcodec.internal_topics.commits import DEFAULT_OFFSETS_PARTITIONS, offset_commit_record, offsets_partition_for
from kcodec.log.kafka07 import Kafka07Partition, is_kafka07_partition_dir
from kcodec.log.names import parse_partition_dir
from kcodec.log.writer import SegmentWriter, write_atomically
from kcodec.records.encode import NewRecord, encode_batch
from kcodec.records.kafka07 import Kafka07Entry

__all__ = [
    "Commit",
    "PartitionPlan",
    "plan_log_dir",
    "migrate_kafka07_log_dir",
    "ConsumerPosition",
    "Migration",
    "TranslationTable",
    "migrate_kafka07",
    "read_consumer_positions",
    "translate_positions",
    "translation_table",
    "write_consumer_offsets",
]

TABLE_HEADER = "byte_offset,offset,messages"
DEFAULT_BATCH_RECORDS = 1000
_ZK_PATH = re.compile(r"/consumers/([^/]+)/offsets/([^/]+)/([0-9]+)-([0-9]+)")


@dataclass
class TranslationTable:
    """Entry starts (byte offsets, ascending) and the logical offset of each one's first message; the last
    pair is the log's end."""

    byte_offsets: list[int] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)

    def add(self, byte_offset: int, offset: int, count: int) -> None:
        self.byte_offsets.append(byte_offset)
        self.offsets.append(offset)
        self.counts.append(count)

    def logical(self, byte_offset: int) -> int:
        """The logical offset a 0.7 position (the byte offset to fetch next) stands for; KeyError when it is
        not where an entry starts or the log ends."""
        i = bisect.bisect_left(self.byte_offsets, byte_offset)
        if i == len(self.byte_offsets) or self.byte_offsets[i] != byte_offset:
            raise KeyError(byte_offset)
        return self.offsets[i]

    def csv_lines(self) -> Iterator[bytes]:
        yield (TABLE_HEADER + "\n").encode()
        for row in zip(self.byte_offsets, self.offsets, self.counts):
            yield ",".join(map(str, row)).encode() + b"\n"


@dataclass
class Migration:
    """What a migration read and wrote."""

    source: str
    output: str
    table_path: str
    magic: int
    entries: int = 0
    messages: int = 0
    batches: int = 0
    segments: int = 0
    input_bytes: int = 0
    dropped_tail_bytes: int = 0
    problems: list[str] = field(default_factory=list)
    table: TranslationTable = field(default_factory=TranslationTable)

    def as_dict(self) -> dict:
        return {
            "input": self.source,
            "output": self.output,
            "translationTable": self.table_path,
            "magic": self.magic,
            "entries": self.entries,
            "records": self.messages,
            "batches": self.batches,
            "segments": self.segments,
            "inputBytes": self.input_bytes,
            "droppedTailBytes": self.dropped_tail_bytes,
            "problems": self.problems,
        }


def migrate_kafka07(
    source: str | Path,
    output: str | Path,
    table_path: str | Path,
    *,
    magic: int = 2,
    compression: str | None = None,
    compression_level: int | None = None,
    batch_records: int = DEFAULT_BATCH_RECORDS,
    segment_bytes: int | None = None,
) -> Migration:
    """Write the 0.7 partition ``source`` as a partition directory ``output`` with logical offsets, and the
    translation table to ``table_path``. ``compression`` None keeps each 0.7 set's codec (plain messages
    stay plain). Damage in the 0.7 log stops the migration with nothing left behind (KcodecError)."""
    log = Kafka07Partition(source)
    if not log.segments:
        raise EncodeError(f"{source}: no Kafka 0.7 segments (<20-digit byte offset>.kafka)")
    report = Migration(str(source), str(output), str(table_path), magic)
    report.input_bytes = sum(s.size for s in log.segments)
    options = {} if segment_bytes is None else {"segment_bytes": segment_bytes}
    next_offset = 0
    end_byte = log.start_offset
    with SegmentWriter(output, base_offset=0, keep_completed_on_error=False, **options) as writer:
        for codec, group in _batches(log.iter_entries(), batch_records):
            records: list[NewRecord] = []
            for entry in group:
                messages = entry.deep()
                report.table.add(entry.message.offset, next_offset + len(records), len(messages))
                records += [NewRecord(value=m.payload) for m in messages]
                end_byte = entry.message.next_offset
                report.entries += 1
            target = codec if compression is None else compression
            writer.append(
                encode_batch(
                    records,
                    magic=magic,
                    compression=target,
                    compression_level=compression_level,
                    base_offset=next_offset,
                )
            )
            next_offset += len(records)
            report.messages += len(records)
            report.batches += len(records) if magic < 2 and target == "none" else 1  # v0/v1: an entry per message
    report.segments = len(writer.completed)  # closing sealed the last one
    report.table.add(end_byte, next_offset, 0)
    report.problems = list(log.problems)
    if log.tail is not None:
        seg, tail = log.tail
        report.dropped_tail_bytes = tail.size
        report.problems.append(
            f"{Path(seg.path).name}: dropped a torn tail of {tail.size} bytes at byte {tail.position} ({tail.reason}), "
            "as 0.7's recovery does"
        )
    write_atomically(Path(table_path), report.table.csv_lines())
    return report


@dataclass(frozen=True)
class PartitionPlan:
    """One 0.7 partition of a log directory and the partition it becomes."""

    source: Path
    source_topic: str
    source_partition: int
    topic: str
    partition: int

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"


def plan_log_dir(log_dir: str | Path, mapping: dict[str, tuple[str, int]]) -> list[PartitionPlan]:
    """Every 0.7 partition directory of ``log_dir`` (one broker's ``log.dir``), renamed by ``mapping``
    (``"clicks-0"`` -> ``("clicks", 7)``; unmapped partitions keep their names). A mapping naming a
    partition that is not there, or two partitions becoming one, is a KcodecError."""
    plans = []
    for entry in sorted(os.listdir(log_dir)):
        path = Path(log_dir) / entry
        if not is_kafka07_partition_dir(path):
            continue
        topic, partition = parse_partition_dir(path)
        new_topic, new_partition = mapping.get(entry, (topic, partition))
        plans.append(PartitionPlan(path, topic, partition, new_topic, new_partition))
    unknown = sorted(set(mapping) - {p.source.name for p in plans})
    if unknown:
        raise KcodecError(f"{log_dir}: no 0.7 partition {', '.join(unknown)} to map")
    names = [p.name for p in plans]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise KcodecError(f"two 0.7 partitions would both become {', '.join(twice)}")
    if not plans:
        raise KcodecError(f"{log_dir}: no Kafka 0.7 partition directories (<topic>-<partition> holding .kafka files)")
    return plans


def migrate_kafka07_log_dir(
    plans: list[PartitionPlan], output: str | Path, tables_dir: str | Path, **options
) -> list[Migration]:
    """Every planned partition migrated into the log directory ``output`` (``output/<topic>-<partition>``),
    the translation tables into ``tables_dir/<topic>-<partition>.csv``. Both are built beside their targets
    and renamed into place at the end: a failure leaves neither (``output`` and ``tables_dir`` must not
    exist, or be empty directories)."""
    output, tables_dir = Path(output), Path(tables_dir)
    tag = f".kcodec-migrating-{os.getpid()}"
    stage, tables_stage = output.with_name(output.name + tag), tables_dir.with_name(tables_dir.name + tag)
    try:
        tables_stage.mkdir(parents=True)
        out = [migrate_kafka07(p.source, stage / p.name, tables_stage / f"{p.name}.csv", **options) for p in plans]
        for done, target in ((tables_stage, tables_dir), (stage, output)):
            if target.is_dir():
                target.rmdir()  # empty (checked by the caller): replaced by the finished one
            os.rename(done, target)
    except BaseException:
        for leftover in (stage, tables_stage):
            shutil.rmtree(leftover, ignore_errors=True)
        raise
    for m, p in zip(out, plans):
        m.output, m.table_path = str(output / p.name), str(tables_dir / f"{p.name}.csv")
    return out


def _batches(entries: Iterable[tuple[object, Kafka07Entry]], batch_records: int) -> Iterator[tuple[str, list]]:
    """(codec, entries) per output batch: a compressed set alone, plain messages up to ``batch_records``."""
    pending: list[Kafka07Entry] = []
    for _, entry in entries:
        if entry.message.compression != "none":
            if pending:
                yield "none", pending
                pending = []
            yield entry.message.compression, [entry]
            continue
        pending.append(entry)
        if len(pending) >= batch_records:
            yield "none", pending
            pending = []
    if pending:
        yield "none", pending


@dataclass(frozen=True)
class ConsumerPosition:
    """One ZooKeeper consumer position of 0.7: the byte offset ``group`` fetches next from ``topic``'s
    partition ``partition`` on broker ``broker``."""

    group: str
    topic: str
    broker: int
    partition: int
    byte_offset: int


def read_consumer_positions(path: str | Path) -> list[ConsumerPosition]:
    """0.7 consumer positions exported from ZooKeeper: a JSON object ``{"/consumers/...": value}``, or text
    lines ``/consumers/<group>/offsets/<topic>/<broker>-<partition> VALUE`` (whitespace, ``=`` or ``,``
    between; ``#`` comments and blank lines ignored). A malformed line is a KcodecError naming it."""
    text = Path(path).read_text(encoding="utf-8")
    pairs: list[tuple[int, str, str]]
    if text.lstrip().startswith("{"):
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise KcodecError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
        pairs = [(0, str(k), str(v)) for k, v in loaded.items()]
    else:
        pairs = []
        for n, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if line:
                parts = re.split(r"\s*[=,\s]\s*", line, maxsplit=1)
                if len(parts) != 2:
                    raise KcodecError(f"{path}, line {n}: expected a ZooKeeper path and its value")
                pairs.append((n, parts[0], parts[1]))
    out = []
    for n, zk_path, value in pairs:
        where = f"{path}, line {n}" if n else f"{path}, {zk_path}"
        m = _ZK_PATH.fullmatch(zk_path)
        if not m:
            raise KcodecError(f"{where}: {zk_path!r} is not /consumers/<group>/offsets/<topic>/<broker>-<partition>")
        if not re.fullmatch(r"[0-9]+", value.strip()):
            raise KcodecError(f"{where}: the value {value!r} is not a byte offset")
        out.append(ConsumerPosition(m.group(1), m.group(2), int(m.group(3)), int(m.group(4)), int(value)))
    return out


def translation_table(source: str | Path) -> TranslationTable:
    """The table :func:`migrate_kafka07` writes for ``source``, without writing anything (to check consumer
    positions before a migration starts)."""
    log = Kafka07Partition(source)
    table, offset, end_byte = TranslationTable(), 0, log.start_offset
    for _, entry in log.iter_entries():
        n = len(entry.deep())
        table.add(entry.message.offset, offset, n)
        offset, end_byte = offset + n, entry.message.next_offset
    table.add(end_byte, offset, 0)
    return table


@dataclass(frozen=True)
class Commit:
    """A 0.7 consumer position translated: the group, its byte offset, the logical offset to fetch next, the
    ``__consumer_offsets`` partition of the group, and the record."""

    group: str
    byte_offset: int
    offset: int
    offsets_partition: int
    record: NewRecord


def translate_positions(
    positions: list[ConsumerPosition],
    table: TranslationTable,
    *,
    source_topic: str,
    source_partition: int,
    broker: int | None,
    topic: str,
    partition: int,
    commit_timestamp: int | None = None,
    offsets_partitions: int = DEFAULT_OFFSETS_PARTITIONS,
) -> list[Commit]:
    """The commits of the positions of ``source_topic``'s ``source_partition`` (on ``broker``, which may be
    left out when one broker's positions are there), translated by ``table`` into offsets of ``topic``'s
    ``partition``. A position that is not an entry boundary of the migrated log is a KcodecError."""
    mine = [p for p in positions if p.topic == source_topic and p.partition == source_partition]
    brokers = sorted({p.broker for p in mine})
    if broker is None and len(brokers) > 1:
        raise KcodecError(
            f"positions of {source_topic}-{source_partition} on brokers {brokers}: say which broker's log this is "
            "(--broker)"
        )
    now = int(time.time() * 1000) if commit_timestamp is None else commit_timestamp
    out = []
    for p in mine:
        if broker is not None and p.broker != broker:
            continue
        try:
            offset = table.logical(p.byte_offset)
        except KeyError:
            raise KcodecError(
                f"group {p.group}: position {p.byte_offset} of {source_topic}-{p.partition} (broker {p.broker}) is "
                f"not where a message of the migrated log starts (its byte offsets run "
                f"{table.byte_offsets[0]}..{table.byte_offsets[-1]})"
            ) from None
        record = offset_commit_record(p.group, topic, partition, offset, now)
        out.append(Commit(p.group, p.byte_offset, offset, offsets_partition_for(p.group, offsets_partitions), record))
    return out


def write_consumer_offsets(commits: list[Commit], offsets_dir: str | Path) -> None:
    """The commit records, one batch per ``offsets_dir/__consumer_offsets-<p>`` partition directory (continued
    after what it holds)."""
    by_partition: dict[int, list[NewRecord]] = {}
    for c in commits:
        by_partition.setdefault(c.offsets_partition, []).append(c.record)
    for coordinator, records in sorted(by_partition.items()):
        with SegmentWriter(Path(offsets_dir) / f"__consumer_offsets-{coordinator}", base_offset=None) as writer:
            writer.append(encode_batch(records, magic=2, base_offset=writer.base_offset))
