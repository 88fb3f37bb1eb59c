"""Writing Kafka segments: a file replaced atomically, and a partition's
segments written with their index files, each made visible in one rename.

Typical use::

    with SegmentWriter("/tmp/out/orders-0", segment_bytes=1 << 20) as w:
        for entry in entries:
            w.append(entry)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from kcodec.errors import EncodeError
from kcodec.log.files import Segment
from kcodec.log.index import DEFAULT_INDEX_INTERVAL_BYTES, IndexBuilder, encode_txn_index
from kcodec.log.lock import OutputLock
from kcodec.log.names import (
    INDEX_SUFFIX,
    LOG_SUFFIX,
    TIME_INDEX_SUFFIX,
    TMP_SUFFIX,
    TXN_INDEX_SUFFIX,
    PathLike,
    parse_segment_name,
    segment_name,
)
from kcodec.log.partition import Partition
from kcodec.records.decode import decode_entry
from kcodec.records.model import Batch
from kcodec.records.reader import read_batches
from kcodec.records.transactions import AbortedTxn, TxnTracker

__all__ = ["DEFAULT_SEGMENT_BYTES", "write_atomically", "SegmentWriter", "fsync_dir", "remove_if_exists"]

DEFAULT_SEGMENT_BYTES = 1 << 30  # segment.bytes, 1 GiB

_INT32_MAX = (1 << 31) - 1
_INT64_MAX = (1 << 63) - 1


def fsync_dir(directory: Path) -> None:
    """Make a directory's entries (renames, new and removed files) durable."""
    if not hasattr(os, "O_DIRECTORY"):
        return  # Windows: directories cannot be opened for fsync
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_if_exists(path: Path) -> None:
    """Delete ``path``; one already gone is fine."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def write_atomically(
    path: PathLike, chunks: Iterable[bytes | bytearray | memoryview] | bytes | bytearray | memoryview
) -> None:
    """Write ``chunks`` to ``path`` so that ``path`` only ever holds the old
    content or all of the new: they go to ``path + ".tmp"``, which is fsynced,
    renamed over ``path``, and the directory fsynced. On error the temporary is
    removed and ``path`` is untouched. A second writer of the same ``path`` meanwhile
    fails at once with :class:`~kcodec.log.lock.OutputLockedError` (``path + ".lock"``)."""
    path = Path(path)
    tmp = path.with_name(path.name + TMP_SUFFIX)
    if isinstance(chunks, (bytes, bytearray, memoryview)):
        chunks = [chunks]
    with OutputLock.for_file(path):
        try:
            with open(tmp, "wb") as f:
                for chunk in chunks:
                    f.write(chunk)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            remove_if_exists(tmp)
            raise
        fsync_dir(path.parent)


def _remove_stale_temporaries(directory: Path) -> None:
    """Delete what a killed writer left: ``<segment file>.tmp`` files (Kafka deletes
    ``.cleaned`` and ``.swap`` leftovers when it opens a log). Called under the directory lock."""
    for p in directory.iterdir():
        if p.name.endswith(TMP_SUFFIX):
            try:
                parse_segment_name(p.name)
            except ValueError:
                continue
            remove_if_exists(p)


class _OpenSegment:
    """The segment being written: temporaries under ``<final name>.tmp``."""

    def __init__(self, directory: Path, base_offset: int, interval: int):
        self.base_offset = base_offset
        self.final = {
            s: directory / segment_name(base_offset, s)
            for s in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)
        }
        if self.final[LOG_SUFFIX].exists():
            raise FileExistsError(f"segment {self.final[LOG_SUFFIX]} already exists")
        self.tmp = {s: p.with_name(p.name + TMP_SUFFIX) for s, p in self.final.items()}
        self.files: dict[str, BinaryIO] = {}
        try:
            for s in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX):
                self.files[s] = open(self.tmp[s], "wb")
        except BaseException:
            self.discard()
            raise
        self.size = 0
        self.builder = IndexBuilder(
            base_offset, interval, self.files[INDEX_SUFFIX].write, self.files[TIME_INDEX_SUFFIX].write
        )

    def write(self, raw: bytes, batch: Batch, aborted: AbortedTxn | None) -> None:
        self.builder.add(batch.last_offset, batch.max_timestamp, len(raw))
        self.files[LOG_SUFFIX].write(raw)
        self.size += len(raw)
        if aborted is not None:
            if TXN_INDEX_SUFFIX not in self.files:
                self.files[TXN_INDEX_SUFFIX] = open(self.tmp[TXN_INDEX_SUFFIX], "wb")
            self.files[TXN_INDEX_SUFFIX].write(encode_txn_index([aborted]))

    def seal(self) -> Segment:
        """Finish the indexes, fsync, rename the indexes and then the log (the
        commit point: a visible .log means a complete segment), fsync the directory."""
        self.builder.finish()
        for f in self.files.values():
            f.flush()
            os.fsync(f.fileno())
            f.close()
        if TXN_INDEX_SUFFIX not in self.files:
            remove_if_exists(self.final[TXN_INDEX_SUFFIX])  # an orphan from an interrupted earlier run
        for s in (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, LOG_SUFFIX):
            if s in self.files:
                os.replace(self.tmp[s], self.final[s])
        fsync_dir(self.final[LOG_SUFFIX].parent)
        return Segment(self.base_offset, self.final[LOG_SUFFIX])

    def discard(self) -> None:
        for f in self.files.values():
            try:
                f.close()
            except OSError:
                pass
        for p in self.tmp.values():
            remove_if_exists(p)


class SegmentWriter:
    """Write already-encoded log entries into a partition directory as Kafka
    segments (``.log``, ``.index``, ``.timeindex``, and ``.txnindex`` when the
    segment holds ABORT markers of transactions), with indexes identical to
    :func:`build_indexes` / :func:`build_txn_index` of each finished segment.

    * ``base_offset`` names the first segment; later segments are named by the
      base offset of their first entry. Offsets in a partition only go up: a
      ``base_offset`` below the directory's next offset raises
      :class:`EncodeError`; None continues after the directory's last offset.
    * One writer per directory: the writer holds ``<directory>/.lock`` (see
      :mod:`kcodec.log.lock`) until closed; on opening it deletes ``.tmp``
      files a killed writer left.
    * A new segment starts when the next entry would take the current one past
      ``segment_bytes`` (a segment always takes at least one entry), or when
      the entry's last offset would not fit a relative offset.
    * Entries are checked before anything is written (whole entries, valid
      CRCs, offsets increasing from ``base_offset``); a rejected append
      (:class:`EncodeError` or a decode error) writes nothing.
    * Atomicity: a segment is written to ``<name>.tmp`` files, fsynced and
      renamed into place (indexes first, the ``.log`` last) when it is rolled
      or on :meth:`close`, then the directory is fsynced. As a context manager,
      an exception discards the temporaries of the unfinished segment and
      keeps the completed ones; so does :meth:`abort`. With
      ``keep_completed_on_error=False`` an exception removes the segments
      this writer completed too: the write is all or nothing.
    * Transactions are tracked across the writer's segments from its first
      entry (see :func:`build_txn_index` for the last stable offset)."""

    def __init__(
        self,
        directory: PathLike,
        *,
        base_offset: int | None = 0,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
        keep_completed_on_error: bool = True,
    ):
        if not 1 <= segment_bytes <= _INT32_MAX:
            raise ValueError(f"segment_bytes must be in [1, {_INT32_MAX}]")
        if index_interval_bytes < 0:
            raise ValueError("index_interval_bytes must be >= 0")
        if base_offset is not None and not 0 <= base_offset <= _INT64_MAX:
            raise ValueError("base_offset must be in [0, 2^63-1]")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = OutputLock.for_directory(self.directory).acquire()
        try:
            _remove_stale_temporaries(self.directory)
            base_offset = self._checked_base(base_offset)
        except BaseException:
            self._lock.release()
            raise
        self.keep_completed_on_error = keep_completed_on_error
        self.segment_bytes, self.index_interval_bytes = segment_bytes, index_interval_bytes
        self.base_offset = base_offset
        self.completed: list[Segment] = []  # segments renamed into place, in order
        self._next_offset = base_offset  # the lowest offset the next entry may start at
        self._current: _OpenSegment | None = None
        self._txns = TxnTracker({}, base_offset)
        self._closed = False
        self._next_base: int | None = None  # the name of the next segment, when roll() gave one

    def _checked_base(self, base_offset: int | None) -> int:
        """``base_offset``, or the directory's next offset for None; never below what it holds."""
        held = Partition(self.directory).next_offset()
        if base_offset is None:
            return held
        if base_offset < held:
            raise EncodeError(
                f"{self.directory} already holds offsets up to {held - 1}: a segment at base offset "
                f"{base_offset} would repeat them (offsets in a partition only go up)",
                base_offset=base_offset,
            )
        if (self.directory / segment_name(base_offset, LOG_SUFFIX)).exists():
            raise FileExistsError(f"segment {self.directory / segment_name(base_offset, LOG_SUFFIX)} already exists")
        return base_offset

    def __enter__(self) -> SegmentWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort(keep_completed=self.keep_completed_on_error)

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("SegmentWriter is closed")

    def _validate(self, data: bytes) -> list[tuple[bytes, Batch]]:
        entries: list[tuple[bytes, Batch]] = []
        next_offset = self._next_offset
        reader = read_batches(data, strict=True, verify_crc=True)
        first_ever = self._current is None and not self.completed
        for position, raw in reader.entries():
            # with the compiled kernel a v2 batch's records are lazy: decoding checks the CRC and walks every
            # record with the kernel's check-only walker (chk_record_v2), and builds no Record until one is read
            batch = decode_entry(raw, position, verify_crc=True)
            if batch.base_offset < next_offset:
                raise EncodeError(
                    f"offsets must increase: an entry starting at offset {batch.base_offset} "
                    f"cannot follow offset {next_offset - 1}",
                    position=position,
                    base_offset=batch.base_offset,
                )
            if not 0 <= batch.last_offset - batch.base_offset <= _INT32_MAX:
                raise EncodeError(
                    f"entry offsets [{batch.base_offset}, {batch.last_offset}] cannot be indexed",
                    position=position,
                    base_offset=batch.base_offset,
                )
            if first_ever and not entries and batch.last_offset - self.base_offset > _INT32_MAX:
                raise EncodeError(
                    f"the first entry's last offset {batch.last_offset} cannot be indexed in a "
                    f"segment with base offset {self.base_offset}",
                    position=position,
                    base_offset=batch.base_offset,
                )
            entries.append((raw, batch))
            next_offset = batch.last_offset + 1
        return entries

    def append(self, entries: bytes) -> None:
        """Append one or more whole log entries (v2 batches or v0/v1 messages),
        as bytes. Raises (before writing anything) TruncatedError for a partial
        entry, the reader's errors for a corrupt one, EncodeError for offsets
        that do not increase."""
        self._check_open()
        checked = self._validate(entries)
        try:
            for raw, batch in checked:
                cur = self._current
                if (
                    cur is not None
                    and cur.size > 0
                    and (cur.size + len(raw) > self.segment_bytes or batch.last_offset - cur.base_offset > _INT32_MAX)
                ):
                    self._roll()
                if self._current is None:
                    base = self.base_offset if not self.completed else batch.base_offset
                    if self._next_base is not None:
                        if self._next_base > batch.base_offset:
                            raise EncodeError(
                                f"a segment named by offset {self._next_base} cannot start with an entry at "
                                f"offset {batch.base_offset}",
                                base_offset=batch.base_offset,
                            )
                        base, self._next_base = self._next_base, None
                    self._current = _OpenSegment(self.directory, base, self.index_interval_bytes)
                self._current.write(raw, batch, self._txns.observe(batch))
                self._next_offset = batch.last_offset + 1
        except BaseException:
            self.abort(keep_completed=self.keep_completed_on_error)  # the unfinished segment may hold half an entry
            raise

    def roll(self, next_base_offset: int | None = None) -> None:
        """Seal the current segment now, so the next entry starts a new one, named by
        ``next_base_offset`` (a segment whose first batches compaction removed keeps its name:
        at most the next entry's base offset, never below this writer's next offset) or by the
        next entry's base offset."""
        self._check_open()
        if next_base_offset is not None and not self._next_offset <= next_base_offset <= _INT64_MAX:
            raise EncodeError(
                f"a segment at base offset {next_base_offset} cannot follow offset {self._next_offset - 1}",
                base_offset=next_base_offset,
            )
        if self._current is None and not self.completed:  # nothing written yet: the first segment's name
            if next_base_offset is not None:
                self.base_offset = self._next_offset = self._checked_base(next_base_offset)
            return
        self._roll()
        self._next_base = next_base_offset

    def _roll(self) -> None:
        cur, self._current = self._current, None
        if cur is None:  # no open segment: nothing to seal
            return
        try:
            self.completed.append(cur.seal())
        except BaseException:
            cur.discard()
            raise

    def close(self) -> None:
        """Seal the current segment (if it holds anything). Idempotent."""
        if self._closed:
            return
        try:
            if self._current is not None:
                self._roll()
        except BaseException:
            self.abort(keep_completed=self.keep_completed_on_error)
            raise
        self._closed = True
        self._lock.release()

    def abort(self, keep_completed: bool = True) -> None:
        """Discard the unfinished segment's temporaries; the completed segments stay,
        or with ``keep_completed=False`` are removed too (newest first, each ``.log``
        before its indexes, so what stays visible is whole)."""
        try:
            if self._current is not None:
                self._current.discard()
                self._current = None
            if not keep_completed:
                for seg in reversed(self.completed):
                    for path in (seg.log, seg.index, seg.time_index, seg.txn_index):
                        remove_if_exists(Path(path))
                self.completed = []
                fsync_dir(self.directory)
        finally:
            self._closed = True
            self._lock.release()
