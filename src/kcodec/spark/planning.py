"""From a path to Spark input partitions: which partition directories and
segments a path names, where reading starts and stops, and how a large
segment is cut at batch boundaries.

Everything here runs on the driver and reads only index files and a few
batch headers, except two answers that need the log itself: the offset of a
``startingTimestamp`` (a scan from the time-index seek point to the first
batch at or past it), and, under ``read_committed``, the aborted transactions
of segments that came without their index files (a header walk that decodes
only control batches). Nothing here imports pyspark.

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
import sys
from dataclasses import dataclass, field

from kcodec.errors import KcodecError
from kcodec.log.files import Segment, list_segments, parse_partition_dir, skip_reason
from kcodec.log.fs import Storage, has_glob, resolve, storage_options
from kcodec.log.index import OffsetLookup
from kcodec.log.partition import aborted_transactions, seek_timestamp, segment_for_offset
from kcodec.spark.options import bool_option, choice_option, int_option, timestamp_option

__all__ = ["ReadOptions", "PartitionInfo", "Split", "discover", "plan", "offset_for_timestamp", "DEFAULT_SPLIT_BYTES"]

DEFAULT_SPLIT_BYTES = 128 << 20  # as spark.sql.files.maxPartitionBytes
_MIN_SPLIT_BYTES = 256 << 10  # minPartitions never cuts finer than this


# ----------------------------------------------------------------------------- options


@dataclass(frozen=True)
class ReadOptions:
    """The reader's options, parsed once on the driver (names as Spark spells them)."""

    path: str
    verify_crc: bool = True
    include_control: bool = False
    read_committed: bool = False
    starting_offset: int | None = None
    ending_offset: int | None = None  # exclusive
    starting_timestamp: int | None = None  # ms
    on_corrupt: str = "fail"  # fail | skip
    corrupt_report_path: str | None = None
    split_bytes: int = DEFAULT_SPLIT_BYTES
    min_partitions: int | None = None  # cut segments smaller so that there are at least this many splits
    max_rows: int = 10_000  # rows per Arrow record batch
    topic: str | None = None
    partition: int | None = None
    view: str = "records"  # records | batches
    sizes: bool = False  # batches view: what each batch would take as v0/v1/v2 with each codec
    txn_index: str = "auto"  # auto | derive
    max_decompressed_size: int | None = None
    storage: Storage = ()  # object-store endpoint and credentials (kcodec.log.fs.STORAGE_OPTIONS)

    @classmethod
    def from_options(cls, options) -> ReadOptions:
        opts = {str(k).lower(): v for k, v in dict(options).items()}
        path = opts.get("path")
        if not path:
            raise ValueError("kafka-segments needs a path: spark.read.format('kafka-segments').load(PATH)")
        isolation = choice_option(opts, "isolationLevel", "read_uncommitted", ("read_uncommitted", "read_committed"))
        start, end = int_option(opts, "startingOffset", None, 0), int_option(opts, "endingOffset", None, 0)
        return cls(
            path=str(path),
            verify_crc=bool_option(opts, "verifyCrc", True),
            include_control=bool_option(opts, "includeControlRecords", False),
            read_committed=isolation == "read_committed",
            starting_offset=start,
            ending_offset=end,
            starting_timestamp=timestamp_option(opts, "startingTimestamp"),
            on_corrupt=choice_option(opts, "onCorrupt", "fail", ("fail", "skip")),
            corrupt_report_path=opts.get("corruptreportpath") or None,
            split_bytes=int_option(opts, "splitBytes", DEFAULT_SPLIT_BYTES, 1),
            min_partitions=int_option(opts, "minPartitions", None, 1),
            max_rows=int_option(opts, "maxRowsPerBatch", 10_000, 1),
            topic=opts.get("topic") or None,
            partition=int_option(opts, "partition", None, 0),
            view=choice_option(opts, "view", "records", ("records", "batches")),
            sizes=bool_option(opts, "sizes", False),
            txn_index=choice_option(opts, "txnIndex", "auto", ("auto", "derive")),
            max_decompressed_size=int_option(opts, "maxDecompressedSize", None, 1),
            storage=storage_options(opts),
        )

    def reader_options(self) -> dict:
        out = {"verify_crc": self.verify_crc}
        if self.max_decompressed_size is not None:
            out["max_decompressed_size"] = self.max_decompressed_size
        return out


# ----------------------------------------------------------------------------- discovery


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


def _is_partition_dir_name(name: str) -> bool:
    if name.startswith((".", "_")) or name.endswith("-delete"):
        return False
    try:
        parse_partition_dir(name)
    except ValueError:
        return False
    return True


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
                for e in entries:
                    if e.is_dir and _is_partition_dir_name(fs.name(e.path)):
                        sub = list_segments(fs, e.path)
                        parts[e.path] = PartitionInfo(e.path, *_partition_name(fs, e.path), sub.segments, sub.skipped)
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


def plan(partitions: list[PartitionInfo], opts: ReadOptions) -> list[Split]:
    """One split per segment, large segments cut at checked ``.index``
    positions every ``opts.split_bytes`` (less when ``opts.min_partitions``
    asks for more splits than that gives); segments and byte ranges before
    ``startingOffset`` / ``startingTimestamp`` and at or past ``endingOffset``
    are left out without being read."""
    splits: list[Split] = []
    split_bytes = opts.split_bytes
    if opts.min_partitions:
        total = sum(seg.size for part in partitions for seg in part.segments)
        split_bytes = min(split_bytes, max(_MIN_SPLIT_BYTES, -(-total // opts.min_partitions)))
    for part in partitions:
        segs = part.segments
        start = opts.starting_offset
        if opts.starting_timestamp is not None:
            ts_offset = offset_for_timestamp(part, opts.starting_timestamp, opts)
            if ts_offset is None:
                continue  # no record at or after the timestamp
            start = ts_offset if start is None else max(start, ts_offset)
        end = opts.ending_offset
        if start is not None and end is not None and start >= end:
            continue
        k = segment_for_offset(segs, start) if start is not None else 0
        aborted: list[tuple[int, int, int]] = []
        if opts.read_committed and opts.view == "records":
            aborted = aborted_transactions(
                segs, k, derive=opts.txn_index == "derive", skip_corrupt=opts.on_corrupt == "skip"
            )
        for i in range(k, len(segs)):
            seg = segs[i]
            if end is not None and seg.base_offset is not None and seg.base_offset >= end:
                break
            next_base = segs[i + 1].base_offset if i + 1 < len(segs) else None
            needs_index = seg.size > split_bytes or (
                i == k and start is not None and seg.base_offset is not None and start > seg.base_offset
            )
            lookup = OffsetLookup(seg) if needs_index else None
            pos = lookup.position_for(start) if lookup is not None and i == k and start is not None else 0
            ranges = _ranges(lookup, pos, seg.size, split_bytes, end) if lookup is not None else [(0, None)]
            seg_txns = tuple(
                t for t in aborted if t[2] >= (seg.base_offset or 0) and (next_base is None or t[1] < next_base)
            )
            for a, b in ranges:
                splits.append(
                    Split(
                        len(splits),
                        str(seg.log),
                        part.topic,
                        part.partition,
                        seg.base_offset,
                        a,
                        b,
                        start,
                        end,
                        seg_txns,
                    )
                )
    return splits
