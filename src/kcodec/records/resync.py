"""Finding the next whole, valid log entry after damage.

When a batch does not decode, Kafka's readers stop (and log recovery truncates
there). kcodec can do better without guessing: it scans forward for the next
byte position where a whole entry parses *and* its CRC holds, reports the
bytes in between as one skipped range with the reason, and goes on from there.
A random position passes the CRC check with probability 2**-32, so what is
found is a real batch (possibly one stored inside a damaged batch's payload,
which is then readable too: nothing readable is lost).

The scan is cheap where there is nothing to find: candidate positions come
from one regular expression over the buffer (the size at +8 is at least 14
and no larger than what the input can hold, the magic byte at +16 is 0, 1 or
2, the codec bits name a codec that magic allows), so the C regex engine
passes over ordinary bytes, and each candidate is checked against the bytes
left and the format's minimum sizes before its CRC is computed.
"""

from __future__ import annotations

import re
import struct
import zlib
from dataclasses import dataclass

from kcodec.errors import KcodecError
from kcodec.records.decode import decode_entry
from kcodec.records.framing import (
    HEADER_SIZE_UP_TO_MAGIC,
    LEGACY_ATTRIBUTES_OFFSET,
    LEGACY_COMPRESSION_MASK,
    LEGACY_CRC_OFFSET,
    LEGACY_CRC_START,
    LEGACY_MAX_CODEC_ID,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MIN_LEGACY_RECORD_SIZE,
    MIN_LEGACY_V1_RECORD_SIZE,
    SIZE_OFFSET,
    V2_ATTRIBUTES_LOW_BYTE,
    V2_COMPRESSION_MASK,
    V2_CRC_OFFSET,
    V2_CRC_START,
    V2_MAX_CODEC_ID,
    V2_MIN_BATCH_LENGTH,
    V2_RECORDS_COUNT_OFFSET,
)
from kcodec.runtime.crc import crc32c

__all__ = ["SkippedRange", "find_next_entry", "entry_is_valid"]

_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_MIN_SIZE = {0: MIN_LEGACY_RECORD_SIZE, 1: MIN_LEGACY_V1_RECORD_SIZE, 2: V2_MIN_BATCH_LENGTH}


@dataclass(frozen=True)
class SkippedRange:
    """Bytes ``[start, end)`` of the input that hold no readable entry, and why."""

    start: int
    end: int
    kind: str  # the error kind that started the skip (crc, length, truncated, ...)
    reason: str  # the error's one-line message, with where it was found
    rest: bool = False  # the framing broke: everything from start on was passed over, unread

    @property
    def size(self) -> int:
        return self.end - self.start

    def __str__(self) -> str:
        return f"skipped bytes {self.start}..{self.end} ({self.size} bytes): {self.reason}"

    @classmethod
    def from_error(cls, start: int, end: int, exc: KcodecError, *, rest: bool = False) -> SkippedRange:
        return cls(start, end, exc.kind, str(exc), rest)


def _byte_range(lo: int, hi: int) -> bytes:
    return b"[" + re.escape(bytes([lo])) + b"-" + re.escape(bytes([hi])) + b"]" if lo != hi else re.escape(bytes([lo]))


def _int_range(lo: int, hi: int, width: int) -> bytes:
    """A regular expression for the big-endian unsigned ``width``-byte integers in [lo, hi]."""
    if width == 1:
        return _byte_range(lo, hi)
    unit = 256 ** (width - 1)
    (a, ra), (b, rb) = divmod(lo, unit), divmod(hi, unit)
    rest_any = rb"[\x00-\xff]{%d}" % (width - 1)
    if a == b:
        return re.escape(bytes([a])) + _int_range(ra, rb, width - 1)
    if ra == 0 and rb == unit - 1:
        return _byte_range(a, b) + rest_any
    parts = [re.escape(bytes([a])) + _int_range(ra, unit - 1, width - 1)]
    if b - a > 1:
        parts.append(_byte_range(a + 1, b - 1) + rest_any)
    parts.append(re.escape(bytes([b])) + _int_range(0, rb, width - 1))
    return b"(?:" + b"|".join(parts) + b")"


def _codec_bits(mask: int, allowed: int) -> bytes:
    """A byte whose codec id (the bits of ``mask``) is at most ``allowed``."""
    return b"[" + b"".join(re.escape(bytes([v])) for v in range(256) if v & mask <= allowed) + b"]"


def _any(n: int) -> bytes:
    """Any ``n`` bytes."""
    return rb"[\x00-\xff]{%d}" % n if n else b""


_PATTERNS: dict[int, re.Pattern] = {}
_NONZERO = re.compile(rb"[^\x00]")


def _candidates(largest: int) -> re.Pattern:
    """Positions that may start an entry of at most ``largest`` bytes after its 12-byte head: size at +8 in
    [14, largest] (rounded up to a power of two, to share patterns), magic 0/1 with a v0/v1 codec id at
    +17, or magic 2 with a v2 codec id at +22. Zeros (a preallocated segment's unused end) never match."""
    bits = max(8, min(31, largest.bit_length()))
    pattern = _PATTERNS.get(bits)
    if pattern is None:
        size = _int_range(MIN_LEGACY_RECORD_SIZE, (1 << bits) - 1, 4)
        # size, the bytes up to the magic, then magic 0/1 and the v0/v1 attributes right after it, or magic 2
        # and the low byte of the v2 attributes
        pattern = _PATTERNS[bits] = re.compile(
            rb"(?="
            + _any(SIZE_OFFSET)
            + size
            + _any(MAGIC_OFFSET - LOG_OVERHEAD)
            + rb"(?:[\x00\x01]"
            + _any(LEGACY_ATTRIBUTES_OFFSET - MAGIC_OFFSET - 1)
            + _codec_bits(LEGACY_COMPRESSION_MASK, LEGACY_MAX_CODEC_ID)
            + rb"|\x02"
            + _any(V2_ATTRIBUTES_LOW_BYTE - MAGIC_OFFSET - 1)
            + _codec_bits(V2_COMPRESSION_MASK, V2_MAX_CODEC_ID)
            + rb"))"
        )
    return pattern


def _crc_holds(buf, pos: int, size: int, magic: int) -> bool:
    end = pos + LOG_OVERHEAD + size
    if magic == 2:
        return crc32c(buf[pos + V2_CRC_START : end]) == _U32.unpack_from(buf, pos + V2_CRC_OFFSET)[0]
    return zlib.crc32(buf[pos + LEGACY_CRC_START : end]) == _U32.unpack_from(buf, pos + LEGACY_CRC_OFFSET)[0]


def _plausible(buf, pos: int, end: int, max_batch_size: int) -> int:
    """The entry size at ``pos`` when its header is plausible and it fits, else 0 (no CRC computed yet)."""
    size = _I32.unpack_from(buf, pos + SIZE_OFFSET)[0]
    magic = buf[pos + MAGIC_OFFSET]
    if size < _MIN_SIZE[magic] or size > max_batch_size or pos + LOG_OVERHEAD + size > end:
        return 0
    if magic == 2:
        if (
            buf[pos + V2_ATTRIBUTES_LOW_BYTE] & V2_COMPRESSION_MASK > V2_MAX_CODEC_ID
            or _I32.unpack_from(buf, pos + V2_RECORDS_COUNT_OFFSET)[0] < 0
        ):
            return 0
    elif buf[pos + LEGACY_ATTRIBUTES_OFFSET] & LEGACY_COMPRESSION_MASK > LEGACY_MAX_CODEC_ID:
        return 0
    return size


def entry_is_valid(
    buf, pos: int, end: int, *, max_batch_size: int = 2**31 - 1, max_decompressed_size: int | None = None
) -> int:
    """The size of the whole entry at ``pos`` when it parses and its CRC holds, else 0."""
    if end - pos < HEADER_SIZE_UP_TO_MAGIC or buf[pos + MAGIC_OFFSET] > 2:
        return 0
    size = _plausible(buf, pos, end, max_batch_size)
    if not size or not _crc_holds(buf, pos, size, buf[pos + MAGIC_OFFSET]):
        return 0
    total = LOG_OVERHEAD + size
    options = {} if max_decompressed_size is None else {"max_decompressed_size": max_decompressed_size}
    try:
        decode_entry(bytes(buf[pos : pos + total]), pos, verify_crc=True, **options)
    except KcodecError:
        return 0
    return total


def find_next_entry(
    buf,
    start: int,
    end: int | None = None,
    *,
    before: int | None = None,
    max_batch_size: int = 2**31 - 1,
    max_decompressed_size: int | None = None,
) -> int | None:
    """The first position ``>= start`` (and ``< before``) where a whole entry, ending by ``end``, parses
    and its CRC holds, or None.

    ``buf`` is bytes, bytearray, mmap or a memoryview of bytes."""
    end = len(buf) if end is None else min(end, len(buf))
    if end - start < HEADER_SIZE_UP_TO_MAGIC:
        return None
    nonzero = _NONZERO.search(buf, start, end)  # a preallocated segment's zeros: skipped at memchr speed
    if nonzero is None:
        return None
    start = max(start, nonzero.start() - (LOG_OVERHEAD - 1))  # an entry's size (its last header bytes) is not 0
    for m in _candidates(min(max_batch_size, end - start - LOG_OVERHEAD)).finditer(buf, start, end):
        pos = m.start()
        if before is not None and pos >= before:
            return None
        if entry_is_valid(buf, pos, end, max_batch_size=max_batch_size, max_decompressed_size=max_decompressed_size):
            return pos
    return None
