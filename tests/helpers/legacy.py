"""v0/v1 entries built by hand: a LegacyRecord with its CRC-32, framed as a log entry."""

from __future__ import annotations

import struct
import zlib

CODECS = {"gzip": 1, "snappy": 2, "lz4": 3}  # the v0/v1 wrapper's compression attribute


def message(magic: int, attributes: int, timestamp: int, key: bytes | None, value: bytes | None) -> bytes:
    """A v0/v1 message (LegacyRecord), its CRC-32 computed."""
    body = struct.pack(">bb", magic, attributes) + (struct.pack(">q", timestamp) if magic == 1 else b"")
    for part in (key, value):
        body += struct.pack(">i", -1) if part is None else struct.pack(">i", len(part)) + part
    return struct.pack(">I", zlib.crc32(body)) + body


def entry(offset: int, msg: bytes) -> bytes:
    return struct.pack(">qi", offset, len(msg)) + msg
