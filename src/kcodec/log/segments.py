"""Kafka partition directories: segment names, the three index files, index
rebuilding and checking, seeking reads, and an atomic segment writer (spec §9, §10, §8.D).

A partition directory ``<topic>-<partition>`` holds segments named by their
base offset (``00000000000000000042.log``) with, per segment, a sparse offset
index (``.index``), a time index (``.timeindex``) and, when the segment holds
ABORT markers, a transaction index (``.txnindex``).

Index entries are encoded and decoded only as the generated codecs
(``offset_index_entry``, ``time_index_entry``, ``aborted_txn_entry``) lay them
out: the packing used here is derived from their generated layouts and checked
against the codecs themselves on first use, so the schemas stay the single
source of truth while a 10 MiB index is still read at ``struct`` speed.

Index semantics follow Kafka's ``LogSegment.recover`` exactly:

* an offset-index entry ``(batch lastOffset, batch position)`` is added for a
  batch when *more than* ``index_interval_bytes`` bytes lie between the
  position of the previous entry (0 at first) and this batch's position. The
  batch at position 0 is therefore never indexed: a lookup below the first
  entry means position 0, as ``OffsetIndex.lookup`` returns ``(base, 0)``;
* a time-index entry ``(largest timestamp so far, lastOffset of the batch
  holding it)`` is offered at each of those points and once more at the end
  of the segment (``onBecomeInactiveSegment``/``close``), and is kept only if
  its timestamp exceeds the last entry's (initially -1), so v0 data leaves
  the time index empty.

Typical use::

    part = Partition("/var/kafka-logs/orders-3")
    for batch in part.iter_batches(start_offset=1_000_000):
        ...
    with SegmentWriter("/tmp/out/orders-0", segment_bytes=1 << 20) as w:
        for entry in entries:
            w.append(entry)
"""
from __future__ import annotations

import bisect
import functools
import os
import re
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, NamedTuple, Union

from kcodec.errors import BadLengthError, CorruptError, EncodeError, KcodecError, SchemaError

from kcodec.records.decode import decode_entry
from kcodec.records.model import Batch
from kcodec.records.reader import read_batches

__all__ = [
    "LOG_SUFFIX", "INDEX_SUFFIX", "TIME_INDEX_SUFFIX", "TXN_INDEX_SUFFIX", "SNAPSHOT_SUFFIX",
    "DEFAULT_INDEX_INTERVAL_BYTES", "DEFAULT_SEGMENT_BYTES",
    "segment_name", "parse_segment_name", "parse_partition_dir", "SegmentFileName",
    "OffsetPosition", "TimestampOffset", "AbortedTxn",
    "read_offset_index", "read_time_index", "read_txn_index",
    "encode_offset_index", "encode_time_index", "encode_txn_index",
    "build_indexes", "build_txn_index",
    "IndexProblem", "check_indexes",
    "Segment", "Partition", "list_partitions",
    "SegmentWriter", "write_atomically",
]

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
SNAPSHOT_SUFFIX = ".snapshot"
TMP_SUFFIX = ".tmp"  # SegmentWriter / write_atomically temporaries; Kafka ignores such files

DEFAULT_INDEX_INTERVAL_BYTES = 4096  # index.interval.bytes
DEFAULT_SEGMENT_BYTES = 1 << 30  # segment.bytes, 1 GiB

_INT32_MAX = (1 << 31) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP
_ABORT = 0  # control record type id

PathLike = Union[str, os.PathLike]
IndexSource = Union[bytes, bytearray, memoryview, str, os.PathLike]

# ----------------------------------------------------------------------------- names

_SEGMENT_NAME = re.compile(r"^(\d+)\.(.+)$")
_PARTITION_DIR = re.compile(r"^(.+)-(\d+)$")


class SegmentFileName(NamedTuple):
    """A parsed segment file name: ``00000000000000000042.log.deleted`` ->
    ``(42, "log.deleted")``. ``kind`` is everything after the first dot."""

    base_offset: int
    kind: str


def segment_name(base_offset: int, suffix: str) -> str:
    """``segment_name(42, ".log")`` -> ``"00000000000000000042.log"`` (the dot is optional)."""
    if not isinstance(base_offset, int) or not 0 <= base_offset <= _INT64_MAX:
        raise ValueError(f"a segment base offset must be an int in [0, 2^63-1], got {base_offset!r}")
    if not suffix:
        raise ValueError("a segment file name needs a suffix such as '.log'")
    return f"{base_offset:020d}{suffix if suffix.startswith('.') else '.' + suffix}"


def parse_segment_name(path: PathLike) -> SegmentFileName:
    """The base offset and kind of a segment file, from its name only.

    Kinds are ``log``, ``index``, ``timeindex``, ``txnindex``, ``snapshot``, or
    those with a transient suffix (``log.deleted``, ``index.swap``, ``log.cleaned``,
    ``log.tmp``). Raises ValueError for any other name."""
    name = os.path.basename(os.fspath(path))
    m = _SEGMENT_NAME.match(name)
    if not m or int(m.group(1)) > _INT64_MAX:
        raise ValueError(f"{name!r} is not a segment file name (<20-digit base offset>.<suffix>)")
    return SegmentFileName(int(m.group(1)), m.group(2))


def parse_partition_dir(path: PathLike) -> tuple[str, int]:
    """``"orders-3"`` -> ``("orders", 3)``; topic names may hold dashes, the
    partition follows the last one. Raises ValueError for other names,
    including directories being deleted (``<topic>-<n>.<id>-delete``)."""
    name = os.path.basename(os.path.normpath(os.fspath(path)))
    m = _PARTITION_DIR.match(name)
    if not m:
        raise ValueError(f"{name!r} is not a partition directory name (<topic>-<partition>)")
    return m.group(1), int(m.group(2))


# ----------------------------------------------------------------------------- entry packing

_STRUCT_CODES = {"int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I",
                 "int64": "q"}


class _FixedEntry:
    """A fixed-size index entry packed with ``struct``, its format derived from the
    generated layout of ``entity`` and checked against the generated codec."""

    def __init__(self, entity: str, fields: tuple[str, ...]):
        from kcodec.generated import codec  # imported on first use, as in decode.py

        self.codec = codec(entity, 0)
        layout = self.codec.layout
        names, fmt, pos = [], ">", 0
        for f in layout.fields:
            code = _STRUCT_CODES.get(f.type)
            if code is None or f.offset != pos or f.size != struct.calcsize(">" + code):
                raise SchemaError(f"field {f.name} is not a fixed-width integer at byte {pos}", entity=entity)
            names.append(f.name)
            fmt += code
            pos += f.size
        if tuple(names) != fields or layout.fixed_size != pos:
            raise SchemaError(f"expected fields {fields}, the schema has {tuple(names)}", entity=entity)
        self.entity, self.fields, self.size = entity, fields, pos
        self.struct = struct.Struct(fmt)
        self.offsets = {f.name: f.offset for f in layout.fields}
        sample = dict(zip(fields, range(1, len(fields) + 1)))
        packed = self.struct.pack(*sample.values())
        parsed = self.codec.parse(packed)
        if self.codec.build(sample) != packed or any(parsed[k] != v for k, v in sample.items()):
            raise SchemaError("struct packing disagrees with the generated codec", entity=entity)

    def pack(self, *values: int) -> bytes:
        return self.struct.pack(*values)

    def count(self, data) -> int:
        return len(data) // self.size

    def unpack_at(self, data, i: int) -> tuple[int, ...]:
        return self.struct.unpack_from(data, i * self.size)

    def iter(self, data) -> Iterator[tuple[int, ...]]:
        return self.struct.iter_unpack(memoryview(data)[:self.count(data) * self.size])


@functools.lru_cache(maxsize=None)
def _offset_entry() -> _FixedEntry:
    return _FixedEntry("offset_index_entry", ("relative_offset", "position"))


@functools.lru_cache(maxsize=None)
def _time_entry() -> _FixedEntry:
    return _FixedEntry("time_index_entry", ("timestamp", "relative_offset"))


@functools.lru_cache(maxsize=None)
def _txn_entry() -> _FixedEntry:
    return _FixedEntry("aborted_txn_entry",
                       ("version", "producer_id", "first_offset", "last_offset", "last_stable_offset"))


# ----------------------------------------------------------------------------- index entries

class OffsetPosition(NamedTuple):
    """An offset-index entry: the batch at byte ``position`` has last offset ``offset`` (absolute)."""

    offset: int
    position: int


class TimestampOffset(NamedTuple):
    """A time-index entry: ``timestamp`` is the largest seen up to ``offset`` (absolute)."""

    timestamp: int
    offset: int


class AbortedTxn(NamedTuple):
    """A transaction-index entry: an aborted transaction whose ABORT marker is at ``last_offset``."""

    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


def _load(source: IndexSource) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), "<bytes>"
    path = Path(source)
    return path.read_bytes(), str(path.absolute())


def _base(source: IndexSource, base_offset: int | None) -> int:
    if base_offset is not None:
        return base_offset
    if isinstance(source, (bytes, bytearray, memoryview)):
        raise ValueError("base_offset is required when the index is given as bytes")
    return parse_segment_name(source).base_offset


def _sanity_check_offset_index(data: bytes, base: int, name: str) -> None:
    """Kafka's OffsetIndex.sanityCheck."""
    e = _offset_entry()
    n = e.count(data)
    if n:
        last = base + e.unpack_at(data, n - 1)[0]
        if last < base:
            raise CorruptError(f"Corrupt index found, index file ({name}) has non-zero size but the last offset "
                               f"is {last} which is less than the base offset {base}",
                               position=(n - 1) * e.size, field="relative_offset")
    if len(data) % e.size:
        raise BadLengthError(f"Index file {name} is corrupt, found {len(data)} bytes which is neither positive "
                             f"nor a multiple of {e.size}", position=len(data))


def _sanity_check_time_index(data: bytes, base: int, name: str) -> None:
    """Kafka's TimeIndex.sanityCheck. Trailing preallocated zero entries fail it
    (the last timestamp, 0, is below the first), as they do in Kafka."""
    e = _time_entry()
    n = e.count(data)
    if n:
        first_ts = e.unpack_at(data, 0)[0]
        last_ts, last_rel = e.unpack_at(data, n - 1)
        if last_ts < first_ts:
            raise CorruptError(f"Corrupt time index found, time index file ({name}) has non-zero size but the "
                               f"last timestamp is {last_ts} which is less than the first timestamp {first_ts}",
                               position=(n - 1) * e.size, field="timestamp")
        if base + last_rel < base:
            raise CorruptError(f"Corrupt time index found, time index file ({name}) has non-zero size but the "
                               f"last offset is {base + last_rel} which is less than the first offset {base}",
                               position=(n - 1) * e.size + e.offsets["relative_offset"], field="relative_offset")
    if len(data) % e.size:
        raise BadLengthError(f"Time index file {name} is corrupt, found {len(data)} bytes which is neither "
                             f"positive nor a multiple of {e.size}", position=len(data))


def read_offset_index(source: IndexSource, base_offset: int | None = None, *,
                      sanity_check: bool = False) -> list[OffsetPosition]:
    """The entries of a ``.index`` file (a path, or its bytes with ``base_offset``).

    Reading stops at the first entry past the first whose relative offset is 0:
    the rest is the zero-filled preallocation a crash leaves behind, which
    DumpLogSegments skips the same way. Bytes after the last whole entry are
    ignored unless ``sanity_check`` runs Kafka's ``sanityCheck`` first
    (:class:`CorruptError` for a last offset below the base,
    :class:`BadLengthError` for a length that is not a multiple of 8)."""
    data, name = _load(source)
    base = _base(source, base_offset)
    if sanity_check:
        _sanity_check_offset_index(data, base, name)
    out = []
    for i, (rel, pos) in enumerate(_offset_entry().iter(data)):
        if rel == 0 and i > 0:
            break
        out.append(OffsetPosition(base + rel, pos))
    return out


def read_time_index(source: IndexSource, base_offset: int | None = None, *,
                    sanity_check: bool = False) -> list[TimestampOffset]:
    """The entries of a ``.timeindex`` file, with the same stop rule as
    :func:`read_offset_index` (DumpLogSegments stops at a relative offset of 0
    past the first entry; a preallocated zero entry also has timestamp 0).
    ``sanity_check`` runs Kafka's ``TimeIndex.sanityCheck`` first."""
    data, name = _load(source)
    base = _base(source, base_offset)
    if sanity_check:
        _sanity_check_time_index(data, base, name)
    out = []
    for i, (ts, rel) in enumerate(_time_entry().iter(data)):
        if rel == 0 and i > 0:
            break
        out.append(TimestampOffset(ts, base + rel))
    return out


def read_txn_index(source: IndexSource, base_offset: int | None = None, *,
                   sanity_check: bool = False) -> list[AbortedTxn]:
    """The entries of a ``.txnindex`` file (offsets in it are absolute).

    As Kafka's ``AbortedTxn.version()``, the version is the *first byte* of the
    int16 field, read signed; a version above 0 raises :class:`CorruptError`.
    A trailing partial entry is ignored, as Kafka's iterator does.
    ``sanity_check`` also checks, as ``TransactionIndex.sanityCheck``, that no
    entry's last offset is below the segment base offset (``base_offset``, or
    the file name's)."""
    data, name = _load(source)
    base = _base(source, base_offset) if sanity_check else 0
    e = _txn_entry()
    version_at = e.offsets["version"]
    out = []
    for i, (_, pid, first, last, lso) in enumerate(e.iter(data)):
        version = struct.unpack_from(">b", data, i * e.size + version_at)[0]
        if version > 0:
            raise CorruptError(f"Unexpected aborted transaction version {version} in transaction index {name}, "
                               "current version is 0", position=i * e.size + version_at, field="version")
        txn = AbortedTxn(version, pid, first, last, lso)
        if sanity_check and last < base:
            raise CorruptError(f"Last offset of aborted transaction {txn} in index {name} is less than start "
                               f"offset {base}", position=i * e.size + e.offsets["last_offset"],
                               field="last_offset")
        out.append(txn)
    return out


def _relative(offset: int, base: int, what: str) -> int:
    rel = offset - base
    if not 0 <= rel <= _INT32_MAX:
        raise EncodeError(f"{what} {offset} cannot be stored relative to base offset {base} "
                          f"(needs 0 <= offset - base <= {_INT32_MAX})", field="relative_offset")
    return rel


def encode_offset_index(entries: Iterable[tuple[int, int]], base_offset: int) -> bytes:
    """``.index`` bytes for ``(offset, position)`` pairs (absolute offsets).
    Only ranges are checked (EncodeError); ordering is the caller's business."""
    e = _offset_entry()
    out = bytearray()
    for offset, position in entries:
        if not 0 <= position <= _INT32_MAX:
            raise EncodeError(f"index position {position} is outside [0, {_INT32_MAX}]", field="position")
        out += e.pack(_relative(offset, base_offset, "index offset"), position)
    return bytes(out)


def encode_time_index(entries: Iterable[tuple[int, int]], base_offset: int) -> bytes:
    """``.timeindex`` bytes for ``(timestamp, offset)`` pairs (absolute offsets)."""
    e = _time_entry()
    out = bytearray()
    for timestamp, offset in entries:
        if not _INT64_MIN <= timestamp <= _INT64_MAX:
            raise EncodeError(f"timestamp {timestamp} does not fit an int64", field="timestamp")
        out += e.pack(timestamp, _relative(offset, base_offset, "time index offset"))
    return bytes(out)


def encode_txn_index(entries: Iterable[AbortedTxn | tuple[int, int, int, int, int]]) -> bytes:
    """``.txnindex`` bytes for :class:`AbortedTxn` entries."""
    e = _txn_entry()
    out = bytearray()
    for entry in entries:
        try:
            out += e.pack(*entry)
        except struct.error as exc:
            raise EncodeError(f"aborted transaction {tuple(entry)!r} does not fit the entry layout: {exc}") from None
    return bytes(out)


# ----------------------------------------------------------------------------- rebuilding

class _IndexBuilder:
    """Kafka's LogSegment.recover index logic, fed one batch at a time; entries
    go to the two sinks as soon as they are decided."""

    def __init__(self, base_offset: int, interval: int, offset_sink: Callable[[bytes], object],
                 time_sink: Callable[[bytes], object]):
        self.base, self.interval = base_offset, interval
        self.offset_sink, self.time_sink = offset_sink, time_sink
        self.position = 0  # validBytes
        self.last_index_position = 0  # lastIndexEntry
        self.last_index_offset: int | None = None
        self.max_ts, self.max_ts_offset = _NO_TIMESTAMP, -1  # TimestampOffset.UNKNOWN
        self.last_time = TimestampOffset(_NO_TIMESTAMP, base_offset)  # TimeIndex.lastEntry when empty
        self.time_entries = 0

    def add(self, last_offset: int, max_timestamp: int, size: int) -> None:
        if not 0 <= last_offset - self.base <= _INT32_MAX:  # ensureOffsetInRange
            raise CorruptError(f"batch last offset {last_offset} cannot be indexed in a segment with base offset "
                               f"{self.base}", position=self.position, base_offset=last_offset)
        if max_timestamp > self.max_ts:
            self.max_ts, self.max_ts_offset = max_timestamp, last_offset
        if self.position - self.last_index_position > self.interval:
            if self.last_index_offset is not None and last_offset <= self.last_index_offset:
                raise CorruptError(f"Attempt to append an offset ({last_offset}) to position "
                                   f"{self.position} no larger than the last offset appended "
                                   f"({self.last_index_offset})", position=self.position)
            self.offset_sink(_offset_entry().pack(last_offset - self.base, self.position))
            self.last_index_offset = last_offset
            self._maybe_append_time()
            self.last_index_position = self.position
        self.position += size

    def _maybe_append_time(self) -> None:
        ts, offset = self.max_ts, self.max_ts_offset
        if self.time_entries and offset < self.last_time.offset:
            raise CorruptError(f"Attempt to append a time index entry at offset {offset} below the last one "
                               f"({self.last_time.offset})", position=self.position)
        if ts > self.last_time.timestamp:
            self.time_sink(_time_entry().pack(ts, offset - self.base))
            self.last_time = TimestampOffset(ts, offset)
            self.time_entries += 1

    def finish(self) -> None:
        """The entry a segment gets when it stops being active (roll or close)."""
        self._maybe_append_time()


class _TxnTracker:
    """Open transactions (producer id -> first offset), as Kafka's
    ProducerStateManager tracks them, turning ABORT markers into index entries.

    ``open_txns`` is the state at the start of the input; None means unknown
    history, in which case an ABORT marker whose transaction started before
    the input gets ``fallback_first_offset`` (the segment base offset) as its
    first offset instead of being dropped as an empty transaction."""

    def __init__(self, open_txns: dict[int, int] | None, fallback_first_offset: int):
        self.known = open_txns is not None
        self.ongoing: dict[int, int] = open_txns if open_txns is not None else {}
        self.fallback = fallback_first_offset

    def observe(self, batch: Batch) -> AbortedTxn | None:
        if batch.magic < 2 or batch.producer_id < 0:
            return None
        pid = batch.producer_id
        if not batch.is_control:
            if batch.is_transactional:
                self.ongoing.setdefault(pid, batch.base_offset)
            return None
        marker = batch.records[0].control if batch.records else None
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
        lso = min(self.ongoing.values(), default=batch.base_offset + 1)
        return AbortedTxn(0, pid, first, batch.base_offset, lso)


def _batches(segment: IndexSource, **options) -> Iterator[Batch]:
    return iter(read_batches(segment, **options))


def build_indexes(segment: IndexSource, base_offset: int | None = None,
                  index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES) -> tuple[bytes, bytes]:
    """Rebuild a segment's ``(.index bytes, .timeindex bytes)`` as Kafka's log
    recovery does (see the module doc for the exact rule).

    ``segment`` is a ``.log`` path (base offset from its name unless given) or
    the log bytes with ``base_offset``. Every batch's CRC is checked; a corrupt
    batch raises the reader's typed error, whose ``position`` is where Kafka's
    recovery would truncate the segment. A partial batch at the end is ignored."""
    if index_interval_bytes < 0:
        raise ValueError("index_interval_bytes must be >= 0")
    base = _base(segment, base_offset)
    offset_index, time_index = bytearray(), bytearray()
    builder = _IndexBuilder(base, index_interval_bytes, offset_index.extend, time_index.extend)
    for batch in _batches(segment, verify_crc=True):
        builder.add(batch.last_offset, batch.max_timestamp, batch.size)
    builder.finish()
    return bytes(offset_index), bytes(time_index)


def build_txn_index(segment: IndexSource, base_offset: int | None = None, *,
                    open_txns: dict[int, int] | None = None) -> bytes:
    """Rebuild a segment's ``.txnindex`` bytes from its transaction markers.

    Each ABORT marker of a producer with an open transaction gives
    ``AbortedTxn(0, producer id, first offset of that transaction, marker
    offset, last stable offset)``, the last stable offset being Kafka's
    (``ProducerStateManager.lastStableOffset``): the first offset of the
    earliest transaction still open from another producer, else marker + 1.

    Transactions can start in earlier segments. Pass ``open_txns`` (producer id
    -> first offset of its open transaction, ``{}`` at the start of a log) to
    get Kafka's values; it is updated in place with the transactions still open
    at the end of this segment, so it can be carried to the next one. Without
    it, history is unknown: a marker whose transaction has no data in this
    segment is indexed with the segment base offset as first offset (Kafka
    would either know an earlier offset or, for an empty transaction, index
    nothing), and the last stable offset ignores transactions opened earlier."""
    base = _base(segment, base_offset)
    tracker = _TxnTracker(open_txns, base)
    entries = [t for batch in _batches(segment, verify_crc=True) if (t := tracker.observe(batch)) is not None]
    return encode_txn_index(entries)


# ----------------------------------------------------------------------------- partitions

@dataclass(frozen=True)
class Segment:
    """One segment of a partition directory: its ``.log`` and sibling index paths
    (which may not exist)."""

    base_offset: int
    log: Path

    def _sibling(self, suffix: str) -> Path:
        return self.log.with_name(segment_name(self.base_offset, suffix))

    @property
    def index(self) -> Path:
        return self._sibling(INDEX_SUFFIX)

    @property
    def time_index(self) -> Path:
        return self._sibling(TIME_INDEX_SUFFIX)

    @property
    def txn_index(self) -> Path:
        return self._sibling(TXN_INDEX_SUFFIX)

    @property
    def size(self) -> int:
        return self.log.stat().st_size


def _list_segments(directory: Path) -> list[Segment]:
    out = []
    with os.scandir(directory) as it:
        for e in it:
            if not e.is_file():
                continue  # includes "-delete" and other directories
            try:
                base, kind = parse_segment_name(e.name)
            except ValueError:
                continue
            if kind == "log":  # not log.deleted / log.cleaned / log.swap / log.tmp
                out.append(Segment(base, directory / e.name))
    return sorted(out, key=lambda s: s.base_offset)


def _segment_of(path: PathLike) -> Segment:
    p = Path(path)
    base, _ = parse_segment_name(p)
    return Segment(base, p.with_name(segment_name(base, LOG_SUFFIX)))


def _last_offset_at(log: Path, position: int) -> int | None:
    """The last offset of the whole entry at ``position``, from its header only
    (generated layout constants), or None when none starts there."""
    from kcodec.generated.legacy_log_entry import LEGACY_LOG_ENTRY_V0_OFFSET_OFFSET
    from kcodec.generated.record_batch import (RECORD_BATCH_V2_OFFSET_BASE_OFFSET,
                                               RECORD_BATCH_V2_OFFSET_LAST_OFFSET_DELTA,
                                               RECORD_BATCH_V2_OFFSET_MAGIC)

    try:
        for _, raw in read_batches(log, start=position, verify_crc=False).entries():
            if raw[RECORD_BATCH_V2_OFFSET_MAGIC] == 2:
                base = struct.unpack_from(">q", raw, RECORD_BATCH_V2_OFFSET_BASE_OFFSET)[0]
                return base + struct.unpack_from(">i", raw, RECORD_BATCH_V2_OFFSET_LAST_OFFSET_DELTA)[0]
            return struct.unpack_from(">q", raw, LEGACY_LOG_ENTRY_V0_OFFSET_OFFSET)[0]  # legacy: the last offset
    except (KcodecError, OSError):
        return None
    return None


def _trusted_offset_index(seg: Segment) -> list[OffsetPosition] | None:
    try:
        return read_offset_index(seg.index, seg.base_offset, sanity_check=True)
    except (KcodecError, OSError):
        return None  # missing or failing sanityCheck: Kafka would rebuild it; we scan


def _offset_position(seg: Segment, offset: int, entries: list[OffsetPosition] | None = None) -> int:
    """Byte position in ``seg`` to scan from for ``offset``: the position of the
    largest index entry <= offset (OffsetIndex.lookup), once the batch there is
    confirmed to end at the entry's offset; 0 without a usable index."""
    if entries is None:
        entries = _trusted_offset_index(seg)
    if not entries:
        return 0
    i = bisect.bisect_right([e.offset for e in entries], offset) - 1
    if i < 0:
        return 0
    entry = entries[i]
    if _last_offset_at(seg.log, entry.position) != entry.offset:
        return 0  # a stale index: do not trust it
    return entry.position


class Partition:
    """A partition directory. Segments are listed on each access, in base-offset
    order; transient files (``.deleted``, ``.cleaned``, ``.swap``, ``.tmp``) and
    subdirectories are ignored. ``topic``/``partition`` are None when the
    directory name is not ``<topic>-<n>``."""

    def __init__(self, path: PathLike):
        self.path = Path(path)
        try:
            self.topic, self.partition = parse_partition_dir(self.path)
        except ValueError:
            self.topic, self.partition = None, None

    def __repr__(self) -> str:
        return f"Partition({str(self.path)!r})"

    @property
    def segments(self) -> list[Segment]:
        return _list_segments(self.path)

    def position_for_offset(self, offset: int) -> tuple[Segment, int] | None:
        """Where a read for ``offset`` starts: the last segment whose base offset
        is <= offset (the first segment if none) and a byte position in it from
        its ``.index`` (0 when the index is missing or unusable). None when the
        partition has no segments."""
        segs = self.segments
        if not segs:
            return None
        k, pos = self._seek_offset(segs, offset)
        return segs[k], pos

    def position_for_timestamp(self, timestamp: int) -> tuple[Segment, int] | None:
        """Where a read for the first batch with max timestamp >= ``timestamp``
        starts, from the ``.timeindex`` files.

        A time-index entry (T, O) says no batch up to O has a timestamp above T.
        Segments whose last entry (written when the segment was rolled) is below
        the target are skipped, except the last segment; in the chosen segment
        the read starts at the offset-index position of the last entry with
        T < target, since every batch up to it is too early. (The first entry
        with T >= target would be too late: an earlier batch can exceed the
        target before an index point records it.) Missing or insane time
        indexes mean scanning that segment from 0."""
        segs = self.segments
        if not segs:
            return None
        k, pos = self._seek_timestamp(segs, timestamp)
        return segs[k], pos

    def _seek_offset(self, segs: list[Segment], offset: int) -> tuple[int, int]:
        k = bisect.bisect_right([s.base_offset for s in segs], offset) - 1
        if k < 0:
            return 0, 0
        return k, _offset_position(segs[k], offset)

    def _seek_timestamp(self, segs: list[Segment], timestamp: int) -> tuple[int, int]:
        if timestamp <= _NO_TIMESTAMP:
            return 0, 0  # every batch qualifies
        for k, seg in enumerate(segs):
            try:
                entries = read_time_index(seg.time_index, seg.base_offset, sanity_check=True)
            except (KcodecError, OSError):
                return k, 0
            before = 0  # entries[:before] all have timestamps below the target
            while before < len(entries) and entries[before].timestamp < timestamp:
                before += 1
            if before == len(entries) and k < len(segs) - 1:
                continue  # the whole rolled segment is earlier than the target
            if before == 0:
                return k, 0
            return k, _offset_position(seg, entries[before - 1].offset)
        return len(segs) - 1, 0  # not reached: the last segment is never skipped

    def iter_batches(self, start_offset: int | None = None, end_offset: int | None = None,
                     start_timestamp: int | None = None, verify_crc: bool = True) -> Iterator[Batch]:
        """Batches in offset order across segments.

        * ``start_offset``: start with the batch holding it (last offset >= it);
        * ``end_offset`` (exclusive): stop before the first batch whose base
          offset is >= it;
        * ``start_timestamp``: start with the first batch whose max timestamp
          is >= it (then yield everything after it, as a fetch from the offset
          ListOffsets returns would).

        Both starts seek through the index files: bytes before the seek point
        (and earlier segments) are never read."""
        segs = self.segments
        if not segs:
            return
        k, pos = 0, 0
        if start_offset is not None:
            k, pos = self._seek_offset(segs, start_offset)
        if start_timestamp is not None:
            k, pos = max((k, pos), self._seek_timestamp(segs, start_timestamp))
        waiting_for_ts = start_timestamp is not None
        for i in range(k, len(segs)):
            for batch in read_batches(segs[i].log, verify_crc=verify_crc, start=pos if i == k else 0):
                if end_offset is not None and batch.base_offset >= end_offset:
                    return
                if start_offset is not None and batch.last_offset < start_offset:
                    continue
                if waiting_for_ts:
                    if batch.max_timestamp < start_timestamp:
                        continue
                    waiting_for_ts = False
                yield batch


def list_partitions(log_dir: PathLike) -> list[Partition]:
    """The partition directories of a broker log directory (``<topic>-<n>``),
    sorted by (topic, partition); directories being deleted are skipped."""
    out = []
    with os.scandir(log_dir) as it:
        for e in it:
            if e.is_dir() and not e.name.endswith("-delete"):
                try:
                    parse_partition_dir(e.name)
                except ValueError:
                    continue
                out.append(Partition(e.path))
    return sorted(out, key=lambda p: (p.topic, p.partition))


# ----------------------------------------------------------------------------- checking

@dataclass(frozen=True)
class IndexProblem:
    """One disagreement between an index file and its log.

    ``kind``: ``sanity`` (Kafka's sanityCheck fails or the file is unreadable),
    ``offset_mismatch`` (DumpLogSegments' "Index offset: I, log offset: L"),
    ``bad_position`` (no whole batch starts at an entry's position),
    ``offset_order`` (entries not increasing), ``timestamp_mismatch``,
    ``timestamp_order``, ``offset_not_found`` (the three time-index errors of
    DumpLogSegments), ``txn_marker_missing`` (no ABORT marker of that producer
    at the entry's last offset), ``txn_order``, ``log`` (the log itself fails
    to decode while checking)."""

    file: Path
    kind: str
    message: str
    index_value: int | None = None
    log_value: int | None = None


def _record_max_timestamp(batch: Batch) -> int:
    return max([_NO_TIMESTAMP, *(r.timestamp for r in batch.records)])


def _check_offset_index(seg: Segment, problems: list[IndexProblem]) -> list[OffsetPosition]:
    path = seg.index
    try:
        read_offset_index(path, seg.base_offset, sanity_check=True)
    except KcodecError as exc:
        problems.append(IndexProblem(path, "sanity", str(exc)))
    entries = read_offset_index(path, seg.base_offset)
    prev: OffsetPosition | None = None
    for entry in entries:
        if prev is not None and (entry.offset <= prev.offset or entry.position <= prev.position):
            problems.append(IndexProblem(path, "offset_order",
                                         f"entry (offset: {entry.offset} position: {entry.position}) does not "
                                         f"follow (offset: {prev.offset} position: {prev.position})",
                                         entry.offset, prev.offset))
        prev = entry
        last = _last_offset_at(seg.log, entry.position)
        if last is None:
            problems.append(IndexProblem(path, "bad_position", f"no whole batch at position {entry.position} "
                                         f"for index offset {entry.offset}", entry.offset, None))
        elif last != entry.offset:
            problems.append(IndexProblem(path, "offset_mismatch",
                                         f"Index offset: {entry.offset}, log offset: {last}", entry.offset, last))
    return entries


def _check_time_index(seg: Segment, offsets: list[OffsetPosition], problems: list[IndexProblem]) -> None:
    path = seg.time_index
    try:
        read_time_index(path, seg.base_offset, sanity_check=True)
    except KcodecError as exc:
        problems.append(IndexProblem(path, "sanity", str(exc)))
    prev_ts = _NO_TIMESTAMP
    indexed = [e.offset for e in offsets]
    for entry in read_time_index(path, seg.base_offset):
        i = bisect.bisect_right(indexed, entry.offset) - 1
        start = offsets[i].position if i >= 0 else 0
        found: Batch | None = None
        try:
            for batch in read_batches(seg.log, start=start, verify_crc=False):
                if batch.last_offset >= entry.offset:
                    found = batch
                    break
        except KcodecError as exc:
            problems.append(IndexProblem(path, "log", f"reading {seg.log.name} from {start}: {exc}",
                                         entry.offset, None))
            continue
        if found is None or found.last_offset != entry.offset:
            log_value = None if found is None else found.last_offset
            problems.append(IndexProblem(path, "offset_not_found",
                                         f"Indexed offset: {entry.offset}, found log offset: "
                                         f"{-1 if log_value is None else log_value}", entry.offset, log_value))
        else:
            max_ts = _record_max_timestamp(found)
            if max_ts != entry.timestamp:
                problems.append(IndexProblem(path, "timestamp_mismatch", f"Index timestamp: {entry.timestamp}, "
                                             f"log timestamp: {max_ts}", entry.timestamp, max_ts))
        if prev_ts >= entry.timestamp:
            problems.append(IndexProblem(path, "timestamp_order", f"Index timestamp: {entry.timestamp}, "
                                         f"Previously indexed timestamp: {prev_ts}", entry.timestamp, prev_ts))
        prev_ts = entry.timestamp


def _check_txn_index(seg: Segment, problems: list[IndexProblem]) -> None:
    path = seg.txn_index
    try:
        entries = read_txn_index(path, seg.base_offset, sanity_check=True)
    except KcodecError as exc:
        problems.append(IndexProblem(path, "sanity", str(exc)))
        try:
            entries = read_txn_index(path, seg.base_offset)
        except KcodecError:
            return
    if not entries:
        return
    aborts: set[tuple[int, int]] = set()
    try:
        for batch in read_batches(seg.log, verify_crc=False):
            if batch.is_control and batch.records and batch.records[0].control is not None \
                    and batch.records[0].control.type == _ABORT:
                aborts.add((batch.producer_id, batch.base_offset))
    except KcodecError as exc:
        problems.append(IndexProblem(path, "log", f"reading {seg.log.name}: {exc}"))
        return
    prev: AbortedTxn | None = None
    for txn in entries:
        if prev is not None and txn.last_offset <= prev.last_offset:
            problems.append(IndexProblem(path, "txn_order", f"aborted transaction ending at {txn.last_offset} "
                                         f"follows one ending at {prev.last_offset}", txn.last_offset,
                                         prev.last_offset))
        if (txn.producer_id, txn.last_offset) not in aborts:
            problems.append(IndexProblem(path, "txn_marker_missing", f"no ABORT marker of producer "
                                         f"{txn.producer_id} at offset {txn.last_offset}", txn.last_offset, None))
        prev = txn


def check_indexes(target: PathLike) -> list[IndexProblem]:
    """Check the index files of a partition directory, or of the one segment a
    ``.log``/``.index``/``.timeindex``/``.txnindex`` path names, against the log,
    as DumpLogSegments ``--verify-index-only`` does (plus sanity checks and the
    transaction index). Missing index files are not problems (Kafka rebuilds
    them). Returns the problems found, empty when all is well."""
    target = Path(target)
    segs = _list_segments(target) if target.is_dir() else [_segment_of(target)]
    problems: list[IndexProblem] = []
    for seg in segs:
        if not seg.log.exists():
            raise FileNotFoundError(f"{seg.log} does not exist")
        offsets: list[OffsetPosition] = []
        if seg.index.exists():
            offsets = _check_offset_index(seg, problems)
        if seg.time_index.exists():
            _check_time_index(seg, offsets, problems)
        if seg.txn_index.exists():
            _check_txn_index(seg, problems)
    return problems


# ----------------------------------------------------------------------------- writing

def _fsync_dir(directory: Path) -> None:
    if not hasattr(os, "O_DIRECTORY"):
        return  # Windows: directories cannot be opened for fsync
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def write_atomically(path: PathLike, chunks: Iterable[bytes] | bytes) -> None:
    """Write ``chunks`` to ``path`` so that ``path`` only ever holds the old
    content or all of the new: they go to ``path + ".tmp"``, which is fsynced,
    renamed over ``path``, and the directory fsynced. On error the temporary is
    removed and ``path`` is untouched."""
    path = Path(path)
    tmp = path.with_name(path.name + TMP_SUFFIX)
    if isinstance(chunks, (bytes, bytearray, memoryview)):
        chunks = [chunks]
    try:
        with open(tmp, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise
    _fsync_dir(path.parent)


class _OpenSegment:
    """The segment being written: temporaries under ``<final name>.tmp``."""

    def __init__(self, directory: Path, base_offset: int, interval: int):
        self.base_offset = base_offset
        self.final = {s: directory / segment_name(base_offset, s)
                      for s in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)}
        if self.final[LOG_SUFFIX].exists():
            raise FileExistsError(f"segment {self.final[LOG_SUFFIX]} already exists")
        self.tmp = {s: p.with_name(p.name + TMP_SUFFIX) for s, p in self.final.items()}
        self.files: dict[str, BinaryIO] = {}
        try:
            for s in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX):
                self.files[s] = open(self.tmp[s], "wb")
        except BaseException:
            self.discard()
            raise
        self.size = 0
        self.builder = _IndexBuilder(base_offset, interval, self.files[INDEX_SUFFIX].write,
                                     self.files[TIME_INDEX_SUFFIX].write)

    def write(self, raw: bytes, batch: Batch, aborted: AbortedTxn | None) -> None:
        self.builder.add(batch.last_offset, batch.max_timestamp, len(raw))
        self.files[LOG_SUFFIX].write(raw)
        self.size += len(raw)
        if aborted is not None:
            if TXN_INDEX_SUFFIX not in self.files:
                self.files[TXN_INDEX_SUFFIX] = open(self.tmp[TXN_INDEX_SUFFIX], "wb")
            self.files[TXN_INDEX_SUFFIX].write(encode_txn_index([aborted]))

    def seal(self) -> Segment:
        """Finish the indexes, fsync, rename the indexes and then the log (the
        commit point: a visible .log means a complete segment), fsync the directory."""
        self.builder.finish()
        for f in self.files.values():
            f.flush()
            os.fsync(f.fileno())
            f.close()
        if TXN_INDEX_SUFFIX not in self.files:
            _remove(self.final[TXN_INDEX_SUFFIX])  # an orphan from an interrupted earlier run
        for s in (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, LOG_SUFFIX):
            if s in self.files:
                os.replace(self.tmp[s], self.final[s])
        _fsync_dir(self.final[LOG_SUFFIX].parent)
        return Segment(self.base_offset, self.final[LOG_SUFFIX])

    def discard(self) -> None:
        for f in self.files.values():
            try:
                f.close()
            except OSError:
                pass
        for p in self.tmp.values():
            _remove(p)


class SegmentWriter:
    """Write already-encoded log entries into a partition directory as Kafka
    segments (``.log``, ``.index``, ``.timeindex``, and ``.txnindex`` when the
    segment holds ABORT markers of transactions), with indexes identical to
    :func:`build_indexes` / :func:`build_txn_index` of each finished segment.

    * ``base_offset`` names the first segment; later segments are named by the
      base offset of their first entry.
    * A new segment starts when the next entry would take the current one past
      ``segment_bytes`` (a segment always takes at least one entry), or when
      the entry's last offset would not fit a relative offset.
    * Entries are checked before anything is written (whole entries, valid
      CRCs, offsets increasing from ``base_offset``); a rejected append
      (:class:`EncodeError` or a decode error) writes nothing.
    * Atomicity: a segment is written to ``<name>.tmp`` files, fsynced and
      renamed into place (indexes first, the ``.log`` last) when it is rolled
      or on :meth:`close`, then the directory is fsynced. As a context manager,
      an exception discards the temporaries of the unfinished segment and
      keeps the completed ones; so does :meth:`abort`.
    * Transactions are tracked across the writer's segments from its first
      entry (see :func:`build_txn_index` for the last stable offset)."""

    def __init__(self, directory: PathLike, *, base_offset: int = 0, segment_bytes: int = DEFAULT_SEGMENT_BYTES,
                 index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES):
        if not 1 <= segment_bytes <= _INT32_MAX:
            raise ValueError(f"segment_bytes must be in [1, {_INT32_MAX}]")
        if index_interval_bytes < 0:
            raise ValueError("index_interval_bytes must be >= 0")
        if not 0 <= base_offset <= _INT64_MAX:
            raise ValueError("base_offset must be in [0, 2^63-1]")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        if (self.directory / segment_name(base_offset, LOG_SUFFIX)).exists():
            raise FileExistsError(f"segment {self.directory / segment_name(base_offset, LOG_SUFFIX)} already exists")
        self.segment_bytes, self.index_interval_bytes = segment_bytes, index_interval_bytes
        self.base_offset = base_offset
        self.completed: list[Segment] = []  # segments renamed into place, in order
        self._next_offset = base_offset  # the lowest offset the next entry may start at
        self._current: _OpenSegment | None = None
        self._txns = _TxnTracker({}, base_offset)
        self._closed = False

    def __enter__(self) -> "SegmentWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("SegmentWriter is closed")

    def _validate(self, data: bytes) -> list[tuple[bytes, Batch]]:
        entries = []
        next_offset = self._next_offset
        reader = read_batches(data, strict=True, verify_crc=True)
        first_ever = self._current is None and not self.completed
        for position, raw in reader.entries():
            batch = decode_entry(raw, position, verify_crc=True)
            if batch.base_offset < next_offset:
                raise EncodeError(f"offsets must increase: an entry starting at offset {batch.base_offset} "
                                  f"cannot follow offset {next_offset - 1}", position=position,
                                  base_offset=batch.base_offset)
            if not 0 <= batch.last_offset - batch.base_offset <= _INT32_MAX:
                raise EncodeError(f"entry offsets [{batch.base_offset}, {batch.last_offset}] cannot be indexed",
                                  position=position, base_offset=batch.base_offset)
            if first_ever and not entries and batch.last_offset - self.base_offset > _INT32_MAX:
                raise EncodeError(f"the first entry's last offset {batch.last_offset} cannot be indexed in a "
                                  f"segment with base offset {self.base_offset}", position=position,
                                  base_offset=batch.base_offset)
            entries.append((raw, batch))
            next_offset = batch.last_offset + 1
        return entries

    def append(self, entries: bytes) -> None:
        """Append one or more whole log entries (v2 batches or v0/v1 messages),
        as bytes. Raises (before writing anything) TruncatedError for a partial
        entry, the reader's errors for a corrupt one, EncodeError for offsets
        that do not increase."""
        self._check_open()
        checked = self._validate(entries)
        try:
            for raw, batch in checked:
                cur = self._current
                if cur is not None and cur.size > 0 and (
                        cur.size + len(raw) > self.segment_bytes
                        or batch.last_offset - cur.base_offset > _INT32_MAX):
                    self._roll()
                if self._current is None:
                    base = self.base_offset if not self.completed else batch.base_offset
                    self._current = _OpenSegment(self.directory, base, self.index_interval_bytes)
                self._current.write(raw, batch, self._txns.observe(batch))
                self._next_offset = batch.last_offset + 1
        except BaseException:
            self.abort()  # the unfinished segment may hold half an entry: drop it
            raise

    def _roll(self) -> None:
        cur, self._current = self._current, None
        try:
            self.completed.append(cur.seal())
        except BaseException:
            cur.discard()
            raise

    def close(self) -> None:
        """Seal the current segment (if it holds anything). Idempotent."""
        if self._closed:
            return
        try:
            if self._current is not None:
                self._roll()
        except BaseException:
            self.abort()
            raise
        self._closed = True

    def abort(self) -> None:
        """Discard the unfinished segment's temporaries; completed segments stay."""
        if self._current is not None:
            self._current.discard()
            self._current = None
        self._closed = True
