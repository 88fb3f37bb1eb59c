"""The Kafka 0.7 message schema (schemas/kafka07_message.yaml): its layout is 0.7's Message.scala, its
bytes those a 0.7 client writes, through the construct reference and the fast backend alike."""

from __future__ import annotations

import gzip
import zlib

import pytest

import kcodec.generated as gen
from kcodec.errors import CompressionError, CrcMismatchError, UnknownMagicError
from kcodec.generated import kafka07_message as k07
from kcodec.generated.fast import kafka07_message as fast

# One 0.7 entry (size 11, magic 1, no codec, CRC-32("hello"), "hello"), as samsa 0.3.11's encoder writes it
# (provenance: /work/shared/spec/kafka-broker-rules.md, "Kafka 0.7 on-disk format", checked by running samsa).
HELLO = bytes.fromhex("0000000b01003610a68668656c6c6f")
PLAIN = {"compression": "none", "unused": 0}


def test_layout_is_message_scala() -> None:
    # magic 0: size, magic, crc, payload (MinHeaderSize 5); magic 1 adds attributes (6)
    assert (k07.KAFKA07_MESSAGE_V0_OFFSET_CRC, k07.KAFKA07_MESSAGE_V0_OFFSET_PAYLOAD) == (5, 9)
    assert (k07.KAFKA07_MESSAGE_V1_OFFSET_ATTRIBUTES, k07.KAFKA07_MESSAGE_V1_OFFSET_CRC) == (5, 6)
    assert k07.KAFKA07_MESSAGE_V1_OFFSET_PAYLOAD == 10
    assert k07.KAFKA07_MESSAGE_V1_ATTRIBUTES_COMPRESSION_MASK == 0x03  # CompressionCodeMask


def test_a_samsa_entry_decodes_in_both_backends() -> None:
    value = gen.codec("kafka07_message", 1).parse(HELLO)
    assert (value.size, value.crc, value.payload) == (11, 0x3610A686, b"hello")
    (size, magic, attributes, crc, payload), end = fast.decode_kafka07_message_v1(HELLO)
    assert (size, magic, attributes, crc, bytes(payload), end) == (11, 1, PLAIN, 0x3610A686, b"hello", 15)
    assert gen.codec("kafka07_message", 1).build({"attributes": PLAIN, "payload": b"hello"}) == HELLO


def test_magic_0_has_no_attributes_and_is_never_compressed() -> None:
    data = gen.codec("kafka07_message", 0).build({"payload": b"\x01\x02"})
    assert data[:5] == b"\x00\x00\x00\x07\x00"
    assert fast.decode_kafka07_message_v0(data)[0][3] == b"\x01\x02"


def test_the_crc_covers_the_payload_only() -> None:
    flipped_attributes = HELLO[:5] + b"\x04" + HELLO[6:]  # an unused attribute bit: not covered by the CRC
    assert fast.decode_kafka07_message_v1(flipped_attributes)[0][2] == {"compression": "none", "unused": 1}
    with pytest.raises(CrcMismatchError) as info:
        fast.decode_kafka07_message_v1(HELLO[:-1] + b"O")
    assert info.value.position == 6 and info.value.field == "crc"


def test_a_gzip_set_holds_0_7_entries_without_offsets() -> None:
    inner = HELLO + gen.codec("kafka07_message", 1).build({"attributes": PLAIN, "payload": b"world"})
    payload = gzip.compress(inner)
    head = (len(payload) + 6).to_bytes(4, "big") + b"\x01\x01" + zlib.crc32(payload).to_bytes(4, "big")
    (_, _, attributes, _, messages), _ = fast.decode_kafka07_message_v1(head + payload)
    assert attributes["compression"] == "gzip"
    assert [bytes(m[4]) for m in messages] == [b"hello", b"world"]


def test_codec_3_and_a_wrong_magic_are_refused() -> None:
    with pytest.raises(CompressionError):
        fast.decode_kafka07_message_v1(HELLO[:5] + b"\x03" + HELLO[6:])
    with pytest.raises(UnknownMagicError):
        fast.decode_kafka07_message_v1(HELLO[:4] + b"\x00" + HELLO[5:])
