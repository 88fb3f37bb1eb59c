"""Kafka's producer-state checks on append (``ProducerAppendInfo``, ``ProducerStateEntry``), applied to
batches already in a log: what a broker would have refused from a client, found after the fact.

A broker checks each idempotent or transactional batch against the producer's entry: an older epoch is
fenced (INVALID_PRODUCER_EPOCH); in the same epoch the first sequence must follow the last one
(OUT_OF_ORDER_SEQUENCE_NUMBER), a new epoch must start at sequence 0, and a batch repeating one of the last
five batches' sequence ranges is a duplicate, answered with the original offsets and never appended again;
a non-transactional batch inside an open transaction is INVALID_TXN_STATE; a marker from an older
coordinator epoch is fenced. Batches on disk got past those checks (replication takes what the leader
wrote), so each one that breaks them is an anomaly here, and the entry then follows the log as a follower's
does.

State is per producer (its epoch, coordinator epoch and last five batches), never per record."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from kcodec.records.framing import ProducerHeader
from kcodec.records.model import increment_sequence

__all__ = ["NUM_BATCHES_TO_RETAIN", "ProducerAnomaly", "ProducerEntry", "ProducerStateChecker", "in_sequence"]

#: ProducerStateEntry.NUM_BATCHES_TO_RETAIN: the batches a broker remembers per producer to find duplicates
NUM_BATCHES_TO_RETAIN = 5
_INT32_MAX = (1 << 31) - 1
_NO_EPOCH = -1
_NO_SEQUENCE = -1


def in_sequence(last_seq: int, next_seq: int) -> bool:
    """ProducerAppendInfo.inSequence: the next sequence follows the last one (wrapping past Int32.MAX to 0)."""
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == _INT32_MAX)


class ProducerAnomaly(NamedTuple):
    """A batch the broker's append checks would have refused: ``kind`` (epoch_regression,
    sequence_gap, out_of_order_sequence, duplicate_sequence, new_epoch_sequence,
    non_transactional_in_transaction, coordinator_epoch_regression), the error Kafka answers with,
    and the batch's producer id, epoch and base offset."""

    kind: str
    error: str
    producer_id: int
    producer_epoch: int
    offset: int
    message: str


@dataclass
class ProducerEntry:
    """What a broker keeps per producer id (ProducerStateEntry), as far as the checks need it."""

    producer_epoch: int = _NO_EPOCH
    coordinator_epoch: int = -1
    # (first sequence, last sequence, first offset, last offset) of the last NUM_BATCHES_TO_RETAIN batches
    batches: deque = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))

    @property
    def last_seq(self) -> int:
        return self.batches[-1][1] if self.batches else _NO_SEQUENCE

    def duplicate_of(self, first_seq: int, last_seq: int) -> tuple[int, int, int, int] | None:
        """ProducerStateEntry.findDuplicateBatch (same epoch assumed): the retained batch with these
        sequences, whose offsets a broker answers a duplicate with."""
        return next((b for b in self.batches if b[0] == first_seq and b[1] == last_seq), None)

    def follow_epoch(self, epoch: int) -> None:
        """ProducerStateEntry.maybeUpdateProducerEpoch: a new epoch forgets the batches."""
        if epoch != self.producer_epoch:
            self.batches.clear()
            self.producer_epoch = epoch


class ProducerStateChecker:
    """Kafka's append checks over the batches of one partition, in offset order: :meth:`data` for each
    data batch of a producer (id >= 0), :meth:`marker` for each COMMIT / ABORT marker. Each returns the
    anomalies the batch shows (usually none)."""

    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}

    def load(
        self,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        last_batch: tuple[int, int, int, int] | None,
    ) -> None:
        """Start from a producer's saved state (a producer-state snapshot's entry, as Kafka loads one):
        ``last_batch`` is (first sequence, last sequence, first offset, last offset), None when none."""
        entry = self.producers[producer_id] = ProducerEntry(producer_epoch, coordinator_epoch)
        if last_batch is not None:
            entry.batches.append(last_batch)

    def data(self, head: ProducerHeader, *, in_transaction: bool) -> list[ProducerAnomaly]:
        """Check one data batch; ``in_transaction``: the producer has an open transaction before it."""
        entry = self.producers.setdefault(head.producer_id, ProducerEntry())
        pid, epoch, offset = head.producer_id, head.producer_epoch, head.base_offset
        first_seq = head.base_sequence
        last_seq = increment_sequence(first_seq, head.last_offset_delta) if first_seq >= 0 else _NO_SEQUENCE
        out: list[ProducerAnomaly] = []

        def found(kind: str, error: str, message: str) -> None:
            out.append(ProducerAnomaly(kind, error, pid, epoch, offset, message))

        known = entry.producer_epoch != _NO_EPOCH  # first sight in this log: any epoch and sequence go
        if known and epoch < entry.producer_epoch:
            found(
                "epoch_regression",
                "INVALID_PRODUCER_EPOCH",
                f"epoch {epoch} after epoch {entry.producer_epoch} (a fenced producer's batch)",
            )
        elif known and first_seq >= 0:
            if epoch != entry.producer_epoch:
                if first_seq != 0:
                    found(
                        "new_epoch_sequence",
                        "OUT_OF_ORDER_SEQUENCE_NUMBER",
                        f"new epoch {epoch} starts at sequence {first_seq}, not 0",
                    )
            elif (original := entry.duplicate_of(first_seq, last_seq)) is not None:
                found(
                    "duplicate_sequence",
                    "DUPLICATE_SEQUENCE_NUMBER",
                    f"sequences {first_seq}..{last_seq} repeat the batch at offsets {original[2]}..{original[3]}",
                )
            elif not in_sequence(entry.last_seq, first_seq):
                last = entry.last_seq
                gap = last >= 0 and first_seq > last + 1
                found(
                    "sequence_gap" if gap else "out_of_order_sequence",
                    "OUT_OF_ORDER_SEQUENCE_NUMBER",
                    f"sequence {first_seq} follows {last}"
                    + (f": {first_seq - last - 1} missing" if gap else " (expected the next one)"),
                )
        if in_transaction and not head.is_transactional:
            found(
                "non_transactional_in_transaction",
                "INVALID_TXN_STATE",
                "a non-transactional batch while the producer's transaction is open",
            )
        entry.follow_epoch(epoch)
        if first_seq >= 0:
            entry.batches.append((first_seq, last_seq, head.base_offset, head.last_offset))
        return out

    def marker(
        self, producer_id: int, producer_epoch: int, coordinator_epoch: int, offset: int
    ) -> list[ProducerAnomaly]:
        """Check one COMMIT / ABORT marker (ProducerAppendInfo.appendEndTxnMarker)."""
        entry = self.producers.setdefault(producer_id, ProducerEntry())
        out = []
        if entry.producer_epoch != _NO_EPOCH and producer_epoch < entry.producer_epoch:
            out.append(
                ProducerAnomaly(
                    "epoch_regression",
                    "INVALID_PRODUCER_EPOCH",
                    producer_id,
                    producer_epoch,
                    offset,
                    f"marker epoch {producer_epoch} after epoch {entry.producer_epoch}",
                )
            )
        if coordinator_epoch < entry.coordinator_epoch:
            out.append(
                ProducerAnomaly(
                    "coordinator_epoch_regression",
                    "TRANSACTION_COORDINATOR_FENCED",
                    producer_id,
                    producer_epoch,
                    offset,
                    f"marker of coordinator epoch {coordinator_epoch} after {entry.coordinator_epoch}",
                )
            )
        entry.follow_epoch(producer_epoch)
        entry.coordinator_epoch = coordinator_epoch
        return out
