"""``kcodec txn`` on a log librdkafka wrote: confluent-kafka's transactional producer, on librdkafka's
mock cluster, commits one transaction, aborts one, and leaves one open (as a producer killed in the
middle of it leaves it); the stored batches are fetched raw, written into a partition directory, and
kcodec must find the commit, the abort and the open transaction with the producer id and epoch the
producer used, and put the last stable offset at the open transaction's first offset.

librdkafka's read_committed consumer cannot be the oracle for the LSO here: the mock broker keeps no
last stable offset and lists no aborted transactions, so it hands the aborted and the open records to a
read_committed consumer too (checked below, so that the day it learns to, this test says so)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kcodec.generated.record_batch import RECORD_BATCH_V2_OFFSET_ATTRIBUTES, RECORD_BATCH_V2_OFFSET_CRC
from kcodec.log.partition import Partition
from kcodec.log.writer import SegmentWriter
from kcodec.runtime.crc import crc32c
from kcodec.tools.txn import walk_partition
from tests.helpers.librdkafka_mock import (
    FLUSH_TIMEOUT,
    PARTITION,
    ck,
    consume_with_librdkafka,
    fetch_log,
    mock_cluster,
    unique_topic,
)


def _with_crc(raw: bytes) -> bytes:
    crc, covered = RECORD_BATCH_V2_OFFSET_CRC, RECORD_BATCH_V2_OFFSET_ATTRIBUTES  # the CRC covers attributes..end
    return raw[:crc] + struct.pack(">I", crc32c(raw[covered:])) + raw[covered:]


def test_kcodec_txn_on_librdkafkas_transactions(tmp_path: Path) -> None:
    topic = unique_topic("rdk-txn-forensics")
    with mock_cluster(**{"transactional.id": unique_topic("txn"), "transaction.timeout.ms": 60000}) as mock:
        p = mock.producer
        try:
            p.init_transactions(FLUSH_TIMEOUT)
        except ck.KafkaException as exc:
            pytest.skip(f"mock cluster refuses transactions: {exc}")
        for outcome, n in (("commit", 3), ("abort", 2), ("open", 2)):
            p.begin_transaction()
            for i in range(n):
                p.produce(topic, value=b"%s-%d" % (outcome.encode(), i), partition=PARTITION)
            assert p.flush(FLUSH_TIMEOUT) == 0
            if outcome == "commit":
                p.commit_transaction(FLUSH_TIMEOUT)
            elif outcome == "abort":
                p.abort_transaction(FLUSH_TIMEOUT)
        entries = fetch_log(mock, topic, verify_crc=False)
        end = entries[-1].batch.next_offset
        # check.crcs off: the mock coordinator writes its markers with CRC 0
        read_committed = {"isolation.level": "read_committed", "check.crcs": False}
        delivered = consume_with_librdkafka(mock, topic, end_offset=end, **read_committed)

    part = tmp_path / f"{topic}-{PARTITION}"
    with SegmentWriter(part) as w:
        for e in entries:  # the markers' CRC-32C filled in (the mock leaves 0), kcodec's writer checks it
            w.append(e.raw if e.batch.crc_valid else _with_crc(e.raw))
    data = [e.batch for e in entries if not e.batch.is_control]
    pid, epoch = data[0].producer_id, data[0].producer_epoch
    done = []
    found = walk_partition(Partition(part), on_transaction=done.append)

    assert [(t.producer_id, t.producer_epoch, t.committed, t.records) for t in done] == [
        (pid, epoch, True, 3),
        (pid, epoch, False, 2),
    ]
    (open_txn,) = found.open
    open_first = next(b.base_offset for b in data if b.base_offset > done[-1].marker_offset)
    assert (open_txn.producer_id, open_txn.producer_epoch, open_txn.records) == (pid, epoch, 2)
    assert found.last_stable_offset == open_txn.first_offset == open_first
    assert found.held_back_records == 2 and found.log_end_offset == end
    assert found.anomaly_count == 0, found.anomalies  # librdkafka's sequences follow Kafka's rules
    # the mock broker's read_committed: everything, aborted and open records included (no LSO)
    assert [m.value for m in delivered] == [b"commit-0", b"commit-1", b"commit-2", b"abort-0", b"abort-1"] + [
        b"open-0",
        b"open-1",
    ]
