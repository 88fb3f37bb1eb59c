"""A broker log directory of transactional and idempotent partitions for ``kcodec txn``, written with
kcodec's own encoders (encode_batch, encode_control_batch, SegmentWriter, the generated codecs for the
coordinator's records and the producer-state snapshot). What each partition holds is listed here; the
tests check the report against it.

``orders-0`` (T0 + offset is every batch's timestamp):

====== ======== ===== ========================================================================
offset producer epoch
====== ======== ===== ========================================================================
0-1    1000     0     data, sequences 0-1
2      1000     0     COMMIT, coordinator epoch 5                 (committed, 2 ms)
3      1001     0     data, sequence 0
4      1001     0     ABORT, coordinator epoch 5                  (aborted)
5      1002     0     COMMIT, coordinator epoch 5, no data        (empty)
6      -1             one non-transactional record
7-8    1003     2     data, sequences 0-1: open, Ongoing at the coordinator listing orders-0
9      1004     1     data, sequence 0: open; the coordinator's tx-done is CompleteCommit    -> hanging
10     1005     0     data, sequence 0: open; no transactional id has producer id 1005        -> hanging
11     1006     0     data, sequence 0: open; tx-other is Ongoing but lists only orders-1     -> hanging
12-13  -1             two non-transactional records
====== ======== ===== ========================================================================

LSO 7, and 7 data records (offsets 7-13) held back. A producer-state snapshot at offset 8 says 1003's
transaction is open from 7 (true), 1001's from 3 (false: it was aborted at 4), and that producer 1000
has epoch 4 (false: 0).

``events-0``: idempotent producer 2000, epoch 3: sequences 0-1 (offsets 0-1), 2 (2), 5 (3: 3 and 4
missing), 5 again (4: a duplicate of offset 3), then epoch 2 sequence 0 (5: an epoch regression).
"""

from __future__ import annotations

from pathlib import Path

from kcodec.generated import codec
from kcodec.generated.enums import TRANSACTION_STATE
from kcodec.log.writer import SegmentWriter
from kcodec.records.encode import NewRecord, encode_batch, encode_control_batch
from tests.helpers.internal_logs import T0, txn_key, txn_value

HANGING = {1004: "tx-done", 1005: None, 1006: "tx-other"}


def _data(offset: int, n: int, pid: int, epoch: int, seq: int, transactional: bool = True) -> bytes:
    records = [NewRecord(key=b"k%d" % (offset + i), value=b"v", timestamp=T0 + offset + i) for i in range(n)]
    return encode_batch(
        records,
        base_offset=offset,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        transactional=transactional,
    )


def _plain(offset: int, n: int) -> bytes:
    return encode_batch(
        [NewRecord(key=None, value=b"p", timestamp=T0 + offset + i) for i in range(n)], base_offset=offset
    )


def _marker(kind: str, offset: int, pid: int, epoch: int, coordinator_epoch: int = 5) -> bytes:
    return encode_control_batch(
        kind,
        producer_id=pid,
        producer_epoch=epoch,
        coordinator_epoch=coordinator_epoch,
        offset=offset,
        timestamp=T0 + offset,
    )


def snapshot_bytes(entries: list[dict]) -> bytes:
    return codec("producer_snapshot", 1).build({"version": 1, "producer_entries": entries})


def _snapshot_entry(pid: int, epoch: int, txn_first: int) -> dict:
    return {
        "producer_id": pid,
        "epoch": epoch,
        "last_sequence": 0,
        "last_offset": txn_first,
        "offset_delta": 0,
        "timestamp": T0,
        "coordinator_epoch": -1,
        "current_txn_first_offset": txn_first,
    }


def write_orders(root: Path) -> Path:
    p = root / "orders-0"
    entries = [
        _data(0, 2, 1000, 0, 0),
        _marker("commit", 2, 1000, 0),
        _data(3, 1, 1001, 0, 0),
        _marker("abort", 4, 1001, 0),
        _marker("commit", 5, 1002, 0),
        _plain(6, 1),
        _data(7, 2, 1003, 2, 0),
        _data(9, 1, 1004, 1, 0),
        _data(10, 1, 1005, 0, 0),
        _data(11, 1, 1006, 0, 0),
        _plain(12, 2),
    ]
    with SegmentWriter(p, segment_bytes=400) as w:  # a few segments: the walk crosses them
        for e in entries:
            w.append(e)
    (p / "00000000000000000008.snapshot").write_bytes(
        snapshot_bytes([_snapshot_entry(1000, 4, -1), _snapshot_entry(1001, 0, 3), _snapshot_entry(1003, 2, 7)])
    )
    return p


def write_events(root: Path) -> Path:
    p = root / "events-0"
    with SegmentWriter(p) as w:
        for e in [
            _data(0, 2, 2000, 3, 0, False),
            _data(2, 1, 2000, 3, 2, False),
            _data(3, 1, 2000, 3, 5, False),
            _data(4, 1, 2000, 3, 5, False),
            _data(5, 1, 2000, 2, 0, False),
        ]:
            w.append(e)
    return p


def write_coordinator(root: Path) -> Path:
    """``__transaction_state-0``: tx-live (1003, Ongoing, orders-0), tx-done (1004, CompleteCommit, no
    partitions), tx-other (1006, Ongoing, orders-1 only)."""
    state = TRANSACTION_STATE
    rows = [
        ("tx-live", 1003, 2, state["ongoing"], [{"topic": "orders", "partition_ids": [0]}]),
        ("tx-done", 1004, 1, state["complete_commit"], None),
        ("tx-other", 1006, 0, state["ongoing"], [{"topic": "orders", "partition_ids": [1]}]),
    ]
    records = [
        NewRecord(
            key=txn_key(tid),
            value=txn_value(s, producer_id=pid, producer_epoch=e, transaction_partitions=tps),
            timestamp=T0,
        )
        for tid, pid, e, s, tps in rows
    ]
    p = root / "__transaction_state-0"
    with SegmentWriter(p) as w:
        w.append(encode_batch(records, base_offset=0))
    return p


def write_txn_log_dir(root: Path, *, coordinator: bool = True) -> Path:
    write_orders(root)
    write_events(root)
    if coordinator:
        write_coordinator(root)
    return root
