"""The byte-exact worked examples (checked against kafka-python's builders, java.util.zip.CRC32C and real
broker batches) parse to the
documented fields and rebuild to the same bytes; and the sizes from the articles on Kafka's formats
this project started from come out of the generated size functions."""

from __future__ import annotations

import pytest

from kcodec.errors import CrcMismatchError, UnknownMagicError
from kcodec.generated import codec
from kcodec.generated.legacy_log_entry import LEGACY_LOG_ENTRY_V0_OVERHEAD
from kcodec.generated.legacy_message import LEGACY_MESSAGE_V0_OVERHEAD, LEGACY_MESSAGE_V1_OVERHEAD
from kcodec.generated.record_batch import RECORD_BATCH_V2_OFFSET_CRC, RECORD_BATCH_V2_OVERHEAD
from kcodec.records.sizing import SizeQuery, size_on_disk
from tests.helpers.batches import COMMIT_BATCH, V0_ENTRY, V1_ENTRY, V2_BATCH

# The one-record v2 example in Kafka's LZ4 frame.
LZ4_BATCH = bytes.fromhex(
    "00000000000000000000004f0000000002811987fe00030000000000000000000000000000000000000000ffffff"
    "ffffffffffffffffffffff0000000104224d186040820f0000801c000000066b65790a76616c75650000000000"
)
# A record with null value and headers [("h", null), ("h2", b"x")].
RECORD_WITH_HEADERS = bytes.fromhex("1e00000002 6b 01 04 02 68 01 04 68 32 02 78".replace(" ", ""))


def roundtrip(entity, version, data):
    c = codec(entity, version)
    value = c.parse(data)
    assert c.build(value) == data
    assert c.size(value) == len(data)
    return value


def test_v2_batch_11_1():
    b = roundtrip("record_batch", 2, V2_BATCH)
    assert len(V2_BATCH) == 76 and b.batch_length == 64 and b.crc == 0x1C077701
    assert b.attributes.compression == "none" and b.producer_id == -1 and b.records_count == 1
    r = b.records[0]
    assert (r.length, r.key, r.value, list(r.headers)) == (14, b"key", b"value", [])


def test_v2_crc_ignores_partition_leader_epoch():
    stamped = V2_BATCH[:12] + b"\xff\xff\xff\xff" + V2_BATCH[16:]
    assert roundtrip("record_batch", 2, stamped).partition_leader_epoch == -1


def test_v2_crc_mismatch_is_typed_and_can_be_skipped():
    damaged = bytearray(V2_BATCH)
    damaged[-2] ^= 0x01
    with pytest.raises(CrcMismatchError) as err:
        codec("record_batch", 2).parse(bytes(damaged))
    assert err.value.field == "crc" and err.value.position == RECORD_BATCH_V2_OFFSET_CRC
    assert codec("record_batch", 2).parse(bytes(damaged), verify_crc=False).crc == 0x1C077701


def test_v2_unknown_magic():
    with pytest.raises(UnknownMagicError):
        codec("record_batch", 2).parse(V2_BATCH[:16] + b"\x03" + V2_BATCH[17:])


def test_v0_entry_11_2():
    e = roundtrip("legacy_log_entry", 0, V0_ENTRY)
    assert e.size == 22 and e.message.crc == 0x2356C137 and e.message.magic == 0
    assert (e.message.key, e.message.value) == (b"key", b"value")


def test_v1_entry_11_3():
    e = roundtrip("legacy_log_entry", 1, V1_ENTRY)
    assert e.size == 30 and e.message.crc == 0x0CBC16DF and e.message.timestamp == 0
    assert e.message.attributes.timestamp_type == "create_time"


def test_commit_control_batch_11_4():
    b = roundtrip("record_batch", 2, COMMIT_BATCH)
    assert b.crc == 0x6EB21B54 and b.producer_id == 1000 and b.producer_epoch == 0
    assert b.attributes.transactional and b.attributes.control
    r = b.records[0]
    assert roundtrip("control_record_key", 0, r.key).type == "commit"
    assert roundtrip("end_txn_marker", 0, r.value).coordinator_epoch == 5


def test_lz4_batch_11_5():
    b = roundtrip("record_batch", 2, LZ4_BATCH)
    assert b.attributes.compression == "lz4" and b.crc == 0x811987FE
    assert b.records[0].key == b"key"


def test_record_with_headers_11_7():
    r = roundtrip("record", 2, RECORD_WITH_HEADERS)
    assert r.value is None and r.key == b"k"
    assert [(h.key, h.value) for h in r.headers] == [("h", None), ("h2", b"x")]


def test_layout_constants():
    assert RECORD_BATCH_V2_OVERHEAD == 61
    assert (LEGACY_MESSAGE_V0_OVERHEAD, LEGACY_MESSAGE_V1_OVERHEAD) == (14, 22)
    assert LEGACY_LOG_ENTRY_V0_OVERHEAD == 12


@pytest.mark.parametrize(
    "magic,key,value,records,expected",
    [
        (0, 3, 5, 1, 34),
        (0, -1, 5, 1, 31),
        (1, 3, 5, 1, 42),
        (1, -1, 5, 1, 39),
        (2, 3, 5, 1, 76),
        (2, -1, 5, 1, 73),
        (2, -1, 6, 10, 191),
        (0, -1, 6, 10, 320),
        (1, -1, 6, 10, 400),
        (1, -1, 16384, 1, 16418),
        # The source article prints 17086 for v2, an arithmetic slip: 61 + 11 + 16384 = 16456.
        (2, -1, 16384, 1, 16456),
    ],
)
def test_article_sizes(magic, key, value, records, expected):
    assert size_on_disk(magic, SizeQuery(key, value, records)).total == expected
