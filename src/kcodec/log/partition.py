"""A partition directory read as Kafka's log: its segments in offset order,
seeks by offset and by timestamp through the index files, the batches from
there on, the aborted transactions, and the offset a writer continues from.

Everything here works on any filesystem of :mod:`kcodec.log.fs` (local paths,
or pyarrow's S3, GCS, HDFS ...): the Spark source plans its reads with it.

Typical use::

    part = Partition("/var/kafka-logs/orders-3")
    for batch in part.iter_batches(start_offset=1_000_000):
        ...
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterator
from pathlib import Path
from typing import cast

from kcodec.errors import KcodecError
from kcodec.log.commit import visible_partition_names
from kcodec.log.files import FileSystem, Segment, list_segments
from kcodec.log.fs import resolve
from kcodec.log.index import OffsetLookup, read_time_index, read_txn_index
from kcodec.log.names import (
    INDEX_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    PathLike,
    is_partition_dir_name,
    parse_partition_dir,
)
from kcodec.records.framing import last_offset
from kcodec.records.model import Batch, Record
from kcodec.records.transactions import TxnTracker, check_isolation_level, committed_records

__all__ = [
    "Partition",
    "PartitionRecord",
    "list_partitions",
    "segment_for_offset",
    "seek_offset",
    "seek_timestamp",
    "aborted_transactions",
    "next_offset",
]

_INT64_MAX = (1 << 63) - 1
_NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP


# ----------------------------------------------------------------------------- seeks over a list of segments


def segment_for_offset(segs: list[Segment], offset: int) -> int:
    """The index of the last segment whose base offset is <= ``offset`` (0 when none is)."""
    bases = [-1 if s.base_offset is None else s.base_offset for s in segs]
    return max(0, bisect.bisect_right(bases, offset) - 1)


def seek_offset(segs: list[Segment], offset: int) -> tuple[int, int]:
    """(segment index, byte position) where a read for ``offset`` starts: the
    segment holding it and the position of its ``.index`` entry at or below
    it (0 when the index is missing, insane or stale)."""
    k = segment_for_offset(segs, offset)
    base = segs[k].base_offset
    if base is None or base > offset:
        return k, 0
    return k, OffsetLookup(segs[k]).position_for(offset)


def seek_timestamp(segs: list[Segment], timestamp: int) -> tuple[int, int]:
    """(segment index, byte position) where a read for the first batch with
    max timestamp >= ``timestamp`` starts, from the ``.timeindex`` files.

    A time-index entry (T, O) says no batch up to O has a timestamp above T.
    Segments whose last entry (written when the segment was rolled) is below
    the target are skipped, except the last segment; in the chosen segment
    the read starts at the offset-index position of the last entry with
    T < target, since every batch up to it is too early. (The first entry
    with T >= target would be too late: an earlier batch can exceed the
    target before an index point records it.) Missing or insane time
    indexes mean scanning that segment from 0."""
    if timestamp <= _NO_TIMESTAMP:
        return 0, 0  # every batch qualifies
    for k, seg in enumerate(segs):
        if seg.base_offset is None or not seg.has(TIME_INDEX_SUFFIX):
            return k, 0
        try:
            entries = read_time_index(seg.read_file(TIME_INDEX_SUFFIX), seg.base_offset, sanity_check=True)
        except (KcodecError, OSError):
            return k, 0
        before = 0  # entries[:before] all have timestamps below the target
        while before < len(entries) and entries[before].timestamp < timestamp:
            before += 1
        if before == len(entries) and k < len(segs) - 1:
            continue  # the whole rolled segment is earlier than the target
        if before == 0:
            return k, 0
        return k, OffsetLookup(seg).position_for(entries[before - 1].offset)
    return len(segs) - 1, 0  # not reached: the last segment is never skipped


# ----------------------------------------------------------------------------- transactions and the end


def aborted_transactions(
    segs: list[Segment], from_segment: int = 0, *, derive: bool = False, skip_corrupt: bool = False
) -> list[tuple[int, int, int]]:
    """(producer id, first offset, last offset) of the aborted transactions
    whose markers lie in ``segs[from_segment:]``, sorted by last offset.

    A segment's ``.txnindex`` answers for it. A segment with an ``.index`` but
    no ``.txnindex`` has no aborted transaction ending in it (Kafka creates the
    transaction index on its first entry). Segments that came without index
    files (a bare ``.log``), an unreadable ``.txnindex``, or every segment with
    ``derive``, are answered from the ABORT markers themselves: the batch
    headers are walked from the first segment, decoding control batches only.
    ``skip_corrupt`` walks on past a segment that does not decode."""
    walk_for = {
        i
        for i in range(from_segment, len(segs))
        if derive or (not segs[i].has(TXN_INDEX_SUFFIX) and not segs[i].has(INDEX_SUFFIX))
    }
    found: set[tuple[int, int, int]] = set()
    for i in range(from_segment, len(segs)):
        if i not in walk_for and segs[i].has(TXN_INDEX_SUFFIX):
            try:
                txns = read_txn_index(segs[i].read_file(TXN_INDEX_SUFFIX))
            except (KcodecError, OSError):
                walk_for.add(i)  # unreadable: fall back to the markers
                continue
            found.update((t.producer_id, t.first_offset, t.last_offset) for t in txns)
    if walk_for:
        tracker = TxnTracker({}, 0)  # from the start of the log: history is known
        for i in range(0, max(walk_for) + 1):
            try:
                for _, raw in segs[i].entries(verify_crc=False):
                    txn = tracker.observe_entry(raw, verify_crc=False)
                    if txn is not None and i in walk_for:
                        found.add((txn.producer_id, txn.first_offset, txn.last_offset))
            except KcodecError:
                if not skip_corrupt:
                    raise
    return sorted(found, key=lambda t: (t[2], t[0]))


def next_offset(segs: list[Segment]) -> int:
    """The offset after the last batch of ``segs`` (0 when they hold none): the
    last segment's tail is read from its last confirmed ``.index`` position."""
    for seg in reversed(segs):
        lookup = OffsetLookup(seg)
        last = None
        for _, raw in seg.entries(lookup.position_for(_INT64_MAX), verify_crc=False):
            last = last_offset(raw)
        if last is not None:
            return last + 1
        if seg.base_offset is not None and seg.size == 0:
            return seg.base_offset
    return 0


# ----------------------------------------------------------------------------- partitions


class Partition:
    """A partition directory. Segments are listed on each access, in base-offset
    order; transient files (``.deleted``, ``.cleaned``, ``.swap``, ``.tmp``) and
    subdirectories are ignored, and names that are not Kafka's segment names
    are listed in :attr:`skipped`, never read. ``topic``/``partition`` are None
    when the directory name is not ``<topic>-<n>``.

    ``path`` may be local or any URI :func:`kcodec.log.fs.resolve` knows, or a
    path on an explicit ``fs``; a local one is kept as a :class:`~pathlib.Path`."""

    def __init__(self, path: PathLike, fs: FileSystem | None = None):
        text = os.fspath(path)
        if fs is None:
            fs, resolved = resolve(text)
            if "://" in text:
                text = resolved
        self.fs = fs
        self.path: Path | str = Path(text) if fs.local else text
        self.topic: str | None
        self.partition: int | None
        try:
            self.topic, self.partition = parse_partition_dir(text)
        except ValueError:
            self.topic, self.partition = None, None

    def __repr__(self) -> str:
        return f"Partition({str(self.path)!r})"

    @property
    def segments(self) -> list[Segment]:
        return list_segments(self.fs, self.path).segments

    @property
    def skipped(self) -> list[str]:
        """Names in the directory that look like segment files but are not
        Kafka's (``123.log``, 21 digits, non-ASCII digits): never read."""
        return list_segments(self.fs, self.path).skipped

    def position_for_offset(self, offset: int) -> tuple[Segment, int] | None:
        """Where a read for ``offset`` starts: the last segment whose base offset
        is <= offset (the first segment if none) and a byte position in it from
        its ``.index`` (0 when the index is missing or unusable). None when the
        partition has no segments."""
        segs = self.segments
        if not segs:
            return None
        k, pos = seek_offset(segs, offset)
        return segs[k], pos

    def position_for_timestamp(self, timestamp: int) -> tuple[Segment, int] | None:
        """Where a read for the first batch with max timestamp >= ``timestamp``
        starts (see :func:`seek_timestamp`). None when the partition has no segments."""
        segs = self.segments
        if not segs:
            return None
        k, pos = seek_timestamp(segs, timestamp)
        return segs[k], pos

    def next_offset(self) -> int:
        """The offset after the partition's last batch (0 when it has none or does not exist)."""
        try:
            return next_offset(self.segments)
        except (FileNotFoundError, NotADirectoryError):
            return 0

    def iter_batches(
        self,
        start_offset: int | None = None,
        end_offset: int | None = None,
        start_timestamp: int | None = None,
        verify_crc: bool = True,
        **options,
    ) -> Iterator[Batch]:
        """Batches in offset order across segments.

        * ``start_offset``: start with the batch holding it (last offset >= it);
        * ``end_offset`` (exclusive): stop before the first batch whose base
          offset is >= it;
        * ``start_timestamp``: start with the first batch whose max timestamp
          is >= it (then yield everything after it, as a fetch from the offset
          ListOffsets returns would).

        Both starts seek through the index files: bytes before the seek point
        (and earlier segments) are never read. ``options`` are
        :func:`~kcodec.records.reader.read_batches`' others (``max_decompressed_size``, ``decode`` ...)."""
        segs = self.segments
        if not segs:
            return
        k, pos = 0, 0
        if start_offset is not None:
            k, pos = seek_offset(segs, start_offset)
        if start_timestamp is not None:
            k, pos = max((k, pos), seek_timestamp(segs, start_timestamp))
        waiting_for_ts = start_timestamp is not None
        for i in range(k, len(segs)):
            for batch in segs[i].batches(start=pos if i == k else 0, verify_crc=verify_crc, **options):
                if end_offset is not None and batch.base_offset >= end_offset:
                    return
                if start_offset is not None and batch.last_offset < start_offset:
                    continue
                if waiting_for_ts and start_timestamp is not None:
                    if batch.max_timestamp < start_timestamp:
                        continue
                    waiting_for_ts = False
                yield batch

    def iter_records(
        self,
        start_offset: int | None = None,
        end_offset: int | None = None,
        start_timestamp: int | None = None,
        verify_crc: bool = True,
        isolation_level: str = "read_uncommitted",
    ) -> Iterator[PartitionRecord]:
        """Records in offset order, from the batches :meth:`iter_batches` yields (the same arguments);
        records of a batch before ``start_offset`` or from ``end_offset`` on are left out.

        ``isolation_level="read_committed"`` reads as a consumer with that isolation.level: no control
        records, and none of the aborted transactions, which the ``.txnindex`` files list (segments
        without index files are answered from their ABORT markers). A transaction whose marker is
        not written yet is returned as read_uncommitted returns it."""
        committed = check_isolation_level(isolation_level)
        batches = self.iter_batches(start_offset, end_offset, start_timestamp, verify_crc)
        if committed:
            segs = self.segments
            k = seek_offset(segs, start_offset)[0] if segs and start_offset is not None else 0
            records = committed_records(batches, aborted_transactions(segs, k) if segs else [])
        else:
            records = (r for b in batches for r in b.records)
        topic, partition = self.topic, self.partition
        for r in records:
            if (start_offset is None or r.offset >= start_offset) and (end_offset is None or r.offset < end_offset):
                yield PartitionRecord.of(r, topic, partition)

    def read_arrow(self, start_offset: int | None = None, end_offset: int | None = None, **options):
        """The records in [start_offset, end_offset) as one ``pyarrow.Table``, the columns of
        :func:`kcodec.read_arrow` (``batchPosition`` is the position in its segment), decoded straight into
        Arrow buffers where the compiled kernel is built; the seek is :meth:`iter_batches`'. ``options``:
        ``verify_crc``, ``max_decompressed_size``. Needs pyarrow."""
        import pyarrow as pa

        from kcodec.records.columnar import ColumnBatch, entry_to_arrow, offset_window, schema

        batches = self.iter_batches(start_offset, end_offset, decode=entry_to_arrow, **options)
        table = pa.Table.from_batches([cast(ColumnBatch, b).table for b in batches], schema=schema())
        return offset_window(table, start_offset, end_offset)


class PartitionRecord(Record):
    """A :class:`~kcodec.records.model.Record` read through a :class:`Partition`, which also knows where it
    was read: its ``topic`` and ``partition`` (None when the directory's name is not ``<topic>-<n>``), as a
    consumer's record does. It equals, and unpacks as, the same Record."""

    # no __slots__: topic and partition ride in the instance's dict, the tuple stays the Record's fields
    topic: str | None
    partition: int | None

    @classmethod
    def of(cls, record: Record, topic: str | None, partition: int | None) -> PartitionRecord:
        located = tuple.__new__(cls, record)
        located.topic, located.partition = topic, partition
        return located

    def replace(self, **changes) -> PartitionRecord:
        return PartitionRecord.of(super().replace(**changes), self.topic, self.partition)

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]}, topic={self.topic!r}, partition={self.partition!r})"


def list_partitions(log_dir: PathLike, fs: FileSystem | None = None) -> list[Partition]:
    """The partition directories of a broker log directory (``<topic>-<n>``),
    sorted by (topic, partition); directories being deleted are skipped, and
    while a commit is being published they are those of its new state."""
    text = os.fspath(log_dir)
    if fs is None:
        fs, resolved = resolve(text)
        if "://" in text:
            text = resolved
    names = [fs.name(e.path) for e in fs.list(text) if e.is_dir and is_partition_dir_name(fs.name(e.path))]
    out = [Partition(fs.join(text, name), fs) for name in visible_partition_names(fs, text, names)]
    return sorted(out, key=lambda p: (p.topic, p.partition))
