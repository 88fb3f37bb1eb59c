"""Kafka varints (``ByteUtils``): examples, errors with positions, leniency, sizes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kcodec.errors import EncodeError, TruncatedError, VarintTooLongError
from kcodec.runtime.varint import (
    decode_uvarint,
    decode_varint,
    decode_varlong,
    encode_uvarint,
    encode_varint,
    encode_varlong,
    size_uvarint,
    size_varint,
    size_varlong,
)

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
UINT32 = st.integers(0, 2**32 - 1)

# Every example of ByteUtils' zigzag and unsigned varints.
VARINT_EXAMPLES = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (-2, "03"),
    (63, "7e"),
    (-64, "7f"),
    (64, "8001"),
    (300, "d804"),
    (2**31 - 1, "feffffff0f"),
    (-(2**31), "ffffffff0f"),
]
VARLONG_EXAMPLES = VARINT_EXAMPLES + [
    (2**63 - 1, "feffffffffffffffff01"),
    (-(2**63), "ffffffffffffffffff01"),
    (1700000000000, "80a0abfef962"),
]


@pytest.mark.parametrize("value,hexstr", VARINT_EXAMPLES)
def test_varint_examples(value, hexstr):
    raw = bytes.fromhex(hexstr)
    assert encode_varint(value) == raw
    assert decode_varint(raw) == (value, len(raw))
    assert size_varint(value) == len(raw)


@pytest.mark.parametrize("value,hexstr", VARLONG_EXAMPLES)
def test_varlong_examples(value, hexstr):
    raw = bytes.fromhex(hexstr)
    assert encode_varlong(value) == raw
    assert decode_varlong(raw) == (value, len(raw))
    assert size_varlong(value) == len(raw)


@pytest.mark.parametrize(
    "value,hexstr",
    [
        (0, "00"),
        (1, "01"),
        (127, "7f"),
        (128, "8001"),
        (300, "ac02"),
        (2**32 - 1, "ffffffff0f"),
    ],
)
def test_uvarint_examples(value, hexstr):
    raw = bytes.fromhex(hexstr)
    assert encode_uvarint(value) == raw
    assert decode_uvarint(raw) == (value, len(raw))
    assert size_uvarint(value) == len(raw)


@pytest.mark.parametrize("buf_type", [bytes, bytearray, memoryview])
def test_decode_at_position_and_buffer_types(buf_type):
    buf = buf_type(b"\xaa\xbb" + encode_varint(300) + encode_varlong(-5) + encode_uvarint(2**32 - 1))
    value, pos = decode_varint(buf, 2)
    assert (value, pos) == (300, 4)
    value, pos = decode_varlong(buf, pos)
    assert (value, pos) == (-5, 5)
    assert decode_uvarint(buf, pos) == (2**32 - 1, 10)


# --- errors ---------------------------------------------------------------


@pytest.mark.parametrize(
    "decode,raw,limit",
    [
        (decode_varint, "ffffffff80", 5),
        (decode_varint, "8080808080", 5),
        (decode_uvarint, "ffffffffff01", 5),
        (decode_varlong, "ff" * 10, 10),
        (decode_varlong, "80" * 10 + "00", 10),
    ],
)
def test_too_long_reports_start_position(decode, raw, limit):
    prefix = b"\x01\x02\x03"
    with pytest.raises(VarintTooLongError) as info:
        decode(prefix + bytes.fromhex(raw), len(prefix))
    assert info.value.position == 3
    assert f"{limit}th byte is set" in str(info.value)
    assert "byte 3" in str(info.value)


def test_too_long_message_matches_java():
    with pytest.raises(VarintTooLongError) as info:
        decode_varint(bytes.fromhex("ffffffff80"))
    # Java: value after four 0x7f groups is 0x0fffffff, printed by Integer.toHexString.
    assert info.value.message == (
        "Varint is too long, the most significant bit in the 5th byte is set, converted value: fffffff"
    )
    with pytest.raises(VarintTooLongError) as info:
        decode_varlong(bytes.fromhex("ff" * 10))
    assert info.value.message.startswith("Varlong is too long, most significant bit in the 10th byte is set")


@pytest.mark.parametrize(
    "decode,raw",
    [
        (decode_varint, ""),
        (decode_varint, "80"),
        (decode_varint, "ffffffff"),
        (decode_uvarint, ""),
        (decode_uvarint, "8080"),
        (decode_varlong, ""),
        (decode_varlong, "ff" * 9),
    ],
)
def test_truncated_reports_start_position(decode, raw):
    prefix = b"\x00" * 7
    with pytest.raises(TruncatedError) as info:
        decode(prefix + bytes.fromhex(raw), len(prefix))
    assert info.value.position == 7
    assert "truncated" in str(info.value)


def test_truncated_is_not_too_long():
    # A varint cut off after 4 continuation bytes is truncation, not overlength.
    with pytest.raises(TruncatedError):
        decode_varint(b"\x80\x80\x80\x80")


# --- Java leniency ----------------------------------------------------------


def test_varint_drops_high_bits_of_fifth_byte():
    # Only the low 4 bits of the 5th byte fit into 32 bits; Java drops the rest.
    assert decode_varint(bytes.fromhex("feffffff7f")) == decode_varint(bytes.fromhex("feffffff0f"))
    assert decode_varint(bytes.fromhex("feffffff7f"))[0] == 2**31 - 1
    assert decode_varint(bytes.fromhex("8080808070")) == (0, 5)
    assert decode_uvarint(bytes.fromhex("ffffffff7f")) == (2**32 - 1, 5)


def test_varlong_drops_high_bits_of_tenth_byte():
    assert decode_varlong(bytes.fromhex("feffffffffffffffff7f")) == (2**63 - 1, 10)
    assert decode_varlong(bytes.fromhex("8080808080808080807e")) == (0, 10)


def test_overlong_encodings_accepted():
    assert decode_varint(b"\x80\x00") == (0, 2)
    assert decode_varlong(b"\x82\x80\x80\x00") == (1, 4)
    assert decode_uvarint(b"\xff\x80\x00") == (127, 3)


# --- encode range checks ----------------------------------------------------


@pytest.mark.parametrize(
    "fn,value",
    [
        (encode_varint, 2**31),
        (encode_varint, -(2**31) - 1),
        (encode_varlong, 2**63),
        (encode_varlong, -(2**63) - 1),
        (encode_uvarint, -1),
        (encode_uvarint, 2**32),
        (size_varint, 2**31),
        (size_varlong, 2**63),
        (size_uvarint, -1),
        (encode_varint, 1.5),
        (encode_varint, "1"),
        (encode_varint, True),
        (encode_varlong, None),
    ],
)
def test_encode_rejects_out_of_range_and_non_int(fn, value):
    with pytest.raises(EncodeError):
        fn(value)


# --- properties over the full ranges -----------------------------------------


@given(INT32)
def test_varint_roundtrip_and_size(v):
    raw = encode_varint(v)
    assert size_varint(v) == len(raw) <= 5
    assert decode_varint(raw) == (v, len(raw))


@given(INT64)
def test_varlong_roundtrip_and_size(v):
    raw = encode_varlong(v)
    assert size_varlong(v) == len(raw) <= 10
    assert decode_varlong(raw) == (v, len(raw))


@given(UINT32)
def test_uvarint_roundtrip_and_size(v):
    raw = encode_uvarint(v)
    assert size_uvarint(v) == len(raw) <= 5
    assert decode_uvarint(raw) == (v, len(raw))


@given(INT32)
def test_varint_and_varlong_agree_on_int32(v):
    # Zigzag of an int32 is the same number whether done in 32 or 64 bits.
    assert encode_varint(v) == encode_varlong(v)


@given(st.binary(min_size=5, max_size=5))
def test_any_five_bytes_decode_like_java(raw):
    """Reference model of ByteUtils.readVarint using explicit 32-bit arithmetic."""
    value = 0
    for i, b in enumerate(raw):
        if i == 4:
            if b & 0x80:
                with pytest.raises(VarintTooLongError):
                    decode_varint(raw)
                return
            value = (value | (b << 28)) & 0xFFFFFFFF
            break
        value |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            break
    expected = (value >> 1) ^ -(value & 1)
    assert decode_varint(raw)[0] == expected
