"""``kcodec append`` against a broker nobody here wrote: librdkafka's mock cluster (inside
confluent-kafka) stores v2 batches as Kafka's same-codec in-place path does (offsets assigned in the
header, the producer's compressed bytes kept). What it stored is fetched raw (tests/helpers/kafka_wire.py)
and compared byte for byte with what kcodec's append stores for the same requests.

1. Requests kcodec encodes, sent as they are in a Produce request: the mock's log equals kcodec's.
2. Batches librdkafka's own producer built (every codec, idempotent too): the request is the stored batch
   with its base offset back at 0 (the field the broker assigns, outside the CRC), and kcodec's append of
   it reproduces the mock's bytes, CRC included.
3. The rebuilt paths (another codec, another magic) decode the same in kafka-python and aiokafka as the
   producer's records.

The mock stamps no partition leader epoch of its own choosing: the epoch kcodec stamps is the one the
mock's stored batch carries."""

from __future__ import annotations

import pytest

from kcodec.records.broker_releases import broker_release
from kcodec.records.encode import encode_batch
from kcodec.records.log_validator import topic_config
from kcodec.records.model import Record
from kcodec.tools.broker_append import BrokerPartition
from tests.helpers.librdkafka_mock import PARTITION, fetch_log, mock_cluster, produce_with_librdkafka, unique_topic

ck = pytest.importorskip("confluent_kafka")

NOW = 1_700_000_000_000
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def producer_records(n: int = 20) -> list[dict]:
    return [
        {"key": b"key-%d" % i, "value": b"value %d " % i * 8, "timestamp": NOW + i, "headers": [["h", b"%d" % i]]}
        for i in range(n)
    ]


def kcodec_store(tmp_path, requests: list[bytes], leader_epoch: int, kafka: str = "current", *config: str) -> bytes:
    """What kcodec's append stores for ``requests``, as one log's bytes."""
    release = broker_release(kafka)
    out = tmp_path / "kcodec-0"
    with BrokerPartition(out, release, topic_config(release, config), leader_epoch=leader_epoch) as partition:
        for request in requests:
            answer = partition.append(request, now=NOW + 1000)
            assert answer.error == "NONE", answer
    return b"".join(seg.log.read_bytes() for seg in partition_segments(out))


def partition_segments(path):
    from kcodec.log.partition import Partition

    return Partition(path).segments


def with_base_offset_zero(raw: bytes) -> bytes:
    return bytes(8) + raw[8:]


@pytest.mark.parametrize("compression", CODECS)
def test_kcodec_requests_stored_as_the_mock_stores_them(tmp_path, compression):
    requests = [
        encode_batch(producer_records(7), compression=compression),
        encode_batch(producer_records(5), compression=compression, producer_id=9, producer_epoch=0, base_sequence=0),
        encode_batch(producer_records(3), compression=compression, producer_id=9, producer_epoch=0, base_sequence=5),
    ]
    topic = unique_topic("kcodec-append")
    with mock_cluster() as mock:
        with mock.wire() as wire:
            wire.ensure_topic(topic)
            bases = []
            for request in requests:
                result = wire.produce(topic, PARTITION, request, version=3)
                assert result.error_code == 0, f"the mock refused {compression}: {result}"
                bases.append(result.base_offset)
        entries = fetch_log(mock, topic)
    assert bases == [0, 7, 12]
    mock_bytes = b"".join(e.raw for e in entries)
    epoch = entries[0].batch.partition_leader_epoch
    assert kcodec_store(tmp_path, requests, epoch) == mock_bytes


@pytest.mark.parametrize("compression", CODECS)
@pytest.mark.parametrize("idempotent", [False, True])
def test_librdkafka_batches_reproduced(tmp_path, compression, idempotent):
    topic = unique_topic("kcodec-append-rd")
    conf = {"compression.type": compression, "enable.idempotence": idempotent}
    records = [
        Record(-1, r["timestamp"], None, r["key"], r["value"], tuple(map(tuple, r["headers"])))
        for r in producer_records()
    ]
    with mock_cluster(**conf) as mock:
        produce_with_librdkafka(mock, topic, records[:12])
        produce_with_librdkafka(mock, topic, records[12:])  # two flushes: at least two batches
        entries = fetch_log(mock, topic)
    assert len(entries) >= 2 and {e.batch.compression for e in entries} == {compression}
    requests = [with_base_offset_zero(e.raw) for e in entries]
    stored = kcodec_store(tmp_path, requests, entries[0].batch.partition_leader_epoch)
    assert stored == b"".join(e.raw for e in entries)


@pytest.mark.parametrize(
    ("source", "config"),
    [
        ({"magic": 2, "compression": "gzip"}, ["compression.type=lz4"]),
        ({"magic": 1, "compression": "snappy"}, []),
        ({"magic": 2, "compression": "none"}, ["message.format.version=0.10.2"]),
    ],
    ids=["gzip-to-lz4", "v1-to-v2", "v2-to-v1"],
)
def test_rebuilt_batches_decode_the_same_in_python_clients(tmp_path, source, config):
    kafka_python = pytest.importorskip("kafka.record")
    aiokafka = pytest.importorskip("aiokafka.record.memory_records")
    records = [dict(r, headers=[]) for r in producer_records(10)]
    kafka = "3.9" if config and config[0].startswith("message.format") else "current"
    stored = kcodec_store(tmp_path, [encode_batch(records, **source)], 0, kafka, *config)
    want = [(i, r["timestamp"], r["key"], r["value"]) for i, r in enumerate(records)]
    for reader in (kafka_python.MemoryRecords, aiokafka.MemoryRecords):
        got = []
        batches = reader(stored)
        while True:
            batch = batches.next_batch()
            if batch is None:
                break
            got += [(r.offset, r.timestamp, r.key, r.value) for r in batch]
        assert got == want, reader


# librdkafka's names where they differ from Kafka's Errors (its KafkaError constants)
LIBRDKAFKA_NAMES = {
    "unknown_server_error": "UNKNOWN",
    "none": "NO_ERROR",
    "message_too_large": "MSG_SIZE_TOO_LARGE",
    "corrupt_message": "INVALID_MSG",
}


def test_error_codes_are_librdkafkas():
    """The codes kcodec append answers with (schemas/internal/kafka_enums.yaml produce_error) are the
    ones librdkafka knows by the same names."""
    from kcodec.generated.kafka_enums import PRODUCE_ERROR

    for name, code in PRODUCE_ERROR.items():
        theirs = LIBRDKAFKA_NAMES.get(name, name.upper())
        assert getattr(ck.KafkaError, theirs) == code, name
