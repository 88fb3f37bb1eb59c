"""CRC-32 / CRC-32C (LegacyRecord, DefaultRecordBatch), on the worked examples."""

from __future__ import annotations

import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kcodec.runtime.crc import CRC_FUNCTIONS, crc32, crc32c

# The worked examples (single-line hex; tests/records/test_worked_examples.py).
BATCH_V2 = bytes.fromhex(  # v2, one record, 76 bytes
    "00000000000000000000004000000000021c07770100000000000000000000000000000000000000"
    "000000ffffffffffffffffffffffffffff000000011c000000066b65790a76616c756500"
)
MESSAGE_V0 = bytes.fromhex(  # v0 message, 34 bytes
    "0000000000000000000000162356c1370000000000036b65790000000576616c7565"
)
MESSAGE_V1 = bytes.fromhex(  # v1 message, 42 bytes
    "00000000000000000000001e0cbc16df01000000000000000000000000036b65790000000576616c7565"
)
CONTROL_V2 = bytes.fromhex(  # v2 COMMIT control batch, 78 bytes
    "00000000000000000000004200000000026eb21b54003000000000000000000000000000000000000000"
    "0000000000000003e80000ffffffff000000012000000008000000010c00000000000500"
)
LZ4_V2 = bytes.fromhex(  # v2 LZ4 batch, 91 bytes
    "00000000000000000000004f0000000002811987fe000300000000000000000000000000000000000000"
    "00ffffffffffffffffffffffffffff0000000104224d186040820f0000801c000000066b65790a76616c"
    "75650000000000"
)


def _reference_crc32c(data: bytes) -> int:
    """A table-driven CRC-32C written from its definition (Castagnoli polynomial 0x82F63B78)."""
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    c = 0xFFFFFFFF
    for x in data:
        c = table[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def test_check_values():
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32(b"123456789") == 0xCBF43926
    assert crc32c(b"") == 0 and crc32(b"") == 0


def test_spec_sizes():
    assert (len(BATCH_V2), len(MESSAGE_V0), len(MESSAGE_V1), len(CONTROL_V2), len(LZ4_V2)) == (76, 34, 42, 78, 91)


@pytest.mark.parametrize("batch,expected", [(BATCH_V2, 0x1C077701), (CONTROL_V2, 0x6EB21B54), (LZ4_V2, 0x811987FE)])
def test_v2_batch_crc32c(batch, expected):
    # CRC-32C over [21, end), stored big-endian at offset 17.
    assert crc32c(batch[21:]) == expected
    assert int.from_bytes(batch[17:21], "big") == expected


@pytest.mark.parametrize("entry,expected", [(MESSAGE_V0, 0x2356C137), (MESSAGE_V1, 0x0CBC16DF)])
def test_legacy_message_crc32(entry, expected):
    # CRC-32 (IEEE) over [16, end): magic through the end of the value.
    assert crc32(entry[16:]) == expected
    assert int.from_bytes(entry[12:16], "big") == expected


@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview])
def test_buffer_types(wrap):
    assert crc32c(wrap(BATCH_V2)[21:]) == 0x1C077701
    assert crc32(wrap(MESSAGE_V0)[16:]) == 0x2356C137


def test_crc_functions_table():
    assert CRC_FUNCTIONS == {"crc32": crc32, "crc32c": crc32c}


@given(st.binary(max_size=300))
def test_crc32c_matches_reference(data):
    assert crc32c(data) == _reference_crc32c(data)


@given(st.binary(max_size=300))
def test_crc32_matches_zlib_unsigned(data):
    value = crc32(data)
    assert value == zlib.crc32(data) and 0 <= value <= 0xFFFFFFFF
