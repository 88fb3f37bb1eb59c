"""A partition directory taking producer requests as a broker would (kcodec.tools.broker_append): the
producer-state checks after validation (epochs, sequences, duplicates answered with their original
offsets, a non-transactional write inside a transaction), nothing stored for a refusal, and a log that
already exists continued from its end and its producers' state."""

from __future__ import annotations

from kcodec.log.partition import Partition
from kcodec.records.broker_releases import broker_release
from kcodec.records.encode import encode_batch
from kcodec.records.log_validator import topic_config
from kcodec.tools.broker_append import BrokerPartition

NOW = 1_700_000_000_000


def batch(seq: int, n: int = 3, *, pid: int = 42, epoch: int = 0, txn: bool = False, compression: str = "none"):
    recs = [{"key": b"k", "value": b"v%d" % (seq + i), "timestamp": NOW + i} for i in range(n)]
    return encode_batch(
        recs, producer_id=pid, producer_epoch=epoch, base_sequence=seq, transactional=txn, compression=compression
    )


def partition(path, kafka: str = "4.0", *config: str) -> BrokerPartition:
    release = broker_release(kafka)
    return BrokerPartition(path, release, topic_config(release, config))


def stored_offsets(path) -> list[int]:
    return [r.offset for r in Partition(path).iter_records()]


def test_sequences_in_order_are_stored(tmp_path):
    with partition(tmp_path / "t-0") as p:
        answers = [p.append(batch(0), now=NOW), p.append(batch(3), now=NOW)]
    assert [(a.error, a.base_offset, a.last_offset) for a in answers] == [("NONE", 0, 2), ("NONE", 3, 5)]
    assert stored_offsets(tmp_path / "t-0") == list(range(6))


def test_duplicate_is_answered_with_its_original_offsets(tmp_path):
    """ProducerStateEntry.findDuplicateBatch: a retry of one of the last five batches gets NONE and the
    offsets it was stored at; nothing is appended."""
    with partition(tmp_path / "t-0") as p:
        p.append(batch(0), now=NOW)
        p.append(batch(3), now=NOW)
        again = p.append(batch(0), now=NOW)
    assert (again.error, again.duplicate, again.base_offset, again.last_offset) == ("NONE", True, 0, 2)
    assert stored_offsets(tmp_path / "t-0") == list(range(6))


def test_only_the_last_five_batches_are_remembered(tmp_path):
    """NUM_BATCHES_TO_RETAIN = 5: a retry of the sixth batch back is out of order, not a duplicate."""
    with partition(tmp_path / "t-0") as p:
        for i in range(6):
            assert p.append(batch(3 * i), now=NOW).error == "NONE"
        old = p.append(batch(0), now=NOW)
    assert old.error == "OUT_OF_ORDER_SEQUENCE_NUMBER" and old.code == 45


def test_sequence_gap_is_refused_and_nothing_is_stored(tmp_path):
    with partition(tmp_path / "t-0") as p:
        p.append(batch(0), now=NOW)
        gap = p.append(batch(10), now=NOW)
        after = p.append(batch(3), now=NOW)  # the refused batch left the producer's state as it was
    assert (gap.error, gap.base_offset) == ("OUT_OF_ORDER_SEQUENCE_NUMBER", -1)
    assert (after.error, after.base_offset) == ("NONE", 3)
    assert stored_offsets(tmp_path / "t-0") == list(range(6))


def test_epoch_fencing_and_new_epoch_sequence(tmp_path):
    """An older epoch is INVALID_PRODUCER_EPOCH (47); a new epoch must restart at sequence 0."""
    with partition(tmp_path / "t-0") as p:
        p.append(batch(0, epoch=3), now=NOW)
        fenced = p.append(batch(3, epoch=2), now=NOW)
        bad_start = p.append(batch(5, epoch=4), now=NOW)
        bumped = p.append(batch(0, epoch=4), now=NOW)
    assert (fenced.error, fenced.code) == ("INVALID_PRODUCER_EPOCH", 47)
    assert bad_start.error == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert (bumped.error, bumped.base_offset) == ("NONE", 3)


def test_non_transactional_write_inside_a_transaction(tmp_path):
    """ProducerAppendInfo: a non-transactional batch while the producer's transaction is open is
    INVALID_TXN_STATE (48)."""
    with partition(tmp_path / "t-0") as p:
        assert p.append(batch(0, txn=True), now=NOW).error == "NONE"
        plain = p.append(batch(3), now=NOW)
    assert (plain.error, plain.code) == ("INVALID_TXN_STATE", 48)


def test_an_existing_log_is_continued_with_its_producer_state(tmp_path):
    """A second run starts at the directory's log end offset and knows its producers: a retry is still a
    duplicate, a gap still refused."""
    path = tmp_path / "t-0"
    with partition(path) as p:
        p.append(batch(0, compression="gzip"), now=NOW)
    with partition(path) as p:
        assert p.log_end_offset == 3
        dup = p.append(batch(0, compression="gzip"), now=NOW)
        gap = p.append(batch(7), now=NOW)
        ok = p.append(batch(3), now=NOW)
    assert (dup.duplicate, dup.base_offset) == (True, 0)
    assert gap.error == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert (ok.error, ok.base_offset) == ("NONE", 3)
    assert stored_offsets(path) == list(range(6))


def test_before_0_11_there_is_no_producer_state(tmp_path):
    """Kafka 0.10 stores magic 1: a v2 request is unknown to it (CORRUPT_MESSAGE), legacy ones are stored."""
    with partition(tmp_path / "t-0", "0.10") as p:
        v2 = p.append(batch(0), now=NOW)
        v1 = p.append(encode_batch([{"value": b"x", "timestamp": NOW}], magic=1), now=NOW)
    assert v2.error == "CORRUPT_MESSAGE" and (v1.error, v1.base_offset) == ("NONE", 0)


def test_segments_roll_at_segment_bytes(tmp_path):
    """A batch that would take the segment past segment.bytes starts a new one (here: one batch each)."""
    path = tmp_path / "t-0"
    with partition(path, "4.0", f"segment.bytes={len(batch(9)) + 10}") as p:
        for i in range(4):
            assert p.append(batch(3 * i), now=NOW).error == "NONE"
    assert [s.base_offset for s in Partition(path).segments] == [0, 3, 6, 9]
    assert stored_offsets(path) == list(range(12))
