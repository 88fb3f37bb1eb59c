"""What a broker's log cleaner decides before it reads a record (``LogCleanerManager.cleanableOffsets``,
``LogToClean``): the partition's segments with their sizes and modification times, its producer state at
the log end (``ProducerStateManager``, followed with the project's :class:`TxnTracker` and
:class:`ProducerStateChecker`), the last stable offset, the cleanable range and the dirty ratio.

The walk reads v2 batch headers only (a control batch is decoded for its marker); v0/v1 entries are
decoded for their timestamps."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from kcodec.errors import DecodeError, KcodecError
from kcodec.log.files import Segment
from kcodec.log.names import INDEX_SUFFIX, TIME_INDEX_SUFFIX
from kcodec.log.partition import Partition
from kcodec.records.decode import decode_entry
from kcodec.records.framing import producer_header
from kcodec.records.producer_state import ProducerStateChecker
from kcodec.records.transactions import AbortedTxn, TxnTracker
from kcodec.tools.compact.config import CleanerConfig
from kcodec.tools.dump.files import dump_text_file

__all__ = ["CLEANER_CHECKPOINT", "HW_CHECKPOINT", "SegmentInfo", "LastRecord", "CleanPlan", "plan_partition"]

CLEANER_CHECKPOINT = "cleaner-offset-checkpoint"  # LogCleanerManager: the first dirty offset per partition
HW_CHECKPOINT = "replication-offset-checkpoint"  # ReplicaManager: the high watermark per partition


@dataclass
class SegmentInfo:
    segment: Segment
    base_offset: int
    size: int
    mtime_ms: int
    next_offset: int  # the last batch's last offset + 1 (the base offset for an empty segment)
    largest_timestamp: int  # LogSegment.largestTimestamp: the max timestamp, else the mtime
    index_bytes: int
    time_index_bytes: int


class LastRecord(NamedTuple):
    """ProducerStateManager's LastRecord of an active producer: its last data offset (None when its
    last batch is a marker of a new epoch) and epoch."""

    last_data_offset: int | None
    producer_epoch: int


@dataclass
class CleanPlan:
    partition: Partition
    config: CleanerConfig
    segments: list[SegmentInfo]
    log_start_offset: int = 0
    log_end_offset: int = 0
    high_watermark: int | None = None
    last_stable_offset: int = 0
    first_dirty_offset: int = 0
    first_dirty_from: str = "log start"
    first_uncleanable_offset: int = 0
    uncleanable_reason: str = ""
    aborted: list[AbortedTxn] = field(default_factory=list)
    active_producers: dict[int, LastRecord] = field(default_factory=dict)

    def segments_between(self, start: int, end: int) -> list[SegmentInfo]:
        """LocalLog.segments(from, to): from the segment holding ``start`` (its floor) to those below ``end``."""
        if start == end:
            return []
        floor = max((i for i, s in enumerate(self.segments) if s.base_offset <= start), default=0)
        return [s for s in self.segments[floor:] if s.base_offset < end]

    @property
    def clean_bytes(self) -> int:
        return sum(s.size for s in self.segments if s.base_offset < self.first_dirty_offset)

    @property
    def cleanable_bytes(self) -> int:
        end = max(self.first_dirty_offset, self.first_uncleanable_offset)
        return sum(s.size for s in self.segments_between(self.first_dirty_offset, end))

    @property
    def dirty_ratio(self) -> float:
        """LogToClean.cleanableRatio: cleanable bytes over clean + cleanable bytes."""
        total = self.clean_bytes + self.cleanable_bytes
        return self.cleanable_bytes / total if total else 0.0

    @property
    def legacy_delete_horizon_ms(self) -> int:
        """The last clean segment's mtime - delete.retention.ms (0 with no clean segment): v0/v1 tombstones
        in a segment modified after it are kept."""
        clean = [s for s in self.segments if s.base_offset < self.first_dirty_offset]
        return clean[-1].mtime_ms - self.config.delete_retention_ms if clean else 0


def _mtime_ms(path) -> int:
    return os.stat(path).st_mtime_ns // 1_000_000


def _listed_size(seg: Segment, suffix: str) -> int:
    if not seg.has(suffix):
        return 0
    try:
        return os.stat(seg.index if suffix == INDEX_SUFFIX else seg.time_index).st_size
    except OSError:
        return 0


def _checkpoint_offset(log_dir: Path, name: str, topic: str | None, partition: int | None) -> int | None:
    path = log_dir / name
    if topic is None or not path.is_file():
        return None
    for e in dump_text_file(path, "offset-checkpoint").fields["entries"]:
        if e["topic"] == topic and e["partition"] == partition:
            return int(e["offset"])
    return None


def plan_partition(part: Partition, config: CleanerConfig, *, first_dirty_offset: int | None = None) -> CleanPlan:
    """Walk ``part`` (a local partition directory) to the log end and decide the cleanable range as a broker
    would at ``config.now_ms``. The first dirty offset is ``first_dirty_offset``, else the log directory's
    ``cleaner-offset-checkpoint`` entry, else the log start; the high watermark, when the log directory's
    ``replication-offset-checkpoint`` has it, bounds the last stable offset."""
    if not part.fs.local:
        raise KcodecError(f"{part.path}: kcodec compact reads local partition directories only")
    plan = CleanPlan(part, config, [])
    tracker = TxnTracker({}, 0)
    checker = ProducerStateChecker()
    last_ts: dict[int, int] = {}
    started = False
    segments = part.segments
    for seg in segments:
        assert seg.base_offset is not None
        largest, next_offset = -1, seg.base_offset
        # a partial entry at the end of the active segment is a write in progress (Kafka's reads stop before
        # it, and the active segment is never cleaned); anywhere else it is damage
        strict = seg is not segments[-1]
        try:
            for position, raw in seg.entries(strict=strict):
                head = producer_header(raw)
                if head is None:
                    batch = decode_entry(raw, position)
                    largest = max(largest, batch.max_timestamp)
                    first, next_offset = batch.base_offset, batch.last_offset + 1
                else:
                    largest = max(largest, head.max_timestamp)
                    first, next_offset = head.base_offset, head.last_offset + 1
                    _follow(head, raw, tracker, checker, last_ts, plan)
                if not started:
                    plan.log_start_offset, started = first, True
        except DecodeError as exc:
            raise exc.replace(message=f"{seg.log}: {exc.message}") from None
        mtime = _mtime_ms(seg.log)
        plan.segments.append(
            SegmentInfo(
                seg,
                seg.base_offset,
                seg.size,
                mtime,
                next_offset,
                largest if largest >= 0 else mtime,
                _listed_size(seg, INDEX_SUFFIX),
                _listed_size(seg, TIME_INDEX_SUFFIX),
            )
        )
    if plan.segments:
        if not started:
            plan.log_start_offset = plan.segments[0].base_offset
        plan.log_end_offset = plan.segments[-1].next_offset
    for pid, entry in checker.producers.items():
        open_txn = pid in tracker.ongoing
        # ProducerStateManager.isProducerExpired: no open transaction and silent for producer.id.expiration.ms
        if not open_txn and config.now_ms - last_ts.get(pid, -1) >= config.producer_id_expiration_ms:
            continue
        plan.active_producers[pid] = LastRecord(entry.batches[-1][3] if entry.batches else None, entry.producer_epoch)
    _decide_range(plan, tracker, first_dirty_offset)
    return plan


def _follow(head, raw: bytes, tracker: TxnTracker, checker: ProducerStateChecker, last_ts: dict, plan: CleanPlan):
    if head.producer_id < 0:
        return
    last_ts[head.producer_id] = head.max_timestamp
    if not head.is_control:
        checker.data(head, in_transaction=head.producer_id in tracker.ongoing)
        tracker.observe_entry(raw)
        return
    aborted = tracker.observe_entry(raw)
    if aborted is not None:
        plan.aborted.append(aborted)
    end = tracker.last_end
    if end is not None:
        checker.marker(head.producer_id, head.producer_epoch, end.marker.coordinator_epoch or 0, head.base_offset)


def _decide_range(plan: CleanPlan, tracker: TxnTracker, first_dirty_offset: int | None) -> None:
    part, config = plan.partition, plan.config
    log_dir = Path(part.path).resolve().parent
    plan.high_watermark = _checkpoint_offset(log_dir, HW_CHECKPOINT, part.topic, part.partition)
    unstable = min(tracker.ongoing.values(), default=plan.log_end_offset)
    plan.last_stable_offset = min(unstable, plan.high_watermark if plan.high_watermark is not None else unstable)
    # LogCleanerManager.cleanableOffsets: a checkpoint outside the log resets to the log start
    dirty, source = first_dirty_offset, "--first-dirty-offset"
    if dirty is None:
        dirty = _checkpoint_offset(log_dir, CLEANER_CHECKPOINT, part.topic, part.partition)
        source = CLEANER_CHECKPOINT
    if dirty is None or not plan.log_start_offset <= dirty <= plan.log_end_offset:
        dirty, source = plan.log_start_offset, "log start"
    plan.first_dirty_offset, plan.first_dirty_from = dirty, source
    why = "an open transaction" if tracker.ongoing else "the log end"
    if plan.high_watermark is not None and plan.high_watermark < unstable:
        why = f"the high watermark of {HW_CHECKPOINT}"
    bounds = [(plan.last_stable_offset, f"the last stable offset ({why})")]
    if plan.segments:
        bounds.append((plan.segments[-1].base_offset, "the active segment"))
    if config.min_compaction_lag_ms > 0:
        for s in plan.segments[:-1]:
            if s.next_offset > dirty and s.largest_timestamp > config.now_ms - config.min_compaction_lag_ms:
                bounds.append((s.base_offset, f"min.compaction.lag.ms (segment {s.base_offset})"))
                break
    plan.first_uncleanable_offset, plan.uncleanable_reason = min(bounds, key=lambda b: b[0])
    if plan.first_uncleanable_offset < dirty:
        plan.first_uncleanable_offset = dirty
