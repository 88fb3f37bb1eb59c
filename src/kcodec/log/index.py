"""Kafka's index files: the offset index (``.index``), the time index
(``.timeindex``) and the transaction index (``.txnindex``) of a segment.
Reading, encoding and Kafka's sanity checks; rebuilding them as Kafka's
``LogSegment.recover`` does; and seeking with an offset index, each position
confirmed against the batch found there. Checking them against the log is
:mod:`kcodec.log.index_check`'s.

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
"""

from __future__ import annotations

import bisect
import functools
import struct
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from kcodec.errors import BadLengthError, CorruptError, EncodeError, KcodecError, SchemaError
from kcodec.generated import codec
from kcodec.log.files import MAX_INDEX_FILE_BYTES, Segment, index_too_large
from kcodec.log.names import INDEX_SUFFIX, PathLike, parse_segment_name
from kcodec.records.framing import last_offset
from kcodec.records.model import Batch
from kcodec.records.reader import read_batches
from kcodec.records.source import read_regular_file
from kcodec.records.transactions import AbortedTxn, TxnTracker

__all__ = [
    "DEFAULT_INDEX_INTERVAL_BYTES",
    "IndexSource",
    "OffsetPosition",
    "TimestampOffset",
    "AbortedTxn",
    "read_offset_index",
    "read_time_index",
    "read_txn_index",
    "encode_offset_index",
    "encode_time_index",
    "encode_txn_index",
    "IndexBuilder",
    "build_indexes",
    "build_txn_index",
    "confirmed_last_offset",
    "OffsetLookup",
]

DEFAULT_INDEX_INTERVAL_BYTES = 4096  # index.interval.bytes

_INT32_MAX = (1 << 31) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP

IndexSource = bytes | bytearray | memoryview | PathLike

# ----------------------------------------------------------------------------- entry packing

_STRUCT_CODES = {"int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I", "int64": "q"}


class _FixedEntry:
    """A fixed-size index entry packed with ``struct``, its format derived from the
    generated layout of ``entity`` and checked against the generated codec."""

    def __init__(self, entity: str, fields: tuple[str, ...]):
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
        return self.struct.iter_unpack(memoryview(data)[: self.count(data) * self.size])


@functools.cache
def _offset_entry() -> _FixedEntry:
    return _FixedEntry("offset_index_entry", ("relative_offset", "position"))


@functools.cache
def _time_entry() -> _FixedEntry:
    return _FixedEntry("time_index_entry", ("timestamp", "relative_offset"))


@functools.cache
def _txn_entry() -> _FixedEntry:
    return _FixedEntry(
        "aborted_txn_entry", ("version", "producer_id", "first_offset", "last_offset", "last_stable_offset")
    )


# ----------------------------------------------------------------------------- index entries


class OffsetPosition(NamedTuple):
    """An offset-index entry: the batch at byte ``position`` has last offset ``offset`` (absolute)."""

    offset: int
    position: int


class TimestampOffset(NamedTuple):
    """A time-index entry: ``timestamp`` is the largest seen up to ``offset`` (absolute)."""

    timestamp: int
    offset: int


def _load(source: IndexSource, max_bytes: int) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), "<bytes>"
    path = Path(source)
    data = read_regular_file(path, max_bytes + 1)
    if len(data) > max_bytes:
        raise index_too_large(path, max_bytes)
    return data, str(path.absolute())


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
            raise CorruptError(
                f"Corrupt index found, index file ({name}) has non-zero size but the last offset "
                f"is {last} which is less than the base offset {base}",
                position=(n - 1) * e.size,
                field="relative_offset",
            )
    if len(data) % e.size:
        raise BadLengthError(
            f"Index file {name} is corrupt, found {len(data)} bytes which is neither positive "
            f"nor a multiple of {e.size}",
            position=len(data),
        )


def _sanity_check_time_index(data: bytes, base: int, name: str) -> None:
    """Kafka's TimeIndex.sanityCheck. Trailing preallocated zero entries fail it
    (the last timestamp, 0, is below the first), as they do in Kafka."""
    e = _time_entry()
    n = e.count(data)
    if n:
        first_ts = e.unpack_at(data, 0)[0]
        last_ts, last_rel = e.unpack_at(data, n - 1)
        if last_ts < first_ts:
            raise CorruptError(
                f"Corrupt time index found, time index file ({name}) has non-zero size but the "
                f"last timestamp is {last_ts} which is less than the first timestamp {first_ts}",
                position=(n - 1) * e.size,
                field="timestamp",
            )
        if base + last_rel < base:
            raise CorruptError(
                f"Corrupt time index found, time index file ({name}) has non-zero size but the "
                f"last offset is {base + last_rel} which is less than the first offset {base}",
                position=(n - 1) * e.size + e.offsets["relative_offset"],
                field="relative_offset",
            )
    if len(data) % e.size:
        raise BadLengthError(
            f"Time index file {name} is corrupt, found {len(data)} bytes which is neither "
            f"positive nor a multiple of {e.size}",
            position=len(data),
        )


def read_offset_index(
    source: IndexSource,
    base_offset: int | None = None,
    *,
    sanity_check: bool = False,
    max_bytes: int = MAX_INDEX_FILE_BYTES,
) -> list[OffsetPosition]:
    """The entries of a ``.index`` file (a path, or its bytes with ``base_offset``).

    Reading stops at the first entry past the first whose relative offset is 0:
    the rest is the zero-filled preallocation a crash leaves behind, which
    DumpLogSegments skips the same way. Bytes after the last whole entry are
    ignored unless ``sanity_check`` runs Kafka's ``sanityCheck`` first
    (:class:`CorruptError` for a last offset below the base,
    :class:`BadLengthError` for a length that is not a multiple of 8)."""
    data, name = _load(source, max_bytes)
    base = _base(source, base_offset)
    if sanity_check:
        _sanity_check_offset_index(data, base, name)
    out = []
    for i, (rel, pos) in enumerate(_offset_entry().iter(data)):
        if rel == 0 and i > 0:
            break
        out.append(OffsetPosition(base + rel, pos))
    return out


def read_time_index(
    source: IndexSource,
    base_offset: int | None = None,
    *,
    sanity_check: bool = False,
    max_bytes: int = MAX_INDEX_FILE_BYTES,
) -> list[TimestampOffset]:
    """The entries of a ``.timeindex`` file, with the same stop rule as
    :func:`read_offset_index` (DumpLogSegments stops at a relative offset of 0
    past the first entry; a preallocated zero entry also has timestamp 0).
    ``sanity_check`` runs Kafka's ``TimeIndex.sanityCheck`` first."""
    data, name = _load(source, max_bytes)
    base = _base(source, base_offset)
    if sanity_check:
        _sanity_check_time_index(data, base, name)
    out = []
    for i, (ts, rel) in enumerate(_time_entry().iter(data)):
        if rel == 0 and i > 0:
            break
        out.append(TimestampOffset(ts, base + rel))
    return out


def read_txn_index(
    source: IndexSource,
    base_offset: int | None = None,
    *,
    sanity_check: bool = False,
    max_bytes: int = MAX_INDEX_FILE_BYTES,
) -> list[AbortedTxn]:
    """The entries of a ``.txnindex`` file (offsets in it are absolute).

    As Kafka's ``AbortedTxn.version()``, the version is the *first byte* of the
    int16 field, read signed; a version above 0 raises :class:`CorruptError`.
    A trailing partial entry is ignored, as Kafka's iterator does.
    ``sanity_check`` also checks, as ``TransactionIndex.sanityCheck``, that no
    entry's last offset is below the segment base offset (``base_offset``, or
    the file name's)."""
    data, name = _load(source, max_bytes)
    base = _base(source, base_offset) if sanity_check else 0
    e = _txn_entry()
    version_at = e.offsets["version"]
    out = []
    for i, (_, pid, first, last, lso) in enumerate(e.iter(data)):
        version = struct.unpack_from(">b", data, i * e.size + version_at)[0]
        if version > 0:
            raise CorruptError(
                f"Unexpected aborted transaction version {version} in transaction index {name}, current version is 0",
                position=i * e.size + version_at,
                field="version",
            )
        txn = AbortedTxn(version, pid, first, last, lso)
        if sanity_check and last < base:
            raise CorruptError(
                f"Last offset of aborted transaction {txn} in index {name} is less than start offset {base}",
                position=i * e.size + e.offsets["last_offset"],
                field="last_offset",
            )
        out.append(txn)
    return out


def _relative(offset: int, base: int, what: str) -> int:
    rel = offset - base
    if not 0 <= rel <= _INT32_MAX:
        raise EncodeError(
            f"{what} {offset} cannot be stored relative to base offset {base} "
            f"(needs 0 <= offset - base <= {_INT32_MAX})",
            field="relative_offset",
        )
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


class IndexBuilder:
    """Kafka's LogSegment.recover index logic, fed one batch at a time; entries
    go to the two sinks as soon as they are decided."""

    def __init__(
        self,
        base_offset: int,
        interval: int,
        offset_sink: Callable[[bytes], object],
        time_sink: Callable[[bytes], object],
    ):
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
            raise CorruptError(
                f"batch last offset {last_offset} cannot be indexed in a segment with base offset {self.base}",
                position=self.position,
                base_offset=last_offset,
            )
        if max_timestamp > self.max_ts:
            self.max_ts, self.max_ts_offset = max_timestamp, last_offset
        if self.position - self.last_index_position > self.interval:
            if self.last_index_offset is not None and last_offset <= self.last_index_offset:
                raise CorruptError(
                    f"Attempt to append an offset ({last_offset}) to position "
                    f"{self.position} no larger than the last offset appended "
                    f"({self.last_index_offset})",
                    position=self.position,
                )
            self.offset_sink(_offset_entry().pack(last_offset - self.base, self.position))
            self.last_index_offset = last_offset
            self._maybe_append_time()
            self.last_index_position = self.position
        self.position += size

    def _maybe_append_time(self) -> None:
        ts, offset = self.max_ts, self.max_ts_offset
        if self.time_entries and offset < self.last_time.offset:
            raise CorruptError(
                f"Attempt to append a time index entry at offset {offset} below the last one ({self.last_time.offset})",
                position=self.position,
            )
        if ts > self.last_time.timestamp:
            self.time_sink(_time_entry().pack(ts, offset - self.base))
            self.last_time = TimestampOffset(ts, offset)
            self.time_entries += 1

    def finish(self) -> None:
        """The entry a segment gets when it stops being active (roll or close)."""
        self._maybe_append_time()


def _batches(segment: IndexSource, **options) -> Iterator[Batch]:
    return iter(read_batches(segment, **options))


def build_indexes(
    segment: IndexSource, base_offset: int | None = None, index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES
) -> tuple[bytes, bytes]:
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
    builder = IndexBuilder(base, index_interval_bytes, offset_index.extend, time_index.extend)
    for batch in _batches(segment, verify_crc=True):
        builder.add(batch.last_offset, batch.max_timestamp, batch.size)
    builder.finish()
    return bytes(offset_index), bytes(time_index)


def build_txn_index(
    segment: IndexSource, base_offset: int | None = None, *, open_txns: dict[int, int] | None = None
) -> bytes:
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
    tracker = TxnTracker(open_txns, base)
    entries = [t for batch in _batches(segment, verify_crc=True) if (t := tracker.observe(batch)) is not None]
    return encode_txn_index(entries)


# ----------------------------------------------------------------------------- seeking


def confirmed_last_offset(seg: Segment, position: int) -> int | None:
    """The last offset of the whole entry at ``position`` of ``seg``, from its
    header, or None when no whole entry starts there."""
    raw = seg.entry_at(position)
    return None if raw is None else last_offset(raw)


class OffsetLookup:
    """A segment's offset index, read once, for Kafka's ``OffsetIndex.lookup``.

    An index that is missing or fails Kafka's sanity check is treated as empty
    (Kafka would rebuild it; a reader scans instead). Each entry's position is
    confirmed, on first use, to hold a whole batch ending at the entry's
    offset; a stale entry is never used."""

    def __init__(self, seg: Segment):
        self.seg = seg
        self.entries: list[OffsetPosition] = []
        if seg.has(INDEX_SUFFIX):
            try:
                self.entries = read_offset_index(seg.read_file(INDEX_SUFFIX), seg.base_offset, sanity_check=True)
            except (KcodecError, OSError, ValueError):
                self.entries = []
        self.offsets = [e.offset for e in self.entries]
        self._confirmed: dict[int, bool] = {}

    def confirmed(self, i: int) -> bool:
        """Whether the batch at entry ``i``'s position ends at the entry's offset."""
        ok = self._confirmed.get(i)
        if ok is None:
            e = self.entries[i]
            ok = self._confirmed[i] = confirmed_last_offset(self.seg, e.position) == e.offset
        return ok

    def position_for(self, offset: int) -> int:
        """Where to read from for ``offset``: the position of the largest entry
        <= ``offset`` once confirmed, else 0."""
        i = bisect.bisect_right(self.offsets, offset) - 1
        if i < 0 or not self.confirmed(i):
            return 0
        return self.entries[i].position
