"""A Kafka 0.7 partition on disk: ``<topic>-<partition>`` directories of ``%020d.kafka`` segments.

A 0.7 segment is named by the byte offset of its first byte in the partition's log, so a segment's
messages have offsets ``base + position``, and the next segment starts where the previous one ends
(0.7's ``maybeRoll`` names it by ``nextAppendOffset``). There is no index. A file is taken for 0.7's
by its name (the ``.kafka`` suffix) and then read with 0.7's framing; the magic byte alone never
decides, as 0.8's and 0.10's messages have magic 0 and 1 too.

0.7 recovers only the last segment: a torn tail there ends the log at the last whole message. A torn
tail in an earlier segment, or segments that do not follow each other, are reported as problems.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kcodec.records.source import open_input

from .names import KAFKA07_SUFFIX, PathLike, parse_partition_dir, parse_segment_name

if TYPE_CHECKING:  # the 0.7 reader loads when a partition is read: every local input's name is checked here
    from kcodec.records.kafka07 import Kafka07Entry, Kafka07Message, Kafka07Tail

__all__ = [
    "Kafka07Segment",
    "Kafka07Partition",
    "is_kafka07_segment",
    "is_kafka07_partition_dir",
    "kafka07_segments",
    "segment_gaps",
]


def is_kafka07_segment(path: PathLike) -> bool:
    """Whether ``path`` is named as a 0.7 segment (20 digits, ``.kafka``)."""
    try:
        return "." + parse_segment_name(path).kind == KAFKA07_SUFFIX
    except ValueError:
        return False


def is_kafka07_partition_dir(path: PathLike) -> bool:
    """Whether ``path`` is a directory holding 0.7 segments."""
    try:
        return os.path.isdir(path) and any(is_kafka07_segment(n) for n in os.listdir(path))
    except OSError:
        return False


@dataclass(frozen=True)
class Kafka07Segment:
    """One ``.kafka`` file: its path, base (byte) offset and size in bytes."""

    path: str
    base_offset: int
    size: int

    @property
    def end_offset(self) -> int:
        """The byte offset just after the file: the next segment's name."""
        return self.base_offset + self.size


def kafka07_segments(directory: PathLike) -> list[Kafka07Segment]:
    """The ``.kafka`` segments of a partition directory, by base offset."""
    out = []
    for name in os.listdir(directory):
        if is_kafka07_segment(name):
            path = os.path.join(os.fspath(directory), name)
            if os.path.isfile(path):
                out.append(Kafka07Segment(path, parse_segment_name(name).base_offset, os.path.getsize(path)))
    return sorted(out, key=lambda s: s.base_offset)


def segment_gaps(segments: list[Kafka07Segment]) -> list[str]:
    """Where a segment does not start at the byte offset where the one before it ends (0.7 names a new
    segment by the log's end, so a gap or an overlap means bytes were lost or a file was renamed)."""
    out = []
    for prev, seg in zip(segments, segments[1:]):
        if seg.base_offset != prev.end_offset:
            out.append(
                f"{os.path.basename(seg.path)} starts at byte offset {seg.base_offset}, but "
                f"{os.path.basename(prev.path)} ends at {prev.end_offset}"
            )
    return out


class Kafka07Partition:
    """A 0.7 partition directory: its segments read in order, with byte offsets. ``problems`` lists, after
    a full read, what does not hold together (gaps between segments, torn tails before the last one);
    ``tail`` is the last segment's torn tail, which 0.7's recovery drops."""

    def __init__(self, directory: PathLike, *, verify_crc: bool = True, deep: bool = True):
        self.directory = os.fspath(directory)
        try:
            self.topic, self.partition = parse_partition_dir(self.directory)
        except ValueError:
            self.topic, self.partition = os.path.basename(os.path.normpath(self.directory)), 0
        self.segments = kafka07_segments(self.directory)
        self.verify_crc, self.deep = verify_crc, deep
        self.problems: list[str] = []
        self.tail: tuple[Kafka07Segment, Kafka07Tail] | None = None

    @property
    def start_offset(self) -> int:
        return self.segments[0].base_offset if self.segments else 0

    def iter_entries(self) -> Iterator[tuple[Kafka07Segment, Kafka07Entry]]:
        """Every top-level entry, with its segment."""
        from kcodec.records.kafka07 import Kafka07Reader

        self.problems, self.tail = segment_gaps(self.segments), None
        for i, seg in enumerate(self.segments):
            with open_input(seg.path) as opened:  # closed even when the caller stops early
                reader = Kafka07Reader(opened, base_offset=seg.base_offset, verify_crc=self.verify_crc, deep=self.deep)
                for entry in reader:
                    yield seg, entry
            if reader.tail is not None:
                if i == len(self.segments) - 1:
                    self.tail = (seg, reader.tail)
                else:
                    self.problems.append(
                        f"{os.path.basename(seg.path)}: torn tail at byte {reader.tail.position} "
                        f"({reader.tail.reason}) in a segment that is not the last"
                    )

    def iter_messages(self, start_offset: int | None = None) -> Iterator[Kafka07Message]:
        """The messages a consumer sees (inner messages of compressed sets), from the entry at or after
        byte offset ``start_offset`` (a wrapper's start, as 0.7 fetches)."""
        for _, entry in self.iter_entries():
            if start_offset is not None and entry.message.offset < start_offset:
                continue
            yield from entry.deep()
