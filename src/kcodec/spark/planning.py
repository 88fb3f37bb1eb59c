"""From a path to Spark input partitions: which partition directories and
segments a path names, where reading starts and stops, and how a large
segment is cut at batch boundaries.

Everything here runs on the driver and reads only index files and a few
batch headers, except two answers that need the log itself: the offset of a
``startingTimestamp`` (a scan from the time-index seek point to the first
batch at or past it), and, under ``read_committed``, the aborted transactions
of segments that came without their index files (a header walk that decodes
only control batches). Nothing here imports pyspark.

Index semantics are Kafka's (see :mod:`kcodec.log.index`): an
offset-index entry ``(last offset, position)`` says the batch at ``position``
ends at ``last offset``, and every batch before it ends earlier, so a read for
offset O may start at the largest entry whose offset is <= O, and a segment can
be cut at any entry's position. Every position used is checked against the
batch header found there; an index that disagrees with its log is not used.
"""
from __future__ import annotations

import bisect
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

from kcodec.errors import KcodecError
from kcodec.records.reader import read_batches
from kcodec.log.files import INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, parse_partition_dir, parse_segment_name
from kcodec.log.index import read_offset_index, read_time_index, read_txn_index

from kcodec.log.fs import ArrowFS, LocalFS, has_glob, resolve

__all__ = ["ReadOptions", "SegmentInfo", "PartitionInfo", "Split", "discover", "plan", "offset_for_timestamp",
           "aborted_transactions", "next_offset", "DEFAULT_SPLIT_BYTES"]

DEFAULT_SPLIT_BYTES = 128 << 20  # as spark.sql.files.maxPartitionBytes
_MIN_SPLIT_BYTES = 256 << 10  # minPartitions never cuts finer than this
_HEADER = 61  # a v2 batch header; legacy entries are shorter, and a read past the end is fine
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
# v2 header positions, from the generated layout (checked in tests against kcodec.generated.record_batch)
_BASE_OFFSET, _MAGIC, _ATTRIBUTES, _LAST_OFFSET_DELTA, _PRODUCER_ID = 0, 16, 21, 23, 43
_TRANSACTIONAL, _CONTROL = 0x10, 0x20
_ABORT = 0


# ----------------------------------------------------------------------------- options

def _bool(options, name: str, default: bool) -> bool:
    raw = options.get(name.lower())
    if raw is None:
        return default
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"option {name} must be true or false, not {raw!r}")


def _int(options, name: str, default: int | None, minimum: int | None = None) -> int | None:
    raw = options.get(name.lower())
    if raw is None or str(raw).strip() == "":
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise ValueError(f"option {name} must be an integer, not {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ValueError(f"option {name} must be >= {minimum}, not {value}")
    return value


def _choice(options, name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = options.get(name.lower())
    value = default if raw is None else str(raw).strip().lower()
    if value not in choices:
        raise ValueError(f"option {name} must be one of {', '.join(choices)}, not {raw!r}")
    return value


def _timestamp_ms(options, name: str) -> int | None:
    """Milliseconds since the epoch, or an ISO-8601 date-time (UTC unless it says otherwise)."""
    raw = options.get(name.lower())
    if raw is None or str(raw).strip() == "":
        return None
    text = str(raw).strip()
    try:
        return int(text)
    except ValueError:
        pass
    from datetime import datetime, timezone

    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"option {name} must be milliseconds since the epoch or an ISO-8601 time, "
                         f"not {raw!r}") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1000)


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

    @classmethod
    def from_options(cls, options) -> "ReadOptions":
        opts = {str(k).lower(): v for k, v in dict(options).items()}
        path = opts.get("path")
        if not path:
            raise ValueError("kafka-segments needs a path: spark.read.format('kafka-segments').load(PATH)")
        isolation = _choice(opts, "isolationLevel", "read_uncommitted", ("read_uncommitted", "read_committed"))
        start, end = _int(opts, "startingOffset", None, 0), _int(opts, "endingOffset", None, 0)
        return cls(
            path=str(path),
            verify_crc=_bool(opts, "verifyCrc", True),
            include_control=_bool(opts, "includeControlRecords", False),
            read_committed=isolation == "read_committed",
            starting_offset=start,
            ending_offset=end,
            starting_timestamp=_timestamp_ms(opts, "startingTimestamp"),
            on_corrupt=_choice(opts, "onCorrupt", "fail", ("fail", "skip")),
            corrupt_report_path=opts.get("corruptreportpath") or None,
            split_bytes=_int(opts, "splitBytes", DEFAULT_SPLIT_BYTES, 1),
            min_partitions=_int(opts, "minPartitions", None, 1),
            max_rows=_int(opts, "maxRowsPerBatch", 10_000, 1),
            topic=opts.get("topic") or None,
            partition=_int(opts, "partition", None, 0),
            view=_choice(opts, "view", "records", ("records", "batches")),
            sizes=_bool(opts, "sizes", False),
            txn_index=_choice(opts, "txnIndex", "auto", ("auto", "derive")),
            max_decompressed_size=_int(opts, "maxDecompressedSize", None, 1),
        )

    def reader_options(self) -> dict:
        out = {"verify_crc": self.verify_crc}
        if self.max_decompressed_size is not None:
            out["max_decompressed_size"] = self.max_decompressed_size
        return out


# ----------------------------------------------------------------------------- discovery

@dataclass(frozen=True)
class SegmentInfo:
    log: str  # local absolute path, or a full URI
    base_offset: int | None  # None: the file is not named <base offset>.log
    size: int
    has_index: bool = False
    has_time_index: bool = False
    has_txn_index: bool = False

    def sibling(self, suffix: str) -> str:
        stem = self.log[: -len(".log")] if self.log.endswith(".log") else self.log
        return stem + suffix


@dataclass
class PartitionInfo:
    path: str  # the directory
    topic: str | None
    partition: int | None
    segments: list[SegmentInfo] = field(default_factory=list)


def _segment_kind(name: str) -> tuple[int, str] | None:
    try:
        base, kind = parse_segment_name(name)
    except ValueError:
        return None
    return base, kind


def _segments_in(fs, directory: str, only: set[str] | None = None) -> list[SegmentInfo]:
    entries = [e for e in fs.list(directory) if not e.is_dir]
    names = {fs.name(e.path) for e in entries}
    out = []
    for e in entries:
        name = fs.name(e.path)
        parsed = _segment_kind(name)
        if parsed is None or parsed[1] != "log" or (only is not None and e.path not in only):
            continue
        stem = name[: -len(".log")]
        out.append(SegmentInfo(e.path, parsed[0], e.size, stem + INDEX_SUFFIX in names,
                               stem + TIME_INDEX_SUFFIX in names, stem + TXN_INDEX_SUFFIX in names))
    return sorted(out, key=lambda s: s.base_offset)


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


def discover(path: str, *, topic: str | None = None, partition: int | None = None) -> list[PartitionInfo]:
    """The partitions and segments ``path`` names: a segment file, a partition
    directory, a directory of ``<topic>-<n>`` partition directories, or a glob
    of any of these. Topic and partition come from directory names unless
    given. Raises FileNotFoundError when nothing matches."""
    fs, p = resolve(path)
    targets = fs.glob(p) if has_glob(p) else ([p] if fs.exists(p) else [])
    if not targets:
        raise FileNotFoundError(f"kafka-segments: no such file or directory: {path}")
    parts: dict[str, PartitionInfo] = {}
    files: dict[str, set[str]] = {}
    for t in targets:
        if fs.is_dir(t):
            entries = fs.list(t)
            if any(not e.is_dir and (_segment_kind(fs.name(e.path)) or (0, ""))[1] == "log" for e in entries):
                parts[t] = PartitionInfo(t, *_partition_name(fs, t))
            else:
                for e in entries:
                    if e.is_dir and _is_partition_dir_name(fs.name(e.path)):
                        parts[e.path] = PartitionInfo(e.path, *_partition_name(fs, e.path))
        else:
            files.setdefault(fs.parent(t), set()).add(t)
    out = []
    for directory, info in parts.items():
        info.segments = _segments_in(fs, directory)
        files.pop(directory, None)
        out.append(info)
    for directory, chosen in files.items():
        info = PartitionInfo(directory, *_partition_name(fs, directory))
        named = _segments_in(fs, directory, chosen)
        info.segments = named + [SegmentInfo(f, None, fs.size(f)) for f in sorted(chosen)
                                 if f not in {s.log for s in named}]
        out.append(info)
    for info in out:
        if topic is not None:
            info.topic = topic
        if partition is not None:
            info.partition = partition
    out = [info for info in out if info.segments]
    return sorted(out, key=lambda i: (i.topic or "", -1 if i.partition is None else i.partition, i.path))


# ----------------------------------------------------------------------------- index helpers

def _read_header(fs, log: str, position: int) -> bytes:
    return fs.read_range(log, position, position + _HEADER)


def _last_offset_of_header(header: bytes) -> int | None:
    """The last offset of the entry whose first bytes are ``header`` (None when too short)."""
    if len(header) < 17:
        return None
    if header[_MAGIC] == 2:
        if len(header) < _LAST_OFFSET_DELTA + 4:
            return None
        return _I64.unpack_from(header, _BASE_OFFSET)[0] + _I32.unpack_from(header, _LAST_OFFSET_DELTA)[0]
    return _I64.unpack_from(header, 0)[0]  # legacy: the entry's offset is its last offset


class _IndexView:
    """A segment's offset index, loaded once, with positions checked on use."""

    def __init__(self, fs, seg: SegmentInfo):
        self.fs, self.seg = fs, seg
        self.entries = []
        if seg.has_index and seg.base_offset is not None:
            try:
                data = fs.read_bytes(seg.sibling(INDEX_SUFFIX))
                self.entries = read_offset_index(data, seg.base_offset, sanity_check=True)
            except (KcodecError, OSError, ValueError):
                self.entries = []  # unusable: Kafka would rebuild it; we scan
        self.offsets = [e.offset for e in self.entries]
        self._checked: dict[int, bool] = {}

    def check(self, i: int) -> bool:
        """Whether the batch at entry ``i``'s position ends at its offset."""
        ok = self._checked.get(i)
        if ok is None:
            e = self.entries[i]
            try:
                ok = _last_offset_of_header(_read_header(self.fs, self.seg.log, e.position)) == e.offset
            except OSError:
                ok = False
            self._checked[i] = ok
        return ok

    def seek(self, offset: int) -> int:
        """The position to read from for ``offset`` (OffsetIndex.lookup), 0 without a usable entry."""
        i = bisect.bisect_right(self.offsets, offset) - 1
        if i < 0 or not self.check(i):
            return 0
        return self.entries[i].position


def _ranges(view: _IndexView, start: int, size: int, split_bytes: int,
            end_offset: int | None) -> list[tuple[int, int | None]]:
    """Byte ranges of one segment from ``start``, cut at checked index positions
    roughly every ``split_bytes``; the last range is open-ended (None)."""
    bounds = [start]
    last = start
    entries = view.entries
    if size - start > split_bytes and entries:
        i = bisect.bisect_left([e.position for e in entries], start + split_bytes)
        while i < len(entries):
            e = entries[i]
            if end_offset is not None and i > 0 and entries[i - 1].offset + 1 >= end_offset:
                # every batch from here on starts at or past the ending offset
                return list(zip(bounds, bounds[1:] + [e.position if view.check(i) else None]))
            if e.position >= last + split_bytes and size - e.position >= split_bytes // 8 and view.check(i):
                bounds.append(e.position)
                last = e.position
                i = bisect.bisect_left([x.position for x in entries], last + split_bytes, lo=i + 1)
                continue
            i += 1
    return list(zip(bounds, bounds[1:] + [None]))


# ----------------------------------------------------------------------------- reading helpers

def iter_entries(fs, seg: SegmentInfo, start: int = 0, end: int | None = None, **options) -> Iterator[tuple[int, bytes]]:
    """(absolute position, bytes) of the whole entries of ``seg`` in [start, end)."""
    if fs.local:
        yield from read_batches(seg.log, start=start, end=end, **options).entries()
        return
    data = fs.read_range(seg.log, start, end)
    for pos, raw in read_batches(data, **options).entries():
        yield pos + start, raw


def iter_segment_batches(fs, seg: SegmentInfo, start: int = 0, end: int | None = None, **options):
    """Decoded batches of ``seg`` in [start, end), positions absolute (lenient about a partial tail)."""
    if fs.local:
        yield from read_batches(seg.log, start=start, end=end, **options)
        return
    data = fs.read_range(seg.log, start, end)
    for batch in read_batches(data, **options):
        batch.position += start
        yield batch


# ----------------------------------------------------------------------------- offsets and timestamps

def _start_segment(segs: list[SegmentInfo], offset: int | None) -> int:
    if offset is None:
        return 0
    bases = [s.base_offset if s.base_offset is not None else -1 for s in segs]
    return max(0, bisect.bisect_right(bases, offset) - 1)


def offset_for_timestamp(part: PartitionInfo, timestamp: int, opts: ReadOptions | None = None) -> int | None:
    """Kafka's ListOffsets for a timestamp: the offset of the first record whose
    timestamp is >= ``timestamp`` in the first batch whose max timestamp is >=
    it; None when there is none. Reads from the ``.timeindex`` seek point only."""
    fs, _ = resolve(part.path)
    segs = part.segments
    reader_opts = (opts or ReadOptions(part.path)).reader_options()
    skip = opts is not None and opts.on_corrupt == "skip"
    for k, seg in enumerate(segs):
        pos = 0
        if seg.has_time_index and seg.base_offset is not None:
            try:
                entries = read_time_index(fs.read_bytes(seg.sibling(TIME_INDEX_SUFFIX)), seg.base_offset,
                                          sanity_check=True)
            except (KcodecError, OSError):
                entries = None
            if entries is not None:
                before = 0
                while before < len(entries) and entries[before].timestamp < timestamp:
                    before += 1
                if entries and before == len(entries) and k < len(segs) - 1:
                    continue  # the whole rolled segment is earlier than the target
                if before:
                    pos = _IndexView(fs, seg).seek(entries[before - 1].offset)
        try:
            for batch in iter_segment_batches(fs, seg, pos, **reader_opts):
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


# ----------------------------------------------------------------------------- transactions

class _TxnWalk:
    """Aborted transactions from the markers, as Kafka's ProducerStateManager
    sees them: a transaction opens at the first transactional batch of a
    producer and ends at its COMMIT or ABORT marker."""

    def __init__(self):
        self.open: dict[int, int] = {}
        self.aborted: list[tuple[int, int, int]] = []

    def observe(self, raw: bytes, opts: dict) -> None:
        if len(raw) < _HEADER or raw[_MAGIC] != 2:
            return
        attrs = _I16.unpack_from(raw, _ATTRIBUTES)[0]
        pid = _I64.unpack_from(raw, _PRODUCER_ID)[0]
        if pid < 0:
            return
        base = _I64.unpack_from(raw, _BASE_OFFSET)[0]
        if not attrs & _CONTROL:
            if attrs & _TRANSACTIONAL:
                self.open.setdefault(pid, base)
            return
        batch = next(iter(read_batches(raw, **opts)), None)
        marker = batch.records[0].control if batch is not None and batch.records else None
        if marker is None or not marker.is_transaction_marker:
            return
        first = self.open.pop(pid, None)
        if marker.type == _ABORT and first is not None:
            self.aborted.append((pid, first, base))


def aborted_transactions(part: PartitionInfo, from_segment: int = 0, opts: ReadOptions | None = None
                         ) -> list[tuple[int, int, int]]:
    """(producer id, first offset, last offset) of the aborted transactions
    whose markers lie in ``part.segments[from_segment:]``.

    A segment's ``.txnindex`` answers for it. A segment with an ``.index`` but
    no ``.txnindex`` has no aborted transaction ending in it (Kafka creates the
    transaction index on its first entry). Segments that came without index
    files (a bare ``.log``), or every segment with ``txnIndex=derive``, are
    answered from the ABORT markers themselves: the partition's batch headers
    are walked from its first segment, decoding control batches only."""
    fs, _ = resolve(part.path)
    segs = part.segments
    derive = opts is not None and opts.txn_index == "derive"
    walk_for = {i for i in range(from_segment, len(segs))
                if derive or (not segs[i].has_txn_index and not segs[i].has_index)}
    found: set[tuple[int, int, int]] = set()
    for i in range(from_segment, len(segs)):
        if i not in walk_for and segs[i].has_txn_index:
            try:
                txns = read_txn_index(fs.read_bytes(segs[i].sibling(TXN_INDEX_SUFFIX)))
            except (KcodecError, OSError):
                walk_for.add(i)  # unreadable: fall back to the markers
                continue
            found.update((t.producer_id, t.first_offset, t.last_offset) for t in txns)
    if walk_for:
        walk = _TxnWalk()
        reader_opts = {"verify_crc": False}
        for i in range(0, max(walk_for) + 1):
            n = len(walk.aborted)
            try:
                for _, raw in iter_entries(fs, segs[i], **reader_opts):
                    walk.observe(raw, reader_opts)
            except KcodecError:
                if opts is None or opts.on_corrupt != "skip":
                    raise
            if i in walk_for:
                found.update(walk.aborted[n:])
    return sorted(found, key=lambda t: (t[2], t[0]))


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
        fs, _ = resolve(part.path)
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
        k = _start_segment(segs, start)
        aborted: list[tuple[int, int, int]] = []
        if opts.read_committed and opts.view == "records":
            aborted = aborted_transactions(part, k, opts)
        for i in range(k, len(segs)):
            seg = segs[i]
            if end is not None and seg.base_offset is not None and seg.base_offset >= end:
                break
            next_base = segs[i + 1].base_offset if i + 1 < len(segs) else None
            needs_index = seg.size > split_bytes or (
                i == k and start is not None and seg.base_offset is not None and start > seg.base_offset)
            view = _IndexView(fs, seg) if needs_index else None
            pos = view.seek(start) if view is not None and i == k and start is not None else 0
            ranges = _ranges(view, pos, seg.size, split_bytes, end) if view is not None else [(0, None)]
            seg_txns = tuple(t for t in aborted
                             if t[2] >= (seg.base_offset or 0) and (next_base is None or t[1] < next_base))
            for a, b in ranges:
                splits.append(Split(len(splits), seg.log, part.topic, part.partition, seg.base_offset, a, b,
                                    start, end, seg_txns))
    return splits


# ----------------------------------------------------------------------------- writing support

def next_offset(fs: LocalFS | ArrowFS, directory: str) -> int:
    """The offset after the last batch of a partition directory (0 when it has none)."""
    if not fs.is_dir(directory):
        return 0
    segs = _segments_in(fs, directory)
    for seg in reversed(segs):
        view = _IndexView(fs, seg)
        pos = view.seek(1 << 62) if view.entries else 0
        last = None
        for _, raw in iter_entries(fs, seg, pos, verify_crc=False):
            last = _last_offset_of_header(raw[:_HEADER])
        if last is not None:
            return last + 1
        if seg.base_offset is not None and seg.size == 0:
            return seg.base_offset
    return 0
