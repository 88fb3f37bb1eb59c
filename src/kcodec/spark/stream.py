"""Structured Streaming over segment files: ``spark.readStream.format("kafka-segments").load(DIR)``
tails the partition directories under DIR as a broker (or a mirror, or a
restore) writes them.

Offsets are Spark's Kafka source's: ``{"topic": {"0": 123}}``, the next
offset to read per topic-partition. Each trigger lists the directories again
(new partitions start at their earliest offset, new segments are read on)
and walks only the entries appended since the last one
(:class:`kcodec.log.tail.PartitionTail`): a batch still being written at the
tail waits for the next trigger, and under read_committed the read stops at
the last stable offset. A micro-batch is then planned and read as a batch
read of those offset ranges is (:mod:`kcodec.spark.planning`,
:mod:`kcodec.spark.read`), its byte ranges cut at the whole entries seen.

``maxOffsetsPerTrigger`` is PySpark's ``ReadMaxRows`` read limit, split across
partitions as Spark's ``KafkaMicroBatchStream.rateLimit`` splits it;
``Trigger.AvailableNow`` reads up to the offsets at the query's start;
``failOnDataLoss`` decides what happens when retention deleted offsets not read yet.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace

from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow

from kcodec.log.fs import resolve
from kcodec.log.names import DELETED_SUFFIX
from kcodec.log.tail import PartitionTail
from kcodec.spark.options import (
    EARLIEST,
    LATEST,
    OptionError,
    ReadOptions,
    TopicPartition,
    as_items,
    partition_map_option,
    stream_refusal,
    value,
)
from kcodec.spark.planning import (
    DataLossError,
    PartitionInfo,
    SegmentSplit,
    Split,
    discover,
    kafka07_dirs,
    partition_bounds,
    plan,
    select,
)

__all__ = [
    "StreamOptions",
    "KafkaSegmentsStreamReader",
    "rate_limit",
    "offsets_json",
    "parse_offsets_json",
    "batch_schema_options",
]

_STARTS = ("startingTimestamp", "startingOffsetsByTimestamp")  # preferred by Spark over startingOffsets


def _starting(opts: dict) -> str | dict[TopicPartition, int]:
    """``startingOffsets`` of a stream: ``earliest``, ``latest`` (Spark's default for streams) or JSON with -2 / -1."""
    raw = opts.get("startingoffsets")
    if raw is None or str(raw).strip() == "":
        return "latest"
    word = str(raw).strip().lower()
    if word in ("earliest", "latest"):
        return word
    offsets = partition_map_option(opts, "startingOffsets")
    assert offsets is not None
    for (topic, partition), off in offsets.items():
        if off < EARLIEST:
            raise OptionError(f"option startingOffsets for {topic}-{partition} must be >= -2, not {off}")
    return offsets


def batch_schema_options(options) -> dict:
    """The options :meth:`KafkaSegmentsDataSource.schema` checks at ``load()``, which Spark calls alike for a
    batch and a stream: a start at ``latest``, a stream's default, is left to the reader that knows which."""
    opts = {str(k).lower(): v for k, v in dict(options).items()}
    try:
        starting = _starting(opts)
    except OptionError:
        return opts  # malformed: the batch parse says why
    if starting == "latest" or (isinstance(starting, dict) and LATEST in starting.values()):
        opts.pop("startingoffsets", None)
    return opts


def checked_read_options(options) -> ReadOptions:
    """The options of a ``load()`` as the source checks them when Spark asks for the schema (alike for
    ``spark.read`` and ``spark.readStream``: what only one of them refuses is refused by its reader)."""
    opts = batch_schema_options(options)
    if not opts.get("path") and not opts.get("paths"):
        raise OptionError("kafka-segments needs a path: .load(PATH)")
    read = ReadOptions.from_options({"path": "-", **opts})
    from kcodec.spark.kafka07 import refuse_for_kafka07

    if kafka07_dirs(read.path, read.storage) is not None:
        refuse_for_kafka07({str(k).lower(): v for k, v in opts.items()}, read)
    return read


@dataclass(frozen=True)
class StreamOptions:
    """A stream's options: the batch reader's, less the ending ones, with a stream's ``startingOffsets``."""

    read: ReadOptions
    starting: str | dict[TopicPartition, int] | None  # None: a starting timestamp option decides
    max_offsets: int | None  # maxOffsetsPerTrigger

    @classmethod
    def from_options(cls, options) -> StreamOptions:
        opts = {str(k).lower(): v for k, v in dict(options).items()}
        if not opts.get("path"):
            raise OptionError("kafka-segments needs a path: spark.readStream.format('kafka-segments').load(DIR)")
        # a read's end (a stream has none, as in Spark) or a minimum PySpark's read limits cannot carry
        refusal = stream_refusal(opts)
        if refusal:
            raise OptionError(refusal)
        # a starting timestamp wins over startingOffsets (Spark's order); kcodec's startingOffset, alone, over latest
        by_others = any(n.lower() in opts for n in _STARTS) or (
            "startingoffset" in opts and "startingoffsets" not in opts
        )
        starting = None if by_others else _starting(opts)
        read = ReadOptions.from_options({k: v for k, v in opts.items() if k != "startingoffsets"})
        if read.view != "records":
            raise OptionError(f"kafka-segments: a stream reads records (view=records), not view={read.view}")
        if kafka07_dirs(read.path, read.storage) is not None:
            raise OptionError(
                f"kafka-segments: {read.path} is a Kafka 0.7 log, which is not streamed: read it with spark.read"
            )
        if isinstance(starting, dict):
            read = replace(read, starting_offsets=as_items(starting))  # select() checks it names every partition
        return cls(read, starting, value(opts, "maxOffsetsPerTrigger"))


# ----------------------------------------------------------------------------- offsets


def offsets_json(offsets: dict[TopicPartition, int]) -> dict:
    """Spark's Kafka source offset shape: ``{"topic": {"0": 123}}``."""
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = offset
    return out


def parse_offsets_json(value: dict) -> dict[TopicPartition, int]:
    return {(topic, int(p)): int(o) for topic, parts in value.items() for p, o in parts.items()}


def rate_limit(
    limit: int, begin: dict[TopicPartition, int], until: dict[TopicPartition, int]
) -> dict[TopicPartition, int]:
    """At most about ``limit`` offsets past ``begin``, split across partitions in proportion to what each
    has to read, as Spark's ``KafkaMicroBatchStream.rateLimit``: a share below one offset rounds up (no
    partition starves), others round down."""
    sizes = {tp: end - begin[tp] for tp, end in until.items() if tp in begin and end - begin[tp] > 0}
    total = float(sum(sizes.values()))
    if total < 1:
        return dict(until)
    out = {}
    for tp, end in until.items():
        size = sizes.get(tp)
        if size is None:
            out[tp] = end
            continue
        share = limit * (size / total)
        out[tp] = min(end, begin[tp] + int(math.ceil(share) if share < 1 else math.floor(share)))
    return out


# ----------------------------------------------------------------------------- the reader


def _data_loss(opts: ReadOptions, message: str) -> None:
    """``failOnDataLoss``: fail with ``message``, or log it and go on (false)."""
    if opts.fail_on_data_loss:
        raise DataLossError(f"kafka-segments: {message}; failOnDataLoss=false skips to what is there")
    print(f"kcodec: kafka-segments: {message}; skipped (failOnDataLoss=false)", file=sys.stderr, flush=True)


def _earliest(part: PartitionInfo) -> int:
    return part.segments[0].base_offset or 0


def _tp(part: PartitionInfo) -> TopicPartition:
    """The topic-partition of a partition a stream reads (:meth:`KafkaSegmentsStreamReader._discover` refuses
    one that has no topic or partition)."""
    assert part.topic is not None and part.partition is not None
    return part.topic, part.partition


def _name(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


class KafkaSegmentsStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The driver side keeps one :class:`PartitionTail` per partition between triggers;
    :meth:`read` runs on the executors and keeps nothing."""

    def __init__(self, options: dict, schema):
        from kcodec.spark.arrow import requested_columns

        self.opts = StreamOptions.from_options(options)
        self.columns = requested_columns(self.opts.read, schema)
        self._tails: dict[TopicPartition, PartitionTail] = {}
        self._target: dict[TopicPartition, int] | None = None  # Trigger.AvailableNow: the offsets at its start
        self._reported: dict[TopicPartition, int] | None = None
        self._reported_gone: set[TopicPartition] = set()  # partitions whose removal was reported

    # ------------------------------------------------------------------ driver

    def _discover(self) -> list[PartitionInfo]:
        o = self.opts.read
        try:
            parts = discover(o.path, topic=o.topic, partition=o.partition, storage=o.storage)
        except FileNotFoundError:
            return []  # not there (yet, or any more): no partition to read
        parts = select(parts, replace(o, starting_offsets=None, starting_timestamps=None))
        for part in parts:
            if part.topic is None or part.partition is None:
                raise OptionError(
                    f"kafka-segments: a stream's offsets are per topic-partition, but {part.path} is not a "
                    "<topic>-<n> directory; name it so, or give the topic and partition options"
                )
        return parts

    def _tail(self, part: PartitionInfo) -> PartitionTail:
        tp = _tp(part)
        tail = self._tails.get(tp)
        if tail is None:
            tail = self._tails[tp] = PartitionTail(self.opts.read.read_committed)
        tail.advance(part.segments)
        return tail

    def _listing(self, expected) -> dict[TopicPartition, PartitionInfo]:
        """The partitions under the path now. One that ``expected`` holds and the listing misses is
        looked for again (a directory being renamed, a listing raced by a deletion): only a second
        listing that misses it too says it is gone."""
        found = {_tp(p): p for p in self._discover()}
        if set(expected) - set(found):
            found = {_tp(p): p for p in self._discover()}
        return found

    def _gone(self, tp: TopicPartition, known_end: int | None) -> None:
        """A partition read before is no longer under the path (confirmed by two listings): the loss
        is reported once (failOnDataLoss=true fails the query with it)."""
        if tp in self._reported_gone:
            return
        end = "unknown" if known_end is None else str(known_end)
        self._loss(
            f"partition {_name(tp)} is no longer under {self.opts.read.path} (its last known end offset: {end}); "
            "offsets from there on are lost"
        )
        self._reported_gone.add(tp)

    def _scan(
        self, begin: dict[TopicPartition, int] | None = None
    ) -> dict[TopicPartition, tuple[PartitionInfo, PartitionTail]]:
        """Every partition under the path now, its tail advanced to the last whole entry; partitions read
        before (a tail, or an offset in ``begin``) that two listings miss are reported gone."""
        known = {tp: tail.end for tp, tail in self._tails.items()}
        for tp, offset in (begin or {}).items():
            known[tp] = offset if known.get(tp) is None else max(offset, known[tp] or 0)
        found = self._listing(known)
        for tp in set(known) - set(found):
            self._tails.pop(tp, None)
            self._gone(tp, known[tp])
        for tp in found:
            self._reported_gone.discard(tp)  # back again: a later removal is a new loss
        return {tp: (part, self._tail(part)) for tp, part in found.items()}

    def _loss(self, message: str) -> None:
        _data_loss(self.opts.read, message)

    def _initial(self, part: PartitionInfo, tail: PartitionTail) -> int:
        o = self.opts
        tp = _tp(part)
        latest = tail.stable if tail.stable is not None else _earliest(part)
        given = o.starting.get(tp) if isinstance(o.starting, dict) else None
        if o.starting == "latest" or given == LATEST:
            return latest
        specific = given if given is not None and given >= 0 else None  # an offset, not earliest / latest
        if specific is not None or o.starting is None or o.read.starting_offset is not None:
            starting_offsets = ((tp, specific),) if specific is not None else None
            bounds = partition_bounds(part, replace(o.read, starting_offsets=starting_offsets))
            if bounds is None:  # startingOffsetsByTimestampStrategy=latest, no record at or after the timestamp
                return latest
            if bounds[0] is not None:
                return min(bounds[0], latest)
        return _earliest(part)

    def initialOffset(self) -> dict:
        o = self.opts.read
        scanned = self._scan()
        if o.starting_offsets is not None or o.starting_timestamps is not None:
            select([part for part, _ in scanned.values()], o)  # Spark: they must name every partition read
        return offsets_json({tp: self._initial(part, tail) for tp, (part, tail) in scanned.items()})

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.opts.max_offsets is None:
            return ReadAllAvailable()
        return ReadMaxRows(self.opts.max_offsets)

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = {tp: tail.stable for tp, (_, tail) in self._scan().items() if tail.stable is not None}

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        begin = parse_offsets_json(start)
        scanned = self._scan(begin)
        available = {tp: tail.stable for tp, (_, tail) in scanned.items() if tail.stable is not None}
        self._reported = available
        end = dict(begin)  # a partition gone keeps its offset; partitions() reports the loss
        for tp, latest in available.items():
            first = begin.get(tp)
            if first is not None and latest < first:
                self._loss(f"the log of {_name(tp)} ends at {latest}, before offset {first} already read (truncated?)")
            if self._target is not None:
                if tp not in self._target:
                    continue  # appeared after Trigger.AvailableNow started
                latest = min(latest, self._target[tp])
            end[tp] = latest if first is None else max(first, latest)
        if isinstance(limit, ReadMaxRows):
            # from where each partition's read will start: a new one, or one retention moved, at its earliest
            froms = {tp: max(begin.get(tp, 0), _earliest(scanned[tp][0])) for tp in end if tp in scanned}
            froms.update({tp: off for tp, off in begin.items() if tp not in scanned})
            end = rate_limit(limit.max_rows, froms, end)
        return offsets_json(end)

    def reportLatestOffset(self) -> dict | None:
        return None if self._reported is None else offsets_json(self._reported)

    def partitions(self, start: dict, end: dict):
        begin, until = parse_offsets_json(start), parse_offsets_json(end)
        for attempt in range(3):  # a segment deleted between listing and planning: list again
            try:
                return [SegmentSplit(s) for s in self._plan(begin, until)]
            except FileNotFoundError:
                if attempt == 2:
                    raise
        return []  # not reached

    def _plan(self, begin: dict[TopicPartition, int], until: dict[TopicPartition, int]) -> list[Split]:
        parts = self._listing(tp for tp, stop in until.items() if stop > begin.get(tp, stop))
        bounded = replace(
            self.opts.read,
            starting_offset=None,
            ending_offset=None,
            starting_timestamp=None,
            starting_timestamps=None,
            ending_timestamp=None,
            ending_timestamps=None,
            fail_on_data_loss=False,  # checked here, against the offsets Spark recorded
        )
        splits: list[Split] = []
        for tp, stop in sorted(until.items()):
            first = begin.get(tp)
            part = parts.get(tp)
            if part is None:
                if first is not None and stop > first:
                    self._loss(
                        f"{_name(tp)} is no longer under {self.opts.read.path}: offsets {first}..{stop - 1} lost"
                    )
                continue
            earliest = _earliest(part)
            if first is None:
                first = earliest  # a partition that appeared: from its earliest offset, as Spark does
            elif first < earliest:
                self._loss(
                    f"offsets {first}..{earliest - 1} of {_name(tp)} were deleted (retention?) before they were "
                    f"read; its log now starts at {earliest} in {part.path}"
                )
                first = earliest
            if stop <= first:
                continue
            tail = self._tail(part)
            opts = replace(bounded, starting_offsets=((tp, first),), ending_offsets=((tp, stop),))
            for s in plan([part], opts):
                splits.append(replace(_whole_entries(s, part, tail), index=len(splits)))
        return splits

    # ------------------------------------------------------------------ executors

    def read(self, partition):
        return _read_live(partition.split, self.opts.read, self.columns)


def _whole_entries(split: Split, part: PartitionInfo, tail: PartitionTail) -> Split:
    """``split`` cut at the whole entries the tail walked (a batch being written is not read), with the
    aborted transactions the tail saw under read_committed (a live segment's ``.txnindex`` may lag)."""
    split = replace(split, resync=True)  # onCorrupt=skip reads on past damage, as the tail walked on past it
    seg = next((s for s in part.segments if s.base_offset == tail.base), None)
    if seg is not None and str(seg.log) == split.log and (split.end is None or split.end > tail.position):
        split = replace(split, end=max(split.start, tail.position))
    lo, hi = split.start_offset, split.end_offset
    seen = {t for t in tail.aborted if (lo is None or t[2] >= lo) and (hi is None or t[1] < hi)}
    if seen - set(split.aborted):
        split = replace(split, aborted=tuple(sorted(set(split.aborted) | seen)))
    return split


def _read_live(split: Split, opts: ReadOptions, columns):
    """:func:`kcodec.spark.read.read_split`, following a segment Kafka renamed to ``.deleted`` after the
    micro-batch was planned (retention: its bytes stay until the broker removes the file)."""
    from kcodec.spark.read import read_split

    try:
        batches = read_split(split, opts, columns)
        first = next(batches, None)  # opens the segment
    except FileNotFoundError:
        moved = split.log + DELETED_SUFFIX
        fs, path = resolve(moved, opts.storage)
        if not fs.exists(path):
            _data_loss(opts, f"{split.log} was deleted before offsets {split.start_offset}.. of it were read")
            return
        batches = read_split(replace(split, log=moved), opts, columns)
        first = next(batches, None)
    if first is None:
        return
    yield first
    yield from batches
