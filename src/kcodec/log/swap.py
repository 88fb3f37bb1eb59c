"""Segments replaced by cleaned ones in a partition directory, in Kafka's order (``LocalLog.replaceSegments``),
so that a crash at any step leaves a directory Kafka's log loading (and :func:`recover_swaps`) completes:

1. the new segment's files are written as ``<name>.cleaned`` (fsynced, the last source segment's mtime kept,
   which Kafka's legacy tombstone horizon reads);
2. renamed to ``<name>.swap``, index files first and the ``.log`` last: the ``.log.swap`` is the commit point
   of the replacement;
3. the old segments but the one of the same base offset are renamed to ``.deleted`` and removed;
4. the ``.swap`` files take their final names (the ``.log`` last), replacing the old segment of the same base
   offset in one rename each.

On recovery (Kafka's ``LogLoader``): ``.cleaned`` and ``.deleted`` files go; a ``.log.swap`` is completed
(the regular segments inside its offset range removed, its files renamed); ``.swap`` index files without
their ``.log.swap`` go. Readers listing the directory ignore ``.cleaned``, ``.swap`` and ``.deleted``
names, so between steps 3 and 4 they see the replaced offsets missing, never twice."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from kcodec.log.index import build_indexes, encode_txn_index
from kcodec.log.names import (
    DELETED_SUFFIX,
    INDEX_SUFFIX,
    LOG_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    parse_segment_name,
    segment_name,
)
from kcodec.log.writer import fsync_dir, remove_if_exists
from kcodec.records.framing import last_offset
from kcodec.records.reader import read_batches
from kcodec.records.transactions import AbortedTxn

__all__ = ["CLEANED_SUFFIX", "SWAP_SUFFIX", "write_cleaned", "replace_segments", "recover_swaps"]

CLEANED_SUFFIX = ".cleaned"  # LogFileUtils.CLEANED_FILE_SUFFIX
SWAP_SUFFIX = ".swap"  # LogFileUtils.SWAP_FILE_SUFFIX
_SEGMENT_FILES = (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, LOG_SUFFIX)  # the .log last


def _after_step(step: str) -> None:
    """Called after every change on disk (tests replace it to kill the replacement there)."""


def write_cleaned(
    directory: Path, base_offset: int, log_bytes: bytes, aborted: Iterable[AbortedTxn], mtime_ms: int | None
) -> None:
    """Step 1: ``<base>.log.cleaned`` with its offset and time index (built as Kafka's recovery builds
    them) and, when ``aborted`` lists any, its transaction index; every file gets ``mtime_ms``."""
    directory = Path(directory)
    index, time_index = build_indexes(log_bytes, base_offset)
    txns = list(aborted)
    files = {LOG_SUFFIX: log_bytes, INDEX_SUFFIX: index, TIME_INDEX_SUFFIX: time_index}
    if txns:
        files[TXN_INDEX_SUFFIX] = encode_txn_index(txns)
    for suffix, data in files.items():
        path = directory / (segment_name(base_offset, suffix) + CLEANED_SUFFIX)
        with open(path, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mtime_ms is not None:
            os.utime(path, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
    fsync_dir(directory)
    _after_step("cleaned written")


def _files_of(directory: Path, base_offset: int, suffix: str = "") -> list[Path]:
    return [p for s in _SEGMENT_FILES if (p := directory / (segment_name(base_offset, s) + suffix)).exists()]


def replace_segments(directory: Path, base_offset: int, old_bases: Iterable[int]) -> None:
    """Steps 2 to 4: the cleaned segment at ``base_offset`` (written by :func:`write_cleaned`) replaces the
    segments whose base offsets are ``old_bases``."""
    directory = Path(directory)
    for path in _files_of(directory, base_offset, CLEANED_SUFFIX):
        os.replace(path, path.with_name(path.name.removesuffix(CLEANED_SUFFIX) + SWAP_SUFFIX))
        _after_step(f"{path.name} to swap")
    fsync_dir(directory)
    for old in old_bases:
        if old != base_offset:
            _delete_segment(directory, old)
    _finish_swap(directory, base_offset)


def _delete_segment(directory: Path, base_offset: int) -> None:
    for path in _files_of(directory, base_offset):
        deleted = path.with_name(path.name + DELETED_SUFFIX)
        os.replace(path, deleted)  # Kafka's asyncDeleteSegment: renamed first, removed later
        _after_step(f"{path.name} deleted")
        remove_if_exists(deleted)


def _finish_swap(directory: Path, base_offset: int) -> None:
    """Step 4: the ``.swap`` files to their final names; an old index file the new segment has none of goes."""
    swapped = {p.name.removesuffix(SWAP_SUFFIX) for p in _files_of(directory, base_offset, SWAP_SUFFIX)}
    for suffix in _SEGMENT_FILES:
        name = segment_name(base_offset, suffix)
        if name in swapped:
            os.replace(directory / (name + SWAP_SUFFIX), directory / name)
            _after_step(f"{name} swapped in")
        elif suffix != LOG_SUFFIX and (directory / (segment_name(base_offset, LOG_SUFFIX) + SWAP_SUFFIX)).exists():
            remove_if_exists(directory / name)  # the old segment's, not the new one's
    fsync_dir(directory)


def _next_offset(log: Path, base_offset: int) -> int:
    last = None
    for _, raw in read_batches(log, verify_crc=False).entries():
        last = last_offset(raw)
    return base_offset if last is None else last + 1


def recover_swaps(directory: Path) -> list[str]:
    """Finish or undo what an interrupted replacement left in ``directory`` (see the module doc); the names
    of the files it removed or renamed."""
    directory = Path(directory)
    done: list[str] = []
    names = sorted(p.name for p in directory.iterdir())
    for name in names:
        if name.endswith(CLEANED_SUFFIX) or name.endswith(DELETED_SUFFIX):
            remove_if_exists(directory / name)
            done.append(name)
    for name in names:
        if not name.endswith(LOG_SUFFIX + SWAP_SUFFIX):
            continue
        try:
            base = parse_segment_name(name).base_offset
        except ValueError:
            continue
        end = _next_offset(directory / name, base)
        for other in sorted(directory.iterdir()):
            try:
                parsed = parse_segment_name(other.name)
            except ValueError:
                continue
            if parsed.kind == LOG_SUFFIX[1:] and base < parsed.base_offset < end:
                _delete_segment(directory, parsed.base_offset)
        _finish_swap(directory, base)
        done.append(name)
    for p in sorted(directory.iterdir()):
        if p.name.endswith(SWAP_SUFFIX):  # an index whose .log never reached .swap: the old segment stays
            remove_if_exists(p)
            done.append(p.name)
    return done
