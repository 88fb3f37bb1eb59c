"""Following a live partition directory as a broker appends to it: where
its readable log ends now.

A broker appends batches to the active segment in place, preallocates that
segment's index files with zero entries, rolls to a new segment, and renames
segments it deletes or compacts (``.deleted``, ``.cleaned``, ``.swap``). A
:class:`PartitionTail` walks only the entries it has not seen yet, from
where the previous call stopped, and says:

* :attr:`~PartitionTail.end`: the offset after the last whole entry (a batch
  still being written at the tail is not one; the next call finds it once
  complete);
* :attr:`~PartitionTail.stable`: under read_committed, Kafka's last stable
  offset: the first offset of the earliest transaction whose marker is not
  written yet, else :attr:`~PartitionTail.end`;
* :attr:`~PartitionTail.aborted`: the aborted transactions it walked past
  (read_committed), as the ``.txnindex`` files would list them;
* :attr:`~PartitionTail.base` / :attr:`~PartitionTail.position`: the segment
  walked last and how many of its bytes hold whole entries.

Only entry headers are read, and the control batches decoded (for their
markers), in bounded windows (a remote segment with ranged reads, never
whole). The walk starts at the tail (the last segment's last confirmed
index entry: zero entries past the last real one are not used), or under
read_committed at the start of the log, as the open transactions at the tail
depend on history.

A live directory changes between two calls. Before going on from where it
stopped, the walk checks that the entry it read last is still there with
the offset it had (a follower truncating its log and growing it again, or a
damaged size field, moves entries); if not, it seeks again by offset through
the index (or a scan). Damage goes by the rule of
:func:`~kcodec.records.reader.read_batches`: bytes at the end of a segment
that do not hold a whole entry are a batch still being written (the next call
reads it once whole); damage with a readable entry after it is walked past,
so the tail never stalls at it: the reader of those bytes meets the damage
and applies its ``onCorrupt`` (fail with one line, or skip and report).
"""

from __future__ import annotations

from typing import NamedTuple, cast

from kcodec.log.files import Segment
from kcodec.log.partition import seek_offset
from kcodec.records.framing import last_offset
from kcodec.records.transactions import TxnTracker

__all__ = ["PartitionTail"]

_INT64_MAX = (1 << 63) - 1


class _Walked(NamedTuple):
    """An entry as the damage walk yields it: undecoded (the walk reads headers only)."""

    position: int
    raw: bytes
    crc_valid: bool = True  # not checked here: the batch reader checks CRCs when it reads the entry
    computed_crc: None = None


def _undecoded(entry: bytes, position: int, **_options) -> _Walked:
    return _Walked(position, entry)


class PartitionTail:
    """The readable end of one partition, advanced by :meth:`advance` with the current segment listing."""

    def __init__(self, committed: bool):
        self.committed = committed
        self.base: int | None = None  # base offset of the segment walked last
        self.position = 0  # bytes of that segment that hold whole entries
        self.last_at: int | None = None  # where the last entry walked in that segment starts
        self.last_seen: int | None = None  # and the last offset it holds
        self.end: int | None = None  # offset after the last whole entry (None: none seen)
        # from the start of the log: history is known, so an ABORT with no open transaction indexes nothing
        self.tracker = TxnTracker({}, 0) if committed else None
        self.aborted: list[tuple[int, int, int]] = []  # (producer id, first offset, last offset)

    @property
    def stable(self) -> int | None:
        """What a read may reach: :attr:`end`, held back at the first open transaction under read_committed."""
        if self.end is None or self.tracker is None or not self.tracker.ongoing:
            return self.end
        return min(self.end, min(self.tracker.ongoing.values()))

    def _resume(self, segs: list[Segment]) -> tuple[int, int]:
        """(segment index, byte position) where the walk goes on."""
        if self.base is not None:
            for i, seg in enumerate(segs):
                if seg.base_offset == self.base and seg.size >= self.position and self._still_there(seg):
                    return i, self.position
        if self.committed and self.base is None:
            return 0, 0
        # first call, or the segment walked last is gone (retention) or replaced (compaction)
        return seek_offset(segs, _INT64_MAX if self.end is None else self.end)

    def _still_there(self, seg: Segment) -> bool:
        """Whether the entry walked last still starts where it did, ending at the offset it did."""
        if self.last_at is None:
            return True
        raw = seg.entry_at(self.last_at)
        return raw is not None and last_offset(raw) == self.last_seen

    def advance(self, segs: list[Segment]) -> None:
        """Walk the entries appended since the last call (``segs``: the directory's segments now)."""
        if not segs:
            return
        k, pos = self._resume(segs)
        for i in range(k, len(segs)):
            seg = segs[i]
            start = pos if i == k else 0
            if seg.base_offset is not None and (self.end is None or self.end < seg.base_offset):
                self.end = seg.base_offset  # a segment's name is its first offset: nothing before it is to come
            position, last_at, last_seen = start, None, None
            if i == k and start == self.position and seg.base_offset == self.base:
                last_at, last_seen = self.last_at, self.last_seen  # nothing new: the entry walked last stays
            # damage is walked past (resynchronised), a partial entry at the end (one being written) ends it
            with seg.windowed(start, skip_corrupt=True, verify_crc=False, decode=_undecoded) as walk:
                for entry in walk:
                    at, raw = cast(_Walked, entry)[:2]  # what _undecoded made of it
                    last = last_offset(raw)
                    position, last_at, last_seen = at + len(raw), at, last
                    if last is None or (self.end is not None and last < self.end):
                        continue  # seen before (a walk that went back to an index entry)
                    if self.tracker is not None:
                        txn = self.tracker.observe_entry(raw, verify_crc=False)
                        if txn is not None:
                            self.aborted.append((txn.producer_id, txn.first_offset, txn.last_offset))
                    self.end = last + 1
                position = max(position, walk.bytes_read)  # past damage skipped at the end of the walk
            self.base, self.position = seg.base_offset, position
            self.last_at, self.last_seen = last_at, last_seen
