"""``kcodec index``: build or check a segment's index files."""

from __future__ import annotations

import argparse
from pathlib import Path

from kcodec.commands.common import EXIT_CHECK_FAILED, EXIT_OK, UsageError, existing_file, int32_size


def cmd_index(args: argparse.Namespace) -> int:
    from kcodec.generated.aborted_txn_entry import ABORTED_TXN_ENTRY_V0_SIZE
    from kcodec.generated.offset_index_entry import OFFSET_INDEX_ENTRY_V0_SIZE
    from kcodec.generated.time_index_entry import TIME_INDEX_ENTRY_V0_SIZE
    from kcodec.log.files import parse_segment_name, segment_name
    from kcodec.log.index import build_indexes, build_txn_index
    from kcodec.log.index_check import check_indexes
    from kcodec.log.writer import write_atomically

    status = EXIT_OK
    for name in args.segments:
        log = existing_file(Path(name))
        try:
            base = parse_segment_name(log).base_offset
        except ValueError:
            raise UsageError(f"{log.name} is not a segment name like {'0' * 20}.log") from None
        if args.check:
            problems = check_indexes(log)
            for p in problems:
                print(f"{p.file}: {p.kind}: {p.message}")
            print(f"{log}: {'index files agree with the log' if not problems else f'{len(problems)} problem(s)'}")
            if problems:
                status = EXIT_CHECK_FAILED
            continue
        index, timeindex = build_indexes(log, base, index_interval_bytes=args.interval)
        txn = build_txn_index(log, base)
        write_atomically(log.with_name(segment_name(base, ".index")), index)
        write_atomically(log.with_name(segment_name(base, ".timeindex")), timeindex)
        txn_path = log.with_name(segment_name(base, ".txnindex"))
        if txn:
            write_atomically(txn_path, txn)
        aborted = f", {len(txn) // ABORTED_TXN_ENTRY_V0_SIZE} aborted transaction" if txn else ""
        print(
            f"{log}: wrote {len(index) // OFFSET_INDEX_ENTRY_V0_SIZE} offset, "
            f"{len(timeindex) // TIME_INDEX_ENTRY_V0_SIZE} time{aborted} index entries"
        )
    return status


def add_parser(sub) -> None:
    p = sub.add_parser(
        "index",
        help="build or check a segment's .index / .timeindex / .txnindex",
        description="Rebuild the index files of each segment as Kafka's log recovery does, "
        "or with --check compare the existing ones against the log "
        "(exit 1 on any mismatch).",
    )
    p.add_argument("segments", nargs="+", metavar="SEGMENT.log")
    p.add_argument("--check", action="store_true", help="check instead of writing")
    p.add_argument(
        "--interval", type=int32_size, default=4096, metavar="BYTES", help="index.interval.bytes (default 4096)"
    )
    p.set_defaults(func=cmd_index)
