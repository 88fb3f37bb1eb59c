"""Kafka's file names in a log directory, and the segments they name.

A partition directory ``<topic>-<partition>`` holds segments named by their
base offset written as exactly 20 ASCII digits (``00000000000000000042.log``),
with, per segment, an offset index (``.index``), a time index
(``.timeindex``) and, when the segment holds ABORT markers, a transaction
index (``.txnindex``); Kafka's ``LogFileUtils`` names them so. Any other
name is not a segment: a listing reports such names in
:attr:`SegmentListing.skipped` and never reads them.

Kafka tiered storage (KIP-405) copies inactive segments out with their
indexes; its reference layout (``LocalTieredStorage``'s
``RemoteTopicPartitionDirectory`` and ``RemoteLogSegmentFileset``) names a
partition directory ``<topic>-<partition>-<topic id>`` and a segment's files
``<base offset>-<segment id>.<suffix>``, ids being Kafka ``Uuid`` strings (22
URL-safe base64 characters). A segment uploaded again (after a failed or
retried copy) has a new segment id: the newest copy of a base offset is read
and the others are listed in :attr:`SegmentListing.skipped`.

Segments live on any filesystem of :mod:`kcodec.log.fs`: a local segment's
paths are :class:`~pathlib.Path` objects, a remote one's are full URIs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from kcodec.errors import KcodecError
from kcodec.log.commit import segment_sources
from kcodec.log.fs import Entry, FileSystem, LocalFS
from kcodec.log.names import (
    INDEX_SUFFIX,
    LOG_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    PathLike,
    parse_segment_name,
    parse_tiered_name,
    segment_name,
)
from kcodec.records.framing import HEADER_SIZE, entry_size
from kcodec.records.model import Batch
from kcodec.records.reader import BatchReader, read_batches

__all__ = [
    "FileSystem",
    "Segment",
    "SegmentListing",
    "BrokenLinkError",
    "list_segments",
]

# Kafka preallocates .index and .timeindex files to segment.index.bytes (10 MiB by default) and trims
# them when the segment rolls: a larger index file is not one Kafka's default config writes (a sparse
# or a foreign file), and is refused rather than read whole.
MAX_INDEX_FILE_BYTES = 10 * 1024 * 1024

# What a reader could take for a segment name: some digits, a dot, a suffix. Reported when not a real one.
_LOOKS_LIKE_SEGMENT = re.compile(r"\d+\..+")


def index_too_large(path: PathLike, max_bytes: int) -> KcodecError:
    return KcodecError(
        f"{os.fspath(path)} is larger than {max_bytes} bytes, more than an index file of Kafka's default "
        "segment.index.bytes holds: not read (pass max_bytes to read a larger one)"
    )


@dataclass(frozen=True)
class Segment:
    """One segment: its ``.log`` and the sibling index paths (which may not exist).

    ``base_offset`` is None only for a file read by explicit name that is not
    named as Kafka names segments (it has no index files). ``size`` and which
    index files exist are taken from the directory listing when the segment
    came from one, and asked of the filesystem otherwise."""

    base_offset: int | None
    log: Path | str  # a Path on the local filesystem, the full URI on others
    fs: FileSystem = field(default_factory=LocalFS, compare=False, repr=False)
    listed_size: int | None = field(default=None, compare=False, repr=False)
    listed_indexes: frozenset[str] | None = field(default=None, compare=False, repr=False)  # suffixes seen
    stem: str | None = None  # a tiered-storage copy's "<base offset>-<segment id>"; Kafka's name otherwise

    def _sibling(self, suffix: str) -> Path | str:
        if self.base_offset is None:
            raise ValueError(f"{self.log} is not named as a segment: it has no index files")
        name = self.stem + suffix if self.stem else segment_name(self.base_offset, suffix)
        if isinstance(self.log, Path):
            return self.log.with_name(name)
        return self.fs.join(self.fs.parent(self.log), name)

    @property
    def index(self) -> Path | str:
        return self._sibling(INDEX_SUFFIX)

    @property
    def time_index(self) -> Path | str:
        return self._sibling(TIME_INDEX_SUFFIX)

    @property
    def txn_index(self) -> Path | str:
        return self._sibling(TXN_INDEX_SUFFIX)

    @property
    def size(self) -> int:
        return self.listed_size if self.listed_size is not None else self.fs.size(str(self.log))

    def has(self, suffix: str) -> bool:
        """Whether the index file with ``suffix`` exists (as listed, when listed)."""
        if self.base_offset is None:
            return False
        if self.listed_indexes is not None:
            return suffix in self.listed_indexes
        return self.fs.exists(str(self._sibling(suffix)))

    def read_file(self, suffix: str, max_bytes: int = MAX_INDEX_FILE_BYTES) -> bytes:
        """The bytes of the sibling index file with ``suffix`` (OSError when missing; refused when larger than
        ``max_bytes``)."""
        path = str(self._sibling(suffix))
        if self.fs.size(path) > max_bytes:
            raise index_too_large(path, max_bytes)
        return self.fs.read_bytes(path)

    def batches(self, start: int = 0, end: int | None = None, **options) -> Iterator[Batch]:
        """Decoded batches of the log in ``[start, end)``, positions in the file;
        ``options`` are :func:`~kcodec.records.reader.read_batches`'. A local file is
        memory-mapped; a remote range is fetched with one read."""
        if self.fs.local:
            yield from read_batches(self.log, start=start, end=end, **options)
            return
        for batch in read_batches(self.fs.read_range(str(self.log), start, end), **options):
            batch.position += start
            yield batch

    def entries(self, start: int = 0, end: int | None = None, **options) -> Iterator[tuple[int, bytes]]:
        """(position in the file, bytes) of the whole log entries in ``[start, end)``, undecoded."""
        if self.fs.local:
            yield from read_batches(self.log, start=start, end=end, **options).entries()
            return
        for pos, raw in read_batches(self.fs.read_range(str(self.log), start, end), **options).entries():
            yield pos + start, raw

    @contextmanager
    def windowed(self, start: int = 0, end: int | None = None, **options) -> Iterator[BatchReader]:
        """A :func:`~kcodec.records.reader.read_batches` reader of the log in ``[start, end)`` that reads
        it in bounded windows: a local file with pread, a remote object with ranged reads (never whole)."""
        if self.fs.local:
            with read_batches(self.log, start=start, end=end, **options) as reader:
                yield reader
            return
        f = self.fs.open_ranged(str(self.log))
        try:
            with read_batches(f, start=start, end=end, **options) as reader:
                yield reader
        finally:
            f.close()

    def entry_at(self, position: int) -> bytes | None:
        """The whole entry starting at ``position`` (framing checked, CRC not),
        or None when none does. Remotely, a header's worth of bytes is fetched
        to learn the entry's size, then the rest of the entry if it is longer."""
        try:
            if self.fs.local:
                for _, raw in read_batches(self.log, start=position, verify_crc=False).entries():
                    return raw
                return None
            head = self.fs.read_range(str(self.log), position, position + HEADER_SIZE)
            size = entry_size(head)
            if size is None:
                return None
            data = head if size <= len(head) else self.fs.read_range(str(self.log), position, position + size)
            for _, raw in read_batches(data, end=size, verify_crc=False).entries():
                return raw
        except (KcodecError, OSError):
            return None
        return None


@dataclass(frozen=True)
class SegmentListing:
    """The segments of a directory in base-offset order, and the names that look
    like segment files but are not Kafka's, or are older tiered-storage copies
    of a base offset (reported, never read; :func:`skip_reason` says which)."""

    segments: list[Segment]
    skipped: list[str]


def list_segments(fs: FileSystem, directory: PathLike, entries: list[Entry] | None = None) -> SegmentListing:
    """The ``.log`` segments of ``directory`` on ``fs`` (from ``entries``, its
    listing, when the caller has it). Transient files (``.deleted``,
    ``.cleaned``, ``.swap``, ``.tmp``) and subdirectories are ignored; names
    such as ``123.log``, 21 digits or non-ASCII digits are listed in ``skipped``.
    Tiered-storage objects (``<offset>-<segment id>.log``) are segments too; of
    several copies of one base offset the newest (modification time, then
    name) is kept and the others are listed in ``skipped``. While a commit into
    the parent log directory is being published, the directory reads as that
    commit's new state (:mod:`kcodec.log.commit`)."""
    sources = segment_sources(fs, os.fspath(directory))
    if sources is None:
        return _list_directory(fs, directory, entries)
    segments: dict[int, Segment] = {}
    skipped: set[str] = set()
    for source in sources:
        try:
            listing = _list_directory(fs, source, None)
        except (FileNotFoundError, NotADirectoryError):
            continue  # not there (yet, or any more)
        for s in listing.segments:
            segments.setdefault(s.base_offset or 0, s)  # listed segments are named: base offsets are known
        skipped.update(listing.skipped)
    return SegmentListing([segments[base] for base in sorted(segments)], sorted(skipped))


class BrokenLinkError(KcodecError):
    """A segment's ``.log`` is a symbolic link that leads nowhere (dangling or looping)."""

    kind = "broken_link"


def _list_directory(fs: FileSystem, directory: PathLike, entries: list[Entry] | None) -> SegmentListing:
    if entries is None:
        entries = fs.list(str(directory))
    for e in entries:
        if e.broken and fs.name(e.path).endswith(LOG_SUFFIX):
            raise BrokenLinkError(
                f"{e.path}: a symbolic link that leads nowhere (dangling or looping): the segment cannot be read"
            )
    # other links that lead nowhere are no file: an index that is one is read as missing (rebuilt by a scan)
    entries = [e for e in entries if not e.is_dir and not e.broken]
    names = {fs.name(e.path) for e in entries}
    copies: dict[int, list[tuple[Entry, str]]] = {}  # base offset -> (entry, stem) of each .log
    skipped = []
    for e in entries:
        name = fs.name(e.path)
        tiered = parse_tiered_name(name)
        if tiered is not None:
            base, _, kind = tiered
        else:
            try:
                base, kind = parse_segment_name(name)
            except ValueError:
                if _LOOKS_LIKE_SEGMENT.fullmatch(name):
                    skipped.append(name)
                continue
        if kind != "log":  # not log.deleted / log.cleaned / log.swap / log.tmp
            continue
        copies.setdefault(base, []).append((e, name[: -len(LOG_SUFFIX)]))
    segments = []
    for base, found in copies.items():
        found.sort(key=lambda c: (c[0].mtime or 0.0, fs.name(c[0].path)))
        e, stem = found[-1]
        skipped += [fs.name(older.path) for older, _ in found[:-1]]
        present = frozenset(s for s in (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX) if stem + s in names)
        log = Path(directory) / fs.name(e.path) if fs.local else e.path
        tiered_stem = stem if parse_tiered_name(fs.name(e.path)) is not None else None
        segments.append(Segment(base, log, fs, e.size, present, tiered_stem))
    return SegmentListing(sorted(segments, key=lambda s: s.base_offset or 0), sorted(skipped))
