"""``kcodec index``: build or check a segment's index files."""

from __future__ import annotations

import argparse
from pathlib import Path

from kcodec.commands.common import (
    EXIT_CHECK_FAILED,
    EXIT_OK,
    UsageError,
    add_json,
    existing_file,
    int32_size,
    json_line,
    refuse_overlap,
)


def _index_suffixes() -> tuple[str, ...]:
    from kcodec.log.names import INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX

    return INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX


def _segment_log(name: str) -> tuple[Path, int]:
    """The ``.log`` a command line names, and its base offset: an index file
    (``…0.timeindex``) stands for its segment's log, which must exist."""
    from kcodec.log.names import LOG_SUFFIX, parse_segment_name, segment_name

    path = Path(name)
    if path.exists():
        existing_file(path)  # a directory, a FIFO or a device is refused before its name is looked at
    try:
        base, kind = parse_segment_name(path)
    except ValueError:
        raise UsageError(f"{path.name} is not a segment name like {'0' * 20}.log") from None
    if f".{kind}" in _index_suffixes():
        log = path.with_name(segment_name(base, LOG_SUFFIX))
        if not log.is_file():
            raise UsageError(f"{name} is an index file and its segment {log} does not exist")
        return log, base
    if f".{kind}" != LOG_SUFFIX:
        raise UsageError(f"{path.name} is not a segment name like {'0' * 20}.log")
    return existing_file(path), base


def cmd_index(args: argparse.Namespace) -> int:
    from kcodec.commands.progress import Progress, file_size  # not at start-up: --help stays as light

    logs = [_segment_log(name) for name in args.segments]  # every name checked before any is written
    status = EXIT_OK
    # one step per segment: the index builder and checker read a whole segment in one call
    with Progress(sum(file_size(log) or 0 for log, _ in logs), desc="index") as progress:
        for log, base in logs:
            status = max(status, _index_one(log, base, args, progress.echo))
            progress.add(file_size(log) or 0)
    return status


def _index_one(log: Path, base: int, args: argparse.Namespace, echo) -> int:
    from kcodec.generated.aborted_txn_entry import ABORTED_TXN_ENTRY_V0_SIZE
    from kcodec.generated.offset_index_entry import OFFSET_INDEX_ENTRY_V0_SIZE
    from kcodec.generated.time_index_entry import TIME_INDEX_ENTRY_V0_SIZE
    from kcodec.log.index import build_indexes, build_txn_index
    from kcodec.log.index_check import check_indexes
    from kcodec.log.names import INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, segment_name
    from kcodec.log.writer import write_atomically

    outputs = {s: log.with_name(segment_name(base, s)) for s in _index_suffixes()}
    refuse_overlap([log], outputs.values())
    if args.check:
        problems = check_indexes(log)
        if args.json:
            found = [
                {
                    "file": str(p.file),
                    "kind": p.kind,
                    "message": p.message,
                    "indexValue": p.index_value,
                    "logValue": p.log_value,
                }
                for p in problems
            ]
            echo(json_line({"log": str(log), "ok": not problems, "problems": found}))
        else:
            for p in problems:
                echo(f"{p.file}: {p.kind}: {p.message}")
            echo(f"{log}: {'index files agree with the log' if not problems else f'{len(problems)} problem(s)'}")
        return EXIT_CHECK_FAILED if problems else EXIT_OK
    index, timeindex = build_indexes(log, base, index_interval_bytes=args.interval)
    txn = build_txn_index(log, base)
    write_atomically(outputs[INDEX_SUFFIX], index)
    write_atomically(outputs[TIME_INDEX_SUFFIX], timeindex)
    if txn:
        write_atomically(outputs[TXN_INDEX_SUFFIX], txn)
    else:  # Kafka has no .txnindex without an aborted transaction: an old one is stale
        outputs[TXN_INDEX_SUFFIX].unlink(missing_ok=True)
    counts = {
        "offsetEntries": len(index) // OFFSET_INDEX_ENTRY_V0_SIZE,
        "timeEntries": len(timeindex) // TIME_INDEX_ENTRY_V0_SIZE,
        "abortedTransactions": len(txn) // ABORTED_TXN_ENTRY_V0_SIZE,
    }
    if args.json:
        written = [
            str(outputs[s]) for s in (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX) if s != TXN_INDEX_SUFFIX or txn
        ]
        echo(json_line({"log": str(log), **counts, "written": written}))
        return EXIT_OK
    aborted = f", {counts['abortedTransactions']} aborted transaction" if txn else ""
    echo(f"{log}: wrote {counts['offsetEntries']} offset, {counts['timeEntries']} time{aborted} index entries")
    return EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser(
        "index",
        help="build or check a segment's .index / .timeindex / .txnindex",
        description="Rebuild the index files of each segment as Kafka's log recovery does, "
        "or with --check compare the existing ones against the log "
        "(exit 1 on any mismatch).",
    )
    p.add_argument(
        "segments", nargs="+", metavar="SEGMENT.log", help="a segment's .log (an index file names its segment)"
    )
    p.add_argument("--check", action="store_true", help="check instead of writing")
    add_json(p, "one line per segment: the entries written, or with --check the problems found (NDJSON)")
    p.add_argument(
        "--interval", type=int32_size, default=4096, metavar="BYTES", help="index.interval.bytes (default 4096)"
    )
    p.set_defaults(func=cmd_index)
