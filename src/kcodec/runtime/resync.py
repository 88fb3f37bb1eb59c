"""Finding the next whole, valid log entry after damage.

When a batch does not decode, Kafka's readers stop (and log recovery truncates
there). kcodec can do better without guessing: it scans forward for the next
byte position where a whole entry parses *and* its CRC holds, reports the
bytes in between as one skipped range with the reason, and goes on from there.
A random position passes the CRC check with probability 2**-32, so what is
found is a real batch (possibly one stored inside a damaged batch's payload,
which is then readable too: nothing readable is lost).

The scan is cheap where there is nothing to find: candidate positions come
from one regular expression over the buffer (the magic byte at +16 is 0, 1 or
2 and the size at +8 is a positive int32), and each candidate is checked
against the bytes left, the format's minimum sizes and the codec bits before
its CRC is computed.
"""
from __future__ import annotations

import re
import struct
import zlib
from dataclasses import dataclass

from kcodec.errors import KcodecError

from .crc import crc32c
from .decode import LOG_OVERHEAD, MIN_LEGACY_RECORD_SIZE, V2_MIN_BATCH_LENGTH, decode_entry

__all__ = ["SkippedRange", "find_next_entry", "entry_is_valid"]

_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
# bytes 8-11: a big-endian int32 size of at least 14 (the smallest entry); byte 16: magic 0, 1 or 2.
# Runs of zeros (a preallocated segment's unused end) hold no candidate, so the scan stays in C.
_CANDIDATE = re.compile(rb"(?=[\x00-\xff]{8}(?:[\x01-\x7f][\x00-\xff]{3}|\x00[\x01-\xff][\x00-\xff]{2}"
                        rb"|\x00\x00[\x01-\xff][\x00-\xff]|\x00\x00\x00[\x0e-\xff])[\x00-\xff]{4}[\x00-\x02])")
_MIN_SIZE = {0: MIN_LEGACY_RECORD_SIZE, 1: MIN_LEGACY_RECORD_SIZE + 8, 2: V2_MIN_BATCH_LENGTH}


@dataclass(frozen=True)
class SkippedRange:
    """Bytes ``[start, end)`` of the input that hold no readable entry, and why."""

    start: int
    end: int
    kind: str  # the error kind that started the skip (crc, length, truncated, ...)
    reason: str  # the error's one-line message, with where it was found

    @property
    def size(self) -> int:
        return self.end - self.start

    def __str__(self) -> str:
        return f"skipped bytes {self.start}..{self.end} ({self.size} bytes): {self.reason}"

    @classmethod
    def from_error(cls, start: int, end: int, exc: KcodecError) -> "SkippedRange":
        return cls(start, end, exc.kind, str(exc))


def _crc_holds(buf, pos: int, size: int, magic: int) -> bool:
    end = pos + LOG_OVERHEAD + size
    if magic == 2:
        return crc32c(buf[pos + 21:end]) == _U32.unpack_from(buf, pos + 17)[0]
    return zlib.crc32(buf[pos + 16:end]) == _U32.unpack_from(buf, pos + 12)[0]


def _plausible(buf, pos: int, end: int, max_batch_size: int) -> int:
    """The entry size at ``pos`` when its header is plausible and it fits, else 0 (no CRC computed yet)."""
    size = _I32.unpack_from(buf, pos + 8)[0]
    magic = buf[pos + 16]
    if size < _MIN_SIZE[magic] or size > max_batch_size or pos + LOG_OVERHEAD + size > end:
        return 0
    if magic == 2:
        if buf[pos + 22] & 0x07 > 4 or _I32.unpack_from(buf, pos + 57)[0] < 0:  # codec id, records count
            return 0
    elif buf[pos + 17] & 0x07 > 3:  # v0/v1 codec id
        return 0
    return size


def entry_is_valid(buf, pos: int, end: int, *, max_batch_size: int = 2**31 - 1,
                   max_decompressed_size: int | None = None) -> int:
    """The size of the whole entry at ``pos`` when it parses and its CRC holds, else 0."""
    if end - pos < 17 or buf[pos + 16] > 2:
        return 0
    size = _plausible(buf, pos, end, max_batch_size)
    if not size or not _crc_holds(buf, pos, size, buf[pos + 16]):
        return 0
    total = LOG_OVERHEAD + size
    options = {} if max_decompressed_size is None else {"max_decompressed_size": max_decompressed_size}
    try:
        decode_entry(bytes(buf[pos:pos + total]), pos, verify_crc=True, **options)
    except KcodecError:
        return 0
    return total


def find_next_entry(buf, start: int, end: int | None = None, *, before: int | None = None,
                    max_batch_size: int = 2**31 - 1, max_decompressed_size: int | None = None) -> int | None:
    """The first position ``>= start`` (and ``< before``) where a whole entry, ending by ``end``, parses
    and its CRC holds, or None.

    ``buf`` is bytes, bytearray, mmap or a memoryview of bytes."""
    end = len(buf) if end is None else min(end, len(buf))
    if end - start < 17:
        return None
    for m in _CANDIDATE.finditer(buf, start, end):
        pos = m.start()
        if before is not None and pos >= before:
            return None
        if entry_is_valid(buf, pos, end, max_batch_size=max_batch_size,
                          max_decompressed_size=max_decompressed_size):
            return pos
    return None
