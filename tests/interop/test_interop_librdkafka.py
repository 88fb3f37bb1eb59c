"""Interop with librdkafka (through confluent-kafka's built-in mock cluster).

1. librdkafka writes, kcodec reads: a confluent_kafka.Producer produces into the
   mock cluster; the stored log is fetched raw with a hand-framed Fetch request
   (tests/helpers/kafka_wire.py) and decoded with kcodec's read_batches.
2. kcodec writes, librdkafka reads: kcodec-built batches go to the mock broker
   in a hand-framed Produce request; a confluent_kafka.Consumer (check.crcs)
   reads them back.
3. Transactions: a transactional confluent_kafka.Producer commits one and aborts
   one transaction; kcodec decodes the data batches and the COMMIT / ABORT
   control batches the mock coordinator writes. And kcodec-written transaction
   markers are recognised as control batches by librdkafka's consumer.

Everything runs on 127.0.0.1; every loop is bounded in count and in time.
"""

from __future__ import annotations

import re
import struct
import time
from dataclasses import dataclass

import pytest

ck = pytest.importorskip("confluent_kafka")
crc32c_lib = pytest.importorskip("crc32c")

from kcodec.records.encode import encode_batch, encode_control_batch  # noqa: E402
from kcodec.records.model import Batch, TimestampType  # noqa: E402
from kcodec.records.reader import read_batches  # noqa: E402
from kcodec.runtime.crc import crc32c as kcodec_crc32c  # noqa: E402
from tests.helpers.kafka_wire import error_name  # noqa: E402
from tests.helpers.librdkafka_mock import (  # noqa: E402
    CONSUME_DEADLINE,
    CONSUME_MAX_POLLS,
    FLUSH_TIMEOUT,
    PARTITION,
    Consumed,
    LogEntry,
    Mock,
    consume_with_librdkafka,
    fetch_log,
    mock_cluster,
    produce_with_librdkafka,
    unique_topic,
)

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
LEGACY_CODECS = ["none", "gzip", "snappy", "lz4"]  # zstd needs magic 2
T0 = 1_700_000_000_000


ERR_UNSUPPORTED_VERSION = 35
XERIAL_MAGIC = b"\x82SNAPPY\x00"


# --- the records ----------------------------------------------------------------


@dataclass(frozen=True)
class Rec:
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    timestamp: int = -1

    def as_dict(self) -> dict:
        return {"key": self.key, "value": self.value, "headers": list(self.headers), "timestamp": self.timestamp}


# Compressible values in both halves (every test splits the list at 3): librdkafka sends a
# message set uncompressed when compressing it does not make it smaller.
BIG = b"kcodec interop with librdkafka " * 200
BIG2 = b"a second, different compressible value " * 120

V2_RECORDS = (
    Rec(b"key-0", b"value-0", (("h1", b"one"), ("h-null", None)), T0),
    Rec(b"big", BIG, (("binary", bytes(range(256))),), T0 + 10),
    Rec(None, b"record without a key", (), T0 + 1),
    Rec(b"tombstone", None, (("h", b""),), T0 + 2),
    Rec(b"big-2", BIG2, (("dup", b"1"), ("dup", b"2"), ("clé-ü", b"\x00\xff")), T0 + 3),
    Rec(b"empty-value", b"", (), T0 + 4),
    Rec(b"earlier", b"timestamp before the base timestamp", (), T0 - 5),
)
# v1 messages have no headers; v0 messages have neither headers nor timestamps.
V1_RECORDS = tuple(Rec(r.key, r.value, (), r.timestamp) for r in V2_RECORDS)
V0_RECORDS = tuple(Rec(r.key, r.value, (), -1) for r in V2_RECORDS)
RECORDS_BY_MAGIC = {0: V0_RECORDS, 1: V1_RECORDS, 2: V2_RECORDS}


def data_records(entries: list[LogEntry]) -> list:
    return [r for e in entries if not e.batch.is_control for r in e.batch.records]


def assert_librdkafka_codec(b: Batch, compression: str) -> None:
    """librdkafka keeps the configured codec for a batch unless compressing does not make it
    smaller; a batch holding one of the big compressible values must carry the codec."""
    holds_big = any(r.value in (BIG, BIG2) for r in b.records)
    allowed = {compression} if holds_big or compression == "none" else {compression, "none"}
    assert b.compression in allowed, (
        f"batch @{b.base_offset} ({len(b.records)} records) has codec "
        f"{b.compression}, expected {' or '.join(sorted(allowed))}"
    )


def assert_records_equal(got, expected, *, magic: int, first_offset: int = 0, offsets=None, context: str = ""):
    """kcodec Records ``got`` equal the produced ``expected`` Recs, field by field."""
    assert len(got) == len(expected), f"{context}: {len(got)} records decoded, {len(expected)} produced"
    if offsets is None:
        offsets = range(first_offset, first_offset + len(expected))
    for i, (g, e, off) in enumerate(zip(got, expected, offsets)):
        where = f"{context} record {i}"
        assert g.offset == off, f"{where}: offset {g.offset} != {off}"
        assert g.magic == magic, f"{where}: magic {g.magic} != {magic}"
        assert g.key == e.key, f"{where}: key {g.key!r} != {e.key!r}"
        assert g.value == e.value, f"{where}: value {g.value!r:.80} != {e.value!r:.80}"
        assert list(g.headers) == list(e.headers), f"{where}: headers {g.headers!r} != {list(e.headers)!r}"
        if magic == 0:
            assert g.timestamp == -1 and g.timestamp_type == TimestampType.NO_TIMESTAMP_TYPE, (
                f"{where}: v0 has no timestamp, got {g.timestamp} {g.timestamp_type!r}"
            )
        else:
            assert g.timestamp == e.timestamp, f"{where}: timestamp {g.timestamp} != {e.timestamp}"
            assert g.timestamp_type == TimestampType.CREATE_TIME, f"{where}: {g.timestamp_type!r}"
        assert not g.is_control, f"{where}: unexpected control record"
        if magic < 2:
            assert g.crc_valid, f"{where}: message CRC-32 invalid"


def uvarint(data: bytes) -> int:
    """An unsigned LEB128 varint at the start of ``data`` (snappy's length preamble)."""
    result = 0
    for i, byte in enumerate(data[:5]):
        result |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return result
    raise AssertionError(f"bad uvarint at the start of {data[:5].hex()}")


def stored_records_region(entry: LogEntry) -> bytes:
    """A v2 batch's records bytes as stored (compressed or not): after the 61-byte header."""
    assert entry.batch.magic == 2
    return entry.raw[61:]


# --- kcodec as the writer -------------------------------------------------------------


def kcodec_encode(records, *, magic: int, compression: str, base_offset: int = 0, **options) -> bytes:
    """Log entries for ``records`` from kcodec's writer (one v2 batch; v0/v1: one entry per
    record, or one compressed wrapper)."""
    return encode_batch(
        [r.as_dict() for r in records], magic=magic, compression=compression, base_offset=base_offset, **options
    )


def produce_raw(mock: Mock, topic: str, data: bytes, *, version: int = 3, what: str = "this message set") -> int:
    """Send kcodec's bytes in one Produce request; returns the base offset. Skips when the
    mock broker refuses the message format."""
    with mock.wire() as wire:
        wire.ensure_topic(topic)
        result = wire.produce(topic, PARTITION, data, version=version)
    if result.error_code == ERR_UNSUPPORTED_VERSION:
        pytest.skip(
            f"librdkafka's mock broker refuses {what} (Produce v{version}: "
            f"{error_name(result.error_code)}); it stores only v2 batches and uncompressed v0/v1 messages"
        )
    assert result.error_code == 0, f"Produce v{version} to {topic}: {error_name(result.error_code)}"
    return result.base_offset


# --- librdkafka as the reader ----------------------------------------------------------


def assert_consumed_equal(got: list[Consumed], expected, *, magic: int, offsets, context: str):
    offsets = list(offsets)
    assert len(got) == len(expected), (
        f"{context}: librdkafka delivered {len(got)} messages "
        f"(offsets {[m.offset for m in got]}), kcodec wrote {len(expected)}"
    )
    for i, (g, e, off) in enumerate(zip(got, expected, offsets)):
        where = f"{context} message {i}"
        assert g.offset == off, f"{where}: offset {g.offset} != {off}"
        assert g.key == e.key, f"{where}: key {g.key!r} != {e.key!r}"
        assert g.value == e.value, f"{where}: value {g.value!r:.80} != {e.value!r:.80}"
        assert g.headers == list(e.headers), f"{where}: headers {g.headers!r} != {list(e.headers)!r}"
        if magic == 0:
            assert g.timestamp[0] == ck.TIMESTAMP_NOT_AVAILABLE, f"{where}: v0 timestamp {g.timestamp}"
        else:
            assert g.timestamp == (ck.TIMESTAMP_CREATE_TIME, e.timestamp), (
                f"{where}: timestamp {g.timestamp} != (CreateTime, {e.timestamp})"
            )


# =============================================================================
# 1. librdkafka writes, kcodec reads
# =============================================================================


@pytest.mark.parametrize("compression", CODECS)
def test_kcodec_reads_librdkafka_v2(compression):
    topic = unique_topic(f"rdk-v2-{compression}")
    with mock_cluster(**{"compression.type": compression}) as mock:
        reports = produce_with_librdkafka(mock, topic, V2_RECORDS)
        assert [err for err, _ in reports] == [None] * len(V2_RECORDS), reports
        assert sorted(off for _, off in reports) == list(range(len(V2_RECORDS)))
        entries = fetch_log(mock, topic, version=4)

    assert entries, "nothing stored"
    for e in entries:
        b = e.batch
        assert b.magic == 2 and b.crc_valid, f"batch @{b.base_offset}: magic {b.magic}, crc_valid {b.crc_valid}"
        assert_librdkafka_codec(b, compression)
        assert not b.is_transactional and not b.is_control and b.producer_id == -1
        assert b.timestamp_type == TimestampType.CREATE_TIME
        assert b.max_timestamp == max(r.timestamp for r in b.records), (
            f"batch max_timestamp {b.max_timestamp} != largest record timestamp"
        )
        assert b.record_count == len(b.records) == b.last_offset - b.base_offset + 1
        if b.compression == "snappy":
            # librdkafka writes one raw snappy block, not snappy-java's xerial framing: no
            # xerial header, and the block starts with the uncompressed length as a uvarint.
            region = stored_records_region(e)
            assert not region.startswith(XERIAL_MAGIC), "expected raw snappy from librdkafka, got xerial"
            assert uvarint(region) == b.records_size, "raw snappy block length prefix != decoded size"
        if b.compression != "none":
            assert b.stored_records_size < b.records_size, "compressed region not smaller than its contents"
    assert_records_equal(data_records(entries), V2_RECORDS, magic=2, context=f"librdkafka v2 {compression}")


@pytest.mark.parametrize("compression", ["none", "lz4"])
def test_kcodec_reads_librdkafka_idempotent_v2(compression):
    topic = unique_topic(f"rdk-idem-{compression}")
    half = 3
    with mock_cluster(**{"compression.type": compression, "enable.idempotence": True}) as mock:
        produce_with_librdkafka(mock, topic, V2_RECORDS[:half])  # two flushes: two batches
        produce_with_librdkafka(mock, topic, V2_RECORDS[half:])
        entries = fetch_log(mock, topic)

    batches = [e.batch for e in entries]
    assert len(batches) >= 2, f"expected two produce batches, got {len(batches)}"
    assert len({(b.producer_id, b.producer_epoch) for b in batches}) == 1, "producer id/epoch changed"
    assert batches[0].producer_id >= 0 and batches[0].producer_epoch >= 0
    sequence = 0
    for b in batches:
        assert b.crc_valid and not b.is_transactional
        assert_librdkafka_codec(b, compression)
        assert b.base_sequence == sequence, f"batch @{b.base_offset}: base_sequence {b.base_sequence} != {sequence}"
        assert [r.sequence for r in b.records] == list(range(sequence, sequence + len(b.records)))
        sequence = b.last_sequence + 1
    assert_records_equal(data_records(entries), V2_RECORDS, magic=2, context="librdkafka idempotent")


LEGACY_FALLBACKS = [(1, "0.10.0"), (0, "0.9.0"), (0, "0.8.2")]


@pytest.mark.parametrize("compression", LEGACY_CODECS)
@pytest.mark.parametrize("magic,fallback", LEGACY_FALLBACKS, ids=[f"v{m}-{f}" for m, f in LEGACY_FALLBACKS])
def test_kcodec_reads_librdkafka_legacy(magic, fallback, compression):
    topic = unique_topic(f"rdk-v{magic}-{compression}")
    expected = RECORDS_BY_MAGIC[magic]
    conf = {"compression.type": compression, "api.version.request": False, "broker.version.fallback": fallback}
    with mock_cluster(**conf) as mock:
        # Create the topic first: a pre-0.10 client's Metadata v0 does not auto-create it.
        with mock.wire() as wire:
            wire.ensure_topic(topic)
        reports = produce_with_librdkafka(mock, topic, V2_RECORDS)
        errors = {err.code() for err, _ in reports if err is not None}
        if errors == {ERR_UNSUPPORTED_VERSION}:
            pytest.skip(
                f"librdkafka wrote compressed magic-{magic} message sets ({compression}); the mock "
                "broker refuses them with UNSUPPORTED_VERSION (it stores v2 batches and uncompressed "
                "v0/v1 messages only)"
            )
        assert not errors, f"delivery errors: {reports}"
        entries = fetch_log(mock, topic, version=2)

    written = {e.batch.magic for e in entries}
    if magic == 1 and written == {2}:
        pytest.skip(
            "librdkafka cannot be made to write magic 1 against the mock broker: "
            "broker.version.fallback >= 0.10 always re-enables ApiVersionRequest, the mock advertises "
            "Produce v0-v10, so librdkafka writes magic 2"
        )
    assert written == {magic}, f"librdkafka wrote magic {written}, expected {magic}"
    for e in entries:
        b = e.batch
        assert b.crc_valid, f"entry @{b.base_offset}: CRC-32 invalid"
        assert all(r.crc_valid for r in b.records)
        if b.compression != compression:
            # librdkafka sends a message set uncompressed when compressing does not make it smaller.
            assert b.compression == "none", f"entry @{b.base_offset}: codec {b.compression}"
    assert_records_equal(data_records(entries), expected, magic=magic, context=f"librdkafka v{magic} {compression}")


# =============================================================================
# 2. kcodec writes, librdkafka reads
# =============================================================================


@pytest.mark.parametrize("compression", CODECS)
def test_librdkafka_reads_kcodec_v2(compression):
    topic = unique_topic(f"kc-v2-{compression}")
    first, second = V2_RECORDS[:3], V2_RECORDS[3:]
    with mock_cluster() as mock:
        data1 = kcodec_encode(first, magic=2, compression=compression)
        data2 = kcodec_encode(second, magic=2, compression=compression, base_offset=len(first))
        for data, recs in ((data1, first), (data2, second)):  # kcodec must read its own output first
            (b,) = read_batches(data, strict=True)
            assert b.compression == compression and b.crc_valid and len(b.records) == len(recs)
        if compression == "snappy":  # kcodec writes snappy-java's xerial framing, as the Java client
            assert data1[61:].startswith(XERIAL_MAGIC) and data2[61:].startswith(XERIAL_MAGIC)
        assert produce_raw(mock, topic, data1) == 0
        assert produce_raw(mock, topic, data2) == len(first)
        got = consume_with_librdkafka(mock, topic, end_offset=len(V2_RECORDS))
        stored = fetch_log(mock, topic)

    # The broker rewrites base offset and partition leader epoch (neither is under the CRC);
    # from the magic byte on, the stored batches are kcodec's bytes.
    assert [e.raw[16:] for e in stored] == [data1[16:], data2[16:]], (
        "the mock broker stored other bytes than kcodec sent"
    )
    assert all(e.batch.crc_valid for e in stored)
    assert_consumed_equal(got, V2_RECORDS, magic=2, offsets=range(len(V2_RECORDS)), context=f"kcodec v2 {compression}")


@pytest.mark.parametrize("compression", LEGACY_CODECS)
@pytest.mark.parametrize("magic", [0, 1])
def test_librdkafka_reads_kcodec_legacy(magic, compression):
    topic = unique_topic(f"kc-v{magic}-{compression}")
    expected = RECORDS_BY_MAGIC[magic]
    with mock_cluster() as mock:
        data = kcodec_encode(expected, magic=magic, compression=compression)
        decoded = list(read_batches(data, strict=True))
        assert all(b.magic == magic and b.crc_valid and b.compression == compression for b in decoded)
        assert_records_equal(
            [r for b in decoded for r in b.records],
            expected,
            magic=magic,
            context="kcodec reading its own legacy output",
        )
        assert (
            produce_raw(mock, topic, data, version=2, what=f"kcodec's compressed magic-{magic} wrapper ({compression})")
            == 0
        )
        got = consume_with_librdkafka(mock, topic, end_offset=len(expected))
    assert_consumed_equal(
        got, expected, magic=magic, offsets=range(len(expected)), context=f"kcodec v{magic} {compression}"
    )


# =============================================================================
# 3. Transactions
# =============================================================================


def _crc_checked(entry: LogEntry) -> Batch:
    """The control batch decoded with CRC verification. The mock coordinator writes its
    markers with crc = 0; when so, put the CRC-32C (computed by the crc32c package,
    not kcodec) in place and check that kcodec then verifies and decodes the same batch."""
    b = entry.batch
    if b.crc_valid:
        return b
    assert b.crc == 0, f"control batch @{b.base_offset}: bad CRC {b.crc:#x} that is not the mock's placeholder 0"
    fixed = entry.raw[:17] + struct.pack(">I", crc32c_lib.crc32c(entry.raw[21:])) + entry.raw[21:]
    (again,) = read_batches(fixed, verify_crc=True, strict=True)
    assert again.crc_valid and again.records == b.records
    return again


@pytest.mark.parametrize("compression", CODECS)
def test_kcodec_reads_librdkafka_transactions(compression):
    topic = unique_topic(f"rdk-txn-{compression}")
    committed, aborted = V2_RECORDS[:3], V2_RECORDS[3:]
    conf = {"compression.type": compression, "transactional.id": unique_topic("txn"), "transaction.timeout.ms": 10000}
    with mock_cluster(**conf) as mock:
        p = mock.producer
        try:
            p.init_transactions(FLUSH_TIMEOUT)
        except ck.KafkaException as exc:
            pytest.skip(f"mock cluster refuses transactions: {exc}")
        p.begin_transaction()
        produce_with_librdkafka(mock, topic, committed)
        p.commit_transaction(FLUSH_TIMEOUT)
        p.begin_transaction()
        produce_with_librdkafka(mock, topic, aborted)
        p.abort_transaction(FLUSH_TIMEOUT)
        entries = fetch_log(mock, topic, verify_crc=False)

    data = [e for e in entries if not e.batch.is_control]
    control = [e for e in entries if e.batch.is_control]
    assert len(control) == 2, f"expected a COMMIT and an ABORT marker, got {[e.batch for e in control]}"
    pid, epoch = data[0].batch.producer_id, data[0].batch.producer_epoch
    assert pid >= 0 and epoch >= 0, f"transactional batch without producer id: {data[0].batch}"
    for e in data:
        b = e.batch
        assert b.crc_valid, f"data batch @{b.base_offset}: CRC invalid"
        assert b.is_transactional, f"data batch @{b.base_offset} is not transactional"
        assert (b.producer_id, b.producer_epoch) == (pid, epoch)
        assert_librdkafka_codec(b, compression)
    markers = []
    for e in control:
        b = _crc_checked(e)
        assert b.is_transactional and b.producer_id == pid and b.producer_epoch == epoch, (
            f"control batch @{b.base_offset}: transactional={b.is_transactional} pid={b.producer_id}/{b.producer_epoch}"
        )
        (r,) = b.records
        assert r.is_control and r.control.is_transaction_marker
        markers.append((b.base_offset, r.control.name))
        # kcodec's writer makes the same marker, but for the CRC and baseSequence: Kafka (and
        # kcodec) write -1 for a marker's baseSequence, the mock coordinator writes 0.
        ours = encode_control_batch(
            r.control.name,
            producer_id=pid,
            producer_epoch=epoch,
            coordinator_epoch=r.control.coordinator_epoch,
            offset=b.base_offset,
            timestamp=b.base_timestamp,
            partition_leader_epoch=b.partition_leader_epoch,
        )
        outside = slice(0, 17), slice(21, 53), slice(57, None)  # all but crc and base_sequence
        assert [ours[s] for s in outside] == [e.raw[s] for s in outside], (
            f"kcodec's {r.control.name} marker differs from the mock's:\n{ours.hex()}\n{e.raw.hex()}"
        )
    # Log: committed data, COMMIT, aborted data, ABORT.
    n1, n2 = len(committed), len(aborted)
    assert markers == [(n1, "COMMIT"), (n1 + 1 + n2, "ABORT")], markers
    offsets = list(range(n1)) + list(range(n1 + 1, n1 + 1 + n2))
    assert_records_equal(
        data_records(entries),
        committed + aborted,
        magic=2,
        offsets=offsets,
        context=f"librdkafka transactions {compression}",
    )


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_librdkafka_skips_kcodec_transaction_markers(compression):
    """kcodec-built transactional batches with kcodec-built COMMIT / ABORT markers:
    librdkafka (read_uncommitted) delivers every data record and no control record."""
    topic = unique_topic(f"kc-txn-{compression}")
    committed, aborted = V2_RECORDS[:3], V2_RECORDS[3:]
    pid, epoch = 4242, 3
    n1, n2 = len(committed), len(aborted)
    log = [
        kcodec_encode(
            committed,
            magic=2,
            compression=compression,
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=0,
            transactional=True,
        ),
        encode_control_batch(
            "commit", producer_id=pid, producer_epoch=epoch, coordinator_epoch=7, offset=n1, timestamp=T0 + 100
        ),
        kcodec_encode(
            aborted,
            magic=2,
            compression=compression,
            base_offset=n1 + 1,
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=n1,
            transactional=True,
        ),
        encode_control_batch(
            "abort", producer_id=pid, producer_epoch=epoch, coordinator_epoch=7, offset=n1 + 1 + n2, timestamp=T0 + 200
        ),
    ]
    with mock_cluster() as mock:
        for data in log:
            produce_raw(mock, topic, data)
        got = consume_with_librdkafka(mock, topic, end_offset=n1 + n2 + 2, **{"isolation.level": "read_uncommitted"})
        stored = fetch_log(mock, topic)

    kinds = [(e.batch.is_control, e.batch.records[0].control.name if e.batch.is_control else None) for e in stored]
    assert kinds == [(False, None), (True, "COMMIT"), (False, None), (True, "ABORT")], kinds
    offsets = list(range(n1)) + list(range(n1 + 1, n1 + 1 + n2))
    assert_consumed_equal(
        got, committed + aborted, magic=2, offsets=offsets, context=f"kcodec transactional {compression}"
    )


def test_librdkafka_and_kcodec_agree_on_mock_marker_crc():
    """The mock coordinator's markers carry crc 0: librdkafka's consumer (check.crcs) rejects
    the first one just as kcodec does, and the CRC-32C it computes is kcodec's."""
    topic = unique_topic("rdk-txn-crc")
    with mock_cluster(**{"transactional.id": unique_topic("txn")}) as mock:
        p = mock.producer
        try:
            p.init_transactions(FLUSH_TIMEOUT)
        except ck.KafkaException as exc:
            pytest.skip(f"mock cluster refuses transactions: {exc}")
        p.begin_transaction()
        produce_with_librdkafka(mock, topic, V2_RECORDS[:1])
        p.commit_transaction(FLUSH_TIMEOUT)
        entries = fetch_log(mock, topic, verify_crc=False)
        (marker,) = [e for e in entries if e.batch.is_control]
        if marker.batch.crc_valid:
            pytest.skip("this mock cluster writes valid marker CRCs; nothing to compare")

        consumer = ck.Consumer(
            {
                "bootstrap.servers": mock.bootstrap,
                "group.id": unique_topic("g"),
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "check.crcs": True,
                "fetch.wait.max.ms": 50,
                "log_level": 0,
            }
        )
        error = None
        try:
            consumer.assign([ck.TopicPartition(topic, PARTITION, ck.OFFSET_BEGINNING)])
            deadline = time.monotonic() + CONSUME_DEADLINE
            for _ in range(CONSUME_MAX_POLLS):
                if time.monotonic() > deadline:
                    break
                msg = consumer.poll(0.5)
                if msg is not None and msg.error() is not None:
                    error = (msg.error(), msg.offset())
                    break
        finally:
            consumer.close()

    assert error is not None, "librdkafka accepted the mock's crc-0 control batch"
    err, offset = error
    assert err.code() == ck.KafkaError._BAD_MSG and offset == marker.batch.base_offset, (err, offset)
    ours = kcodec_crc32c(marker.raw[21:])
    match = re.search(r"original 0x([0-9a-f]+) != calculated 0x([0-9a-f]+)", err.str())
    assert match, f"unrecognised librdkafka CRC error text: {err.str()}"
    assert (int(match.group(1), 16), int(match.group(2), 16)) == (marker.batch.crc, ours), (
        f"librdkafka: {err.str()}; kcodec: stored {marker.batch.crc:#x}, computed {ours:#x}"
    )
