"""``kcodec verify``: check every CRC and structural rule of each file (:mod:`kcodec.tools.verify`).

Exit status: 0 all valid; 1 a problem was found; 2 bad usage; 3 no damage, but a batch was refused
by ``--max-decompressed-size`` (a batch kcodec's own cap refuses is never taken for damage: verify
reports it and goes on at its end, ``--recover`` keeps it).
"""

from __future__ import annotations

import argparse
from contextlib import ExitStack

from kcodec.commands.common import (
    EXIT_CHECK_FAILED,
    EXIT_ERROR,
    EXIT_OK,
    UsageError,
    add_json,
    add_max_decompressed_size,
    print_json,
    refuse_overlap,
)
from kcodec.commands.object_store import RemoteObject, add_storage_option, display, expand, file_size_of, storage_of


def cmd_verify(args: argparse.Namespace) -> int:
    from kcodec.commands.progress import Progress  # not at start-up: --help stays as light
    from kcodec.tools.verify import recover, verify_source

    # a prefix stands for its segments' logs, each the newest copy of its base offset
    items = [item for name in args.files for item in expand(name, storage_of(args), logs_only=True)]
    if args.recover and len(items) != 1:
        raise UsageError("--recover takes one input file")
    if args.recover and isinstance(items[0], RemoteObject):
        raise UsageError("--recover truncates a local copy of a local file: copy the object down first")
    damaged = refused = False
    for item in items:
        path = display(item)
        if args.recover:
            refuse_overlap([path], [args.recover])
        with ExitStack() as opened, Progress(file_size_of(item), desc=path.name) as progress:
            source = opened.enter_context(item.open()) if isinstance(item, RemoteObject) else path
            report = verify_source(
                source,
                str(path),
                strict=not args.lenient,
                max_decompressed_size=args.max_decompressed_size,
                progress=progress.to,
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
            recover(path, args.recover, max_decompressed_size=args.max_decompressed_size) if args.recover else None
        )
        if args.json:
            print_json(report.as_dict() | ({"recovered": recovered.as_dict()} if recovered else {}))
        elif recovered:
            print(recovered)
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
        help="log files; an s3://, gs://, abfss://, hdfs:// or file:// URI names an object, or a partition prefix "
        "whose segments (the newest copy per base offset) are checked in order",
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
