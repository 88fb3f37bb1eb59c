"""``kcodec verify``: check every CRC and structural rule of each file (:mod:`kcodec.tools.verify`).

Exit status: 0 all valid; 1 a problem was found; 2 bad usage; 3 no damage, but a batch was refused
by ``--max-decompressed-size`` (a batch kcodec's own cap refuses is never taken for damage: verify
reports it and goes on at its end, ``--recover`` keeps it).
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack

from kcodec.commands.common import (
    EXIT_CHECK_FAILED,
    EXIT_ERROR,
    EXIT_OK,
    STDIN,
    STDIN_NAME,
    UsageError,
    add_json,
    add_max_decompressed_size,
    print_json,
    refuse_overlap,
)
from kcodec.commands.object_store import RemoteObject, add_storage_option, display, expand, file_size_of, storage_of


def cmd_verify(args: argparse.Namespace) -> int:
    from kcodec.commands.progress import Progress  # not at start-up: --help stays as light
    from kcodec.log.kafka07 import is_kafka07_partition_dir, is_kafka07_segment, kafka07_segments, segment_gaps
    from kcodec.log.names import parse_segment_name
    from kcodec.tools.verify import recover, recover_kafka07, verify_kafka07, verify_source

    if args.files.count(STDIN) > 1:
        raise UsageError("standard input (-) can be read only once")
    # a prefix or directory stands for its segments' logs, each the newest copy of its base offset
    items = [
        item
        for name in args.files
        for item in ([STDIN] if name == STDIN else expand(name, storage_of(args), logs_only=True))
    ]
    gaps = [
        (name, gap)
        for name in args.files
        if name != STDIN and is_kafka07_partition_dir(name)
        for gap in segment_gaps(kafka07_segments(name))
    ]
    if args.recover and len(items) != 1:
        raise UsageError("--recover takes one input file")
    if args.recover and isinstance(items[0], RemoteObject):
        raise UsageError("--recover truncates a local copy of a local file: copy the object down first")
    if args.recover and items[0] == STDIN:
        raise UsageError("--recover reads its input twice: standard input cannot be; write it to a file first")
    damaged = refused = False
    for item in items:
        path = STDIN_NAME if isinstance(item, str) else display(item)
        if args.recover:
            refuse_overlap([path], [args.recover])
        size = None if isinstance(item, str) else file_size_of(item)
        with ExitStack() as opened, Progress(size, desc=path.name) as progress:
            if isinstance(item, str):  # standard input
                source = sys.stdin.buffer
            else:
                source = opened.enter_context(item.open()) if isinstance(item, RemoteObject) else path
            kafka07 = not isinstance(item, str) and is_kafka07_segment(path)  # a Kafka 0.7 segment, by its name
            report = (verify_kafka07 if kafka07 else verify_source)(
                source,
                str(path),
                strict=not args.lenient,
                max_decompressed_size=args.max_decompressed_size,
                progress=progress.to,
                **({"base_offset": parse_segment_name(path).base_offset} if kafka07 else {}),
            )
        damaged = damaged or report.damaged
        refused = refused or not report.ok  # a problem that is no damage: a batch the decompression limit refused
        if not args.json:
            for problem in report.problems:
                print(f"{path}: {problem}")
            if report.more_problems:
                print(f"{path}: and {report.more_problems} more problem(s), not listed")
            verdict = "valid" if report.ok else f"{report.problem_count} problem(s)"
            print(f"{path}: {report.batches} batches, {report.records} records, {report.bytes} bytes: {verdict}")
        recovered = (
            None
            if not args.recover
            else recover_kafka07(path, args.recover)
            if kafka07
            else recover(path, args.recover, max_decompressed_size=args.max_decompressed_size)
        )
        if args.json:
            print_json(report.as_dict() | ({"recovered": recovered.as_dict()} if recovered else {}))
        elif recovered:
            print(recovered)
    for name, gap in gaps:  # a Kafka 0.7 partition whose segments do not follow each other
        damaged = True
        if args.json:
            print_json({"file": name, "valid": False, "problems": [{"position": None, "offset": None, "rule": gap}]})
        else:
            print(f"{name}: {gap}")
    return EXIT_CHECK_FAILED if damaged else EXIT_ERROR if refused else EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser(
        "verify",
        help="check every CRC and structural rule; exit 0 only when all is valid",
        description="Check each file: CRCs (v2 batches and every v0/v1 message, inner ones "
        "too), lengths, counts, offsets, codecs. Prints each bad batch with its byte "
        "position, offset and the rule broken; exit 1 if any.",
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="log files; - reads log entries from standard input; a partition directory, or an s3://, gs://, "
        "abfss://, hdfs:// or file:// URI naming an object or a partition prefix: its segments (the newest "
        "copy per base offset) are checked in order",
    )
    add_storage_option(p)
    p.add_argument(
        "--lenient", action="store_true", help="accept a partial batch at the end of a file, as Kafka's readers do"
    )
    p.add_argument(
        "--recover",
        metavar="OUT",
        help="write the longest valid prefix of the file to OUT (atomically; OUT may not be the file itself: "
        "the dropped bytes would be gone), "
        "as Kafka's log recovery truncates a segment, and say how many batches and bytes were dropped",
    )
    add_max_decompressed_size(p, default=None)
    add_json(p, "one line per FILE with its counts and problems (NDJSON)")
    p.epilog = (
        "exit status: 0 valid; 1 a problem was found (the recovered copy is written all the same); 2 bad usage; "
        "3 no damage, but a batch was refused by --max-decompressed-size (reported as 'refused by the "
        "decompression limit', kept by --recover)"
    )
    p.set_defaults(func=cmd_verify)
