"""Transactions as Kafka's ``ProducerStateManager`` follows them through a log:
a transaction opens at a producer's first transactional batch and ends at
its COMMIT or ABORT marker; an ABORT gives a transaction-index entry."""

from __future__ import annotations

from typing import NamedTuple

from kcodec.generated.enums import CONTROL_RECORD_TYPE
from kcodec.log.headers import producer_header
from kcodec.records.model import Batch, ControlRecord
from kcodec.records.reader import read_batches

__all__ = ["AbortedTxn", "TxnTracker"]

_ABORT = CONTROL_RECORD_TYPE["abort"]


class AbortedTxn(NamedTuple):
    """A transaction-index entry: an aborted transaction whose ABORT marker is at ``last_offset``."""

    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TxnTracker:
    """Open transactions (producer id -> first offset), turning ABORT markers
    into :class:`AbortedTxn` entries.

    ``open_txns`` is the state at the start of the input (updated in place);
    None means unknown history, in which case an ABORT marker whose
    transaction started before the input gets ``fallback_first_offset`` (the
    segment base offset) as its first offset instead of being dropped as an
    empty transaction."""

    def __init__(self, open_txns: dict[int, int] | None, fallback_first_offset: int):
        self.known = open_txns is not None
        self.ongoing: dict[int, int] = open_txns if open_txns is not None else {}
        self.fallback = fallback_first_offset

    def observe(self, batch: Batch) -> AbortedTxn | None:
        """Follow one decoded batch."""
        if batch.magic < 2 or batch.producer_id < 0:
            return None
        marker = batch.records[0].control if batch.is_control and batch.records else None
        return self._follow(
            batch.producer_id, batch.base_offset, batch.is_transactional, batch.is_control, lambda: marker
        )

    def observe_entry(self, raw: bytes, **reader_options) -> AbortedTxn | None:
        """Follow one undecoded entry: only its header is read, and a control
        batch is decoded (with ``reader_options``) for its marker."""
        head = producer_header(raw)
        if head is None or head.producer_id < 0:
            return None

        def marker() -> ControlRecord | None:
            batch = next(iter(read_batches(raw, **reader_options)), None)
            return batch.records[0].control if batch is not None and batch.records else None

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
