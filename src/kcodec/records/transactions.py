"""Transactions as Kafka's ``ProducerStateManager`` follows them through a log:
a transaction opens at a producer's first transactional batch and ends at
its COMMIT or ABORT marker; an ABORT gives a transaction-index entry. And what
a read_committed consumer gets once the aborted transactions are known.

A records-layer module: it reads batches handed to it, and decodes a control
entry by itself (:func:`~kcodec.records.decode.decode_entry`), never through a
reader, so the reader can use it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from kcodec.generated.enums import CONTROL_RECORD_TYPE
from kcodec.records.decode import decode_entry
from kcodec.records.framing import producer_header
from kcodec.records.model import Batch, ControlRecord, Record

__all__ = ["AbortedTxn", "TxnEnd", "TxnTracker", "ISOLATION_LEVELS", "check_isolation_level", "committed_records"]

_ABORT = CONTROL_RECORD_TYPE["abort"]
_INT64_MAX = (1 << 63) - 1


class AbortedTxn(NamedTuple):
    """A transaction-index entry: an aborted transaction whose ABORT marker is at ``last_offset``."""

    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TxnEnd(NamedTuple):
    """A COMMIT or ABORT marker as the tracker followed it: ``first_offset`` is the transaction's first
    data offset, None when no data of it was seen (an empty transaction, or one begun before the input)."""

    producer_id: int
    first_offset: int | None
    marker_offset: int
    marker: ControlRecord


class TxnTracker:
    """Open transactions (producer id -> first offset), turning ABORT markers
    into :class:`AbortedTxn` entries.

    ``open_txns`` is the state at the start of the input (updated in place);
    None means unknown history, in which case an ABORT marker whose
    transaction started before the input gets ``fallback_first_offset`` (the
    segment base offset) as its first offset instead of being dropped as an
    empty transaction.

    ``last_end`` is the :class:`TxnEnd` of the batch last observed when it was a COMMIT or ABORT
    marker, else None: what a caller reporting every transaction, not only the aborted ones, reads."""

    def __init__(self, open_txns: dict[int, int] | None, fallback_first_offset: int):
        self.known = open_txns is not None
        self.ongoing: dict[int, int] = open_txns if open_txns is not None else {}
        self.fallback = fallback_first_offset
        self.last_end: TxnEnd | None = None

    def observe(self, batch: Batch) -> AbortedTxn | None:
        """Follow one decoded batch."""
        self.last_end = None
        if batch.magic < 2 or batch.producer_id < 0:
            return None
        marker = batch.records[0].control if batch.is_control and batch.records else None
        return self._follow(
            batch.producer_id, batch.base_offset, batch.is_transactional, batch.is_control, lambda: marker
        )

    def observe_entry(self, raw: bytes, **decode_options) -> AbortedTxn | None:
        """Follow one undecoded entry (one whole log entry): only its header is
        read, and a control batch is decoded (with ``decode_options``, those of
        :func:`~kcodec.records.decode.decode_entry`) for its marker."""
        self.last_end = None
        head = producer_header(raw)
        if head is None or head.producer_id < 0:
            return None

        def marker() -> ControlRecord | None:
            batch = decode_entry(raw, **decode_options)
            return batch.records[0].control if batch.records else None

        return self._follow(head.producer_id, head.base_offset, head.is_transactional, head.is_control, marker)

    def _follow(self, pid: int, base_offset: int, transactional: bool, control: bool, marker_of) -> AbortedTxn | None:
        if not control:
            if transactional:
                self.ongoing.setdefault(pid, base_offset)
            return None
        marker = marker_of()
        if marker is None or not marker.is_transaction_marker:
            return None
        first = self.ongoing.pop(pid, None)
        self.last_end = TxnEnd(pid, first, base_offset, marker)
        if marker.type != _ABORT:
            return None
        if first is None:
            if self.known:
                return None  # an empty transaction: Kafka indexes nothing for it
            first = self.fallback
        # ProducerStateManager.lastStableOffset: the first offset of the earliest
        # other open transaction, else the marker offset + 1.
        lso = min(self.ongoing.values(), default=base_offset + 1)
        return AbortedTxn(0, pid, first, base_offset, lso)


# ---- read_committed

#: the consumer's isolation.level values: read_uncommitted returns every record, control records
#: included; read_committed drops control records and the records of aborted transactions
ISOLATION_LEVELS = ("read_uncommitted", "read_committed")


def check_isolation_level(isolation_level: str) -> bool:
    """True for read_committed; a ValueError naming the choices for anything but the two levels."""
    if isolation_level not in ISOLATION_LEVELS:
        raise ValueError(f"isolation_level must be one of {', '.join(ISOLATION_LEVELS)}, not {isolation_level!r}")
    return isolation_level == "read_committed"


def committed_records(
    batches: Iterable[Batch], aborted: list[tuple[int, int, int]], open_txns: dict[int, int] | None = None
) -> Iterator[Record]:
    """The records of ``batches`` a read_committed consumer gets: no control records, none of the
    aborted transactions ``aborted`` lists ((producer id, first offset, last offset)), and none of a
    transaction still open at the end (``open_txns``: producer id -> first offset), which Kafka holds
    back behind the last stable offset."""
    spans: dict[int, list[tuple[int, int]]] = {}
    for pid, first, last in aborted:
        spans.setdefault(pid, []).append((first, last))
    for pid, first in (open_txns or {}).items():
        spans.setdefault(pid, []).append((first, _INT64_MAX))
    for batch in batches:
        if batch.is_control:
            continue
        hit = [(f, t) for f, t in spans.get(batch.producer_id, ()) if f <= batch.last_offset and t >= batch.base_offset]
        if not batch.is_transactional or not hit:
            yield from batch.records
            continue
        yield from (r for r in batch.records if not any(f <= r.offset <= t for f, t in hit))
