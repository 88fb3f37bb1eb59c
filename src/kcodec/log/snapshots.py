"""KRaft snapshots in a ``__cluster_metadata-0`` directory: files named ``<end offset, 20 digits>-<epoch,
10 digits>.checkpoint`` (Kafka's Snapshots / OffsetAndEpoch), each a sequence of record batches framed by
SnapshotHeader and SnapshotFooter control records. Partial snapshots (``.checkpoint.part``) and deleted
ones (``.checkpoint.deleted``) are not listed."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kcodec.log.fs import FileSystem

__all__ = ["KRAFT_SNAPSHOT_SUFFIX", "SnapshotFile", "parse_snapshot_name", "list_snapshots"]

KRAFT_SNAPSHOT_SUFFIX = ".checkpoint"  # Kafka's Snapshots.SUFFIX
_NAME = re.compile(r"([0-9]{20})-([0-9]{10})" + re.escape(KRAFT_SNAPSHOT_SUFFIX))


@dataclass(frozen=True)
class SnapshotFile:
    end_offset: int  # the offset after the last record the snapshot holds
    epoch: int
    path: str
    size: int


def parse_snapshot_name(name: str) -> tuple[int, int] | None:
    """(end offset, epoch) of a snapshot file name; None for other names."""
    m = _NAME.fullmatch(name)
    return None if m is None else (int(m.group(1)), int(m.group(2)))


def list_snapshots(fs: FileSystem, directory: str) -> list[SnapshotFile]:
    """The snapshots of a partition directory, by end offset."""
    out = []
    for e in fs.list(directory):
        parsed = None if e.is_dir else parse_snapshot_name(fs.name(e.path))
        if parsed is not None:
            out.append(SnapshotFile(parsed[0], parsed[1], str(e.path), e.size))
    return sorted(out, key=lambda s: (s.end_offset, s.epoch))
