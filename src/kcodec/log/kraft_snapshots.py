"""KRaft snapshot file names (Kafka's Snapshots): ``<20-digit end offset>-<10-digit epoch>.checkpoint`` in a
``__cluster_metadata`` partition directory; the snapshot holds the image of every record below its end
offset. ``bootstrap.checkpoint`` (BootstrapDirectory) is the one named otherwise."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kcodec.log.fs import FileSystem

__all__ = [
    "KRAFT_SNAPSHOT_SUFFIX",
    "KRAFT_BOOTSTRAP_SNAPSHOT",
    "SnapshotFile",
    "parse_kraft_snapshot_name",
    "list_snapshots",
]

KRAFT_SNAPSHOT_SUFFIX = ".checkpoint"  # Kafka's Snapshots.SUFFIX
KRAFT_BOOTSTRAP_SNAPSHOT = "bootstrap.checkpoint"  # Kafka's BootstrapDirectory.BINARY_BOOTSTRAP_FILENAME
_NAME = re.compile(r"([0-9]{20})-([0-9]{10})\.checkpoint", re.ASCII)  # [0-9], not \d: ASCII digits only


def parse_kraft_snapshot_name(name: str) -> tuple[int, int] | None:
    """(end offset, epoch) of a snapshot file name, as Kafka's Snapshots.parse reads it; None for another name."""
    m = _NAME.fullmatch(name)
    return (int(m.group(1)), int(m.group(2))) if m else None


@dataclass(frozen=True)
class SnapshotFile:
    end_offset: int  # the snapshot holds the image of every record below this offset
    epoch: int
    path: str
    size: int


def list_snapshots(fs: FileSystem, directory: str) -> list[SnapshotFile]:
    """The KRaft snapshots of a partition directory, oldest first; partial (``.checkpoint.part``) and deleted
    (``.checkpoint.deleted``) ones are not listed."""
    out = []
    for e in fs.list(directory):
        parsed = None if e.is_dir else parse_kraft_snapshot_name(fs.name(e.path))
        if parsed is not None:
            out.append(SnapshotFile(parsed[0], parsed[1], str(e.path), e.size))
    return sorted(out, key=lambda s: (s.end_offset, s.epoch))
