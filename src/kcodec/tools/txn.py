"""Transaction forensics from the files alone (``kcodec txn``): per data partition, the transactions its
batch headers show (committed, aborted, empty, still open), the last stable offset a read_committed
consumer stops at and the records it holds back, the producers' anomalies by Kafka's append rules, and
which open transactions hang.

The walk reads batch headers only (a control batch is decoded for its marker), follows transactions with
:class:`~kcodec.records.transactions.TxnTracker` and checks producers with
:class:`~kcodec.records.producer_state.ProducerStateChecker`; its state is per producer, never per record.

A transaction is *hanging* (KIP-664) when its data has no marker and the transaction coordinator, as
``__transaction_state`` in the same log directory records it, has no in-flight transaction (Ongoing,
PrepareCommit, PrepareAbort, PrepareEpochFence) for that producer id, or one that does not list this
partition: no marker will ever come, and the partition's LSO is stuck until an operator aborts it with
the producer id, epoch and coordinator epoch reported here. Without ``__transaction_state`` an open
transaction cannot be judged (``hanging`` is None)."""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from kcodec.errors import CrcMismatchError, DecodeError, KcodecError
from kcodec.generated.enums import CONTROL_RECORD_TYPE
from kcodec.log.names import SNAPSHOT_SUFFIX, parse_partition_dir, parse_segment_name
from kcodec.log.partition import Partition, list_partitions
from kcodec.log.producer_snapshot import read_producer_snapshot
from kcodec.records.framing import V2_CRC_OFFSET, V2_CRC_START, ProducerHeader, last_offset, producer_header
from kcodec.records.producer_state import ProducerAnomaly, ProducerStateChecker
from kcodec.records.transactions import TxnTracker
from kcodec.runtime.crc import crc32c

__all__ = [
    "IN_FLIGHT_STATES",
    "CoordinatorTxn",
    "OpenTxn",
    "CompletedTxn",
    "ProducerSummary",
    "PartitionTxns",
    "read_coordinator",
    "walk_partition",
    "txn_partitions",
]

TRANSACTION_STATE_TOPIC = "__transaction_state"
#: coordinator states in which markers for the listed partitions are still to come (PrepareEpochFence: the
#: coordinator bumps the epoch and then aborts the ongoing transaction, whose partitions it keeps)
IN_FLIGHT_STATES = ("Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence")
_COMMIT = CONTROL_RECORD_TYPE["commit"]
_MAX_ANOMALIES = 100  # kept per partition as examples; all are counted


@dataclass(frozen=True)
class CoordinatorTxn:
    """A transactional id's latest state in ``__transaction_state``."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    state: str
    partitions: frozenset[tuple[str, int]]

    def lists(self, topic: str | None, partition: int | None) -> bool:
        return (topic, partition) in self.partitions


@dataclass
class OpenTxn:
    """A transaction with data and no marker (yet)."""

    producer_id: int
    producer_epoch: int
    first_offset: int
    last_offset: int
    records: int
    first_timestamp: int
    last_timestamp: int
    records_before: int  # data records of the partition before first_offset (for the held-back count)
    coordinator_epoch: int | None = None  # of the producer's last marker, else its snapshot entry's
    hanging: bool | None = None  # None: no __transaction_state to judge by
    reason: str = ""
    coordinator: CoordinatorTxn | None = None

    def as_dict(self, topic: str | None, partition: int | None) -> dict:
        out: dict[str, object] = {
            "producerId": self.producer_id,
            "producerEpoch": self.producer_epoch,
            "coordinatorEpoch": self.coordinator_epoch,
            "firstOffset": self.first_offset,
            "lastOffset": self.last_offset,
            "records": self.records,
            "firstTimestamp": self.first_timestamp,
            "lastTimestamp": self.last_timestamp,
            "hanging": self.hanging,
            "reason": self.reason,
            "transactionalId": None if self.coordinator is None else self.coordinator.transactional_id,
            "coordinatorState": None if self.coordinator is None else self.coordinator.state,
        }
        if self.hanging:
            out["abort"] = {
                "topic": topic,
                "partition": partition,
                "producerId": self.producer_id,
                "producerEpoch": self.producer_epoch,
                "coordinatorEpoch": self.coordinator_epoch,
                "startOffset": self.first_offset,
            }
        return out


@dataclass(frozen=True)
class CompletedTxn:
    """A transaction its COMMIT or ABORT marker ended; ``first_offset`` None: an empty one (a marker
    and no data of the transaction in this partition)."""

    producer_id: int
    producer_epoch: int
    committed: bool
    first_offset: int | None
    last_offset: int | None
    marker_offset: int
    coordinator_epoch: int | None
    records: int
    first_timestamp: int | None
    marker_timestamp: int

    @property
    def duration_ms(self) -> int | None:
        """From the first data record's timestamp to the marker's; None when either is missing, or when the
        marker is stamped before the data (the producer's clock against the coordinator's: no duration can
        be told; librdkafka's mock coordinator stamps its markers 0)."""
        first, marker = self.first_timestamp, self.marker_timestamp
        if first is None or first < 0 or marker < first:
            return None
        return marker - first

    def as_dict(self) -> dict:
        return {
            "producerId": self.producer_id,
            "producerEpoch": self.producer_epoch,
            "outcome": "commit" if self.committed else "abort",
            "empty": self.first_offset is None,
            "firstOffset": self.first_offset,
            "lastOffset": self.last_offset,
            "markerOffset": self.marker_offset,
            "coordinatorEpoch": self.coordinator_epoch,
            "records": self.records,
            "durationMs": self.duration_ms,
        }


@dataclass
class ProducerSummary:
    producer_id: int
    producer_epoch: int = -1
    coordinator_epoch: int | None = None
    committed: int = 0
    aborted: int = 0
    empty: int = 0
    longest_ms: int | None = None

    def as_dict(self) -> dict:
        return {
            "producerId": self.producer_id,
            "producerEpoch": self.producer_epoch,
            "coordinatorEpoch": self.coordinator_epoch,
            "committed": self.committed,
            "aborted": self.aborted,
            "empty": self.empty,
            "longestMs": self.longest_ms,
        }


@dataclass
class PartitionTxns:
    """What :func:`walk_partition` found in one partition."""

    path: str
    topic: str | None
    partition: int | None
    log_start_offset: int = 0
    log_end_offset: int = 0
    data_records: int = 0
    producers: dict[int, ProducerSummary] = field(default_factory=dict)
    open: list[OpenTxn] = field(default_factory=list)
    anomalies: list[ProducerAnomaly] = field(default_factory=list)
    anomaly_count: int = 0
    snapshot_problems: list[str] = field(default_factory=list)
    coordinator_checked: bool = False

    @property
    def last_stable_offset(self) -> int:
        """ProducerStateManager: the first offset of the earliest open transaction, else the log end."""
        return min((t.first_offset for t in self.open), default=self.log_end_offset)

    @property
    def held_back_records(self) -> int:
        """The data records at or past the LSO: a read_committed consumer gets none of them until it moves."""
        earliest = min(self.open, key=lambda t: t.first_offset, default=None)
        return 0 if earliest is None else self.data_records - earliest.records_before

    @property
    def hanging(self) -> list[OpenTxn]:
        return [t for t in self.open if t.hanging]

    def as_dict(self) -> dict:
        return {
            "directory": self.path,
            "topic": self.topic,
            "partition": self.partition,
            "logStartOffset": self.log_start_offset,
            "logEndOffset": self.log_end_offset,
            "lastStableOffset": self.last_stable_offset,
            "heldBackRecords": self.held_back_records,
            "coordinatorChecked": self.coordinator_checked,
            "open": [t.as_dict(self.topic, self.partition) for t in self.open],
            "producers": [p.as_dict() for p in sorted(self.producers.values(), key=lambda p: p.producer_id)],
            "anomalyCount": self.anomaly_count,
            "anomalies": [
                {
                    "kind": a.kind,
                    "error": a.error,
                    "producerId": a.producer_id,
                    "producerEpoch": a.producer_epoch,
                    "offset": a.offset,
                    "message": a.message,
                }
                for a in self.anomalies
            ],
            "snapshotProblems": self.snapshot_problems,
        }


# ----------------------------------------------------------------------------- the coordinator's view


def read_coordinator(path: str | os.PathLike) -> dict[int, CoordinatorTxn] | None:
    """The latest state of every transactional id in the ``__transaction_state`` partitions under ``path``
    (a log directory or one of those partitions), by producer id; None when there are none. Needs pyarrow
    (the views are Arrow tables), imported only here."""
    from kcodec.internal_topics.tables import NoInternalTopicError, read_internal_view

    try:
        table = read_internal_view(os.fspath(path), "transactions", latest=True)
    except NoInternalTopicError:
        return None
    out: dict[int, CoordinatorTxn] = {}
    for row in sorted(table.to_pylist(), key=lambda r: (r["offset"], r["sourcePartition"] or 0)):
        if row.get("producerId") is None:
            continue
        parts = frozenset((tp["topic"], p) for tp in row.get("partitions") or () for p in tp["partitions"])
        out[row["producerId"]] = CoordinatorTxn(
            row["transactionalId"], row["producerId"], row["producerEpoch"], row["state"], parts
        )
    return out


def _judge(txn: OpenTxn, topic: str | None, partition: int | None, coordinator: dict[int, CoordinatorTxn]) -> None:
    state = coordinator.get(txn.producer_id)
    txn.coordinator = state
    if state is None:
        txn.hanging, txn.reason = True, "the coordinator has no transactional id with this producer id"
    elif state.state not in IN_FLIGHT_STATES:
        txn.hanging = True
        txn.reason = f"the coordinator's transaction {state.transactional_id!r} is {state.state}, not in flight"
    elif not state.lists(topic, partition):
        txn.hanging = True
        txn.reason = (
            f"the coordinator's {state.state} transaction {state.transactional_id!r} does not list {topic}-{partition}"
        )
    else:
        txn.hanging, txn.reason = False, f"{state.state} at the coordinator ({state.transactional_id!r})"


# ----------------------------------------------------------------------------- the walk


def _snapshots(part: Partition) -> list[tuple[int, str]]:
    """(offset, path) of the partition's producer-state snapshots, by offset (local directories only)."""
    if not part.fs.local:
        return []
    out = []
    for p in Path(part.path).glob(f"*{SNAPSHOT_SUFFIX}"):
        try:
            out.append((parse_segment_name(p)[0], str(p)))
        except ValueError:
            continue
    return sorted(out)


def walk_partition(
    part: Partition,
    *,
    coordinator: dict[int, CoordinatorTxn] | None = None,
    on_transaction: Callable[[CompletedTxn], None] | None = None,
    checker: ProducerStateChecker | None = None,
) -> PartitionTxns:
    """Walk ``part``'s batch headers from its first segment: open transactions, per-producer summaries,
    anomalies, the producer-state snapshots cross-checked, and (with ``coordinator``, from
    :func:`read_coordinator`) which open transactions hang. ``on_transaction`` gets each completed
    transaction as its marker is met (none are kept). ``checker``: the producer-state checker to walk
    with, so a caller goes on from the state the log leaves (``kcodec append``)."""
    out = PartitionTxns(str(part.path), part.topic, part.partition)
    tracker = TxnTracker({}, 0)
    checker = ProducerStateChecker() if checker is None else checker
    current: dict[int, OpenTxn] = {}  # the open transaction of each producer, as the tracker has it
    snapshots = _snapshots(part)
    # (offset, path, open transactions and producer epochs when the walk got there)
    at_snapshot: list[_AtSnapshot] = []
    pending = list(snapshots)
    _load_start(part, snapshots, tracker, checker, current, out)
    started = False
    for raw, head in _entries(part):
        if head is None:  # v0/v1: no producers, no transactions
            out.log_end_offset = (last_offset(raw) or 0) + 1
            continue
        while pending and pending[0][0] <= head.base_offset:
            offset, path = pending.pop(0)
            at_snapshot.append(_AtSnapshot(offset, path, dict(tracker.ongoing), _epochs(checker)))
        if not started:
            out.log_start_offset, started = head.base_offset, True
        out.log_end_offset = head.last_offset + 1
        if head.producer_id < 0:
            if not head.is_control:
                out.data_records += head.record_count
            continue
        summary = out.producers.setdefault(head.producer_id, ProducerSummary(head.producer_id))
        summary.producer_epoch = head.producer_epoch
        if not head.is_control:
            _anomalies(out, checker.data(head, in_transaction=head.producer_id in tracker.ongoing))
            tracker.observe_entry(raw)
            first = tracker.ongoing.get(head.producer_id) if head.is_transactional else None
            if first is not None:  # the tracker says which transaction this batch belongs to
                txn = current.get(head.producer_id)
                if txn is None:
                    first_ts = head.base_timestamp if head.base_timestamp >= 0 else head.max_timestamp
                    txn = current[head.producer_id] = OpenTxn(
                        head.producer_id, head.producer_epoch, first, first, 0, first_ts, first_ts, out.data_records
                    )
                txn.last_offset, txn.records = head.last_offset, txn.records + head.record_count
                txn.last_timestamp = max(txn.last_timestamp, head.max_timestamp)
            out.data_records += head.record_count
            continue
        tracker.observe_entry(raw)
        end = tracker.last_end
        if end is None:
            continue
        coordinator_epoch = end.marker.coordinator_epoch
        _anomalies(
            out,
            checker.marker(head.producer_id, head.producer_epoch, coordinator_epoch or 0, head.base_offset),
        )
        summary.coordinator_epoch = coordinator_epoch
        txn = current.pop(head.producer_id, None)
        done = CompletedTxn(
            head.producer_id,
            txn.producer_epoch if txn is not None else head.producer_epoch,
            end.marker.type == _COMMIT,
            end.first_offset,
            None if txn is None else txn.last_offset,
            head.base_offset,
            coordinator_epoch,
            0 if txn is None else txn.records,
            None if txn is None else txn.first_timestamp,
            head.max_timestamp,
        )
        if done.first_offset is None:
            summary.empty += 1
        elif done.committed:
            summary.committed += 1
        else:
            summary.aborted += 1
        if done.duration_ms is not None and done.first_offset is not None:
            summary.longest_ms = max(summary.longest_ms or 0, done.duration_ms)
        if on_transaction is not None:
            on_transaction(done)
    for offset, path in pending:  # snapshots at or past the log end
        at_snapshot.append(_AtSnapshot(offset, path, dict(tracker.ongoing), _epochs(checker)))
    out.open = sorted(current.values(), key=lambda t: t.first_offset)
    snapshot_epochs = _check_snapshots(out, at_snapshot)
    for txn in out.open:
        known = out.producers[txn.producer_id].coordinator_epoch
        txn.coordinator_epoch = known if known is not None else snapshot_epochs.get(txn.producer_id)
        if coordinator is not None:
            _judge(txn, out.topic, out.partition, coordinator)
    out.coordinator_checked = coordinator is not None
    return out


def _load_start(
    part: Partition,
    snapshots: list[tuple[int, str]],
    tracker: TxnTracker,
    checker: ProducerStateChecker,
    current: dict[int, OpenTxn],
    out: PartitionTxns,
) -> None:
    """A log whose first segment starts past offset 0 lost its history to retention: start from the
    newest snapshot at or below its first offset, as a broker loading the log does (its open transactions,
    epochs and last sequences). A snapshot that does not read is reported and the walk starts empty."""
    segs = part.segments
    start = segs[0].base_offset if segs and segs[0].base_offset is not None else 0
    below = [s for s in snapshots if s[0] <= start]
    if start == 0 or not below:
        return
    offset, path = below[-1]
    try:
        entries = read_producer_snapshot(path)
    except (KcodecError, OSError) as exc:
        out.snapshot_problems.append(f"{Path(path).name}: {getattr(exc, 'message', exc)}")
        return
    for e in entries:
        b = e.batch
        last = None if b is None else (b.first_seq, b.last_seq, b.last_offset - b.offset_delta, b.last_offset)
        checker.load(e.producer_id, e.producer_epoch, e.coordinator_epoch, last)
        first = e.current_txn_first_offset
        if first is not None:
            tracker.ongoing[e.producer_id] = first
            ts = e.last_timestamp
            # its records before the log's start are gone: counted from here on
            current[e.producer_id] = OpenTxn(e.producer_id, e.producer_epoch, first, first, 0, ts, ts, 0)
            known = e.coordinator_epoch if e.coordinator_epoch >= 0 else None
            out.producers[e.producer_id] = ProducerSummary(e.producer_id, e.producer_epoch, known)


def _entries(part: Partition) -> Iterator[tuple[bytes, ProducerHeader | None]]:
    """Every whole entry of the partition with its v2 header (None for v0/v1), CRC checked; a torn or
    damaged entry stops the walk with an error naming the segment, never a shorter log."""
    for seg in part.segments:
        try:
            for position, raw in seg.entries(strict=True):
                head = producer_header(raw)
                if head is not None:
                    _check_crc(raw, position, head.base_offset)
                yield raw, head
        except DecodeError as exc:
            raise exc.replace(message=f"{seg.log}: {exc.message}") from None


def _open(first: int | None) -> str:
    return "no open transaction" if first is None else f"a transaction open from offset {first}"


def _check_crc(raw: bytes, position: int, base_offset: int) -> None:
    """The header fields the walk reads are under the batch's CRC-32C: a batch whose CRC fails is refused."""
    stored = struct.unpack_from(">I", raw, V2_CRC_OFFSET)[0]
    computed = crc32c(raw[V2_CRC_START:])
    if computed != stored:
        raise CrcMismatchError(
            f"CRC-32C {stored:#010x} stored, {computed:#010x} computed",
            position=position,
            base_offset=base_offset,
        )


def _anomalies(out: PartitionTxns, found: list[ProducerAnomaly]) -> None:
    out.anomaly_count += len(found)
    room = _MAX_ANOMALIES - len(out.anomalies)
    if room > 0:
        out.anomalies += found[:room]


class _AtSnapshot(NamedTuple):
    offset: int
    path: str
    open_txns: dict[int, int]  # producer id -> first offset
    epochs: dict[int, int]  # producer id -> epoch


def _epochs(checker: ProducerStateChecker) -> dict[int, int]:
    return {pid: entry.producer_epoch for pid, entry in checker.producers.items()}


def _check_snapshots(out: PartitionTxns, at_snapshot: list[_AtSnapshot]) -> dict[int, int]:
    """Compare each snapshot's open transactions and producer epochs with the walk's at its offset; the
    coordinator epochs the newest readable snapshot holds, by producer id."""
    epochs: dict[int, int] = {}
    for at in at_snapshot:
        name = Path(at.path).name
        try:
            entries = read_producer_snapshot(at.path)
        except (KcodecError, OSError) as exc:
            out.snapshot_problems.append(f"{name}: {getattr(exc, 'message', exc)}")
            continue
        epochs = {e.producer_id: e.coordinator_epoch for e in entries if e.coordinator_epoch >= 0}
        stored = {e.producer_id: e.current_txn_first_offset for e in entries if e.current_txn_first_offset is not None}
        if at.offset <= out.log_start_offset:
            continue  # the state before the log's first batch: its history is not in the files to compare with
        for pid in sorted(set(stored) | set(at.open_txns)):
            if stored.get(pid) != at.open_txns.get(pid):
                out.snapshot_problems.append(
                    f"{name}: producer {pid} has {_open(stored.get(pid))} in the snapshot, "
                    f"{_open(at.open_txns.get(pid))} in the log at offset {at.offset}"
                )
        for e in entries:
            walked = at.epochs.get(e.producer_id)
            if walked is not None and walked != e.producer_epoch:
                out.snapshot_problems.append(
                    f"{name}: producer {e.producer_id} has epoch {e.producer_epoch} in the snapshot, "
                    f"{walked} in the log at offset {at.offset}"
                )
    return epochs


# ----------------------------------------------------------------------------- a path


def txn_partitions(
    path: str | os.PathLike, exclude: tuple[str, ...] = (TRANSACTION_STATE_TOPIC, "__cluster_metadata")
) -> tuple[list[Partition], str]:
    """The data partitions ``path`` names (a partition directory, or a log directory of them; the topics
    ``exclude`` names left out: by default the coordinator's and KRaft's own), and the log directory where
    ``__transaction_state`` is looked for."""
    text = os.fspath(path)
    try:
        parse_partition_dir(text)
        is_partition = any(Path(text).glob("*.log")) or not any(p.is_dir() for p in Path(text).iterdir())
    except ValueError:
        is_partition = False
    if is_partition:
        return [Partition(text)], str(Path(text).resolve().parent)
    parts = [p for p in list_partitions(text) if p.topic not in exclude]
    return parts, text
