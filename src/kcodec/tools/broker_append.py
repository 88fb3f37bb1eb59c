"""``kcodec append``: a partition directory that takes producer requests as a broker of a given Kafka
release would (``UnifiedLog.append`` as leader): the records validated and offsets assigned
(:func:`~kcodec.records.log_validator.validate_request`), then the producer-state checks
(:class:`~kcodec.records.producer_state.ProducerStateChecker`, the same checks ``kcodec txn`` reports),
then the stored bytes appended through :class:`~kcodec.log.writer.SegmentWriter`. Every request gets
Kafka's answer (:class:`AppendAnswer`); a refused request stores nothing.

A directory that already holds a log is continued: its log end offset, and the producer state and open
transactions its batches leave (walked as ``kcodec txn`` walks them)."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path

from kcodec.generated.kafka_enums import PRODUCE_ERROR
from kcodec.log.partition import Partition
from kcodec.log.writer import SegmentWriter
from kcodec.records.broker_releases import BrokerRelease
from kcodec.records.framing import producer_header
from kcodec.records.log_validator import RequestRefused, TopicConfig, Validated, validate_request
from kcodec.records.model import increment_sequence
from kcodec.records.producer_state import ProducerStateChecker
from kcodec.tools.txn import walk_partition

__all__ = ["AppendAnswer", "BrokerPartition"]


@dataclass
class AppendAnswer:
    """What the broker answers one request with (ProduceResponse's partition fields): ``error`` is
    Kafka's error name (NONE when stored, or for a duplicate answered with its original offsets),
    ``base_offset`` -1 when refused; ``explain`` names the rule behind each decision."""

    request: int
    error: str
    base_offset: int = -1
    last_offset: int = -1
    log_append_time: int = -1
    max_timestamp: int = -1
    offset_of_max_timestamp: int = -1
    records: int = 0
    stored_bytes: int = 0
    in_place: bool | None = None
    duplicate: bool = False
    message: str = ""
    record_errors: list[tuple[int, str]] = field(default_factory=list)
    explain: list[str] = field(default_factory=list)

    @property
    def code(self) -> int:
        return PRODUCE_ERROR[self.error.lower()]

    def as_dict(self) -> dict:
        out = {
            "request": self.request,
            "error": self.error,
            "errorCode": self.code,
            "baseOffset": self.base_offset,
            "lastOffset": self.last_offset,
            "logAppendTime": self.log_append_time,
            "maxTimestamp": self.max_timestamp,
            "offsetOfMaxTimestamp": self.offset_of_max_timestamp,
            "records": self.records,
            "storedBytes": self.stored_bytes,
            "inPlace": self.in_place,
            "duplicate": self.duplicate,
        }
        if self.message:
            out["message"] = self.message
        if self.record_errors:
            out["recordErrors"] = [{"batchIndex": i, "message": m} for i, m in self.record_errors]
        if self.explain:
            out["explain"] = list(self.explain)
        return out


class BrokerPartition:
    """One partition as the leader of Kafka ``release`` keeps it, in ``directory`` (created if missing).
    :meth:`append` takes one request's records; :meth:`close` (or leaving the ``with`` block) seals the
    segment written. ``leader_epoch`` is stamped into v2 batches (partitionLeaderEpoch)."""

    def __init__(
        self,
        directory: str | Path,
        release: BrokerRelease,
        config: TopicConfig | None = None,
        *,
        leader_epoch: int = 0,
    ):
        self.directory = Path(directory)
        self.release = release
        self.config = config if config is not None else TopicConfig()
        self.leader_epoch = leader_epoch
        self.checker = ProducerStateChecker()
        self.open_transactions: dict[int, int] = {}  # producer id -> first offset of its open transaction
        self.log_end_offset = 0
        if self.directory.is_dir() and Partition(self.directory).segments:
            walked = walk_partition(Partition(self.directory), checker=self.checker)
            self.log_end_offset = Partition(self.directory).next_offset()
            self.open_transactions = {t.producer_id: t.first_offset for t in walked.open}
        self._writer: SegmentWriter | None = None
        self._requests = 0

    def __enter__(self) -> BrokerPartition:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        # every request answered NONE is whole in the segment (a failed write aborts itself): seal them
        self.close()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()

    def append(self, request: bytes, *, now: int | None = None) -> AppendAnswer:
        """Validate and store one request's records; ``now`` (ms) is the broker's clock (default: the
        wall clock). Returns the broker's answer; nothing is stored for a refused request."""
        index, self._requests = self._requests, self._requests + 1
        now = int(time.time() * 1000) if now is None else now
        try:
            validated = validate_request(
                request,
                log_end_offset=self.log_end_offset,
                release=self.release,
                config=self.config,
                now=now,
                leader_epoch=self.leader_epoch,
            )
        except RequestRefused as refused:
            r = refused.refusal
            return AppendAnswer(index, r.error, message=r.message, record_errors=r.record_errors, explain=[r.rule])
        answer = self._producer_state(index, validated)
        if answer is not None:
            return answer
        self._write(validated.stored)
        self.log_end_offset = validated.last_offset + 1
        return AppendAnswer(
            index,
            "NONE",
            base_offset=validated.first_offset,
            last_offset=validated.last_offset,
            log_append_time=validated.log_append_time,
            max_timestamp=validated.max_timestamp,
            offset_of_max_timestamp=validated.offset_of_max_timestamp,
            records=sum(len(b.records) for b in validated.batches),
            stored_bytes=len(validated.stored),
            in_place=validated.in_place,
            explain=validated.explain,
        )

    def _producer_state(self, index: int, validated: Validated) -> AppendAnswer | None:
        """UnifiedLog.analyzeAndValidateProducerState: a duplicate of a retained batch is answered with
        its original offsets; an epoch or sequence the producer's state refuses is Kafka's error. The
        state changes only for a batch that is stored."""
        head = producer_header(validated.stored)
        if head is None or head.producer_id < 0 or not self.release.producer_state:
            return None
        pid = head.producer_id
        entry = self.checker.producers.get(pid)
        # the entry as it was, to put back if the batch is refused (its retained batches are tuples)
        before = None if entry is None else replace(entry, batches=deque(entry.batches, maxlen=entry.batches.maxlen))
        found = self.checker.data(head, in_transaction=pid in self.open_transactions)
        if not found:
            if head.is_transactional:
                self.open_transactions.setdefault(pid, head.base_offset)
            return None
        if before is None:
            del self.checker.producers[pid]
        else:
            self.checker.producers[pid] = before
        problem = found[0]
        explain = validated.explain + [f"producer state: {problem.kind}"]
        if problem.kind == "duplicate_sequence" and before is not None:
            original = before.duplicate_of(
                head.base_sequence, increment_sequence(head.base_sequence, head.last_offset_delta)
            )
            if original is not None:
                return AppendAnswer(
                    index,
                    "NONE",
                    base_offset=original[2],
                    last_offset=original[3],
                    duplicate=True,
                    message=f"a duplicate of the batch at offsets {original[2]}..{original[3]}: nothing appended",
                    explain=explain,
                )
        return AppendAnswer(index, problem.error, message=problem.message, explain=explain)

    def _write(self, stored: bytes) -> None:
        if self._writer is None:
            self._writer = SegmentWriter(self.directory, base_offset=None, segment_bytes=self.config.segment_bytes)
        self._writer.append(stored)
