"""Kafka 0.7 against brod 0.4.3 as a second opinion (a Python 2 client on PyPI, converted by lib2to3 in a
fixture: tests/helpers/samsa07.py). brod writes and parses magic-0 messages only (it reads a magic-1
message as corrupt), so it checks the magic-0 layout and the start-offset convention."""

from __future__ import annotations

import pytest

from kcodec.records.kafka07 import encode_kafka07, iter_kafka07_messages
from tests.helpers.samsa07 import brod_message_set, brod_parse, load_brod

PAYLOADS = [b"hello", b"", bytes(range(256)), b"z" * 5000]


@pytest.fixture(scope="module")
def brod(tmp_path_factory):
    base = load_brod(tmp_path_factory.mktemp("brod"))
    if isinstance(base, str):
        pytest.skip(base)
    return base


def test_kcodec_writes_the_message_set_brod_produces(brod):
    assert encode_kafka07(PAYLOADS, magic=0) == brod_message_set(brod, PAYLOADS)


def test_kcodec_and_brod_read_the_same_offsets_and_payloads(brod):
    data = brod_message_set(brod, PAYLOADS)
    theirs = brod_parse(brod, data, 2048)
    ours = list(iter_kafka07_messages(data, base_offset=2048))
    assert [(o, p, corrupt) for o, p, corrupt in theirs] == [(m.offset, m.payload, False) for m in ours]


def test_a_flipped_payload_byte_is_corrupt_for_both(brod):
    data = bytearray(encode_kafka07([b"hello", b"world"], magic=0))
    data[-1] ^= 0x01
    theirs = brod_parse(brod, bytes(data), 0)
    ours = list(iter_kafka07_messages(bytes(data), verify_crc=False))
    assert [c for _, _, c in theirs] == [not m.crc_valid for m in ours] == [False, True]
