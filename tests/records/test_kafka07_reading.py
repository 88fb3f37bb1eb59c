"""Kafka 0.7 message sets read with their byte offsets (kcodec.records.kafka07): both offset conventions,
deep iteration into compressed sets, 0.7's end of the log (a torn tail), and damage with its position."""

from __future__ import annotations

import zlib

import pytest

from kcodec.errors import CrcMismatchError, DecompressionError, TruncatedError, UnknownMagicError
from kcodec.records.kafka07 import (
    Kafka07Tail,
    encode_kafka07,
    iter_kafka07_messages,
    kafka07_valid_prefix,
    read_kafka07,
)

HELLO = bytes.fromhex("0000000b01003610a68668656c6c6f")  # samsa's encoding of "hello" (see tests/codegen)


def test_two_entries_at_base_1000_start_at_1000_and_1015() -> None:
    # what samsa reports for two 15-byte entries of a segment named 1000 (the spec's worked example)
    messages = list(iter_kafka07_messages(HELLO + HELLO, base_offset=1000))
    assert [(m.offset, m.next_offset) for m in messages] == [(1000, 1015), (1015, 1030)]
    assert [m.payload for m in messages] == [b"hello", b"hello"]


@pytest.mark.parametrize("codec", ["gzip", "snappy"])
def test_inner_messages_report_the_wrappers_start_but_the_last(codec: str) -> None:
    wrapper = encode_kafka07([b"a", b"b", b"c"], compression=codec)
    data = HELLO + wrapper + HELLO
    entries = list(read_kafka07(data, base_offset=100))
    assert [e.message.compression for e in entries] == ["none", codec, "none"]
    inner = entries[1].deep()
    start, after = 115, 115 + len(wrapper)
    assert [(m.offset, m.next_offset, m.inner, m.payload) for m in inner] == [
        (start, start, 0, b"a"),
        (start, start, 1, b"b"),
        (start, after, 2, b"c"),
    ]
    assert entries[2].message.offset == after


def test_shallow_reading_keeps_the_stored_payload() -> None:
    wrapper = encode_kafka07([b"a", b"b"], compression="gzip")
    (entry,) = read_kafka07(wrapper, deep=False)
    assert entry.message.payload == wrapper[10:] and entry.messages == ()


def test_a_torn_tail_ends_the_log_at_the_last_whole_message() -> None:
    data = HELLO + HELLO + HELLO[:9]
    reader = read_kafka07(data)
    assert len(list(reader)) == 2
    assert reader.tail == Kafka07Tail(30, 9, "entry of 15 bytes, only 9 left")
    assert kafka07_valid_prefix(data) == (2, 30, reader.tail)
    short = read_kafka07(HELLO + b"\x00\x00")
    assert len(list(short)) == 1 and short.tail is not None and short.tail.position == 15


def test_a_size_below_0_7s_minimum_is_damage_with_its_position() -> None:
    with pytest.raises(TruncatedError) as info:
        list(read_kafka07(HELLO + b"\x00\x00\x00\x04\x01\x00\x00\x00"))
    assert info.value.position == 15 and info.value.field == "size"


def test_a_bad_crc_is_reported_where_it_is_and_ends_recovery() -> None:
    data = HELLO + HELLO[:-1] + b"!"
    with pytest.raises(CrcMismatchError) as info:
        list(read_kafka07(data))
    assert info.value.position == 15 + 6
    entries, kept, why = kafka07_valid_prefix(data)
    assert (entries, kept) == (1, 15) and isinstance(why, CrcMismatchError)
    (_, bad) = list(read_kafka07(data, verify_crc=False))
    assert bad.message.crc_valid is False


def test_a_magic_other_than_0_or_1_is_not_a_0_7_message() -> None:
    with pytest.raises(UnknownMagicError) as info:
        list(read_kafka07(HELLO + HELLO[:4] + b"\x02" + HELLO[5:]))
    assert info.value.position == 19


def test_a_damaged_compressed_stream_points_at_the_wrapper() -> None:
    wrapper = bytearray(encode_kafka07([b"a" * 50], compression="gzip"))
    wrapper[20] ^= 0xFF
    wrapper[6:10] = zlib.crc32(bytes(wrapper[10:])).to_bytes(4, "big")  # a consistent CRC: the stream is bad
    with pytest.raises(DecompressionError) as info:
        list(read_kafka07(HELLO + bytes(wrapper)))
    assert info.value.position == 15 + 10


def test_magic_0_messages_are_read_and_written() -> None:
    data = encode_kafka07([b"x"], magic=0)
    (m,) = iter_kafka07_messages(data)
    assert (m.magic, m.compression, m.payload, m.next_offset) == (0, "none", b"x", len(data))
    with pytest.raises(ValueError):
        encode_kafka07([b"x"], magic=0, compression="gzip")
