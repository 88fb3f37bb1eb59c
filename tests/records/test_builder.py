"""The writer (kcodec.records.encode): what encode_batch / encode_control_batch /
convert_batches write reads back through kcodec's reader with the same offsets,
timestamps, keys, values, headers and sequences for every allowed magic x codec;
the worked examples come out byte-exact; and everything Kafka's
MemoryRecordsBuilder refuses raises EncodeError."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcodec.errors import EncodeError
from kcodec.generated import codec
from kcodec.records.encode import NewRecord, convert_batches, encode_batch, encode_control_batch
from kcodec.records.model import Record, TimestampType
from kcodec.records.reader import read_batches
from kcodec.runtime import compression as compress_lib

CODECS_V2 = ["none", "gzip", "snappy", "lz4", "zstd"]
CODECS_LEGACY = ["none", "gzip", "snappy", "lz4"]
COMBOS = [(2, c) for c in CODECS_V2] + [(m, c) for m in (0, 1) for c in CODECS_LEGACY]
COMBO_IDS = [f"v{m}-{c}" for m, c in COMBOS]
CT, LAT = TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# The worked examples.
V2_BATCH_11_1 = bytes.fromhex(
    "00000000000000000000004000000000021c07770100000000000000000000000000000000000000000000"
    "ffffffffffffffffffffffffffff000000011c000000066b65790a76616c756500"
)
V0_ENTRY_11_2 = bytes.fromhex("0000000000000000000000162356c1370000000000036b65790000000576616c7565")
V1_ENTRY_11_3 = bytes.fromhex("00000000000000000000001e0cbc16df01000000000000000000000000036b65790000000576616c7565")
COMMIT_11_4 = bytes.fromhex(
    "00000000000000000000004200000000026eb21b5400300000000000000000000000000000000000000000000000"
    "00000003e80000ffffffff000000012000000008000000010c00000000000500"
)
LZ4_11_5 = bytes.fromhex(
    "00000000000000000000004f0000000002811987fe00030000000000000000000000000000000000000000ffffff"
    "ffffffffffffffffffffff0000000104224d186040820f0000801c000000066b65790a76616c75650000000000"
)
RECORD_11_7 = bytes.fromhex("1e000000026b01040268010468320278")
PAYLOAD_11_6 = bytes.fromhex("1c000000066b65790a76616c756500")
# xerial header, chunk length 17, raw snappy block (length 15, one literal); zstd frame with one raw block.
SNAPPY_11_6 = bytes.fromhex("82534e41505059000000000100000001000000110f38") + PAYLOAD_11_6
ZSTD_11_6 = bytes.fromhex("28b52ffd0058780000") + PAYLOAD_11_6 + bytes.fromhex("010000")
KEY_VALUE = [{"key": b"key", "value": b"value", "timestamp": 0}]


# ---------------------------------------------------------------------------- helpers


def read_all(data: bytes):
    """Batches of ``data``; every byte must belong to a whole, CRC-valid entry."""
    batches = list(read_batches(data, strict=True))
    assert sum(b.size for b in batches) == len(data)
    assert all(b.crc_valid for b in batches)
    return batches


def flat(batches):
    return [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for b in batches for r in b.records]


headers_st = st.lists(st.tuples(st.text(max_size=6), st.none() | st.binary(max_size=8)), max_size=3)
timestamp_st = st.just(-1) | st.integers(0, 2**42)


@st.composite
def record_lists(draw, *, headers=True, timestamps=True, min_size=0, max_size=6):
    """(base_offset argument, records, expected absolute offsets)."""
    n = draw(st.integers(min_size, max_size))
    base = draw(st.integers(0, 2**40))
    explicit = draw(st.booleans())
    offsets, off = [], base
    for i in range(n):
        if i:
            off += 1 + (draw(st.integers(0, 5)) if explicit else 0)
        offsets.append(off)
    recs = []
    for off in offsets:
        rec = {
            "key": draw(st.none() | st.binary(max_size=16)),
            "value": draw(st.none() | st.binary(max_size=40)),
            "headers": draw(headers_st) if headers else [],
            "timestamp": draw(timestamp_st) if timestamps else -1,
        }
        if explicit:
            rec["offset"] = off
        recs.append(rec)
    # With explicit offsets the base offset may be left to inference (the first record's).
    base_arg = base if not explicit or draw(st.booleans()) else None
    return base_arg, recs, offsets


@st.composite
def producer_states(draw):
    if draw(st.booleans()):
        return {}
    return {
        "producer_id": draw(st.integers(0, 2**40)),
        "producer_epoch": draw(st.integers(0, 2**15 - 1)),
        "base_sequence": draw(st.integers(0, 2**31 - 1)),
        "transactional": draw(st.booleans()),
    }


# ---------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("magic,compression", COMBOS, ids=COMBO_IDS)
def test_roundtrip_every_magic_and_codec(magic, compression):
    @SETTINGS
    @given(record_lists(headers=magic == 2, timestamps=magic > 0), producer_states())
    def check(drawn, producer):
        base_arg, recs, offsets = drawn
        if magic < 2:
            producer = {}
        data = encode_batch(recs, magic=magic, compression=compression, base_offset=base_arg, **producer)
        batches = read_all(data)
        expected = [
            (o, r["timestamp"], r["key"], r["value"], [tuple(h) for h in r["headers"]]) for o, r in zip(offsets, recs)
        ]
        assert flat(batches) == expected
        if magic == 2:
            (b,) = batches
            base = offsets[0] if offsets else (base_arg or 0)
            assert (b.magic, b.base_offset, b.record_count) == (2, base, len(recs))
            assert b.last_offset == (offsets[-1] if offsets else base)
            assert b.compression == (compression if recs else "none")
            assert b.max_timestamp == max([-1] + [r["timestamp"] for r in recs])
            assert b.base_timestamp == (recs[0]["timestamp"] if recs else -1)
            assert b.timestamp_type is CT and b.partition_leader_epoch == -1 and not b.is_control
            assert b.producer_id == producer.get("producer_id", -1)
            assert b.producer_epoch == producer.get("producer_epoch", -1)
            assert b.is_transactional == producer.get("transactional", False)
            seq = producer.get("base_sequence", -1)
            assert b.base_sequence == seq
            assert [r.sequence for r in b.records] == [-1 if seq < 0 else (seq + o - base) % 2**31 for o in offsets]
        elif compression == "none":
            assert len(batches) == len(recs)
            assert all(b.base_offset == b.last_offset == o for b, o in zip(batches, offsets))
        elif recs:
            (b,) = batches
            assert (b.magic, b.compression, b.base_offset, b.last_offset) == (
                magic,
                compression,
                offsets[0],
                offsets[-1],
            )
            if magic == 1:
                assert b.max_timestamp == max(r["timestamp"] for r in recs)
        else:
            assert data == b""
        for b in batches:
            assert b.magic == magic
            if magic == 0:
                assert b.timestamp_type is TimestampType.NO_TIMESTAMP_TYPE

    check()


@pytest.mark.parametrize(
    "magic,compression", [c for c in COMBOS if c[0] > 0], ids=[i for c, i in zip(COMBOS, COMBO_IDS) if c[0] > 0]
)
def test_log_append_time(magic, compression):
    @SETTINGS
    @given(record_lists(headers=magic == 2, min_size=1), st.integers(0, 2**42))
    def check(drawn, append_time):
        base_arg, recs, offsets = drawn
        data = encode_batch(
            recs,
            magic=magic,
            compression=compression,
            base_offset=base_arg,
            timestamp_type=LAT,
            log_append_time=append_time,
        )
        batches = read_all(data)
        assert [(o, t) for o, t, *_ in flat(batches)] == [(o, append_time) for o in offsets]
        assert all(b.timestamp_type is LAT and b.max_timestamp == append_time for b in batches)
        assert all(r.timestamp_type is LAT for b in batches for r in b.records)
        if magic == 2:
            # The stored deltas keep the producer's CreateTime values; only maxTimestamp is the append time.
            raw = codec("record_batch", 2).parse(data)
            assert raw.attributes.timestamp_type == "log_append_time"
            assert [raw.base_timestamp + r.timestamp_delta for r in raw.records] == [r["timestamp"] for r in recs]
        elif compression != "none":
            # The broker rebuilds the set: every inner message carries the append time and bit 3.
            wrapper = codec("legacy_log_entry", magic).parse(data).message
            assert wrapper.timestamp == append_time
            for inner in wrapper.value:
                assert inner.message.timestamp == append_time
                assert inner.message.attributes.timestamp_type == "log_append_time"
        else:
            for b in batches:
                entry = codec("legacy_log_entry", magic).parse(data[b.position : b.position + b.size])
                assert entry.message.attributes.timestamp_type == "log_append_time"

    check()


@pytest.mark.parametrize("compression", CODECS_V2)
def test_delete_horizon(compression):
    @SETTINGS
    @given(record_lists(min_size=1), st.integers(0, 2**42))
    def check(drawn, horizon):
        base_arg, recs, offsets = drawn
        data = encode_batch(recs, compression=compression, base_offset=base_arg, delete_horizon_ms=horizon)
        (b,) = read_all(data)
        assert b.has_delete_horizon and b.delete_horizon_ms == horizon == b.base_timestamp
        assert [t for _, t, *_ in flat([b])] == [r["timestamp"] for r in recs]
        assert b.max_timestamp == max([-1] + [r["timestamp"] for r in recs])

    check()


@pytest.mark.parametrize("compression", CODECS_V2)
def test_empty_v2_batch_follows_write_empty_header(compression):
    data = encode_batch(
        [],
        compression=compression,
        base_offset=42,
        producer_id=7,
        producer_epoch=3,
        base_sequence=11,
        transactional=True,
    )
    assert len(data) == 61
    (b,) = read_all(data)
    assert (b.record_count, b.records, b.base_offset, b.last_offset) == (0, [], 42, 42)
    assert (b.base_timestamp, b.max_timestamp, b.compression) == (-1, -1, "none")
    assert (b.producer_id, b.producer_epoch, b.base_sequence, b.is_transactional) == (7, 3, 11, True)
    assert not b.has_delete_horizon
    lat = read_all(encode_batch([], timestamp_type=LAT, log_append_time=123))[0]
    assert (lat.timestamp_type, lat.max_timestamp, lat.base_timestamp) == (LAT, 123, -1)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("compression", CODECS_LEGACY)
def test_legacy_empty_record_list_writes_nothing(magic, compression):
    assert encode_batch([], magic=magic, compression=compression) == b""


def test_offsets_explicit_gaps_implicit_and_inferred_base():
    recs = [NewRecord(value=b"a", offset=10), NewRecord(value=b"b"), NewRecord(value=b"c", offset=20), {"value": b"d"}]
    for magic, compression in COMBOS:
        batches = read_all(encode_batch(recs, magic=magic, compression=compression))
        assert [o for o, *_ in flat(batches)] == [10, 11, 20, 21], (magic, compression)
    (b,) = read_all(encode_batch(recs, base_offset=5))
    assert (b.base_offset, b.last_offset, [r.offset for r in b.records]) == (5, 21, [10, 11, 20, 21])
    (b,) = read_all(encode_batch([{}, {}, {}], base_offset=7))
    assert [r.offset for r in b.records] == [7, 8, 9] and b.records[0].value is None


def test_v1_compressed_wrapper_layout():
    recs = [
        {"value": b"x", "timestamp": 5, "offset": 100},
        {"value": b"y", "timestamp": 9, "offset": 102},
        {"value": b"z", "timestamp": 7, "offset": 103},
    ]
    data = encode_batch(recs, magic=1, compression="gzip")
    entry = codec("legacy_log_entry", 1).parse(data)
    assert entry.offset == 103  # the wrapper's offset is the last inner message's absolute offset
    assert entry.message.timestamp == 9 and entry.message.key is None
    assert [i.offset for i in entry.message.value] == [0, 2, 3]  # relative to the base offset 100
    assert all(i.message.attributes.timestamp_type == "create_time" for i in entry.message.value)
    v0 = codec("legacy_log_entry", 0).parse(
        encode_batch([dict(r, timestamp=-1) for r in recs], magic=0, compression="gzip")
    )
    assert v0.offset == 103 and [i.offset for i in v0.message.value] == [100, 102, 103]  # absolute in v0


@pytest.mark.parametrize("magic,hc", [(0, 0x1A), (1, 0x82)])
def test_legacy_lz4_header_checksum(magic, hc):
    data = encode_batch([{"value": b"v"}], magic=magic, compression="lz4")
    value = codec("legacy_log_entry", magic).parse(data, parse_contents=False).message.value
    assert value[:7] == bytes.fromhex("04224d186040") + bytes([hc])


@pytest.mark.parametrize(
    "compression,levels", [("gzip", [1, 5, 9, -1]), ("lz4", [1, 3, 9, 17]), ("zstd", [-5, 1, 19, 22])]
)
def test_compression_levels_are_applied(compression, levels):
    recs = [{"key": b"k%d" % i, "value": b"abcdefgh" * (i + 20), "timestamp": 1000 + i} for i in range(30)]
    raw_v2 = encode_batch(recs)[61:]
    for level in levels:
        data = encode_batch(recs, compression=compression, compression_level=level)
        assert data[61:] == compress_lib.compress(compression, raw_v2, magic=2, level=level)
        assert flat(read_all(data)) == flat(read_all(encode_batch(recs)))
        if compression != "zstd":
            for magic in (0, 1):
                legacy = [dict(r, timestamp=-1) for r in recs] if magic == 0 else recs
                plain = encode_batch(legacy, magic=magic)
                ts_free = encode_batch(legacy, magic=magic, compression=compression, compression_level=level)
                value = codec("legacy_log_entry", magic).parse(ts_free, parse_contents=False).message.value
                # v0 inner offsets are absolute (= the plain entries); v1 relative to base 0, the same here.
                assert value == compress_lib.compress(compression, plain, magic=magic, level=level)
                assert flat(read_all(ts_free)) == flat(read_all(plain))


def test_record_inputs_are_interchangeable():
    record = Record(offset=3, timestamp=17, timestamp_type=CT, key=b"k", value=b"v", headers=[("h", b"1")])
    as_new = NewRecord(key=b"k", value=bytearray(b"v"), headers=[("h", memoryview(b"1"))], timestamp=17, offset=3)
    as_dict = {"key": b"k", "value": b"v", "headers": [("h", b"1")], "timestamp": 17, "offset": 3}
    outs = {encode_batch([r]) for r in (record, as_new, as_dict)}
    assert len(outs) == 1
    assert flat(read_all(outs.pop())) == [(3, 17, b"k", b"v", [("h", b"1")])]


def test_allow_lossy_drops_headers_and_v0_timestamps():
    recs = [{"key": b"k", "value": b"v", "headers": [("h", b"x")], "timestamp": 55}]
    assert flat(read_all(encode_batch(recs, magic=1, allow_lossy=True))) == [(0, 55, b"k", b"v", [])]
    assert flat(read_all(encode_batch(recs, magic=0, allow_lossy=True))) == [(0, -1, b"k", b"v", [])]


# ---------------------------------------------------------------------------- control batches


@pytest.mark.parametrize("kind", ["commit", "abort", "COMMIT"])
def test_transaction_markers(kind):
    data = encode_control_batch(
        kind,
        producer_id=4242,
        producer_epoch=7,
        coordinator_epoch=99,
        offset=1234,
        timestamp=1_700_000_000_000,
        partition_leader_epoch=12,
    )
    (b,) = read_all(data)
    assert b.is_control and b.is_transactional and not b.has_delete_horizon
    assert (b.producer_id, b.producer_epoch, b.base_sequence) == (4242, 7, -1)
    assert (b.base_offset, b.last_offset, b.partition_leader_epoch, b.compression) == (1234, 1234, 12, "none")
    (r,) = b.records
    assert (r.offset, r.timestamp, r.sequence) == (1234, 1_700_000_000_000, -1)
    assert r.control.name == kind.upper() and r.control.coordinator_epoch == 99
    assert r.control.version == 0 and r.control.marker_version == 0


@pytest.mark.parametrize(
    "kind,type_id",
    [("leader_change", 2), ("snapshot_header", 3), ("snapshot_footer", 4), ("kraft_version", 5), ("kraft_voters", 6)],
)
def test_kraft_control_batches(kind, type_id):
    value = b"\x00\x00\x00\x00\x00\x01\x00"
    (b,) = read_all(encode_control_batch(kind, value=value, offset=9, timestamp=5, partition_leader_epoch=3))
    assert b.is_control and not b.is_transactional
    assert (b.producer_id, b.producer_epoch, b.base_sequence, b.partition_leader_epoch) == (-1, -1, -1, 3)
    (r,) = b.records
    assert (r.offset, r.timestamp, r.value) == (9, 5, value)
    assert r.control.type == type_id and r.control.name == kind.upper()


# ---------------------------------------------------------------------------- the spec's worked examples


def test_worked_example_11_1_v2_batch():
    assert encode_batch(KEY_VALUE, partition_leader_epoch=0) == V2_BATCH_11_1
    # As a producer writes it: PLE -1, same CRC (PLE is outside the CRC).
    assert encode_batch(KEY_VALUE) == V2_BATCH_11_1[:12] + b"\xff" * 4 + V2_BATCH_11_1[16:]


def test_worked_example_11_2_v0():
    assert encode_batch([{"key": b"key", "value": b"value"}], magic=0) == V0_ENTRY_11_2


def test_worked_example_11_3_v1():
    assert encode_batch(KEY_VALUE, magic=1) == V1_ENTRY_11_3


def test_worked_example_11_4_commit_marker():
    assert (
        encode_control_batch(
            "commit", producer_id=1000, producer_epoch=0, coordinator_epoch=5, timestamp=0, partition_leader_epoch=0
        )
        == COMMIT_11_4
    )


def test_worked_example_11_5_lz4():
    assert encode_batch(KEY_VALUE, compression="lz4", partition_leader_epoch=0) == LZ4_11_5


def test_worked_example_11_6_snappy_and_zstd_streams():
    assert encode_batch(KEY_VALUE, compression="snappy")[61:] == SNAPPY_11_6
    assert encode_batch(KEY_VALUE, compression="zstd")[61:] == ZSTD_11_6


def test_worked_example_11_7_headers():
    data = encode_batch([{"key": b"k", "value": None, "headers": [("h", None), ("h2", b"x")], "timestamp": 0}])
    assert data[61:] == RECORD_11_7


# ---------------------------------------------------------------------------- refusals

ONE = [{"key": b"k", "value": b"v"}]
HDR = [{"value": b"v", "headers": [("h", b"x")]}]


@pytest.mark.parametrize(
    "kwargs,records",
    [
        # codecs and levels
        ({"magic": 0, "compression": "zstd"}, ONE),
        ({"magic": 1, "compression": "zstd"}, ONE),
        ({"magic": 1, "compression": "zstd", "allow_lossy": True}, ONE),
        ({"compression": "brotli"}, ONE),
        ({"compression": 5}, ONE),
        ({"compression": 7}, ONE),
        ({"compression": None}, ONE),
        ({"compression": "gzip", "compression_level": 0}, ONE),
        ({"compression": "gzip", "compression_level": 10}, ONE),
        ({"compression": "lz4", "compression_level": 0}, ONE),
        ({"compression": "lz4", "compression_level": 18}, ONE),
        ({"compression": "zstd", "compression_level": 23}, ONE),
        ({"compression": "zstd", "compression_level": -131073}, ONE),
        ({"compression": "snappy", "compression_level": 1}, ONE),
        ({"compression": "none", "compression_level": 1}, ONE),
        ({"compression": "gzip", "compression_level": 9.0}, ONE),
        ({"compression": "gzip", "compression_level": 0}, []),
        # magic
        ({"magic": 3}, ONE),
        ({"magic": -1}, ONE),
        ({"magic": True}, ONE),
        # headers and timestamps below v2
        ({"magic": 0}, HDR),
        ({"magic": 1}, HDR),
        ({"magic": 1, "compression": "gzip"}, HDR),
        ({"magic": 0}, [{"value": b"v", "timestamp": 5}]),
        ({"magic": 0, "timestamp_type": LAT, "log_append_time": 5}, ONE),
        ({"magic": 1, "timestamp_type": TimestampType.NO_TIMESTAMP_TYPE}, ONE),
        ({"magic": 2, "timestamp_type": TimestampType.NO_TIMESTAMP_TYPE}, ONE),
        ({"timestamp_type": 7}, ONE),
        # producer state, transactions, delete horizon, leader epoch below v2
        ({"magic": 1, "transactional": True, "producer_id": 1, "producer_epoch": 0, "base_sequence": 0}, ONE),
        ({"magic": 0, "producer_id": 1, "producer_epoch": 0, "base_sequence": 0}, ONE),
        ({"magic": 1, "producer_id": 1, "producer_epoch": 0, "base_sequence": 0, "allow_lossy": True}, ONE),
        ({"magic": 1, "base_sequence": 0}, ONE),
        ({"magic": 1, "producer_epoch": 0}, ONE),
        ({"magic": 1, "delete_horizon_ms": 10}, ONE),
        ({"magic": 0, "delete_horizon_ms": 10}, ONE),
        ({"magic": 1, "partition_leader_epoch": 0}, ONE),
        # v2 producer rules
        ({"transactional": True}, ONE),
        ({"transactional": True, "producer_epoch": 0, "base_sequence": 0}, ONE),
        ({"producer_id": 5}, ONE),
        ({"producer_id": 5, "producer_epoch": 0}, ONE),
        ({"producer_id": 5, "base_sequence": 0}, ONE),
        ({"producer_id": 5, "producer_epoch": 0, "base_sequence": -2}, ONE),
        ({"producer_id": 5, "producer_epoch": 2**15, "base_sequence": 0}, ONE),
        ({"base_sequence": 2**31}, ONE),
        ({"partition_leader_epoch": 2**31}, ONE),
        ({"transactional": 1, "producer_id": 5, "producer_epoch": 0, "base_sequence": 0}, ONE),
        # timestamps
        ({}, [{"value": b"v", "timestamp": -2}]),
        ({}, [{"value": b"v", "timestamp": 2**63}]),
        ({}, [{"value": b"v", "timestamp": "now"}]),
        ({"timestamp_type": LAT}, ONE),
        ({"timestamp_type": LAT, "log_append_time": -1}, ONE),
        ({"log_append_time": 5}, ONE),
        ({"delete_horizon_ms": -1}, ONE),
        ({"delete_horizon_ms": 5}, []),
        ({}, [{"value": b"v", "timestamp": -1}, {"value": b"v", "timestamp": 2**63 - 1}]),
        # offsets
        ({}, [{"offset": 5}, {"offset": 5}]),
        ({}, [{"offset": 5}, {"offset": 4}]),
        ({"base_offset": 10}, [{"offset": 5}]),
        ({}, [{"offset": 0}, {"offset": 2**31}]),
        ({"base_offset": -1}, ONE),
        ({}, [{"offset": -3}]),
        ({"base_offset": 2**63}, ONE),
        # record contents
        ({}, [{"value": b"v", "headers": [(None, b"x")]}]),
        ({}, [{"value": b"v", "headers": [(b"h", b"x")]}]),
        ({}, [{"value": b"v", "headers": [("h", "text")]}]),
        ({}, [{"value": b"v", "headers": [("h",)]}]),
        ({}, [{"value": b"v", "headers": "h"}]),
        ({}, [{"value": "text"}]),
        ({}, [{"key": 5}]),
        ({}, [{"value": b"v", "partition": 3}]),
        ({}, [b"raw bytes"]),
        ({}, [Record(0, 0, CT, b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00", control=object())]),
        ({}, {"value": b"v"}),
        ({}, b"not records"),
    ],
)
def test_encode_batch_refusals(kwargs, records):
    with pytest.raises(EncodeError):
        encode_batch(records, **kwargs)


@pytest.mark.parametrize(
    "kind,kwargs",
    [
        ("prepare", {"producer_id": 1, "producer_epoch": 0}),
        (1, {"producer_id": 1, "producer_epoch": 0}),
        ("commit", {}),
        ("commit", {"producer_id": 1}),
        ("commit", {"producer_id": -1, "producer_epoch": -1}),
        ("commit", {"producer_id": 1, "producer_epoch": -1}),
        ("abort", {"producer_id": 1, "producer_epoch": 0, "value": b"\x00" * 6}),
        ("abort", {"producer_id": 1, "producer_epoch": 0, "coordinator_epoch": 2**31}),
        ("abort", {"producer_id": 1, "producer_epoch": 2**15}),
        ("abort", {"producer_id": 1, "producer_epoch": 0, "timestamp": -7}),
        ("abort", {"producer_id": 1, "producer_epoch": 0, "offset": -1}),
        ("abort", {"producer_id": 1, "producer_epoch": 0, "transactional": "yes"}),
        ("leader_change", {"producer_id": 1, "producer_epoch": 0}),
        ("leader_change", {"transactional": True}),
        ("snapshot_header", {"coordinator_epoch": 3}),
        ("snapshot_footer", {"value": "text"}),
    ],
)
def test_encode_control_batch_refusals(kind, kwargs):
    with pytest.raises(EncodeError):
        encode_control_batch(kind, **kwargs)


# ---------------------------------------------------------------------------- conversion


def _v2_source():
    recs = [
        {"key": b"a", "value": b"1", "timestamp": 10, "offset": 100},
        {"key": None, "value": b"2", "timestamp": 30, "offset": 103},
        {"key": b"c", "value": None, "timestamp": 20, "offset": 104},
    ]
    return recs, read_all(encode_batch(recs, compression="gzip"))


@pytest.mark.parametrize("magic,compression", COMBOS, ids=COMBO_IDS)
def test_convert_keeps_offsets_and_timestamps(magic, compression):
    recs, batches = _v2_source()
    out = read_all(convert_batches(batches, magic=magic, compression=compression, allow_lossy=magic == 0))
    want = [(r["offset"], r["timestamp"] if magic else -1, r["key"], r["value"], []) for r in recs]
    assert flat(out) == want
    assert all(b.magic == magic for b in out)
    if compression != "none":
        assert all(b.compression == compression for b in out)
    # ... and back up to v2 with the same records.
    back = read_all(convert_batches(out, magic=2, compression="none"))
    assert flat(back) == want


def test_convert_property_v2_to_every_target():
    @SETTINGS
    @given(record_lists(headers=False, min_size=1), st.sampled_from(COMBOS), st.sampled_from(CODECS_V2))
    def check(drawn, target, source_codec):
        base_arg, recs, offsets = drawn
        source = read_all(encode_batch(recs, compression=source_codec, base_offset=base_arg))
        magic, compression = target
        out = read_all(convert_batches(source, magic=magic, compression=compression, allow_lossy=magic == 0))
        assert flat(out) == [
            (o, r["timestamp"] if magic else -1, r["key"], r["value"], []) for o, r in zip(offsets, recs)
        ]

    check()


def test_convert_v2_to_v2_keeps_batch_metadata():
    recs = [
        {"value": b"x", "timestamp": 50, "headers": [("h", None)]},
        {"value": b"y", "timestamp": 40},
        {"value": b"z", "timestamp": 60},
    ]
    data = encode_batch(
        recs,
        base_offset=1000,
        producer_id=77,
        producer_epoch=5,
        base_sequence=2**31 - 2,
        transactional=True,
        partition_leader_epoch=9,
        delete_horizon_ms=45,
        compression="lz4",
    )
    (src,) = read_all(data)
    # Compaction removed the last record but kept the batch's last offset.
    src = dataclasses.replace(src, records=src.records[:2])
    (out,) = read_all(convert_batches([src], magic=2, compression="zstd", compression_level=7))
    assert out.compression == "zstd" and out.record_count == 2
    for field in (
        "base_offset",
        "last_offset",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "is_transactional",
        "partition_leader_epoch",
        "has_delete_horizon",
        "base_timestamp",
        "timestamp_type",
    ):
        assert getattr(out, field) == getattr(src, field), field
    assert out.last_offset == 1002
    assert flat([out]) == flat([src])
    assert [r.sequence for r in out.records] == [2**31 - 2, 2**31 - 1]


def test_convert_log_append_time():
    data = encode_batch(
        [{"value": b"a", "timestamp": 1}, {"value": b"b", "timestamp": 2}],
        magic=1,
        compression="snappy",
        timestamp_type=LAT,
        log_append_time=999,
        base_offset=50,
    )
    for magic, compression in [(2, "none"), (2, "zstd"), (1, "gzip"), (1, "none")]:
        out = read_all(convert_batches(read_all(data), magic=magic, compression=compression))
        assert all(b.timestamp_type is LAT and b.max_timestamp == 999 for b in out)
        assert [(o, t) for o, t, *_ in flat(out)] == [(50, 999), (51, 999)]
    with pytest.raises(EncodeError):
        convert_batches(read_all(data), magic=0, compression="none")


def test_convert_v0_up_gives_create_time_without_timestamps():
    data = encode_batch([{"value": b"a"}, {"value": b"b"}], magic=0, compression="gzip", base_offset=3)
    (b,) = read_all(convert_batches(read_all(data), magic=2, compression="none"))
    assert b.timestamp_type is CT and (b.base_timestamp, b.max_timestamp) == (-1, -1)
    assert [(r.offset, r.timestamp) for r in b.records] == [(3, -1), (4, -1)]


def test_convert_control_batches_stay_v2_and_uncompressed():
    log = encode_batch(
        [{"value": b"t"}], producer_id=8, producer_epoch=1, base_sequence=0, transactional=True
    ) + encode_control_batch("abort", producer_id=8, producer_epoch=1, coordinator_epoch=4, offset=1)
    batches = read_all(log)
    out = read_all(convert_batches(batches, magic=2, compression="gzip"))
    assert [b.compression for b in out] == ["gzip", "none"]
    assert out[1].is_control and out[1].records[0].control.name == "ABORT"
    assert out[1].records[0].control.coordinator_epoch == 4
    assert convert_batches([batches[1]], magic=2, compression="none") == log[len(log) - batches[1].size :]
    with pytest.raises(EncodeError):
        convert_batches([batches[1]], magic=1, compression="none")
    assert convert_batches([batches[1]], magic=1, compression="none", allow_lossy=True) == b""
    # The transactional data batch itself is lossy into v1 too.
    with pytest.raises(EncodeError):
        convert_batches([batches[0]], magic=1, compression="none")
    (b,) = read_all(convert_batches(batches, magic=1, compression="none", allow_lossy=True))
    assert flat([b]) == [(0, -1, None, b"t", [])]


@pytest.mark.parametrize(
    "magic,compression,source",
    [
        (1, "none", [{"value": b"v", "headers": [("h", b"x")]}]),  # headers
        (0, "gzip", [{"value": b"v", "timestamp": 5}]),  # timestamps into v0
        (1, "zstd", [{"value": b"v"}]),  # zstd below v2
        (1, "none", "horizon"),  # delete horizon
        (0, "none", "producer"),  # idempotent producer state
        (3, "none", [{"value": b"v"}]),
        (2, "brotli", [{"value": b"v"}]),
    ],
)
def test_convert_refusals(magic, compression, source):
    if source == "horizon":
        data = encode_batch([{"value": b"v"}], delete_horizon_ms=5)
    elif source == "producer":
        data = encode_batch([{"value": b"v"}], producer_id=1, producer_epoch=0, base_sequence=0)
    else:
        data = encode_batch(source)
    with pytest.raises(EncodeError):
        convert_batches(read_all(data), magic=magic, compression=compression)
    with pytest.raises(EncodeError):
        convert_batches([object()], magic=2, compression="none")


def test_convert_allow_lossy_drops_what_legacy_cannot_hold():
    data = encode_batch(
        [{"value": b"v", "headers": [("h", b"x")], "timestamp": 5}],
        producer_id=1,
        producer_epoch=0,
        base_sequence=0,
        delete_horizon_ms=3,
    )
    assert flat(read_all(convert_batches(read_all(data), magic=1, compression="lz4", allow_lossy=True))) == [
        (0, 5, None, b"v", [])
    ]
    assert flat(read_all(convert_batches(read_all(data), magic=0, compression="none", allow_lossy=True))) == [
        (0, -1, None, b"v", [])
    ]


def test_convert_empty_v2_batch():
    src = read_all(encode_batch([], base_offset=10, producer_id=3, producer_epoch=1, base_sequence=5))
    (b,) = read_all(convert_batches(src, magic=2, compression="gzip"))
    assert (b.record_count, b.base_offset, b.producer_id, b.compression) == (0, 10, 3, "none")
    assert convert_batches(read_all(encode_batch([])), magic=1, compression="none") == b""
