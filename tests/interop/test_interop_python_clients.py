"""kcodec's writer and reader against the record code of two Python Kafka clients,
used here as test-only oracles:

* kafka-python 3.x (``kafka.record``: DefaultRecordBatchBuilder,
  LegacyRecordBatchBuilder, MemoryRecordsBuilder, MemoryRecords);
* aiokafka (``aiokafka.record``), both its C extension (the default, asserted to
  be the one in use) and its pure-Python variant.

(a) For the same input, kcodec's uncompressed output equals the client's byte
    for byte, magic 0, 1 and 2 (partitionLeaderEpoch set to what the client
    writes: kafka-python 0, aiokafka -1).
(b) The client's MemoryRecords reads everything kcodec writes, every magic x
    codec, with the same offsets, keys, values, headers and timestamps.
(c) kcodec reads everything the client's builders write, every magic x codec.

Gaps, each asserted rather than silently skipped where possible:
* kafka-python needs python-snappy for snappy, which is not installed: snappy
  cells are skipped for kafka-python when ``kafka.codec.has_snappy()`` is False.
* aiokafka neither writes nor reads LZ4 at magic 0 (its UnsupportedCodecError,
  KAFKA-3160); the test asserts that refusal.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util

import aiokafka.codec
import aiokafka.errors
import aiokafka.record.default_records as aio_default
import aiokafka.record.legacy_records as aio_legacy
import aiokafka.record.memory_records as aio_memory
import kafka.codec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record import MemoryRecords as KpMemoryRecords
from kafka.record import MemoryRecordsBuilder as KpMemoryRecordsBuilder
from kafka.record.default_records import DefaultRecordBatchBuilder as KpDefaultBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder as KpLegacyBuilder

from kcodec.records.encode import encode_batch, encode_control_batch
from kcodec.records.model import TimestampType
from kcodec.records.reader import read_batches

CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
COMBOS = [(2, c) for c in CODEC_IDS] + [(m, c) for m in (0, 1) for c in ("none", "gzip", "snappy", "lz4")]
COMBO_IDS = [f"v{m}-{c}" for m, c in COMBOS]
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LAT = TimestampType.LOG_APPEND_TIME


# ---------------------------------------------------------------------------- the clients under test


class Client:
    """One client's record writer and reader behind a common interface."""

    def __init__(self, name, default_builder, legacy_builder, memory_records, ple, unsupported):
        self.name, self.default_builder, self.legacy_builder = name, default_builder, legacy_builder
        self.memory_records, self.ple = memory_records, ple
        self.unsupported = unsupported  # (magic, codec) -> reason: the client cannot write or read it

    def __repr__(self):
        return self.name

    def write(self, magic, compression, records, *, producer=None):
        """Bytes the client's builder writes for ``records`` (offsets 0..n-1 as deltas)."""
        cid = CODEC_IDS[compression]
        if magic == 2:
            p = producer or {}
            b = self.default_builder(
                magic=2,
                compression_type=cid,
                is_transactional=int(p.get("transactional", 0)),
                producer_id=p.get("producer_id", -1),
                producer_epoch=p.get("producer_epoch", -1),
                base_sequence=p.get("base_sequence", -1),
                batch_size=1 << 24,
            )
            for i, r in enumerate(records):
                assert (
                    b.append(i, timestamp=r["timestamp"], key=r["key"], value=r["value"], headers=list(r["headers"]))
                    is not None
                )
        else:
            b = self.legacy_builder(magic, cid, 1 << 24)
            for i, r in enumerate(records):
                assert b.append(i, timestamp=r["timestamp"], key=r["key"], value=r["value"]) is not None
        return bytes(b.build())

    def read(self, data):
        """[(batch, [records])] as the client's MemoryRecords reads them; every
        batch's CRC is checked first (kafka-python requires that order)."""
        mr = self.memory_records(bytes(data))
        out = []
        while True:
            batch = mr.next_batch()
            if batch is None:
                return out
            assert batch.validate_crc(), f"{self.name}: CRC of the batch at {batch.base_offset} is invalid"
            out.append((batch, list(batch)))

    def skip_if_unsupported(self, magic, compression):
        reason = self.unsupported.get((magic, compression))
        if reason and reason.startswith("skip:"):
            pytest.skip(f"{self.name}: {reason[5:]}")
        return reason


def _aio_ext_is_c() -> bool:
    spec = importlib.util.find_spec(aio_memory.MemoryRecords.__module__)
    return (
        spec is not None
        and spec.origin is not None
        and spec.origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    )


_KP_UNSUPPORTED = (
    {}
    if kafka.codec.has_snappy()
    else {(m, "snappy"): "skip:python-snappy is not installed, kafka-python has no snappy codec" for m in (0, 1, 2)}
)
_AIO_UNSUPPORTED = {(0, "lz4"): "refuses: aiokafka has no magic-0 LZ4 (KAFKA-3160)"}

CLIENTS = [
    Client("kafka-python", KpDefaultBuilder, KpLegacyBuilder, KpMemoryRecords, 0, _KP_UNSUPPORTED),
    Client(
        "aiokafka-C",
        aio_default.DefaultRecordBatchBuilder,
        aio_legacy.LegacyRecordBatchBuilder,
        aio_memory.MemoryRecords,
        -1,
        _AIO_UNSUPPORTED,
    ),
    Client(
        "aiokafka-py",
        aio_default._DefaultRecordBatchBuilderPy,
        aio_legacy._LegacyRecordBatchBuilderPy,
        aio_memory._MemoryRecordsPy,
        -1,
        _AIO_UNSUPPORTED,
    ),
]
CLIENT_IDS = [c.name for c in CLIENTS]


def test_aiokafka_c_extension_is_in_use():
    from aiokafka.util import NO_EXTENSIONS

    assert not NO_EXTENSIONS
    for cls in (
        aio_memory.MemoryRecords,
        aio_default.DefaultRecordBatchBuilder,
        aio_legacy.LegacyRecordBatchBuilder,
        aio_default.DefaultRecordBatch,
    ):
        assert cls.__module__.startswith("aiokafka.record._crecords."), cls
    assert _aio_ext_is_c()
    # ... and the pure-Python variants tested alongside really are Python.
    assert aio_memory._MemoryRecordsPy.__module__ == "aiokafka.record.memory_records"
    assert aiokafka.codec.has_snappy() and aiokafka.codec.has_lz4() and aiokafka.codec.has_zstd()


# ---------------------------------------------------------------------------- inputs

headers_st = st.lists(st.tuples(st.text(max_size=6), st.none() | st.binary(max_size=8)), max_size=3)


@st.composite
def record_lists(draw, *, magic, min_size=1, max_size=6):
    n = draw(st.integers(min_size, max_size))
    first_ts = draw(st.integers(0, 2**42))
    recs = []
    for _ in range(n):
        recs.append(
            {
                "key": draw(st.none() | st.binary(max_size=12)),
                "value": draw(st.none() | st.binary(max_size=40)),
                "headers": draw(headers_st) if magic == 2 else [],
                # Around one time, as producers write; -1 only at v0 (no timestamps there).
                "timestamp": -1 if magic == 0 else first_ts + draw(st.integers(-5000, 5000)),
            }
        )
    if magic > 0:
        for r in recs:
            r["timestamp"] = max(r["timestamp"], 0)
    return recs


def compressible(n=20, magic=2):
    """Records the clients really compress (kafka-python's v2 builder falls back to
    none when compression does not shrink the data)."""
    return [
        {
            "key": b"key-%d" % i,
            "value": b"value %d " % i * 40,
            "headers": [("trace", b"t" * 10), ("null", None)] if magic == 2 else [],
            "timestamp": -1 if magic == 0 else 1_700_000_000_000 + i,
        }
        for i in range(n)
    ]


def _views(records, magic, offsets=None):
    """(offset, timestamp, key, value, headers), as every reader should report them."""
    offsets = offsets if offsets is not None else range(len(records))
    return [
        (o, r["timestamp"] if magic else -1, r["key"], r["value"], [tuple(h) for h in r["headers"]])
        for o, r in zip(offsets, records)
    ]


def client_view(pairs):
    out = []
    for _, recs in pairs:
        for r in recs:
            ts = -1 if r.timestamp is None else r.timestamp
            out.append((r.offset, ts, r.key, r.value, [tuple(h) for h in r.headers]))
    return out


def kcodec_view(data):
    batches = list(read_batches(data, strict=True))
    assert sum(b.size for b in batches) == len(data) and all(b.crc_valid for b in batches)
    return batches, [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for b in batches for r in b.records]


# ---------------------------------------------------------------------------- (a) byte for byte, uncompressed


@pytest.mark.parametrize("client", CLIENTS, ids=CLIENT_IDS)
@pytest.mark.parametrize("magic", [0, 1, 2])
def test_uncompressed_bytes_equal_client(client, magic):
    @SETTINGS
    @given(record_lists(magic=magic), st.booleans(), st.data())
    def check(records, with_producer, data):
        producer = {}
        if magic == 2 and with_producer:
            producer = {
                "producer_id": data.draw(st.integers(0, 2**40)),
                "producer_epoch": data.draw(st.integers(0, 2**15 - 1)),
                "base_sequence": data.draw(st.integers(0, 2**31 - 1)),
                "transactional": data.draw(st.booleans()),
            }
        theirs = client.write(magic, "none", records, producer=producer)
        extra = {"partition_leader_epoch": client.ple} if magic == 2 else {}
        ours = encode_batch(records, magic=magic, **extra, **producer)
        assert ours == theirs

    check()


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_uncompressed_bytes_equal_kafka_python_memory_records_builder(magic):
    records = compressible(5, magic)
    b = KpMemoryRecordsBuilder(magic=magic, compression_type=0, batch_size=1 << 20)
    for r in records:
        b.append(timestamp=r["timestamp"], key=r["key"], value=r["value"], headers=r["headers"])
    b.close()
    extra = {"partition_leader_epoch": 0} if magic == 2 else {}
    assert encode_batch(records, magic=magic, **extra) == bytes(b.buffer())
    if magic == 2:
        t = KpMemoryRecordsBuilder(
            magic=2,
            compression_type=0,
            batch_size=1 << 20,
            transactional=True,
            producer_id=123,
            producer_epoch=4,
            base_sequence=56,
        )
        for r in records:
            t.append(timestamp=r["timestamp"], key=r["key"], value=r["value"], headers=r["headers"])
        t.close()
        assert encode_batch(
            records, partition_leader_epoch=0, transactional=True, producer_id=123, producer_epoch=4, base_sequence=56
        ) == bytes(t.buffer())


# ---------------------------------------------------------------------------- (b) clients read kcodec


@pytest.mark.parametrize("client", CLIENTS, ids=CLIENT_IDS)
@pytest.mark.parametrize("magic,compression", COMBOS, ids=COMBO_IDS)
def test_client_reads_kcodec(client, magic, compression):
    refusal = client.skip_if_unsupported(magic, compression)

    @SETTINGS
    @given(record_lists(magic=magic, max_size=8), st.integers(0, 2**40), st.booleans())
    def check(records, base_offset, gaps):
        offsets = [base_offset + i * (3 if gaps else 1) for i in range(len(records))]
        inputs = [dict(r, offset=o) for r, o in zip(records, offsets)]
        data = encode_batch(inputs, magic=magic, compression=compression)
        if refusal:
            with pytest.raises(aiokafka.errors.UnsupportedCodecError):
                client.read(data)
            return
        pairs = client.read(data)
        assert client_view(pairs) == _views(records, magic, offsets)
        for batch, _ in pairs:
            if magic == 2:
                assert batch.compression_type == CODEC_IDS[compression]

    check()


@pytest.mark.parametrize("client", CLIENTS, ids=CLIENT_IDS)
@pytest.mark.parametrize(
    "magic,compression", [c for c in COMBOS if c[0] > 0], ids=[i for c, i in zip(COMBOS, COMBO_IDS) if c[0] > 0]
)
def test_client_reads_kcodec_log_append_time(client, magic, compression):
    client.skip_if_unsupported(magic, compression)
    records = compressible(4, magic)
    data = encode_batch(
        records, magic=magic, compression=compression, timestamp_type=LAT, log_append_time=1_234_567, base_offset=10
    )
    pairs = client.read(data)
    assert [(r.offset, r.timestamp, r.timestamp_type) for _, rs in pairs for r in rs] == [
        (10 + i, 1_234_567, 1) for i in range(4)
    ]


@pytest.mark.parametrize("client", CLIENTS, ids=CLIENT_IDS)
def test_client_reads_kcodec_producer_state_and_empty_batch(client):
    records = compressible(3)
    data = encode_batch(
        records,
        compression="gzip",
        base_offset=500,
        producer_id=9,
        producer_epoch=2,
        base_sequence=40,
        transactional=True,
    )
    ((batch, recs),) = client.read(data)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (9, 2, 40)
    assert batch.is_transactional and not batch.is_control_batch
    assert [r.offset for r in recs] == [500, 501, 502]
    ((empty, none),) = client.read(encode_batch([], base_offset=7, producer_id=9, producer_epoch=2, base_sequence=43))
    assert none == [] and empty.producer_id == 9


@pytest.mark.parametrize("client", CLIENTS, ids=CLIENT_IDS)
@pytest.mark.parametrize("kind", ["commit", "abort"])
def test_client_reads_kcodec_control_batch(client, kind):
    data = encode_control_batch(kind, producer_id=1000, producer_epoch=3, coordinator_epoch=5, offset=77, timestamp=0)
    ((batch, recs),) = client.read(data)
    assert batch.is_control_batch and batch.is_transactional
    (r,) = recs
    assert r.offset == 77 and r.key == b"\x00\x00\x00" + (b"\x01" if kind == "commit" else b"\x00")
    assert r.value == b"\x00\x00\x00\x00\x00\x05"
    if client.name == "kafka-python":
        assert r.type == (1 if kind == "commit" else 0) and getattr(r, kind)
    else:
        from aiokafka.record.control_record import ABORT_MARKER, COMMIT_MARKER, ControlRecord

        assert ControlRecord.parse(r.key) == (COMMIT_MARKER if kind == "commit" else ABORT_MARKER)


# ---------------------------------------------------------------------------- (c) kcodec reads clients


@pytest.mark.parametrize("client", CLIENTS, ids=CLIENT_IDS)
@pytest.mark.parametrize("magic,compression", COMBOS, ids=COMBO_IDS)
def test_kcodec_reads_client(client, magic, compression):
    refusal = client.skip_if_unsupported(magic, compression)
    if refusal:
        with pytest.raises(aiokafka.errors.UnsupportedCodecError):
            client.write(magic, compression, compressible(3, magic))
        return
    records = compressible(20, magic)
    batches, view = kcodec_view(client.write(magic, compression, records))
    assert view == _views(records, magic)
    if compression == "none":
        assert all(b.compression == "none" for b in batches)
    else:
        # The client really compressed: one v2 batch or one legacy wrapper in that codec.
        (b,) = batches
        assert b.compression == compression and b.magic == magic

    @SETTINGS
    @given(record_lists(magic=magic, max_size=8))
    def check(drawn):
        _, got = kcodec_view(client.write(magic, compression, drawn))
        assert got == _views(drawn, magic)

    check()


@pytest.mark.parametrize("client", CLIENTS, ids=CLIENT_IDS)
@pytest.mark.parametrize("compression", list(CODEC_IDS))
def test_kcodec_reads_client_producer_state(client, compression):
    client.skip_if_unsupported(2, compression)
    records = compressible(10)
    data = client.write(
        2,
        compression,
        records,
        producer={"producer_id": 31, "producer_epoch": 4, "base_sequence": 2**31 - 3, "transactional": True},
    )
    (b,), view = kcodec_view(data)
    assert view == _views(records, 2)
    assert (b.producer_id, b.producer_epoch, b.base_sequence, b.is_transactional) == (31, 4, 2**31 - 3, True)
    assert b.partition_leader_epoch == client.ple
    # Sequences wrap past Int32.MAX to 0, as Kafka's incrementSequence.
    assert [r.sequence for r in b.records][:4] == [2**31 - 3, 2**31 - 2, 2**31 - 1, 0]


@pytest.mark.parametrize(
    "magic,compression",
    [c for c in COMBOS if c[1] != "none"],
    ids=[i for c, i in zip(COMBOS, COMBO_IDS) if c[1] != "none"],
)
def test_kafka_python_memory_records_builder_output_reads_in_kcodec(magic, compression):
    CLIENTS[0].skip_if_unsupported(magic, compression)
    records = compressible(15, magic)
    b = KpMemoryRecordsBuilder(magic=magic, compression_type=CODEC_IDS[compression], batch_size=1 << 20, offset=0)
    for r in records:
        b.append(timestamp=r["timestamp"], key=r["key"], value=r["value"], headers=r["headers"])
    b.close()
    (batch,), view = kcodec_view(bytes(b.buffer()))
    assert batch.compression == compression and view == _views(records, magic)
