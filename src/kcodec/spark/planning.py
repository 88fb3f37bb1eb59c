"""From a path to Spark input partitions: which partition directories and
segments a path names, where reading starts and stops, and how a large
segment is cut at batch boundaries.

Everything here runs on the driver and reads only index files and a few
batch headers, except two answers that need the log itself: the offset of a
``startingTimestamp`` (a scan from the time-index seek point to the first
batch at or past it), and, under ``read_committed``, the aborted transactions
of segments that came without their index files (a header walk that decodes
only control batches). Only :class:`SegmentSplit`, the split as Spark's input partition, is
pyspark's.

Segment discovery, the seeks, the offset index checks and the transaction
tracking are :mod:`kcodec.log`'s, on its filesystem interface: an offset-index
entry ``(last offset, position)`` says the batch at ``position`` ends at
``last offset``, and every batch before it ends earlier, so a read for offset
O may start at the largest entry whose offset is <= O, and a segment can be
cut at any entry's position. Every position used is confirmed against the
batch found there; an index that disagrees with its log is not used.
"""

from __future__ import annotations

import bisect
import os
import sys
from dataclasses import dataclass, field, replace
from typing import overload

from pyspark.sql.datasource import InputPartition

from kcodec.errors import KcodecError
from kcodec.log.commit import visible_partition_names
from kcodec.log.files import Segment, list_segments
from kcodec.log.fs import Storage, has_glob, resolve
from kcodec.log.index import OffsetLookup
from kcodec.log.kafka07 import is_kafka07_partition_dir, is_kafka07_segment
from kcodec.log.names import is_partition_dir_name, parse_partition_dir, skip_reason
from kcodec.log.partition import aborted_transactions, next_offset, seek_timestamp, segment_for_offset
from kcodec.records.framing import HEADER_SIZE, HEADER_SIZE_UP_TO_MAGIC, check_header, last_offset
from kcodec.records.reader import DEFAULT_MAX_BATCH_SIZE
from kcodec.spark.options import (
    DEFAULT_SPLIT_BYTES,
    EARLIEST,
    LATEST,
    OptionError,
    ReadOptions,
    TopicPartition,
    tp_names,
)

__all__ = [
    "PartitionInfo",
    "Split",
    "SegmentSplit",
    "discover",
    "kafka07_dirs",
    "select",
    "partition_bounds",
    "DataLossError",
    "plan",
    "offset_for_timestamp",
    "DEFAULT_SPLIT_BYTES",
]

_MIN_SPLIT_BYTES = 256 << 10  # minPartitions never cuts finer than this


# ----------------------------------------------------------------------------- discovery


def kafka07_dirs(path: str, storage=()) -> list[str] | None:
    """The 0.7 partition directories ``path`` names (itself, or the ones directly under a broker's log
    directory), or None when it is not a local 0.7 path; a directory holding 0.7 and later partitions, or a
    lone 0.7 segment, is refused (OptionError)."""
    try:
        fs, local = resolve(path, storage)
    except (KcodecError, ValueError, OSError):
        return None
    if not fs.local:
        return None
    if is_kafka07_segment(local) and os.path.isfile(local):  # offsets are numbered from the partition's start
        raise OptionError(
            f"kafka-segments: {path} is a Kafka 0.7 segment: load its partition directory, whose messages are "
            "numbered from the first segment"
        )
    if not os.path.isdir(local):
        return None
    if is_kafka07_partition_dir(local):
        return [local]
    under = sorted(os.path.join(local, n) for n in os.listdir(local))
    found = [d for d in under if is_kafka07_partition_dir(d)]
    if not found:
        return None
    later = [d for d in under if d not in found and os.path.isdir(d) and list_segments(fs, d, fs.list(d)).segments]
    if later:  # one read has one offset story
        raise OptionError(
            f"kafka-segments: {path} holds Kafka 0.7 partitions ({os.path.basename(found[0])}) and later ones "
            f"({os.path.basename(later[0])}): load each kind by its own path"
        )
    return found


@dataclass
class PartitionInfo:
    """The segments of one partition directory that a path selects."""

    path: str  # the directory
    topic: str | None
    partition: int | None
    segments: list[Segment] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # names that are not Kafka segment names: never read


def _partition_name(fs, directory: str) -> tuple[str | None, int | None]:
    try:
        return parse_partition_dir(fs.name(directory))
    except ValueError:
        return None, None


def _report_skipped(info: PartitionInfo) -> None:
    for name in info.skipped:
        print(
            f"kcodec: kafka-segments: skipped {info.path}/{name}: {skip_reason(name)}",
            file=sys.stderr,
            flush=True,
        )


def discover(
    path: str, *, topic: str | None = None, partition: int | None = None, storage: Storage = ()
) -> list[PartitionInfo]:
    """The partitions and segments ``path`` names: a segment file, a partition
    directory, a directory of ``<topic>-<n>`` partition directories, or a glob
    of any of these. Topic and partition come from directory names unless
    given. A file given by name is read even when it is not named as a
    segment, unless its name looks like one without being Kafka's
    (``123.log``): such names are reported on stderr and skipped, as in
    directories. Tiered-storage layouts (``<topic>-<n>-<topic id>`` directories
    of ``<offset>-<segment id>.log`` objects) are read too. ``storage``
    configures an object store. Raises FileNotFoundError when nothing matches."""
    fs, p = resolve(path, storage)
    targets = fs.glob(p) if has_glob(p) else ([p] if fs.exists(p) else [])
    if not targets:
        raise FileNotFoundError(f"kafka-segments: no such file or directory: {path}")
    parts: dict[str, PartitionInfo] = {}
    files: dict[str, set[str]] = {}
    for t in targets:
        if fs.is_dir(t):
            entries = fs.list(t)
            listing = list_segments(fs, t, entries)
            if listing.segments or listing.skipped:  # the skipped names are reported even with no segment
                parts[t] = PartitionInfo(t, *_partition_name(fs, t), listing.segments, listing.skipped)
            if not listing.segments:
                names = [fs.name(e.path) for e in entries if e.is_dir and is_partition_dir_name(fs.name(e.path))]
                for name in visible_partition_names(fs, t, names):
                    sub_path = fs.join(t, name)
                    try:
                        sub = list_segments(fs, sub_path)
                    except (FileNotFoundError, NotADirectoryError):
                        continue  # removed since the listing above (a stream confirms it and reports the loss)
                    parts[sub_path] = PartitionInfo(sub_path, *_partition_name(fs, sub_path), sub.segments, sub.skipped)
        else:
            files.setdefault(fs.parent(t), set()).add(t)
    out = []
    for directory, info in parts.items():
        files.pop(directory, None)
        out.append(info)
    for directory, chosen in files.items():
        listing = list_segments(fs, directory)
        named = [s for s in listing.segments if str(s.log) in chosen]
        listed = {str(s.log) for s in named}
        info = PartitionInfo(
            directory,
            *_partition_name(fs, directory),
            named,
            [n for n in listing.skipped if fs.join(directory, n) in chosen],
        )
        info.segments += [
            Segment(None, f, fs, fs.size(f))
            for f in sorted(chosen)
            if f not in listed and fs.name(f) not in info.skipped
        ]
        out.append(info)
    for info in out:
        _report_skipped(info)
        if topic is not None:
            info.topic = topic
        if partition is not None:
            info.partition = partition
    out = [info for info in out if info.segments]
    return sorted(out, key=lambda i: (i.topic or "", -1 if i.partition is None else i.partition, i.path))


# ----------------------------------------------------------------------------- splits of a segment


def _ranges(
    lookup: OffsetLookup, start: int, size: int, split_bytes: int, end_offset: int | None
) -> list[tuple[int, int | None]]:
    """Byte ranges of one segment from ``start``, cut at confirmed index positions
    roughly every ``split_bytes``; the last range is open-ended (None)."""
    bounds = [start]
    last = start
    entries = lookup.entries
    if size - start > split_bytes and entries:
        positions = [e.position for e in entries]
        i = bisect.bisect_left(positions, start + split_bytes)
        while i < len(entries):
            e = entries[i]
            if end_offset is not None and i > 0 and entries[i - 1].offset + 1 >= end_offset:
                # every batch from here on starts at or past the ending offset
                return list(zip(bounds, bounds[1:] + [e.position if lookup.confirmed(i) else None]))
            if e.position >= last + split_bytes and size - e.position >= split_bytes // 8 and lookup.confirmed(i):
                bounds.append(e.position)
                last = e.position
                i = bisect.bisect_left(positions, last + split_bytes, lo=i + 1)
                continue
            i += 1
    return list(zip(bounds, bounds[1:] + [None]))


def _heads(seg: Segment, start: int, size: int):
    """(position, first bytes) of each entry from ``start``, reading only headers
    (each entry's size field says where the next starts); stops quietly at the
    first header that cannot be, or at an entry cut short by the end of the file."""
    path = str(seg.log)
    local = seg.fs.local
    f = open(resolve(path)[1], "rb") if local else None  # closed below
    try:
        pos = start
        while pos + HEADER_SIZE_UP_TO_MAGIC <= size:
            if f is not None:
                f.seek(pos)
                head = f.read(HEADER_SIZE)
            else:
                head = seg.fs.read_range(path, pos, min(pos + HEADER_SIZE, size))
            try:
                total = check_header(head[:HEADER_SIZE_UP_TO_MAGIC], pos, DEFAULT_MAX_BATCH_SIZE)
            except KcodecError:
                return  # broken framing: what follows is the reader's to report
            if pos + total > size:
                return
            yield pos, head
            pos += total
    finally:
        if f is not None:
            f.close()


def _walked_ranges(
    seg: Segment, start: int, size: int, split_bytes: int, end_offset: int | None
) -> list[tuple[int, int | None]]:
    """Byte ranges of a segment with no usable offset index, cut at batch starts
    found by walking the batch headers, as :func:`_ranges` cuts at index positions."""
    bounds = [start]
    if size - start > split_bytes:
        previous_last = None
        for pos, head in _heads(seg, start, size):
            if end_offset is not None and previous_last is not None and previous_last + 1 >= end_offset:
                # every batch from here on starts at or past the ending offset
                return list(zip(bounds, bounds[1:] + [pos]))
            if pos >= bounds[-1] + split_bytes and size - pos >= split_bytes // 8:
                bounds.append(pos)
            previous_last = last_offset(head)
    return list(zip(bounds, bounds[1:] + [None]))


# ----------------------------------------------------------------------------- timestamps


def offset_for_timestamp(part: PartitionInfo, timestamp: int, opts: ReadOptions | None = None) -> int | None:
    """Kafka's ListOffsets for a timestamp: the offset of the first record whose
    timestamp is >= ``timestamp`` in the first batch whose max timestamp is >=
    it; None when there is none. Reads from the ``.timeindex`` seek point only;
    with ``onCorrupt=skip`` a segment that does not decode is passed over."""
    segs = part.segments
    if not segs:
        return None
    reader_opts = (opts or ReadOptions(part.path)).reader_options()
    skip = opts is not None and opts.on_corrupt == "skip"
    k, pos = seek_timestamp(segs, timestamp)
    for i in range(k, len(segs)):
        try:
            for batch in segs[i].batches(pos if i == k else 0, **reader_opts):
                if batch.max_timestamp >= timestamp:
                    for r in batch.records:
                        if r.timestamp >= timestamp:
                            return r.offset
                    if batch.records:
                        return batch.records[-1].offset
        except KcodecError:
            if not skip:
                raise
    return None


# ----------------------------------------------------------------------------- Spark's topic-partition options


class DataLossError(KcodecError):
    """Offsets asked for are not in the segments (retention or a partial copy); ``failOnDataLoss=false``
    reads what is there instead."""

    kind = "data_loss"


def select(partitions: list[PartitionInfo], opts: ReadOptions) -> list[PartitionInfo]:
    """Spark's ``subscribe`` / ``subscribePattern`` / ``assign`` as filters over the partitions found
    under the path (none of them: all). A partition ``assign`` names must be there; offsets or
    timestamps given per partition must name exactly the partitions read, as Spark requires."""
    if opts.subscribe is not None:
        partitions = [p for p in partitions if p.topic in opts.subscribe]
    elif opts.subscribe_pattern is not None:
        pattern = opts.subscribe_pattern
        partitions = [p for p in partitions if p.topic is not None and pattern.fullmatch(p.topic)]
    elif opts.assign is not None:
        found = {(p.topic, p.partition) for p in partitions}
        missing = [tp for tp in opts.assign if tp not in found]
        if missing:
            raise OptionError(
                f"kafka-segments: assign names {tp_names(missing)}, not found under {opts.path} "
                f"(found: {tp_names(_named(found))})"
            )
        partitions = [p for p in partitions if (p.topic, p.partition) in opts.assign]
    read = {(p.topic, p.partition) for p in partitions}
    for name, given in (
        ("startingOffsets", opts.starting_offsets),
        ("endingOffsets", opts.ending_offsets),
        ("startingOffsetsByTimestamp", opts.starting_timestamps),
        ("endingOffsetsByTimestamp", opts.ending_timestamps),
    ):
        if given is not None and {tp for tp, _ in given} != read:
            raise OptionError(
                f"kafka-segments: {name} must name every partition read, as in Spark (-2: earliest, -1: latest); "
                f"it names {tp_names(tp for tp, _ in given)}, the read has {tp_names(_named(read))}"
                + ("" if len(_named(read)) == len(read) else " and segments outside <topic>-<n> directories")
            )
    return partitions


def _named(tps) -> list[TopicPartition]:
    return [tp for tp in tps if tp[0] is not None and tp[1] is not None]


@overload
def _later(a: int | None, b: int) -> int: ...
@overload
def _later(a: int | None, b: int | None) -> int | None: ...
def _later(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


@overload
def _earlier(a: int | None, b: int) -> int: ...
@overload
def _earlier(a: int | None, b: int | None) -> int | None: ...
def _earlier(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def _by_partition(items: tuple[tuple[TopicPartition, int], ...]) -> dict[tuple[str | None, int | None], int]:
    """Per-partition option values, to look up a partition read (whose topic or partition may be None:
    segments outside ``<topic>-<n>`` directories, which no such option names)."""
    return dict(items)


def _checked(part: PartitionInfo, offset: int, opts: ReadOptions, name: str, latest) -> None:
    """``failOnDataLoss``: a specific offset outside what the segments hold fails the read."""
    if not opts.fail_on_data_loss:
        return
    earliest = part.segments[0].base_offset
    where = f"{part.topic}-{part.partition}"
    if earliest is not None and offset < earliest:
        raise DataLossError(
            f"kafka-segments: {name} {offset} of {where} is before its earliest offset {earliest} in {part.path} "
            "(deleted by retention?); failOnDataLoss=false reads what is there"
        )
    if offset > latest():
        raise DataLossError(
            f"kafka-segments: {name} {offset} of {where} is past its latest offset {latest()} in {part.path}; "
            "failOnDataLoss=false reads what is there"
        )


def partition_bounds(part: PartitionInfo, opts: ReadOptions) -> tuple[int | None, int | None] | None:
    """The offsets to read of one partition, [start, end) (None: unbounded), from kcodec's
    ``startingOffset`` / ``endingOffset`` and the timestamp and offset options; None when nothing
    is to be read (no record at the starting timestamp under ``startingOffsetsByTimestampStrategy=latest``)."""
    start, end = opts.starting_offset, opts.ending_offset
    tp = (part.topic, part.partition)
    cache: list[int] = []

    def latest() -> int:
        if not cache:
            cache.append(next_offset(part.segments))
        return cache[0]

    ts = opts.starting_timestamp
    if ts is None and opts.starting_timestamps is not None:
        ts = _by_partition(opts.starting_timestamps).get(tp)
    if ts is not None:
        found = offset_for_timestamp(part, ts, opts)
        if found is None:
            if opts.no_match == "error":
                raise OptionError(
                    f"kafka-segments: no record of {part.topic}-{part.partition} has a timestamp at or after {ts} "
                    "(startingOffsetsByTimestampStrategy=latest reads nothing of it instead)"
                )
            return None
        start = _later(start, found)
    elif opts.starting_offsets is not None:
        offset = _by_partition(opts.starting_offsets).get(tp, EARLIEST)
        if offset != EARLIEST:
            _checked(part, offset, opts, "startingOffsets", latest)
            start = _later(start, offset)
    ts = opts.ending_timestamp
    if ts is None and opts.ending_timestamps is not None:
        ts = _by_partition(opts.ending_timestamps).get(tp)
    if ts is not None:
        end = _earlier(end, offset_for_timestamp(part, ts, opts))  # none at or after it: the latest
    elif opts.ending_offsets is not None:
        offset = _by_partition(opts.ending_offsets).get(tp, LATEST)
        if offset != LATEST:
            _checked(part, offset, opts, "endingOffsets", latest)
            end = _earlier(end, offset)
    return start, end


def _record_chunks(lookup: OffsetLookup, lo: int, hi: int, n: int) -> list[tuple[int, int, int]]:
    """``maxRecordsPerPartition``: (byte position, first offset, end offset) of offset ranges of at
    most ``n`` offsets, as Spark cuts a Kafka partition's offset range."""
    return [(lookup.position_for(a), a, min(a + n, hi)) for a in range(lo, hi, n)]


# ----------------------------------------------------------------------------- splits


@dataclass(frozen=True)
class Split:
    """One Spark input partition: a byte range of one segment, and what to keep of it."""

    index: int
    log: str
    topic: str | None
    partition: int | None
    base_offset: int | None
    start: int  # byte position of the first batch
    end: int | None  # byte position past the last batch; None: the end of the file
    start_offset: int | None = None  # keep records with offset >= this
    end_offset: int | None = None  # keep records with offset < this
    aborted: tuple[tuple[int, int, int], ...] = ()  # (producer id, first, last), read_committed only
    empty: bool = False  # nothing to read (a partition with no record at the starting timestamp)
    # onCorrupt=skip past broken framing: False skips the rest of the split (a batch read); True reads on
    # at the next whole entry, as read_batches does (a stream, whose tail walked past the damage)
    resync: bool = False


class SegmentSplit(InputPartition):
    """A :class:`Split` as the input partition Spark hands a reader (batch or stream)."""

    def __init__(self, split: Split):
        super().__init__(split.index)
        self.split = split


def plan(partitions: list[PartitionInfo], opts: ReadOptions) -> list[Split]:
    """One split per segment, large segments cut at checked ``.index``
    positions (without an index, at batch starts found by a header walk)
    every ``opts.split_bytes`` (less when ``opts.min_partitions`` asks for
    more splits than that gives); segments and byte ranges before
    ``startingOffset`` / ``startingTimestamp`` and at or past ``endingOffset``
    are left out without being read."""
    splits: list[Split] = []
    split_bytes = opts.split_bytes
    if opts.min_partitions:
        total = sum(seg.size for part in partitions for seg in part.segments)
        split_bytes = min(split_bytes, max(_MIN_SPLIT_BYTES, -(-total // opts.min_partitions)))
        # A whole number of rounds on minPartitions cores: 342 MB over 2 cores at 128 MB gives 3 splits,
        # the last running alone; 4 splits of 86 MB keep both cores busy to the end.
        splits_needed = -(-total // split_bytes)
        rounds = -(-splits_needed // opts.min_partitions)
        split_bytes = max(_MIN_SPLIT_BYTES, -(-total // (rounds * opts.min_partitions)))
    for part in partitions:
        segs = part.segments
        bounds = partition_bounds(part, opts)
        if bounds is None:
            continue
        start, end = bounds
        if start is not None and end is not None and start >= end:
            continue
        k = segment_for_offset(segs, start) if start is not None else 0
        aborted: list[tuple[int, int, int]] = []
        if opts.read_committed and opts.view != "batches":
            aborted = aborted_transactions(
                segs, k, derive=opts.txn_index == "derive", skip_corrupt=opts.on_corrupt == "skip"
            )
        for i in range(k, len(segs)):
            seg = segs[i]
            if end is not None and seg.base_offset is not None and seg.base_offset >= end:
                break
            next_base = segs[i + 1].base_offset if i + 1 < len(segs) else None
            needs_index = (
                seg.size > split_bytes
                or (i == k and start is not None and seg.base_offset is not None and start > seg.base_offset)
                or (opts.max_records_per_partition is not None and seg.base_offset is not None)
            )
            lookup = OffsetLookup(seg) if needs_index else None
            pos = lookup.position_for(start) if lookup is not None and i == k and start is not None else 0
            if lookup is None:
                ranges: list[tuple[int, int | None]] = [(0, None)]
            elif lookup.entries:
                ranges = _ranges(lookup, pos, seg.size, split_bytes, end)
            else:  # no index (or one Kafka would rebuild): cut where a header walk finds batches
                ranges = _walked_ranges(seg, pos, seg.size, split_bytes, end)
            pieces = [(a, b, start, end) for a, b in ranges]
            if opts.max_records_per_partition is not None and lookup is not None and seg.base_offset is not None:
                lo = _later(start, seg.base_offset)
                hi = _earlier(end, next_base if next_base is not None else next_offset(segs))
                chunks = _record_chunks(lookup, lo, hi, opts.max_records_per_partition) if hi > lo else []
                if len(chunks) > len(pieces):  # Spark: about the larger of the two counts
                    pieces = [(p, None, a, b) for p, a, b in chunks]
            seg_txns = tuple(
                t for t in aborted if t[2] >= (seg.base_offset or 0) and (next_base is None or t[1] < next_base)
            )
            for a, b, first, stop in pieces:
                splits.append(
                    Split(
                        len(splits),
                        str(seg.log),
                        part.topic,
                        part.partition,
                        seg.base_offset,
                        a,
                        b,
                        first,
                        stop,
                        seg_txns,
                    )
                )
    if (
        opts.min_partitions
        and len(splits) < opts.min_partitions
        and opts.max_records_per_partition is None
        and opts.view == "records"
    ):
        # Spark's Kafka source cuts offset ranges, not bytes: a small input still gets about minPartitions
        # tasks. Ranges of at most total // minPartitions offsets give at least that many.
        total = _offsets_to_read(partitions, opts)
        if total > len(splits):
            return plan(partitions, replace(opts, max_records_per_partition=max(1, total // opts.min_partitions)))
    return splits


def _offsets_to_read(partitions: list[PartitionInfo], opts: ReadOptions) -> int:
    """How many offsets the read covers (its bounds, else each partition's log start to its end)."""
    total = 0
    for part in partitions:
        bounds = partition_bounds(part, opts)
        if bounds is None or not part.segments or part.segments[0].base_offset is None:
            continue
        start, end = bounds
        lo = start if start is not None else part.segments[0].base_offset
        hi = end if end is not None else next_offset(part.segments)
        total += max(0, hi - lo)
    return total
