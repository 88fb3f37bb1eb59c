"""``kcodec dump`` of index files, as DumpLogSegments prints them (``DumpLogSegments``):
``.index`` → ``offset: O position: P``; ``.timeindex`` → ``timestamp: T offset: O``;
``.txnindex`` → ``version: 0 producerId: P firstOffset: F lastOffset: L lastStableOffset: S``.
Disagreements with the log are returned as IndexProblems: ``kcodec dump`` prints those Kafka reports in
Kafka's words after all files (tools.dump.DeferredErrors), the others (kcodec's own checks) at once.

kafka-dump-log's index options: ``--verify-index-only`` checks without printing the entries,
``--index-sanity-check`` runs only the checks a broker runs on start-up to decide whether to
rebuild an index, and ``--max-message-size`` bounds the batch read at each ``.index`` entry."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kcodec.errors import BadLengthError, CorruptError

if TYPE_CHECKING:  # kcodec.log.index loads when an index is read
    from kcodec.log.index import AbortedTxn, OffsetPosition, TimestampOffset

INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex")
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024  # kafka-dump-log's --max-message-size default


@dataclass
class IndexDump:
    """What dumping one index prints: ``lines`` on stdout, ``problems`` found against the log
    (``IndexProblem``), and ``refused``, the one-line reason the walk stopped early (a batch larger than
    --max-message-size), if it did."""

    lines: list[str]
    problems: list = field(default_factory=list)
    refused: str | None = None


def sanity_check_index(path: Path) -> str | None:
    """Kafka's start-up checks of a ``.index`` or ``.timeindex``, no more (OffsetIndex/TimeIndex.sanityCheck,
    what decides whether a broker rebuilds the index: a size that is a multiple of the entry size, a last
    offset not below the base offset, a last timestamp not below the first; entries out of order in
    between pass, as they do there): None when it passes, else what fails, in one line."""
    from kcodec.log.index import read_offset_index, read_time_index

    try:
        if path.suffix == ".index":
            read_offset_index(path, sanity_check=True)
        else:
            read_time_index(path, sanity_check=True)
    except (CorruptError, BadLengthError) as exc:
        return str(exc)
    return None


def _oversized_entry(log: Path, entries, max_message_size: int) -> tuple[int, str] | None:
    """As Kafka reads at most --max-message-size bytes at each index entry's position: the first entry
    whose batch is larger (Kafka's walk stops there), with what is wrong in one line."""
    from kcodec.records.framing import LOG_OVERHEAD, SIZE_OFFSET

    with open(log, "rb") as f:
        for i, e in enumerate(entries):
            f.seek(e.position)
            head = f.read(LOG_OVERHEAD)
            if len(head) < LOG_OVERHEAD:
                continue  # no batch there: check_indexes reports the bad position
            size = LOG_OVERHEAD + int.from_bytes(head[SIZE_OFFSET:LOG_OVERHEAD], "big", signed=True)
            if size > max_message_size:
                return i, (
                    f"the batch at position {e.position} (index entry for offset {e.offset}) is {size} bytes, "
                    f"larger than --max-message-size {max_message_size}"
                )
    return None


def dump_index_lines(
    path: Path, *, verify_only: bool = False, max_message_size: int | None = None, shown: object = None
) -> IndexDump:
    """One index file as DumpLogSegments prints it; ``max_message_size`` defaults to Kafka's 5 MiB; ``shown``
    is the name printed for ``path`` (default ``path``)."""
    from kcodec.log.index import read_offset_index, read_time_index, read_txn_index
    from kcodec.log.index_check import check_indexes

    name = path if shown is None else shown
    out = [f"Dumping {name}"]
    problems = []
    refused = None
    log = path.with_suffix(".log")
    entries: list[OffsetPosition] | list[TimestampOffset] | list[AbortedTxn]
    if path.suffix == ".index":
        entries = read_offset_index(path)
        limit = DEFAULT_MAX_MESSAGE_SIZE if max_message_size is None else max_message_size
        oversized = _oversized_entry(log, entries, limit) if log.is_file() else None
        shown = entries if oversized is None else entries[: oversized[0]]
        refused = None if oversized is None else oversized[1]
        if not verify_only:
            out += [f"offset: {e.offset} position: {e.position}" for e in shown]
    elif path.suffix == ".timeindex":
        entries = read_time_index(path)
        if not verify_only:
            out += [f"timestamp: {e.timestamp} offset: {e.offset}" for e in entries]
    else:
        entries = read_txn_index(path)
        out += [
            f"version: {e.version} producerId: {e.producer_id} firstOffset: {e.first_offset} "
            f"lastOffset: {e.last_offset} lastStableOffset: {e.last_stable_offset}"
            for e in entries
        ]
    if not entries:
        out.append(f"{name} is empty.")
    if log.exists() and entries:
        problems = [p for p in check_indexes(path) if Path(p.file) == path]
    return IndexDump(out, problems, refused)
