"""``kcodec dump`` of index files, as DumpLogSegments prints them (``DumpLogSegments``):
``.index`` → ``offset: O position: P``; ``.timeindex`` → ``timestamp: T offset: O``;
``.txnindex`` → ``version: 0 producerId: P firstOffset: F lastOffset: L lastStableOffset: S``.
Mismatches against the log go to the second list (stderr), in Kafka's words."""

from __future__ import annotations

from pathlib import Path

INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex")


def dump_index_lines(path: Path) -> tuple[list[str], list[str]]:
    from kcodec.log.index import read_offset_index, read_time_index, read_txn_index
    from kcodec.log.index_check import check_indexes

    out = [f"Dumping {path}"]
    err: list[str] = []
    if path.suffix == ".index":
        entries = read_offset_index(path)
        out += [f"offset: {e.offset} position: {e.position}" for e in entries]
    elif path.suffix == ".timeindex":
        entries = read_time_index(path)
        out += [f"timestamp: {e.timestamp} offset: {e.offset}" for e in entries]
    else:
        entries = read_txn_index(path)
        out += [
            f"version: {e.version} producerId: {e.producer_id} firstOffset: {e.first_offset} "
            f"lastOffset: {e.last_offset} lastStableOffset: {e.last_stable_offset}"
            for e in entries
        ]
    if not entries:
        out.append(f"{path} is empty.")
    log = path.with_suffix(".log")
    if log.exists() and entries:
        problems = [p for p in check_indexes(path) if Path(p.file) == path]
        mismatches = [p for p in problems if p.kind == "offset_mismatch"]
        if mismatches:
            err.append(f"Mismatches in :{path}")
            err += [f"  Index offset: {p.index_value}, log offset: {p.log_value}" for p in mismatches]
        err += [f"{p.kind}: {p.message}" for p in problems if p.kind != "offset_mismatch"]
    return out, err
