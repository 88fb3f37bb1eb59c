"""Byte-exact entries the tests share: the worked examples (checked against kafka-python's builders,
java.util.zip.CRC32C and real broker batches; tests/records/test_worked_examples.py reads their
fields), builders of v2 records and batches, and a log of every magic damaged at one byte."""

from __future__ import annotations

import struct

from kcodec.runtime.crc import crc32c
from kcodec.runtime.varint import encode_varint, encode_varlong

# v2, one record key="key" value="value", everything else zero or -1.
V2_BATCH = bytes.fromhex(
    "00000000000000000000004000000000021c07770100000000000000000000000000000000000000000000"
    "ffffffffffffffffffffffffffff000000011c000000066b65790a76616c756500"
)
# The same record as a v0 and a v1 log entry.
V0_ENTRY = bytes.fromhex("0000000000000000000000162356c1370000000000036b65790000000576616c7565")
V1_ENTRY = bytes.fromhex("00000000000000000000001e0cbc16df01000000000000000000000000036b65790000000576616c7565")
# A COMMIT control batch, producer id 1000, epoch 0, coordinator epoch 5.
COMMIT_BATCH = bytes.fromhex(
    "00000000000000000000004200000000026eb21b5400300000000000000000000000000000000000000000000000"
    "00000003e80000ffffffff000000012000000008000000010c00000000000500"
)


def vint(n: int) -> bytes:
    return encode_varint(n)


def record(
    key: bytes | None = b"k",
    value: bytes | None = b"v",
    headers: bytes = b"\x00",
    *,
    delta: int = 0,
    length: int | None = None,
    raw_length: bytes | None = None,
) -> bytes:
    """A v2 record; ``headers`` is the raw header count and headers."""
    body = b"\x00" + encode_varlong(0) + vint(delta)
    body += vint(-1) if key is None else vint(len(key)) + key
    body += vint(-1) if value is None else vint(len(value)) + value
    body += headers
    prefix = raw_length if raw_length is not None else vint(len(body) if length is None else length)
    return prefix + body


def batch(
    records: bytes,
    count: int,
    *,
    attributes: int = 0,
    base_offset: int = 0,
    crc: int | None = None,
    length: int | None = None,
    last_delta: int | None = None,
) -> bytes:
    tail = (
        struct.pack(">hiqqqhii", attributes, count - 1 if last_delta is None else last_delta, 0, 0, -1, -1, -1, count)
        + records
    )
    after = struct.pack(">ibI", 0, 2, crc32c(tail) if crc is None else crc) + tail
    return struct.pack(">qi", base_offset, len(after) if length is None else length) + after


# ---------------------------------------------------------------------------- a log to damage

ENTRIES = [V2_BATCH, V0_ENTRY, V1_ENTRY, COMMIT_BATCH, batch(record(key=b"x" * 40), 1, base_offset=7), V2_BATCH]
STARTS = [sum(len(e) for e in ENTRIES[:i]) for i in range(len(ENTRIES))]
LOG = b"".join(ENTRIES)


def damaged(i: int, offset: int, value: int | None = None, *, xor: int = 0xFF) -> bytes:
    """LOG with byte ``offset`` of entry ``i`` replaced (or flipped)."""
    b = bytearray(LOG)
    p = STARTS[i] + offset
    b[p] = value if value is not None else b[p] ^ xor
    return bytes(b)
