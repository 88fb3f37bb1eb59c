"""Walk log entries in bytes, a memory-mapped file or a stream, and decode them.

Framing follows Kafka's ByteBufferLogInputStream / FileLogInputStream: an
entry is 12 + size bytes; a partial entry at the end of the input is a
truncated tail (lenient mode, the default, reports it and stops; strict mode
raises). A 1 GiB segment is never read into memory: files are mapped, and
each entry is copied out one at a time.

Damage: by default the first entry that does not decode raises its
:class:`~kcodec.errors.DecodeError` (after the good batches before it were
yielded). With ``skip_corrupt=True`` the reader instead scans forward for the
next position where a whole entry parses and its CRC holds
(:mod:`kcodec.records.resync`), records the bytes in between in
:attr:`BatchReader.skipped` with the reason (and calls ``on_skip``), and goes
on: nothing readable is lost.

Resources: sizes are checked against the bytes that remain before anything is
copied; decompressed output is capped (``max_decompressed_size``, by default
64 times the largest batch accepted, see :func:`default_max_decompressed_size`).
"""
from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO, Union

from kcodec.errors import BadLengthError, CrcMismatchError, DecodeError, TruncatedError, UnknownMagicError

from kcodec.runtime import compression
from kcodec.records.decode import HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MIN_LEGACY_RECORD_SIZE, decode_entry
from kcodec.records.model import Batch, Record
from kcodec.records.resync import SkippedRange, find_next_entry

Source = Union[bytes, bytearray, memoryview, str, os.PathLike, BinaryIO]
_I64_I32 = struct.Struct(">qi")
DEFAULT_MAX_BATCH_SIZE = 2**31 - 1  # no cap beyond the format's own; set lower to bound memory
KAFKA_MAX_MESSAGE_BYTES = 1048588  # Kafka's default message.max.bytes (1 MiB + 12): its largest batch
DECOMPRESSION_FACTOR = 64  # how much a legitimate batch may inflate, at most


def default_max_decompressed_size(max_batch_size: int = DEFAULT_MAX_BATCH_SIZE) -> int:
    """The decompressed-size cap for a reader accepting batches up to ``max_batch_size`` bytes:
    64 times that size (at least 1 MiB, at most 2 GiB). Without a batch size cap it is 64 times Kafka's
    default largest batch, ``compression.DEFAULT_MAX_DECOMPRESSED_SIZE`` (64 MiB)."""
    if max_batch_size >= DEFAULT_MAX_BATCH_SIZE:
        return compression.DEFAULT_MAX_DECOMPRESSED_SIZE
    return max(1 << 20, min(DECOMPRESSION_FACTOR * max_batch_size, 2**31 - 1))


@dataclass(frozen=True)
class PartialTail:
    """Bytes at the end of the input that do not hold a whole entry."""

    position: int
    size: int


class BatchReader:
    """Iterate the batches of one input. After iteration, :attr:`partial_tail`
    says whether the input ended inside an entry (lenient mode), and
    :attr:`skipped` lists the byte ranges passed over (``skip_corrupt``)."""

    def __init__(self, source: Source, *, verify_crc: bool = True, strict: bool = False,
                 max_decompressed_size: int | None = None,
                 max_batch_size: int = DEFAULT_MAX_BATCH_SIZE, start: int = 0, end: int | None = None,
                 skip_corrupt: bool = False, on_skip: Callable[[SkippedRange], None] | None = None):
        self.source = source
        self.verify_crc, self.strict = verify_crc, strict
        if max_decompressed_size is None:
            max_decompressed_size = default_max_decompressed_size(max_batch_size)
        self.max_decompressed_size, self.max_batch_size = max_decompressed_size, max_batch_size
        self.start, self.end = start, end
        self.skip_corrupt, self.on_skip = skip_corrupt, on_skip
        self.partial_tail: PartialTail | None = None
        self.skipped: list[SkippedRange] = []
        self.bytes_read = 0  # position after the last whole entry

    def __iter__(self) -> Iterator[Batch]:
        if self.skip_corrupt:
            yield from self._skipping()
            return
        for position, entry in self.entries():
            yield decode_entry(entry, position, verify_crc=self.verify_crc,
                               max_decompressed_size=self.max_decompressed_size)

    # ------------------------------------------------------------------ skip_corrupt

    def _skipping(self) -> Iterator[Batch]:
        src = self.source
        if isinstance(src, (bytes, bytearray, memoryview)):
            yield from self._skipping_buffer(memoryview(src), self.start)
        elif isinstance(src, (str, os.PathLike)):
            with open(src, "rb") as f:
                if os.fstat(f.fileno()).st_size == 0:
                    return
                with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                    view = memoryview(mm)
                    try:
                        yield from self._skipping_buffer(view, self.start)
                    finally:
                        view.release()
        elif hasattr(src, "read"):
            # resynchronising looks ahead: a stream is read whole (files are memory-mapped instead)
            yield from self._skipping_buffer(memoryview(_read_up_to(src, 2**62)), 0, shift=self.start)
        else:
            raise TypeError(f"cannot read records from {type(src).__name__}")

    def _skip(self, start: int, end: int, exc: DecodeError) -> None:
        skipped = SkippedRange.from_error(start, end, exc)
        self.skipped.append(skipped)
        if self.on_skip is not None:
            self.on_skip(skipped)

    def _skipping_buffer(self, buf: memoryview, pos: int, shift: int = 0) -> Iterator[Batch]:
        """Entries of ``buf`` from ``pos``; a damaged one is skipped up to the next valid entry.
        Positions reported are ``shift`` + positions in ``buf``."""
        end = len(buf) if self.end is None else min(self.end - shift, len(buf))
        limits = dict(max_batch_size=self.max_batch_size, max_decompressed_size=self.max_decompressed_size)
        while True:
            self.bytes_read = pos + shift
            available = end - pos
            if available < HEADER_SIZE_UP_TO_MAGIC:
                self._tail(pos + shift, available)
                return
            error: DecodeError | None = None
            found: int | None = None
            try:
                total = self._check_header(bytes(buf[pos:pos + HEADER_SIZE_UP_TO_MAGIC]), pos + shift, available)
            except DecodeError as exc:
                error = exc
            else:
                if total > available:
                    found = find_next_entry(buf, pos + 1, end, **limits)
                    if found is None:  # nothing readable after it: a partial tail, as without skipping
                        self._tail(pos + shift, available)
                        return
                    error = BadLengthError(
                        f"size says the entry takes {total} bytes, past the end of the input ({available} bytes "
                        f"left); a valid batch starts at byte {found + shift}", position=pos + shift + 8,
                        base_offset=_I64_I32.unpack_from(buf, pos)[0], field="size")
                else:
                    try:
                        batch = decode_entry(bytes(buf[pos:pos + total]), pos + shift, verify_crc=self.verify_crc,
                                             max_decompressed_size=self.max_decompressed_size)
                    except DecodeError as exc:
                        error = exc
                    else:
                        if not batch.crc_valid:
                            # a damaged size can swallow the entries after it: a valid entry starting inside a
                            # batch whose CRC fails says the batch's framing, not the entry, is wrong
                            found = find_next_entry(buf, pos + 1, end, before=pos + total, **limits)
                            if found is not None:
                                error = CrcMismatchError(
                                    f"Record is corrupt (stored crc = {batch.crc}, CRC of the bytes differs) and a "
                                    f"valid batch starts inside it, at byte {found + shift}",
                                    position=pos + shift + (17 if batch.magic == 2 else 12),
                                    base_offset=batch.base_offset, field="crc")
            if error is None:
                yield batch
                pos += total
                continue
            if found is None:
                found = find_next_entry(buf, pos + 1, end, **limits)
            self._skip(pos + shift, (end if found is None else found) + shift, error)
            if found is None:
                self.bytes_read = end + shift
                return
            pos = found

    def entries(self) -> Iterator[tuple[int, bytes]]:
        """(position, bytes) of every whole entry, without decoding it."""
        src = self.source
        if isinstance(src, (bytes, bytearray, memoryview)):
            yield from self._from_buffer(memoryview(src))
        elif isinstance(src, (str, os.PathLike)):
            with open(src, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size == 0:
                    return
                with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                    view = memoryview(mm)
                    try:
                        yield from self._from_buffer(view, _page_releaser(mm))
                    finally:
                        view.release()
        elif hasattr(src, "read"):
            yield from self._from_stream(src)
        else:
            raise TypeError(f"cannot read records from {type(src).__name__}")

    def _check_header(self, header: bytes, position: int, available: int) -> int:
        """Validate the 17-byte entry header; returns the whole entry size."""
        offset, size = _I64_I32.unpack_from(header, 0)
        if size < MIN_LEGACY_RECORD_SIZE:
            raise BadLengthError(f"Record size {size} is less than the minimum record overhead (14)",
                                 position=position + 8, base_offset=offset, field="size")
        if size > self.max_batch_size:
            raise BadLengthError(f"Record size {size} exceeds the largest allowable message size "
                                 f"({self.max_batch_size}).", position=position + 8, base_offset=offset, field="size")
        magic = header[16]
        if magic > 2:
            raise UnknownMagicError(f"Invalid magic found in record: {magic if magic < 128 else magic - 256}",
                                    position=position + 16, base_offset=offset, field="magic")
        return LOG_OVERHEAD + size

    def _tail(self, position: int, available: int) -> None:
        if available <= 0:
            return
        self.partial_tail = PartialTail(position, available)
        if self.strict:
            raise TruncatedError(f"input ends inside a log entry: {available} bytes at the end do not hold a "
                                 "whole batch", position=position)

    def _from_buffer(self, buf: memoryview, release=None) -> Iterator[tuple[int, bytes]]:
        pos = self.start
        end = len(buf) if self.end is None else min(self.end, len(buf))
        released = pos
        while True:
            if release is not None and pos - released >= _RELEASE_EVERY:
                released = release(pos)
            self.bytes_read = pos
            available = end - pos
            if available < HEADER_SIZE_UP_TO_MAGIC:
                self._tail(pos, available)
                return
            total = self._check_header(bytes(buf[pos:pos + HEADER_SIZE_UP_TO_MAGIC]), pos, available)
            if total > available:
                self._tail(pos, available)
                return
            yield pos, bytes(buf[pos:pos + total])
            pos += total

    def _from_stream(self, stream: BinaryIO) -> Iterator[tuple[int, bytes]]:
        pos = self.start
        while True:
            self.bytes_read = pos
            header = _read_up_to(stream, HEADER_SIZE_UP_TO_MAGIC)
            if len(header) < HEADER_SIZE_UP_TO_MAGIC:
                self._tail(pos, len(header))
                return
            total = self._check_header(header, pos, HEADER_SIZE_UP_TO_MAGIC)
            rest = _read_up_to(stream, total - HEADER_SIZE_UP_TO_MAGIC)
            if len(rest) < total - HEADER_SIZE_UP_TO_MAGIC:
                self._tail(pos, len(header) + len(rest))
                return
            yield pos, header + rest
            pos += total


_RELEASE_EVERY = 32 * 1024 * 1024


def _page_releaser(mm: mmap.mmap):
    """Drop the mapped pages already read from this process's memory (they
    stay in the page cache), so streaming a 1 GiB segment keeps RSS small."""
    if not hasattr(mm, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return None

    def release(upto: int) -> int:
        aligned = upto - upto % mmap.PAGESIZE
        if aligned > 0:
            try:
                mm.madvise(mmap.MADV_DONTNEED, 0, aligned)
            except OSError:
                pass  # only an optimisation
        return upto

    return release


def _read_up_to(stream: BinaryIO, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = stream.read(min(n - got, 1 << 20))  # bounded reads: a lying size costs no memory
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_batches(source: Source, **options) -> BatchReader:
    """Batches of bytes, a memoryview, a file path (memory-mapped) or a binary stream.

    Options: ``verify_crc`` (default True), ``strict`` (a partial tail is an
    error; default False, as Kafka's readers), ``max_decompressed_size``
    (default: :func:`default_max_decompressed_size` of ``max_batch_size``),
    ``max_batch_size``, ``start`` / ``end`` byte positions, ``skip_corrupt``
    (resynchronise after a damaged entry instead of raising; the reader's
    ``skipped`` lists what was passed over) and ``on_skip`` (called with each
    :class:`~kcodec.records.resync.SkippedRange` as it is found)."""
    return BatchReader(source, **options)


def read_records(source: Source, **options) -> Iterator[Record]:
    """Every record of every batch, in order."""
    for batch in read_batches(source, **options):
        yield from batch.records
