"""The two checksums of Kafka's record formats (`DefaultRecordBatch` CRC-32C, `LegacyRecord` CRC-32).

* :func:`crc32`  -- CRC-32 (IEEE 802.3, = ``zlib.crc32``): legacy v0/v1 messages,
  over bytes [magic, end of value).
* :func:`crc32c` -- CRC-32C (Castagnoli, = ``java.util.zip.CRC32C``): v2 batches,
  over bytes [attributes, end of batch). Uses the ``crc32c`` package, which
  picks the SSE4.2 / ARMv8 instruction when the CPU has one.

Both return the unsigned 32-bit value, which is how Kafka stores and prints it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import crc32c as _crc32c_lib

__all__ = ["crc32", "crc32c", "CRC_FUNCTIONS"]

Buffer = bytes | bytearray | memoryview


def crc32(data: Buffer, value: int = 0) -> int:
    """CRC-32 (IEEE, as ``zlib.crc32``) of ``data`` as an unsigned 32-bit int; ``value``, the CRC of
    the bytes before ``data``, continues a running checksum."""
    # zlib.crc32 is already unsigned on Python 3; the mask documents the contract.
    return zlib.crc32(data, value) & 0xFFFFFFFF


def crc32c(data: Buffer, value: int = 0) -> int:
    """CRC-32C (Castagnoli) of ``data`` as an unsigned 32-bit int; ``value``, the CRC of the bytes
    before ``data``, continues a running checksum."""
    return _crc32c_lib.crc32c(data, value) & 0xFFFFFFFF


CRC_FUNCTIONS: dict[str, Callable[[Buffer], int]] = {"crc32": crc32, "crc32c": crc32c}
