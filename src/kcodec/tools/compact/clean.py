"""One cleaning round of Kafka's log cleaner (``Cleaner.doClean``) over a planned partition: the offset map
of the dirty range (bounded as Kafka's is), the segments from the log start to the map's end grouped by
``segment.bytes``, and every batch filtered as ``MemoryRecords.filterTo`` with the cleaner's filter does:

* a record is kept when it lies past the map's latest offset, or has a key, is the latest offset for it,
  and has a value or is a tombstone inside its delete horizon (v2 since Kafka 3.1: the batch's horizon,
  set to now + ``delete.retention.ms`` on the first clean that keeps a tombstone or a marker; v0/v1, and
  every batch before 3.1: kept while the segment was modified after the last clean segment's mtime minus
  ``delete.retention.ms``); a record without a key is dropped;
* data of aborted transactions is dropped (``CleanedTransactionMetadata``); a COMMIT / ABORT marker goes
  once no data of its transaction was met in the round and its horizon has passed;
* an emptied batch is kept, as a header without records, when it holds an active producer's last data
  offset (or is the marker of its last epoch) or ends the round; others vanish;
* a batch whose records all stay and that needs no horizon is copied byte for byte; others are rebuilt
  with their original base and last offsets, sequences and producer fields.

Nothing is written here: each cleaned segment is handed to ``on_segment`` as it is finished."""

from __future__ import annotations

import dataclasses
import heapq
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import and_, ge, is_, is_not, itemgetter, sub

from kcodec.errors import DecodeError, KcodecError
from kcodec.generated.enums import CONTROL_RECORD_TYPE
from kcodec.records import projection as kernel_plan
from kcodec.records.decode import decode_entry, fast_decoders
from kcodec.records.encode import convert_batches
from kcodec.records.framing import V2_RECORDS_OFFSET
from kcodec.records.model import Batch, Record
from kcodec.records.transactions import AbortedTxn
from kcodec.tools.compact.plan import CleanPlan, SegmentInfo

__all__ = [
    "REASONS",
    "RetainedTombstone",
    "KeyEvent",
    "CleanedSegment",
    "CleanResult",
    "clean_partition",
    "group_segments",
]

#: why a record goes: an older offset of its key, no key, an aborted transaction's data, a tombstone past
#: its delete horizon, a transaction marker whose transaction is gone
REASONS = ("superseded", "null_key", "aborted", "tombstone", "marker")
_ABORT = CONTROL_RECORD_TYPE["abort"]
_COMMIT = CONTROL_RECORD_TYPE["commit"]
_INT32_MAX = (1 << 31) - 1
#: the latest-offset marks take a byte per offset of the mapped range, unless it holds more offsets than this
#: many per key (plus the second figure): wide offset gaps, where looking keys up costs less memory
_MAX_MARKS_PER_KEY, _MARKS_ALWAYS = 8, 1 << 20
_OFFSET, _KEY, _VALUE = (itemgetter(Record._fields.index(name)) for name in ("offset", "key", "value"))


@dataclass(frozen=True)
class RetainedTombstone:
    """A tombstone the round keeps, and from when a clean may remove it (if nothing newer of its key
    removes it first): ``rule`` says which horizon decides."""

    offset: int
    key: bytes
    removable_at_ms: int
    rule: str  # "batch horizon", "horizon set by this clean", "segment mtime"


@dataclass(frozen=True)
class KeyEvent:
    """A record of the ``--key`` asked for: kept or removed and why."""

    offset: int
    tombstone: bool
    kept: bool
    reason: str  # one of REASONS, or why it stays


@dataclass
class CleanedSegment:
    """What replaces ``sources``: a segment at the first one's base offset holding ``data``, with the
    aborted transactions its ``.txnindex`` lists and the last source's mtime."""

    base_offset: int
    sources: list[SegmentInfo]
    data: bytes
    aborted: list[AbortedTxn]
    mtime_ms: int


@dataclass
class CleanResult:
    plan: CleanPlan
    end_offset: int = 0  # the offset map's latest offset + 1: where the next round starts
    map_entries: int = 0
    map_capacity: int = 0
    map_full: bool = False
    removed: Counter = field(default_factory=Counter)
    batches_kept_whole: int = 0
    batches_rewritten: int = 0
    empty_batches_kept: int = 0
    batches_removed: int = 0
    bytes_before: int = 0  # of the cleaned segments
    bytes_after: int = 0
    segments_before: int = 0
    segments_after: int = 0
    tombstones: list[RetainedTombstone] = field(default_factory=list)
    tombstone_count: int = 0
    key_events: list[KeyEvent] = field(default_factory=list)

    @property
    def records_removed(self) -> int:
        return sum(self.removed.values())

    @property
    def would_clean(self) -> bool:
        """Whether a broker would pick the partition: its dirty ratio reaches min.cleanable.dirty.ratio."""
        return self.plan.dirty_ratio >= self.plan.config.min_cleanable_dirty_ratio

    def as_dict(self) -> dict:
        """The round as ``kcodec compact --json`` prints it (and the compaction Spark view's columns)."""
        plan, config = self.plan, self.plan.config
        return {
            "directory": str(plan.partition.path),
            "topic": plan.partition.topic,
            "partition": plan.partition.partition,
            "nowMs": config.now_ms,
            "release": "{}.{}".format(*config.release),
            "logStartOffset": plan.log_start_offset,
            "logEndOffset": plan.log_end_offset,
            "highWatermark": plan.high_watermark,
            "lastStableOffset": plan.last_stable_offset,
            "firstDirtyOffset": plan.first_dirty_offset,
            "firstDirtyFrom": plan.first_dirty_from,
            "firstUncleanableOffset": plan.first_uncleanable_offset,
            "uncleanableBecause": plan.uncleanable_reason,
            "cleanBytes": plan.clean_bytes,
            "cleanableBytes": plan.cleanable_bytes,
            "dirtyRatio": plan.dirty_ratio,
            "minCleanableDirtyRatio": config.min_cleanable_dirty_ratio,
            "wouldClean": self.would_clean,
            "endOffset": self.end_offset,
            "offsetMap": {"keys": self.map_entries, "capacity": self.map_capacity, "full": self.map_full},
            "removed": {reason: self.removed.get(reason, 0) for reason in REASONS},
            "recordsRemoved": self.records_removed,
            "batches": {
                "keptWhole": self.batches_kept_whole,
                "rewritten": self.batches_rewritten,
                "emptyKept": self.empty_batches_kept,
                "removed": self.batches_removed,
            },
            "bytesBefore": self.bytes_before,
            "bytesAfter": self.bytes_after,
            "segmentsBefore": self.segments_before,
            "segmentsAfter": self.segments_after,
            "tombstoneCount": self.tombstone_count,
            "tombstones": [
                {"offset": t.offset, "key": t.key.hex(), "removableAtMs": t.removable_at_ms, "rule": t.rule}
                for t in self.tombstones
            ],
            "keyEvents": [
                {"offset": e.offset, "tombstone": e.tombstone, "kept": e.kept, "reason": e.reason}
                for e in self.key_events
            ],
        }


# ----------------------------------------------------------------------------- transactions


class _TxnCleaning:
    """CleanedTransactionMetadata: which data batches belong to aborted transactions, and whether a marker's
    transaction still has data in the round."""

    def __init__(self) -> None:
        self._pending: list[tuple[int, int, AbortedTxn]] = []
        self._seen: set[tuple[int, int]] = set()
        self.committed: set[int] = set()
        self.aborted: dict[int, list] = {}  # producer id -> [AbortedTxn, last batch offset seen or None]
        self.cleaned_index: list[AbortedTxn] = []

    def add(self, txns: Iterable[AbortedTxn]) -> None:
        for t in txns:
            if (t.producer_id, t.first_offset) not in self._seen:
                self._seen.add((t.producer_id, t.first_offset))
                heapq.heappush(self._pending, (t.first_offset, t.producer_id, t))

    def _consume_up_to(self, offset: int) -> None:
        while self._pending and self._pending[0][0] <= offset:
            t = heapq.heappop(self._pending)[2]
            self.aborted.setdefault(t.producer_id, [t, None])

    def on_data(self, batch: Batch) -> bool:
        """onBatchRead: True for a batch of an aborted transaction."""
        self._consume_up_to(batch.last_offset)
        if not batch.is_transactional:
            return False
        meta = self.aborted.get(batch.producer_id)
        if meta is not None:
            meta[1] = batch.last_offset
            return True
        self.committed.add(batch.producer_id)
        return False

    def on_control(self, batch: Batch) -> bool:
        """onControlBatchRead: True when the marker may go (none of its transaction's data was met)."""
        self._consume_up_to(batch.last_offset)
        if not batch.records:
            return True  # an emptied control batch was cleaned before
        control = batch.records[0].control
        if control is None:
            return False
        if control.type == _ABORT:
            meta = self.aborted.pop(batch.producer_id, None)
            if meta is not None and meta[1] is not None:
                self.cleaned_index.append(meta[0])
                return False
            return True
        if control.type == _COMMIT:
            if batch.producer_id in self.committed:
                self.committed.discard(batch.producer_id)
                return False
            return True
        return False


# ----------------------------------------------------------------------------- reading


def _batches(info: SegmentInfo, strict: bool = True) -> Iterator[tuple[bytes, Batch]]:
    """Every entry of the segment with its decoded batch, CRCs checked: damage stops the round (nothing is
    written from a segment that did not read whole). ``strict=False``: a partial entry at the end is left
    alone (the active segment's write in progress)."""
    try:
        for position, raw in info.segment.entries(strict=strict):
            yield raw, decode_entry(raw, position, verify_crc=True)
    except DecodeError as exc:
        raise exc.replace(message=f"{info.segment.log}: {exc.message}") from None


def _materialized(batch: Batch) -> list:
    """The batch's records as a list: the compiled kernel's lazy sequence builds a record each time it is
    read, and the passes below read each record more than once."""
    records = batch.records
    return records if type(records) is list else list(records)


def _keys_and_offsets(raw: bytes, batch: Batch):
    """(key, offset) of each record of a data batch: for an uncompressed v2 batch, tuples the compiled kernel
    builds from the stored records (no Record objects: the batch decoded whole, errors raised, already);
    otherwise from its Records."""
    f = fast_decoders()
    if f.project is not None and batch.magic >= 2 and batch.compression == "none" and batch.records:
        _, _, r_off, r_key, _, _ = f.r
        plan = (kernel_plan.field(r_key), kernel_plan.plus(r_off, batch.base_offset))
        pairs, _ = f.project(raw, V2_RECORDS_OFFSET, len(raw), batch.record_count, tuple, plan)
        return pairs
    records = _materialized(batch)
    return zip(map(_KEY, records), map(_OFFSET, records))


# ----------------------------------------------------------------------------- the offset map


class _OffsetMap:
    """SkimpyOffsetMap: key -> latest offset, ``capacity`` keys at most, and the latest offset mapped.
    Once built, ``latest`` marks the map's offsets (a byte per offset from ``start``: 1 where a record is
    the latest of its key), so the filter decides a record of the mapped range without hashing its key."""

    def __init__(self, capacity: int, start: int):
        self.capacity = capacity
        self.offsets: dict[bytes | None, int] = {}  # None only while a batch is put (see _map_segment)
        self.latest_offset = -1
        self.full = False
        self.start = start
        self.latest: bytearray | None = None

    def mark_latest(self) -> None:
        # keys put past the latest offset (from the batch that filled the map, or past the range's end in its
        # last segment) are marked too: the filter reads marks up to the latest offset only
        offsets = self.offsets.values()
        span = max(self.latest_offset, max(offsets, default=-1)) - self.start + 1
        if span <= 0 or span > _MAX_MARKS_PER_KEY * len(self.offsets) + _MARKS_ALWAYS:
            return  # a range of wide offset gaps: the filter looks keys up instead
        marks = bytearray(span)
        deque(map(marks.__setitem__, map(sub, offsets, repeat(self.start)), repeat(1)), maxlen=0)
        self.latest = marks


def _build_offset_map(plan: CleanPlan) -> _OffsetMap:
    start, end = plan.first_dirty_offset, plan.first_uncleanable_offset
    offset_map = _OffsetMap(plan.config.max_map_entries, start)
    if offset_map.capacity < 1:
        raise KcodecError("the offset map holds no key: raise --dedupe-buffer-size (log.cleaner.dedupe.buffer.size)")
    dirty = plan.segments_between(start, end)
    txns = _TxnCleaning()
    txns.add(t for t in plan.aborted if t.last_offset >= start and t.first_offset < end)
    for i, info in enumerate(dirty):
        next_start = dirty[i + 1].base_offset if i + 1 < len(dirty) else end
        if _map_segment(info, offset_map, start, txns):
            offset_map.full = True
            break
        offset_map.latest_offset = next_start - 1  # over an offset gap, to the segment's end
    offset_map.mark_latest()
    return offset_map


def _map_segment(info: SegmentInfo, offset_map: _OffsetMap, start: int, txns: _TxnCleaning) -> bool:
    offsets = offset_map.offsets
    for raw, batch in _batches(info):
        if batch.last_offset < start:
            continue
        if batch.is_control:
            txns.on_control(batch)
        elif not txns.on_data(batch):
            if batch.base_offset >= start and len(offsets) + len(batch.records) <= offset_map.capacity:
                # no put can find the map full: all at once, in C (the last offset of a key wins, as in
                # order); a null key is put too and taken out after (the room check counted it)
                offsets.update(_keys_and_offsets(raw, batch))
                offsets.pop(None, None)
                offset_map.latest_offset = batch.last_offset
                continue
            records = _materialized(batch)
            for r in records:
                if r.key is not None and r.offset >= start:
                    if len(offsets) >= offset_map.capacity:
                        return True
                    offsets[r.key] = r.offset
        offset_map.latest_offset = batch.last_offset
    return False


# ----------------------------------------------------------------------------- grouping


def group_segments(segments: list[SegmentInfo], max_size: int, max_index_size: int, first_uncleanable: int):
    """Cleaner.groupSegmentsBySize: consecutive segments whose logs (and each index) fit ``max_size``
    (``max_index_size``) together and whose offsets fit one segment's relative offsets."""
    groups: list[list[SegmentInfo]] = []
    rest = list(segments)
    while rest:
        group = [rest.pop(0)]
        log_size, index_size, time_size = group[0].size, group[0].index_bytes, group[0].time_index_bytes
        while rest:
            nxt = rest[0]
            last_of_next = rest[1].base_offset - 1 if len(rest) > 1 else first_uncleanable - 1
            if not (
                log_size + nxt.size <= max_size
                and index_size + nxt.index_bytes <= max_index_size
                and time_size + nxt.time_index_bytes <= max_index_size
                and (nxt.size == 0 or last_of_next - group[0].base_offset <= _INT32_MAX)
            ):
                break
            group.append(rest.pop(0))
            log_size += nxt.size
            index_size += nxt.index_bytes
            time_size += nxt.time_index_bytes
        groups.append(group)
    return groups


# ----------------------------------------------------------------------------- cleaning


_MAX_TOMBSTONES = 100_000  # listed; all are counted


def clean_partition(
    plan: CleanPlan,
    *,
    key: bytes | None = None,
    on_segment: Callable[[CleanedSegment], None] | None = None,
) -> CleanResult:
    """Run one cleaning round over ``plan``. ``key``: also list what happens to each record of that key
    (in the whole log). ``on_segment`` gets each cleaned segment as it is finished."""
    config = plan.config
    result = CleanResult(plan)
    offset_map = _build_offset_map(plan)
    result.map_entries, result.map_capacity, result.map_full = (
        len(offset_map.offsets),
        offset_map.capacity,
        offset_map.full,
    )
    result.end_offset = offset_map.latest_offset + 1
    to_clean = [s for s in plan.segments if s.base_offset < result.end_offset]
    if not to_clean:
        result.end_offset = max(result.end_offset, plan.first_dirty_offset)
    groups = group_segments(to_clean, config.segment_bytes, config.segment_index_bytes, plan.first_uncleanable_offset)
    legacy_horizon = plan.legacy_delete_horizon_ms
    txns = _TxnCleaning()
    for group in groups:
        txns.cleaned_index = []
        parts: list[bytes] = []
        size = 0
        for i, info in enumerate(group):
            upper = group[i + 1].base_offset if i + 1 < len(group) else info.next_offset
            txns.add(t for t in plan.aborted if t.last_offset >= info.base_offset and t.first_offset < upper)
            retain_legacy = info.mtime_ms > legacy_horizon
            for raw, batch in _batches(info):
                out = _filter_batch(raw, batch, info, plan, offset_map, txns, retain_legacy, result, key)
                size += len(out)
                if out and on_segment is not None:  # a dry run counts the bytes and keeps none
                    parts.append(out)
            result.bytes_before += info.size
        result.bytes_after += size
        result.segments_before += len(group)
        result.segments_after += 1
        if on_segment is not None:
            data = b"".join(parts)
            on_segment(CleanedSegment(group[0].base_offset, group, data, list(txns.cleaned_index), group[-1].mtime_ms))
    if key is not None:
        for info in plan.segments:
            if info.base_offset >= result.end_offset:
                for _, batch in _batches(info, strict=info is not plan.segments[-1]):
                    for r in batch.records:
                        if r.key == key and not batch.is_control:
                            result.key_events.append(
                                KeyEvent(r.offset, r.value is None, True, "not in this round's cleaned segments")
                            )
    return result


def _filter_batch(
    raw: bytes,
    batch: Batch,
    info: SegmentInfo,
    plan: CleanPlan,
    offset_map: _OffsetMap,
    txns: _TxnCleaning,
    retain_legacy: bool,
    result: CleanResult,
    key: bytes | None,
) -> bytes:
    config, now = plan.config, plan.config.now_ms
    v2_horizon = batch.magic >= 2 and config.horizon_in_batches
    can_discard = txns.on_control(batch) if batch.is_control else txns.on_data(batch)
    if not batch.is_control:
        discard_records = can_discard
    elif v2_horizon:
        horizon = batch.delete_horizon_ms
        discard_records = can_discard and horizon is not None and horizon <= now
    else:  # before KIP-534 markers went by the segment's mtime, as legacy tombstones do
        discard_records = can_discard and not retain_legacy
    last = plan.active_producers.get(batch.producer_id) if batch.producer_id >= 0 else None
    last_of_producer = last is not None and (
        batch.last_offset == last.last_data_offset
        if last.last_data_offset is not None
        else batch.is_control and batch.producer_epoch == last.producer_epoch
    )
    retain_empty = last_of_producer or batch.next_offset == plan.first_uncleanable_offset
    marker_for_empty_txn = can_discard and batch.is_control
    if v2_horizon:
        keep_deletes = batch.delete_horizon_ms is None or now < batch.delete_horizon_ms
    else:
        keep_deletes = retain_legacy

    if discard_records and not retain_empty:
        _removed_all(batch, result, key, "marker" if batch.is_control else "aborted")
        result.batches_removed += 1
        return b""
    retained, tombstones = _retained(batch, offset_map, discard_records, keep_deletes, result, key)
    if retained:
        set_horizon = v2_horizon and (tombstones or marker_for_empty_txn) and not batch.has_delete_horizon
        horizon_ms = now + config.delete_retention_ms if set_horizon else batch.delete_horizon_ms
        _note_tombstones(tombstones, batch, info, config, set_horizon, horizon_ms, result)
        if len(retained) == len(batch.records) and not set_horizon:
            result.batches_kept_whole += 1
            return raw
        result.batches_rewritten += 1
        rebuilt = dataclasses.replace(
            batch,
            records=retained,
            has_delete_horizon=horizon_ms is not None,
            base_timestamp=horizon_ms if horizon_ms is not None else batch.base_timestamp,
        )
        out = convert_batches([rebuilt], magic=batch.magic, compression=batch.compression)
        return out
    if retain_empty and batch.magic >= 2:  # DefaultRecordBatch.writeEmptyHeader
        result.empty_batches_kept += 1
        empty = dataclasses.replace(batch, records=[], has_delete_horizon=False)
        out = convert_batches([empty], magic=2, compression="none")
        return out
    result.batches_removed += 1
    return b""


def _reason(r, batch: Batch, offset_map: _OffsetMap, discard_records: bool, keep_deletes: bool) -> str | None:
    """Why ``r`` goes (one of REASONS), or None when it stays (Cleaner.shouldRetainRecord)."""
    if discard_records:
        return "marker" if batch.is_control else "aborted"
    if batch.is_control or r.offset > offset_map.latest_offset:
        return None
    if r.key is None:
        return "null_key"
    if r.offset < offset_map.offsets.get(r.key, -1):
        return "superseded"
    if r.value is None and not keep_deletes:
        return "tombstone"
    return None


def _retained(batch: Batch, offset_map: _OffsetMap, discard_records: bool, keep_deletes: bool, result, key):
    """The records of ``batch`` that stay, and its tombstones among them; what goes is counted by reason."""
    records = _materialized(batch)
    if key is None and not discard_records and not batch.is_control:
        if records and records[-1].offset <= offset_map.latest_offset:
            return _retained_in_map(records, offset_map, keep_deletes, result)
        # the batch straddles the map's end: _reason's rules without its per-record call
        latest, get = offset_map.latest_offset, offset_map.offsets.get
        why = [
            None
            if r.offset > latest
            else "null_key"
            if r.key is None
            else "superseded"
            if r.offset < get(r.key, -1)
            else "tombstone"
            if r.value is None and not keep_deletes
            else None
            for r in records
        ]
        result.removed.update(w for w in why if w is not None)
        kept = [r for r, w in zip(records, why) if w is None]
        return kept, [r for r in kept if r.value is None]
    kept, tombstones = [], []
    for r in records:
        reason = _reason(r, batch, offset_map, discard_records, keep_deletes)
        if reason is None:
            kept.append(r)
            if r.value is None and not batch.is_control:
                tombstones.append(r)
        else:
            result.removed[reason] += 1
        if key is not None and r.key == key and not batch.is_control:
            result.key_events.append(
                KeyEvent(r.offset, r.value is None, reason is None, reason or "latest for its key")
            )
    return kept, tombstones


def _retained_in_map(records: list, offset_map: _OffsetMap, keep_deletes: bool, result: CleanResult):
    """:func:`_retained` for a data batch wholly inside the offset map, with no --key: _reason's rules over
    the batch's columns, each step a loop in C (``map`` over the records), no Python per record. In the
    map's range a record stays when it is marked the latest of its key (a null key never is); before it
    (the clean segments) when its key is not in the map."""
    n = len(records)
    keys = list(map(_KEY, records))
    null_keys = keys.count(None)
    first, last, marks, start = records[0].offset, records[-1].offset, offset_map.latest, offset_map.start
    keep: bytes | bytearray | list
    if marks is not None and first >= start:
        if last - first + 1 == n:  # no offset gap: the batch's marks in one slice
            keep = marks[first - start : last - start + 1]
        else:
            keep = bytes(map(marks.__getitem__, map(sub, map(_OFFSET, records), repeat(start))))
        superseded = keep.count(0) - null_keys
    else:  # the map's offset for the key is not later (a null key is never in the map: -1)
        keep = list(map(ge, map(_OFFSET, records), map(offset_map.offsets.get, keys, repeat(-1, n))))
        superseded = keep.count(False)
        if null_keys:
            keep = list(map(and_, keep, map(is_not, keys, repeat(None, n))))
    if superseded:
        result.removed["superseded"] += superseded
    if null_keys:
        result.removed["null_key"] += null_keys
    values = list(map(_VALUE, records))
    if None in values:  # tombstones
        if not keep_deletes:
            kept_before = n - keep.count(0)
            keep = list(map(and_, keep, map(is_not, values, repeat(None, n))))
            gone = kept_before - (n - keep.count(0))
            if gone:
                result.removed["tombstone"] += gone
        else:
            kept = list(compress(records, keep))
            return kept, list(compress(kept, map(is_, compress(values, keep), repeat(None))))
    return list(compress(records, keep)), []


def _removed_all(batch: Batch, result: CleanResult, key: bytes | None, reason: str) -> None:
    result.removed[reason] += len(batch.records)
    if key is not None and not batch.is_control:
        for r in batch.records:
            if r.key == key:
                result.key_events.append(KeyEvent(r.offset, r.value is None, False, reason))


def _note_tombstones(tombstones, batch: Batch, info: SegmentInfo, config, set_horizon, horizon_ms, result) -> None:
    result.tombstone_count += len(tombstones)
    room = _MAX_TOMBSTONES - len(result.tombstones)
    if room <= 0 or not tombstones:
        return
    if batch.magic >= 2 and config.horizon_in_batches:
        rule = "horizon set by this clean" if set_horizon else "batch horizon"
        at = horizon_ms
    else:  # removable once the last clean segment is modified delete.retention.ms after this one
        rule, at = "segment mtime", info.mtime_ms + config.delete_retention_ms
    result.tombstones += [RetainedTombstone(r.offset, r.key, at, rule) for r in tombstones[:room]]
