"""Kafka's variable-length integers (``ByteUtils`` in the Java client).

Encoding is protobuf base-128: seven bits per byte, least significant group
first, 0x80 set on every byte except the last. Signed values are zigzag
mapped first (``(v << 1) ^ (v >> 31)``), so small negative numbers stay short.

* varint   -- signed int32, at most 5 bytes (record lengths, deltas, counts)
* varlong  -- signed int64, at most 10 bytes (record timestampDelta)
* uvarint  -- unsigned 32-bit, at most 5 bytes (compact lengths, tagged fields)

Decoding mirrors Java's leniency: bits of the last allowed byte that do not fit
into 32 (64) bits are silently dropped, and overlong encodings (``80 00``) are
accepted. A continuation bit on the last allowed byte is an error, as is input
that ends mid-varint.

Every decoder takes ``(buf, pos)`` and returns ``(value, next_pos)`` so callers
can walk a buffer without slicing. ``buf`` is bytes, bytearray or a
memoryview of unsigned bytes; ``pos`` must be a non-negative index.
"""

from __future__ import annotations

import operator
from typing import SupportsIndex

from kcodec.errors import EncodeError, TruncatedError, VarintTooLongError

__all__ = [
    "encode_varint",
    "encode_varlong",
    "encode_uvarint",
    "decode_varint",
    "decode_varlong",
    "decode_uvarint",
    "size_varint",
    "size_varlong",
    "size_uvarint",
]

Buffer = bytes | bytearray | memoryview

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
UINT32_MAX = (1 << 32) - 1

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF

# One-byte encodings are by far the most common (lengths and deltas of small
# records), so hand out shared bytes objects instead of building new ones.
_ONE_BYTE = tuple(bytes((i,)) for i in range(0x80))


def _as_int(v: object, kind: str, lo: int, hi: int) -> int:
    """Return ``v`` as an int within [lo, hi], or raise EncodeError."""
    if type(v) is not int:
        # bool is an int subclass, but encoding True as 1 is almost surely a bug.
        if isinstance(v, bool):
            raise EncodeError(f"{kind} value must be an integer, got bool")
        try:
            if not isinstance(v, SupportsIndex):  # numpy integers and similar have __index__
                raise TypeError
            v = operator.index(v)
        except TypeError:
            raise EncodeError(f"{kind} value must be an integer, got {type(v).__name__}") from None
    if v < lo or v > hi:
        raise EncodeError(f"{kind} value {v} is outside [{lo}, {hi}]")
    return v


def _encode_unsigned(u: int) -> bytes:
    if u < 0x80:
        return _ONE_BYTE[u]
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def _read_unsigned(buf: Buffer, pos: int, max_bytes: int, kind: str, mask: int) -> tuple[int, int]:
    """Read up to ``max_bytes`` base-128 groups starting at ``pos``.

    Returns the raw (not zigzag-decoded) value truncated to ``mask`` -- this
    truncation is Java's silent dropping of excess high bits.
    """
    end = len(buf)
    result = 0
    shift = 0
    i = pos
    for count in range(max_bytes):
        if i >= end:
            raise TruncatedError(
                f"{kind} truncated: input ends after {count} of at most {max_bytes} bytes", position=pos
            )
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & mask, i
        shift += 7
    # Same wording as Java's ByteUtils (which also uses the varint message for
    # unsigned varints); the hex value is the partial value Java prints.
    if max_bytes == 10:
        msg = "Varlong is too long, most significant bit in the 10th byte is set"
    else:
        msg = "Varint is too long, the most significant bit in the 5th byte is set"
    raise VarintTooLongError(f"{msg}, converted value: {result & mask:x}", position=pos)


# --- encoders -------------------------------------------------------------


def encode_varint(v: int) -> bytes:
    """Zigzag varint of a signed 32-bit value (1-5 bytes)."""
    v = _as_int(v, "varint", INT32_MIN, INT32_MAX)
    return _encode_unsigned((v << 1) ^ (v >> 31))


def encode_varlong(v: int) -> bytes:
    """Zigzag varlong of a signed 64-bit value (1-10 bytes)."""
    v = _as_int(v, "varlong", INT64_MIN, INT64_MAX)
    return _encode_unsigned((v << 1) ^ (v >> 63))


def encode_uvarint(v: int) -> bytes:
    """Unsigned varint of a value in 0..2**32-1 (1-5 bytes)."""
    return _encode_unsigned(_as_int(v, "unsigned varint", 0, UINT32_MAX))


# --- decoders -------------------------------------------------------------


def decode_varint(buf: Buffer, pos: int = 0) -> tuple[int, int]:
    """Decode a zigzag varint at ``pos``; return ``(value, next_pos)``.

    Raises TruncatedError / VarintTooLongError with ``position=pos``.
    """
    try:
        b = buf[pos]
    except IndexError:
        raise TruncatedError("varint truncated: input ends after 0 of at most 5 bytes", position=pos) from None
    if b < 0x80:  # fast path: single byte
        return (b >> 1) ^ -(b & 1), pos + 1
    if pos + 1 < len(buf) and buf[pos + 1] < 0x80:  # fast path: two bytes
        u = (b & 0x7F) | (buf[pos + 1] << 7)
        return (u >> 1) ^ -(u & 1), pos + 2
    u, nxt = _read_unsigned(buf, pos, 5, "varint", _MASK32)
    return (u >> 1) ^ -(u & 1), nxt


def decode_varlong(buf: Buffer, pos: int = 0) -> tuple[int, int]:
    """Decode a zigzag varlong at ``pos``; return ``(value, next_pos)``."""
    try:
        b = buf[pos]
    except IndexError:
        raise TruncatedError("varlong truncated: input ends after 0 of at most 10 bytes", position=pos) from None
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    if pos + 1 < len(buf) and buf[pos + 1] < 0x80:
        u = (b & 0x7F) | (buf[pos + 1] << 7)
        return (u >> 1) ^ -(u & 1), pos + 2
    u, nxt = _read_unsigned(buf, pos, 10, "varlong", _MASK64)
    return (u >> 1) ^ -(u & 1), nxt


def decode_uvarint(buf: Buffer, pos: int = 0) -> tuple[int, int]:
    """Decode an unsigned varint at ``pos``; return ``(value, next_pos)``.

    The value is returned unsigned (0..2**32-1); Java hands back the same
    32 bits as a signed int.
    """
    try:
        b = buf[pos]
    except IndexError:
        raise TruncatedError("unsigned varint truncated: input ends after 0 of at most 5 bytes", position=pos) from None
    if b < 0x80:
        return b, pos + 1
    if pos + 1 < len(buf) and buf[pos + 1] < 0x80:
        return (b & 0x7F) | (buf[pos + 1] << 7), pos + 2
    return _read_unsigned(buf, pos, 5, "unsigned varint", _MASK32)


# --- sizes ----------------------------------------------------------------


def _size32(u: int) -> int:
    # Comparison chain: cheaper than a loop or bit_length for the common
    # one- and two-byte cases.
    if u < 0x80:
        return 1
    if u < 0x4000:
        return 2
    if u < 0x200000:
        return 3
    if u < 0x10000000:
        return 4
    return 5


def size_varint(v: int) -> int:
    """Encoded size of :func:`encode_varint` ``(v)`` in bytes."""
    v = _as_int(v, "varint", INT32_MIN, INT32_MAX)
    return _size32((v << 1) ^ (v >> 31))


def size_varlong(v: int) -> int:
    """Encoded size of :func:`encode_varlong` ``(v)`` in bytes."""
    v = _as_int(v, "varlong", INT64_MIN, INT64_MAX)
    u = (v << 1) ^ (v >> 63)
    if u < 0x80:
        return 1
    # One byte per started group of 7 bits; avoids a 10-step chain.
    return (u.bit_length() + 6) // 7


def size_uvarint(v: int) -> int:
    """Encoded size of :func:`encode_uvarint` ``(v)`` in bytes."""
    return _size32(_as_int(v, "unsigned varint", 0, UINT32_MAX))
