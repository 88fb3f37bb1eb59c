"""Partitions for ``kcodec compact`` tests, written with kcodec's own encoders: one segment per list of
entries (each segment sealed with its indexes), modification times set as asked, since the legacy
tombstone horizon and the compaction lag read them. The scenarios follow the cases of Kafka's
LogCleanerTest (facts about the cleaner, not its code)."""

from __future__ import annotations

import os
from pathlib import Path

from kcodec.log.partition import Partition
from kcodec.log.writer import SegmentWriter
from kcodec.records.encode import NewRecord, encode_batch, encode_control_batch
from kcodec.records.reader import read_batches
from kcodec.tools.compact import CleanerConfig

T0 = 1_700_000_000_000  # record timestamps start here (ms)
NOW = T0 + 3_600_000  # the cleaner's clock in most tests: an hour after the records
DAY = 86_400_000


def data(offset: int, pairs, *, ts: int = T0, pid: int = -1, epoch: int = -1, seq: int = -1, txn: bool = False,
         magic: int = 2, compression: str = "none") -> bytes:  # fmt: skip
    """One batch (v2) or message set (v0/v1) of ``pairs`` (key, value) at consecutive offsets from ``offset``."""
    records = [
        NewRecord(key=k, value=v, timestamp=(ts + i) if magic > 0 else -1, offset=offset + i)
        for i, (k, v) in enumerate(pairs)
    ]
    if magic < 2:
        return encode_batch(records, magic=magic, compression=compression, base_offset=offset)
    return encode_batch(
        records,
        base_offset=offset,
        compression=compression,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        transactional=txn,
    )


def marker(kind: str, offset: int, pid: int, epoch: int = 0, ts: int = T0) -> bytes:
    return encode_control_batch(kind, producer_id=pid, producer_epoch=epoch, offset=offset, timestamp=ts)


def write_partition(directory: Path, segments: list[list[bytes]], mtimes_ms: list[int] | None = None) -> Partition:
    """``directory`` (``<topic>-<n>``) with one segment per list of entries, each named by its first entry's
    base offset; the last one is the active segment."""
    directory.mkdir(parents=True, exist_ok=True)
    for entries in segments:
        first = next(iter(read_batches(entries[0]))).base_offset
        with SegmentWriter(directory, base_offset=first, segment_bytes=(1 << 31) - 1) as w:
            w.append(b"".join(entries))
    part = Partition(directory)
    if mtimes_ms is not None:
        for seg, mtime in zip(part.segments, mtimes_ms):
            for path in (seg.log, seg.index, seg.time_index, seg.txn_index):
                if os.path.exists(path):
                    os.utime(path, ns=(mtime * 1_000_000, mtime * 1_000_000))
    return part


def config(**settings) -> CleanerConfig:
    settings.setdefault("now_ms", NOW)
    return CleanerConfig(**settings)


def records(part_dir: Path) -> list[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of every data record of a partition, in log order."""
    return [
        (r.offset, r.key, r.value) for b in Partition(part_dir).iter_batches() if not b.is_control for r in b.records
    ]


def batches(part_dir: Path):
    return list(Partition(part_dir).iter_batches())
