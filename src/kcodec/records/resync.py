"""Finding the next whole, valid log entry after damage.

When a batch does not decode, Kafka's readers stop (and log recovery truncates
there). kcodec can do better without guessing: it scans forward for the next
byte position where a whole entry parses *and* its CRC holds, reports the
bytes in between as one skipped range with the reason, and goes on from there.
A random position passes the CRC check with probability 2**-32, so what is
found is a real batch (possibly one stored inside a damaged batch's payload,
which is then readable too: nothing readable is lost).

The scan is cheap where there is nothing to find, and its cost grows with the
damaged bytes only: candidate positions come from one regular expression run
once over each window of the input (the size at +8 is at least 14 and no
larger than what the input can hold, the magic byte at +16 is 0, 1 or 2, the
codec bits name a codec that magic allows), so the C regex engine passes over
ordinary bytes. A candidate's CRC covers its whole claimed size, which in
random bytes is anything up to the rest of the file: checksumming every
candidate would cost (damaged bytes x file size). So each candidate first has
to pass the tests of its header that the decoder would apply anyway, in
constant time (the bytes left, the format's minimum sizes, a record count the
size can hold, a compressed stream that starts with its codec's magic), and
only then is its CRC computed, a window at a time.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from kcodec.errors import DecompressionLimitError, KcodecError
from kcodec.records.decode import decode_entry
from kcodec.records.framing import (
    HEADER_SIZE_UP_TO_MAGIC,
    LEGACY_ATTRIBUTES_OFFSET,
    LEGACY_COMPRESSION_MASK,
    LEGACY_CRC_OFFSET,
    LEGACY_CRC_START,
    LEGACY_KEY_LENGTH_OFFSET,
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
    V2_RECORDS_OFFSET,
)
from kcodec.records.source import Input, as_input
from kcodec.runtime.compression import STREAM_HEAD_SIZE, stream_may_start
from kcodec.runtime.crc import crc32, crc32c

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
    base_offset: int | None = None  # the damaged batch's base offset, as the error names it

    @property
    def size(self) -> int:
        return self.end - self.start

    @property
    def refused(self) -> bool:
        """A whole entry whose CRC holds that kcodec's own decompression cap refused: not damage."""
        return self.kind == DecompressionLimitError.kind

    def __str__(self) -> str:
        if self.refused:
            return f"refused bytes {self.start}..{self.end} ({self.size} bytes, kept): {self.reason}"
        return f"skipped bytes {self.start}..{self.end} ({self.size} bytes): {self.reason}"

    @classmethod
    def from_error(cls, start: int, end: int, exc: KcodecError, *, rest: bool = False) -> SkippedRange:
        return cls(start, end, exc.kind, str(exc), rest, exc.base_offset)


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


def _first_nonzero(window, lo: int, hi: int) -> int | None:
    """The position of the first byte in ``window[lo:hi]`` that is not 0 (runs of zeros are compared at
    memory speed; a regular expression or ``lstrip`` tests bytes one at a time)."""
    while lo < hi:
        piece = bytes(window[lo : min(hi, lo + len(_ZEROS))])
        if piece != _ZEROS[: len(piece)]:
            return lo + len(piece) - len(piece.lstrip(b"\x00"))
        lo += len(piece)
    return None


_ZEROS = bytes(64 << 10)


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


# The smallest v2 record: a length, attributes, timestamp delta, offset delta, key and value lengths and a
# header count, one byte each (DefaultRecord: varints of 0 or -1). A batch whose count says more records
# than its stored bytes can hold does not decode.
_MIN_V2_RECORD_SIZE = 7
_HEAD = V2_RECORDS_OFFSET + 4  # the header a candidate's tests read (a codec's magic too; snappy reads on)
_LOOKAHEAD = V2_ATTRIBUTES_LOW_BYTE  # the candidate pattern reads [pos, pos + _LOOKAHEAD]


def _crc_holds(source: Input, pos: int, size: int, magic: int, head) -> bool:
    end = pos + LOG_OVERHEAD + size
    if magic == 2:
        crc, start, stored = crc32c, V2_CRC_START, _U32.unpack_from(head, V2_CRC_OFFSET)[0]
    else:
        crc, start, stored = crc32, LEGACY_CRC_START, _U32.unpack_from(head, LEGACY_CRC_OFFSET)[0]
    value, got = 0, 0
    for chunk in source.chunks(pos + start, end):  # a window at a time: a candidate's size can be large
        value = crc(chunk, value)
        got += len(chunk)
    return got == end - pos - start and value == stored


def _plausible(source: Input, head, pos: int, end: int, max_batch_size: int) -> int:
    """The entry size at ``pos`` when its header (``head``: its first bytes) passes every test the decoder
    would apply that needs no more than the header, and it fits, else 0 (no CRC computed yet)."""
    size = _I32.unpack_from(head, SIZE_OFFSET)[0]
    magic = head[MAGIC_OFFSET]
    if size < _MIN_SIZE[magic] or size > max_batch_size or pos + LOG_OVERHEAD + size > end:
        return 0
    if source.reach(pos, LOG_OVERHEAD + size) < LOG_OVERHEAD + size:  # a stream's end is known once read to
        return 0
    if magic == 2:
        codec = head[V2_ATTRIBUTES_LOW_BYTE] & V2_COMPRESSION_MASK
        count = _I32.unpack_from(head, V2_RECORDS_COUNT_OFFSET)[0]
        if codec > V2_MAX_CODEC_ID or count < 0:
            return 0
        stored = LOG_OVERHEAD + size - V2_RECORDS_OFFSET
        if codec == 0 and count * _MIN_V2_RECORD_SIZE > stored:
            return 0
        if codec and not stream_may_start(codec, _stream_head(source, head, pos), stored):
            return 0
    elif head[LEGACY_ATTRIBUTES_OFFSET] & LEGACY_COMPRESSION_MASK > LEGACY_MAX_CODEC_ID:
        return 0
    elif not _legacy_lengths_fill(source, head, pos, LOG_OVERHEAD + size, magic):
        return 0
    return size


def _stream_head(source: Input, head, pos: int):
    """The first bytes of a v2 batch's stored records (as many as :func:`stream_may_start` looks at)."""
    if len(head) >= V2_RECORDS_OFFSET + STREAM_HEAD_SIZE:
        return head[V2_RECORDS_OFFSET:]
    return source.pread(pos + V2_RECORDS_OFFSET, STREAM_HEAD_SIZE)


def _legacy_lengths_fill(source: Input, head, pos: int, total: int, magic: int) -> bool:
    """Whether the key and value lengths of the v0/v1 message at ``pos`` (-1: null) add up to its size
    exactly, as the decoder requires."""
    key_at = LEGACY_KEY_LENGTH_OFFSET[magic]
    key = _I32.unpack_from(head, key_at)[0]
    value_at = key_at + 4 + max(key, 0)  # Kafka reads any negative length as null
    if value_at + 4 > total:
        return False
    field = head[value_at : value_at + 4] if value_at + 4 <= len(head) else source.pread(pos + value_at, 4)
    if len(field) < 4:
        return False
    value = _I32.unpack_from(field, 0)[0]
    return value_at + 4 + max(value, 0) == total


def _valid_at(source: Input, pos: int, end: int, head, max_batch_size: int, max_decompressed_size: int | None) -> int:
    if len(head) < HEADER_SIZE_UP_TO_MAGIC or head[MAGIC_OFFSET] > 2:
        return 0
    size = _plausible(source, head, pos, end, max_batch_size)
    if not size or not _crc_holds(source, pos, size, head[MAGIC_OFFSET], head):
        return 0
    total = LOG_OVERHEAD + size
    options = {} if max_decompressed_size is None else {"max_decompressed_size": max_decompressed_size}
    entry = source.pread(pos, total)
    if len(entry) < total:
        return 0
    try:
        decode_entry(bytes(entry), pos, verify_crc=True, **options)
    except DecompressionLimitError:
        return total  # a whole entry whose CRC holds: only kcodec's own cap refuses what it inflates to
    except KcodecError:
        return 0
    return total


def entry_is_valid(
    buf, pos: int, end: int, *, max_batch_size: int = 2**31 - 1, max_decompressed_size: int | None = None
) -> int:
    """The size of the whole entry at ``pos`` when it parses and its CRC holds, else 0. ``buf`` is a
    bytes-like object or an :class:`~kcodec.records.source.Input`."""
    source = as_input(buf)
    end = min(end, source.size)
    if min(end - pos, source.reach(pos, HEADER_SIZE_UP_TO_MAGIC)) < HEADER_SIZE_UP_TO_MAGIC:
        return 0
    head = source.pread(pos, min(_HEAD, end - pos))
    return _valid_at(source, pos, end, head, max_batch_size, max_decompressed_size)


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

    ``buf`` is a bytes-like object or an :class:`~kcodec.records.source.Input` (a file is scanned a window
    at a time: each byte is looked at once)."""
    source = as_input(buf)
    end = source.size if end is None else min(end, source.size)
    if end - start < HEADER_SIZE_UP_TO_MAGIC:
        return None
    stop = end if before is None else min(end, before)
    scanned = start  # every candidate before this position was tried
    for base, window in source.windows(start, end, _LOOKAHEAD):
        source.forget(base)  # candidates from here on start in this window or after it
        end = min(end, source.size)  # a stream's size is known once it was read to its end
        stop = min(stop, end)
        pattern = _candidates(min(max_batch_size, end - base - LOG_OVERHEAD))
        lo, hi = scanned - base, min(end, base + len(window)) - base
        nonzero = _first_nonzero(window, lo, hi)  # a preallocated segment's zeros: skipped at memory speed
        if nonzero is not None:
            lo = max(lo, nonzero - (LOG_OVERHEAD - 1))  # an entry's size (its last bytes) is not 0
            for m in pattern.finditer(window, lo, hi):
                pos = base + m.start()
                if pos >= stop:
                    return None
                head = window[m.start() : m.start() + min(_HEAD, end - pos)]
                if len(head) < min(_HEAD, end - pos):  # the header runs past this window
                    head = source.pread(pos, min(_HEAD, end - pos))
                if _valid_at(source, pos, end, head, max_batch_size, max_decompressed_size):
                    return pos
        scanned = base + hi if base + hi >= end else base + len(window) - _LOOKAHEAD
        if scanned >= stop:
            return None
    return None
