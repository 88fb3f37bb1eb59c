"""Checking a segment's index files against its log, as Kafka's
``DumpLogSegments --verify-index-only`` does, plus the sanity checks and the
transaction index."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path

from kcodec.errors import KcodecError
from kcodec.generated.enums import CONTROL_RECORD_TYPE
from kcodec.log.files import Segment, list_segments
from kcodec.log.fs import LocalFS
from kcodec.log.index import (
    AbortedTxn,
    OffsetPosition,
    confirmed_last_offset,
    read_offset_index,
    read_time_index,
    read_txn_index,
)
from kcodec.log.names import LOG_SUFFIX, PathLike, parse_segment_name, segment_name
from kcodec.records.model import Batch
from kcodec.records.reader import read_batches

__all__ = ["IndexProblem", "check_indexes"]

_NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP
_ABORT = CONTROL_RECORD_TYPE["abort"]


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


def _local(path: Path | str) -> Path:
    """A segment file's path: the index check reads local segments only, whose paths are Paths."""
    return path if isinstance(path, Path) else Path(path)


def _record_max_timestamp(batch: Batch) -> int:
    return max([_NO_TIMESTAMP, *(r.timestamp for r in batch.records)])


def _check_offset_index(seg: Segment, problems: list[IndexProblem]) -> list[OffsetPosition]:
    path = _local(seg.index)
    try:
        read_offset_index(path, seg.base_offset, sanity_check=True)
    except KcodecError as exc:
        problems.append(IndexProblem(path, "sanity", str(exc)))
    entries = read_offset_index(path, seg.base_offset)
    prev: OffsetPosition | None = None
    for entry in entries:
        if prev is not None and (entry.offset <= prev.offset or entry.position <= prev.position):
            problems.append(
                IndexProblem(
                    path,
                    "offset_order",
                    f"entry (offset: {entry.offset} position: {entry.position}) does not "
                    f"follow (offset: {prev.offset} position: {prev.position})",
                    entry.offset,
                    prev.offset,
                )
            )
        prev = entry
        last = confirmed_last_offset(seg, entry.position)
        if last is None:
            problems.append(
                IndexProblem(
                    path,
                    "bad_position",
                    f"no whole batch at position {entry.position} for index offset {entry.offset}",
                    entry.offset,
                    None,
                )
            )
        elif last != entry.offset:
            problems.append(
                IndexProblem(
                    path, "offset_mismatch", f"Index offset: {entry.offset}, log offset: {last}", entry.offset, last
                )
            )
    return entries


def _check_time_index(seg: Segment, offsets: list[OffsetPosition], problems: list[IndexProblem]) -> None:
    path = _local(seg.time_index)
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
            problems.append(
                IndexProblem(path, "log", f"reading {_local(seg.log).name} from {start}: {exc}", entry.offset, None)
            )
            prev_ts = entry.timestamp
            continue
        if found is None or found.last_offset != entry.offset:
            log_value = None if found is None else found.last_offset
            problems.append(
                IndexProblem(
                    path,
                    "offset_not_found",
                    f"Indexed offset: {entry.offset}, found log offset: {-1 if log_value is None else log_value}",
                    entry.offset,
                    log_value,
                )
            )
        else:
            max_ts = _record_max_timestamp(found)
            if max_ts != entry.timestamp:
                problems.append(
                    IndexProblem(
                        path,
                        "timestamp_mismatch",
                        f"Index timestamp: {entry.timestamp}, log timestamp: {max_ts}",
                        entry.timestamp,
                        max_ts,
                    )
                )
            if prev_ts >= entry.timestamp:  # as DumpLogSegments: checked only where the entry's batch is found
                problems.append(
                    IndexProblem(
                        path,
                        "timestamp_order",
                        f"Index timestamp: {entry.timestamp}, Previously indexed timestamp: {prev_ts}",
                        entry.timestamp,
                        prev_ts,
                    )
                )
        prev_ts = entry.timestamp


def _check_txn_index(seg: Segment, problems: list[IndexProblem]) -> None:
    path = _local(seg.txn_index)
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
            if (
                batch.is_control
                and batch.records
                and batch.records[0].control is not None
                and batch.records[0].control.type == _ABORT
            ):
                aborts.add((batch.producer_id, batch.base_offset))
    except KcodecError as exc:
        problems.append(IndexProblem(path, "log", f"reading {_local(seg.log).name}: {exc}"))
        return
    prev: AbortedTxn | None = None
    for txn in entries:
        if prev is not None and txn.last_offset <= prev.last_offset:
            problems.append(
                IndexProblem(
                    path,
                    "txn_order",
                    f"aborted transaction ending at {txn.last_offset} follows one ending at {prev.last_offset}",
                    txn.last_offset,
                    prev.last_offset,
                )
            )
        if (txn.producer_id, txn.last_offset) not in aborts:
            problems.append(
                IndexProblem(
                    path,
                    "txn_marker_missing",
                    f"no ABORT marker of producer {txn.producer_id} at offset {txn.last_offset}",
                    txn.last_offset,
                    None,
                )
            )
        prev = txn


def _segment_of(path: PathLike) -> Segment:
    p = Path(path)
    base, _ = parse_segment_name(p)
    return Segment(base, p.with_name(segment_name(base, LOG_SUFFIX)))


def check_indexes(target: PathLike) -> list[IndexProblem]:
    """Check the index files of a partition directory, or of the one segment a
    ``.log``/``.index``/``.timeindex``/``.txnindex`` path names, against the log,
    as DumpLogSegments ``--verify-index-only`` does (plus sanity checks and the
    transaction index). Missing index files are not problems (Kafka rebuilds
    them). Returns the problems found, empty when all is well."""
    target = Path(target)
    segs = list_segments(LocalFS(), target).segments if target.is_dir() else [_segment_of(target)]
    problems: list[IndexProblem] = []
    for seg in segs:
        if not _local(seg.log).exists():
            raise FileNotFoundError(f"{seg.log} does not exist")
        offsets: list[OffsetPosition] = []
        if _local(seg.index).exists():
            offsets = _check_offset_index(seg, problems)
        if _local(seg.time_index).exists():
            _check_time_index(seg, offsets, problems)
        if _local(seg.txn_index).exists():
            _check_txn_index(seg, problems)
    return problems
