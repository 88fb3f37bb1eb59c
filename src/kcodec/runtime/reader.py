"""Walk log entries in bytes, a memory-mapped file or a stream, and decode them.

Framing follows Kafka's ByteBufferLogInputStream / FileLogInputStream: an
entry is 12 + size bytes; a partial entry at the end of the input is a
truncated tail (lenient mode, the default, reports it and stops; strict mode
raises). A 1 GiB segment is never read into memory: files are mapped, and
each entry is copied out one at a time.
"""
from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, Union

from kcodec.errors import BadLengthError, TruncatedError, UnknownMagicError

from . import codecs
from .decode import HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MIN_LEGACY_RECORD_SIZE, decode_entry
from .model import Batch, Record

Source = Union[bytes, bytearray, memoryview, str, os.PathLike, BinaryIO]
_I64_I32 = struct.Struct(">qi")
DEFAULT_MAX_BATCH_SIZE = 2**31 - 1  # no cap beyond the format's own; set lower to bound memory


@dataclass(frozen=True)
class PartialTail:
    """Bytes at the end of the input that do not hold a whole entry."""

    position: int
    size: int


class BatchReader:
    """Iterate the batches of one input. After iteration, :attr:`partial_tail`
    says whether the input ended inside an entry (lenient mode)."""

    def __init__(self, source: Source, *, verify_crc: bool = True, strict: bool = False,
                 max_decompressed_size: int = codecs.DEFAULT_MAX_DECOMPRESSED_SIZE,
                 max_batch_size: int = DEFAULT_MAX_BATCH_SIZE, start: int = 0, end: int | None = None):
        self.source = source
        self.verify_crc, self.strict = verify_crc, strict
        self.max_decompressed_size, self.max_batch_size = max_decompressed_size, max_batch_size
        self.start, self.end = start, end
        self.partial_tail: PartialTail | None = None
        self.bytes_read = 0  # position after the last whole entry

    def __iter__(self) -> Iterator[Batch]:
        for position, entry in self.entries():
            yield decode_entry(entry, position, verify_crc=self.verify_crc,
                               max_decompressed_size=self.max_decompressed_size)

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
                        yield from self._from_buffer(view)
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

    def _from_buffer(self, buf: memoryview) -> Iterator[tuple[int, bytes]]:
        pos = self.start
        end = len(buf) if self.end is None else min(self.end, len(buf))
        while True:
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
    error; default False, as Kafka's readers), ``max_decompressed_size``,
    ``max_batch_size``, ``start`` / ``end`` byte positions."""
    return BatchReader(source, **options)


def read_records(source: Source, **options) -> Iterator[Record]:
    """Every record of every batch, in order."""
    for batch in read_batches(source, **options):
        yield from batch.records
