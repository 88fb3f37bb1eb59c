"""librdkafka's mock cluster (confluent-kafka's ``test.mock.num.brokers``) for the interop tests: a producer
owning a one-broker cluster on 127.0.0.1, producing through it, fetching the stored log raw (a hand-framed
Fetch, tests/helpers/kafka_wire.py) and consuming with librdkafka's consumer. Every loop is bounded in count
and in time."""

from __future__ import annotations

import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from kcodec.records.model import Batch
from kcodec.records.reader import read_batches
from tests.helpers.kafka_wire import KafkaWire, error_name

ck = pytest.importorskip("confluent_kafka")

PARTITION = 0
FLUSH_TIMEOUT = 10.0  # s, librdkafka flush / transaction calls
FETCH_DEADLINE = 10.0  # s, raw fetch loop
FETCH_MAX_REQUESTS = 200
CONSUME_DEADLINE = 15.0  # s, consumer poll loop
CONSUME_MAX_POLLS = 500


def unique_topic(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


# --- the mock cluster -----------------------------------------------------------------


@dataclass
class Mock:
    producer: object
    host: str
    port: int

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def wire(self) -> KafkaWire:
        return KafkaWire(self.host, self.port, timeout=5.0)


@contextmanager
def mock_cluster(**conf):
    """A confluent_kafka.Producer owning a one-broker mock cluster, which lives as long as it."""
    config = {
        "test.mock.num.brokers": 1,
        "linger.ms": 50,
        "message.timeout.ms": 10000,
        "log_level": 3,
    }  # keep librdkafka's deprecation warnings for the fallback settings quiet
    config.update(conf)
    producer = ck.Producer(config)
    try:
        brokers = producer.list_topics(timeout=10).brokers
        assert len(brokers) == 1, f"expected one mock broker, got {brokers}"
        broker = next(iter(brokers.values()))
        assert broker.host == "127.0.0.1", f"mock broker is not on 127.0.0.1: {broker}"
        yield Mock(producer, broker.host, broker.port)
    finally:
        producer.flush(2)  # bounded; the mock cluster goes with the producer
        del producer


def produce_with_librdkafka(mock: Mock, topic: str, records) -> list:
    """Produce ``records`` to partition 0 and flush; returns the delivery reports (err, offset)."""
    reports = []

    def on_delivery(err, msg):
        reports.append((err, msg.offset()))

    for r in records:
        kwargs = {"partition": PARTITION, "on_delivery": on_delivery}
        if r.headers:
            kwargs["headers"] = list(r.headers)
        if r.timestamp >= 0:
            kwargs["timestamp"] = r.timestamp
        mock.producer.produce(topic, key=r.key, value=r.value, **kwargs)
    left = mock.producer.flush(FLUSH_TIMEOUT)
    assert left == 0, f"{left} messages still queued after flush({FLUSH_TIMEOUT})"
    assert len(reports) == len(records), f"{len(reports)} delivery reports for {len(records)} messages"
    return reports


@dataclass
class LogEntry:
    raw: bytes  # the whole entry as stored (12-byte header included)
    batch: Batch


def fetch_log(mock: Mock, topic: str, *, version: int = 4, verify_crc: bool = True) -> list[LogEntry]:
    """Every entry of ``topic``-0 from offset 0 to the high watermark, fetched raw and
    decoded by kcodec. The mock broker answers with one stored message set per Fetch,
    so this loops, bounded in requests and time."""
    out: list[LogEntry] = []
    offset = 0
    deadline = time.monotonic() + FETCH_DEADLINE
    with mock.wire() as wire:
        for _ in range(FETCH_MAX_REQUESTS):
            assert time.monotonic() < deadline, f"fetching {topic} took over {FETCH_DEADLINE}s (at offset {offset})"
            part = wire.fetch(topic, PARTITION, offset, version=version)
            assert part.error_code == 0, f"Fetch v{version} {topic} @{offset}: {error_name(part.error_code)}"
            if offset >= part.high_watermark:
                return out
            if not part.records:
                time.sleep(0.02)
                continue
            records = part.records
            batches = list(read_batches(records, verify_crc=verify_crc, strict=True))
            assert batches, f"Fetch @{offset} returned {len(records)} bytes but no whole entry"
            for b in batches:
                out.append(LogEntry(records[b.position : b.position + b.size], b))
            next_offset = batches[-1].next_offset
            assert next_offset > offset, f"log does not advance past offset {offset}: {batches[-1]}"
            offset = next_offset
    raise AssertionError(f"{topic}: not at the high watermark after {FETCH_MAX_REQUESTS} Fetch requests")


@dataclass
class Consumed:
    offset: int
    key: bytes | None
    value: bytes | None
    headers: list
    timestamp: tuple[int, int]


def consume_with_librdkafka(mock: Mock, topic: str, *, end_offset: int, **conf) -> list[Consumed]:
    """Everything librdkafka's consumer delivers from ``topic``-0 until partition EOF at
    ``end_offset``; bounded in polls and time."""
    config = {
        "bootstrap.servers": mock.bootstrap,
        "group.id": unique_topic("kcodec-interop"),
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "check.crcs": True,
        "enable.partition.eof": True,
        "fetch.wait.max.ms": 50,
        "log_level": 3,
    }
    config.update(conf)
    consumer = ck.Consumer(config)
    got: list[Consumed] = []
    try:
        consumer.assign([ck.TopicPartition(topic, PARTITION, ck.OFFSET_BEGINNING)])
        deadline = time.monotonic() + CONSUME_DEADLINE
        for _ in range(CONSUME_MAX_POLLS):
            remaining = deadline - time.monotonic()
            assert remaining > 0, (
                f"librdkafka delivered {len(got)} messages from {topic} but no EOF at "
                f"offset {end_offset} within {CONSUME_DEADLINE}s"
            )
            msg = consumer.poll(min(0.5, remaining))
            if msg is None:
                continue
            err = msg.error()
            if err is not None:
                if err.code() == ck.KafkaError._PARTITION_EOF:
                    if msg.offset() >= end_offset:
                        return got
                    continue
                raise AssertionError(f"librdkafka consumer error on {topic}: {err}")
            got.append(Consumed(msg.offset(), msg.key(), msg.value(), list(msg.headers() or []), msg.timestamp()))
        raise AssertionError(f"no EOF at offset {end_offset} after {CONSUME_MAX_POLLS} polls ({len(got)} messages)")
    finally:
        consumer.close()
