"""``kcodec txn``: transaction forensics on a log directory kcodec wrote (tests/helpers/txn_logs.py lists
what it holds), through the library (kcodec.tools.txn) and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.log.partition import Partition
from kcodec.records.encode import NewRecord, encode_batch
from kcodec.records.framing import producer_header
from kcodec.records.producer_state import ProducerStateChecker
from kcodec.tools.txn import CompletedTxn, read_coordinator, walk_partition
from tests.helpers.txn_logs import HANGING, snapshot_bytes, write_events, write_orders, write_txn_log_dir


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_txn_log_dir(tmp_path_factory.mktemp("txn"))


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_transactions_of_a_partition(log_dir: Path) -> None:
    done = []
    found = walk_partition(Partition(log_dir / "orders-0"), on_transaction=done.append)
    assert [(t.producer_id, t.committed, t.first_offset, t.last_offset, t.marker_offset, t.records) for t in done] == [
        (1000, True, 0, 1, 2, 2),
        (1001, False, 3, 3, 4, 1),
        (1002, True, None, None, 5, 0),  # empty: a marker and no data
    ]
    assert done[0].duration_ms == 2 and done[0].coordinator_epoch == 5 and done[2].duration_ms is None

    summary = {p.producer_id: (p.committed, p.aborted, p.empty) for p in found.producers.values()}
    assert summary[1000] == (1, 0, 0) and summary[1001] == (0, 1, 0) and summary[1002] == (0, 0, 1)
    assert [(t.producer_id, t.producer_epoch, t.first_offset, t.last_offset, t.records) for t in found.open] == [
        (1003, 2, 7, 8, 2),
        (1004, 1, 9, 9, 1),
        (1005, 0, 10, 10, 1),
        (1006, 0, 11, 11, 1),
    ]
    assert (found.log_start_offset, found.log_end_offset) == (0, 14)
    assert found.last_stable_offset == 7 and found.held_back_records == 7
    assert all(t.hanging is None for t in found.open)  # no coordinator given: not judged
    assert found.anomaly_count == 0


def test_hanging_by_the_coordinators_state(log_dir: Path) -> None:
    coordinator = read_coordinator(log_dir)
    assert coordinator is not None and sorted(coordinator) == [1003, 1004, 1006]
    found = walk_partition(Partition(log_dir / "orders-0"), coordinator=coordinator)
    verdict = {t.producer_id: t.hanging for t in found.open}
    assert verdict == {1003: False, 1004: True, 1005: True, 1006: True}
    reasons = {t.producer_id: t.reason for t in found.hanging}
    assert "CompleteCommit" in reasons[1004] and "no transactional id" in reasons[1005]
    assert "does not list orders-0" in reasons[1006]
    assert {t.producer_id: t.coordinator.transactional_id for t in found.hanging if t.coordinator} == {
        pid: tid for pid, tid in HANGING.items() if tid
    }


def test_snapshot_compared_with_the_log(log_dir: Path) -> None:
    found = walk_partition(Partition(log_dir / "orders-0"))
    assert found.snapshot_problems == [
        "00000000000000000008.snapshot: producer 1001 has a transaction open from offset 3 in the snapshot, "
        "no open transaction in the log at offset 8",
        "00000000000000000008.snapshot: producer 1000 has epoch 4 in the snapshot, 0 in the log at offset 8",
    ]


def test_a_damaged_snapshot_is_reported(tmp_path: Path) -> None:
    part = write_orders(tmp_path)
    data = bytearray(snapshot_bytes([]))
    data[-1] ^= 1
    (part / "00000000000000000008.snapshot").write_bytes(bytes(data) + b"\x00")
    found = walk_partition(Partition(part))
    assert len(found.snapshot_problems) == 1 and "00000000000000000008.snapshot" in found.snapshot_problems[0]


def test_producer_anomalies(log_dir: Path) -> None:
    found = walk_partition(Partition(log_dir / "events-0"))
    assert [(a.kind, a.error, a.offset, a.producer_epoch) for a in found.anomalies] == [
        ("sequence_gap", "OUT_OF_ORDER_SEQUENCE_NUMBER", 3, 3),
        ("duplicate_sequence", "DUPLICATE_SEQUENCE_NUMBER", 4, 3),
        ("epoch_regression", "INVALID_PRODUCER_EPOCH", 5, 2),
    ]
    assert "2 missing" in found.anomalies[0].message and "offsets 3..3" in found.anomalies[1].message
    assert found.open == [] and found.last_stable_offset == found.log_end_offset == 6


def _head(offset: int, n: int, epoch: int, seq: int, transactional: bool = False):
    raw = encode_batch(
        [NewRecord(value=b"v")] * n,
        base_offset=offset,
        producer_id=7,
        producer_epoch=epoch,
        base_sequence=seq,
        transactional=transactional,
    )
    return producer_header(raw)


def test_append_rules_one_by_one() -> None:
    """Kafka's ProducerAppendInfo checks: sequence wrap, a new epoch restarting at 0, going back, a
    non-transactional batch inside a transaction; a duplicate is remembered for five batches only."""
    c = ProducerStateChecker()
    assert c.data(_head(0, 2, 0, 2147483646), in_transaction=False) == []  # sequences wrap to 0
    assert c.data(_head(2, 1, 0, 0), in_transaction=False) == []
    assert [a.kind for a in c.data(_head(3, 1, 1, 4), in_transaction=False)] == ["new_epoch_sequence"]
    assert [a.kind for a in c.data(_head(4, 1, 1, 2), in_transaction=False)] == ["out_of_order_sequence"]
    assert [a.kind for a in c.data(_head(5, 1, 1, 3), in_transaction=True)] == ["non_transactional_in_transaction"]
    # sequence 4 is the batch at offset 3, still among the last five
    assert [a.kind for a in c.data(_head(6, 1, 1, 4), in_transaction=False)] == ["duplicate_sequence"]
    for i in range(6):
        assert c.data(_head(7 + i, 1, 1, 5 + i), in_transaction=False) == []
    assert [a.kind for a in c.data(_head(20, 1, 1, 10), in_transaction=False)] == ["duplicate_sequence"]
    # sequence 5 (offset 7) is six batches back: no longer a known duplicate, only out of order
    assert [a.kind for a in c.data(_head(21, 1, 1, 5), in_transaction=False)] == ["out_of_order_sequence"]
    assert [a.kind for a in c.marker(7, 1, 3, 22)] == []
    assert [a.kind for a in c.marker(7, 0, 2, 23)] == ["epoch_regression", "coordinator_epoch_regression"]


# ----------------------------------------------------------------------------- the command


def test_cli_text_names_what_to_abort(log_dir: Path, capsys) -> None:
    code, out, err = run(capsys, "txn", log_dir)
    assert code == 1, err  # hanging transactions found
    assert "orders-0: log 0..14, last stable offset 7, 7 records held back from read_committed consumers" in out
    assert "open transaction: producer 1003 epoch 2 offsets 7..8 (2 records, 1 ms of data): open, in flight" in out
    assert (
        "abort with: kafka-transactions.sh --bootstrap-server HOST:PORT abort --topic orders --partition 0 "
        "--start-offset 10" in out
    )
    assert "anomaly at offset 3: producer 2000 epoch 3 sequence_gap (OUT_OF_ORDER_SEQUENCE_NUMBER)" in out
    assert "__transaction_state" not in out.split("events-0")[0].split("orders-0")[0]


def test_cli_json_and_transactions(log_dir: Path, capsys) -> None:
    code, out, _ = run(capsys, "txn", log_dir, "--json", "--transactions")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 1
    parts = {d["topic"]: d for d in lines if d["kind"] == "partition"}
    assert set(parts) == {"orders", "events"}  # the coordinator's topic is not a data partition
    orders = parts["orders"]
    assert set(orders) == {  # docs/commands.md, "JSON output"
        "kind",
        "directory",
        "topic",
        "partition",
        "logStartOffset",
        "logEndOffset",
        "lastStableOffset",
        "heldBackRecords",
        "coordinatorChecked",
        "open",
        "producers",
        "anomalyCount",
        "anomalies",
        "snapshotProblems",
    }
    assert set(parts["events"]["anomalies"][0]) == {"kind", "error", "producerId", "producerEpoch", "offset", "message"}
    assert orders["lastStableOffset"] == 7 and orders["heldBackRecords"] == 7 and orders["coordinatorChecked"]
    aborts = [t["abort"] for t in orders["open"] if t["hanging"]]
    assert aborts == [
        {"topic": "orders", "partition": 0, "producerId": pid, "producerEpoch": epoch, "coordinatorEpoch": None}
        | {"startOffset": start}
        for pid, epoch, start in ((1004, 1, 9), (1005, 0, 10), (1006, 0, 11))
    ]
    txns = [d for d in lines if d["kind"] == "transaction"]
    assert [(t["producerId"], t["outcome"], t["empty"]) for t in txns] == [
        (1000, "commit", False),
        (1001, "abort", False),
        (1002, "commit", True),
    ]


def test_cli_exit_0_without_hanging(tmp_path: Path, capsys) -> None:
    write_events(tmp_path)
    write_orders(tmp_path)
    # no __transaction_state: the open transactions are reported, not judged
    code, out, _ = run(capsys, "txn", tmp_path / "orders-0")
    assert code == 0 and "open (no __transaction_state to check it against)" in out
    code, out, _ = run(capsys, "txn", tmp_path / "events-0")
    assert code == 0 and "last stable offset 6, 0 records held back" in out


def test_cli_bad_path(tmp_path: Path, capsys) -> None:
    code, _, err = run(capsys, "txn", tmp_path / "nope")
    assert code == 2 and err.strip() == f"kcodec txn: {tmp_path / 'nope'}: no such directory"
    write_events(tmp_path)
    code, _, err = run(capsys, "txn", tmp_path / "events-0", "--transaction-state", tmp_path / "nope")
    assert code == 2 and err.strip() == f"kcodec txn: --transaction-state {tmp_path / 'nope'}: no such directory"


def test_cli_explicit_abort_when_the_coordinator_epoch_is_known(log_dir: Path, tmp_path: Path, capsys) -> None:
    """Producer 3000 committed once (marker of coordinator epoch 9), then left a transaction open that no
    coordinator state knows: the abort names its coordinator epoch. The state is read from
    --transaction-state, another log directory."""
    from kcodec.log.writer import SegmentWriter
    from kcodec.records.encode import encode_control_batch

    part = tmp_path / "pay-0"
    with SegmentWriter(part) as w:
        w.append(
            encode_batch(
                [NewRecord(value=b"a")], producer_id=3000, producer_epoch=0, base_sequence=0, transactional=True
            )
        )
        w.append(encode_control_batch("commit", producer_id=3000, producer_epoch=0, coordinator_epoch=9, offset=1))
        w.append(
            encode_batch(
                [NewRecord(value=b"b")],
                base_offset=2,
                producer_id=3000,
                producer_epoch=0,
                base_sequence=1,
                transactional=True,
            )
        )
    code, out, _ = run(capsys, "txn", part, "--transaction-state", log_dir)
    assert code == 1
    assert "abort --topic pay --partition 0 --producer-id 3000 --producer-epoch 0 --coordinator-epoch 9" in out


def test_cli_damaged_batch_is_refused(tmp_path: Path, capsys) -> None:
    """A flipped byte under the CRC, and a batch whose size field runs past the file: one line naming the
    segment, exit 3, never a report of a shorter log."""
    part = write_events(tmp_path)
    log = part / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    data[70] ^= 0xFF
    log.write_bytes(bytes(data))
    code, out, err = run(capsys, "txn", part)
    assert code == 3 and out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"kcodec txn: {log}: CRC-32C ") and "batch offset 0" in err
    data[70] ^= 0xFF
    data[10] ^= 0x7F  # the first batch's size
    log.write_bytes(bytes(data))
    code, out, err = run(capsys, "txn", part)
    assert code == 3 and out == "" and err.startswith(f"kcodec txn: {log}: ") and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "state, hanging",
    [
        ("Ongoing", False),
        ("PrepareCommit", False),
        ("PrepareAbort", False),
        ("PrepareEpochFence", False),
        ("CompleteAbort", True),
        ("Empty", True),
        ("Dead", True),
    ],
)
def test_in_flight_states(log_dir: Path, state: str, hanging: bool) -> None:
    """Markers are still to come only while the coordinator's transaction is being prepared or is ongoing."""
    from kcodec.tools.txn import CoordinatorTxn

    coordinator = {1005: CoordinatorTxn("tx", 1005, 0, state, frozenset({("orders", 0)}))}
    found = walk_partition(Partition(log_dir / "orders-0"), coordinator=coordinator)
    assert {t.producer_id: t.hanging for t in found.open}[1005] is hanging


@pytest.mark.parametrize("next_seq, anomalies", [(5, []), (9, ["sequence_gap"])])
def test_a_log_past_retention_starts_from_its_snapshot(tmp_path: Path, next_seq: int, anomalies: list) -> None:
    """The log starts at offset 10 (retention took the rest) and a snapshot at 10 says producer 1000 (epoch
    1, coordinator epoch 3, last sequences 0-4) has a transaction open since offset 5: its COMMIT at 11
    ends that transaction (not an empty one), and the next sequence is checked against the snapshot's."""
    from kcodec.log.writer import SegmentWriter
    from kcodec.records.encode import encode_control_batch

    part = tmp_path / "late-0"
    with SegmentWriter(part, base_offset=10) as w:
        w.append(
            encode_batch(
                [NewRecord(value=b"x")],
                base_offset=10,
                producer_id=1000,
                producer_epoch=1,
                base_sequence=next_seq,
                transactional=True,
            )
        )
        w.append(encode_control_batch("commit", producer_id=1000, producer_epoch=1, coordinator_epoch=3, offset=11))
        w.append(
            encode_batch(
                [NewRecord(value=b"y")],
                base_offset=12,
                producer_id=1001,
                producer_epoch=0,
                base_sequence=0,
                transactional=True,
            )
        )
    entry = {
        "producer_id": 1000,
        "epoch": 1,
        "last_sequence": 4,
        "last_offset": 9,
        "offset_delta": 4,
        "timestamp": 0,
        "coordinator_epoch": 3,
        "current_txn_first_offset": 5,
    }
    (part / "00000000000000000010.snapshot").write_bytes(snapshot_bytes([entry]))
    done = []
    found = walk_partition(Partition(part), on_transaction=done.append)
    assert [(t.producer_id, t.first_offset, t.records, t.committed) for t in done] == [(1000, 5, 1, True)]
    assert [a.kind for a in found.anomalies] == anomalies
    assert [(t.producer_id, t.first_offset) for t in found.open] == [(1001, 12)] and found.last_stable_offset == 12
    assert found.snapshot_problems == []


@pytest.mark.parametrize(
    ("first", "marker", "expected"),
    [(1000, 1500, 500), (1000, 1000, 0), (1000, 0, None), (1000, 999, None), (-1, 5, None), (None, 5, None)],
)
def test_a_transactions_duration_is_never_negative(first, marker, expected) -> None:
    # a marker stamped before its data (another clock; librdkafka's mock coordinator stamps markers 0): no
    # duration, rather than a negative one
    txn = CompletedTxn(1, 0, True, 0, 0, 1, 0, 1, first, marker)
    assert txn.duration_ms == expected
