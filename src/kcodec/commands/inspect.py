"""``kcodec inspect``: an annotated hex view of real bytes, field by field."""

from __future__ import annotations

import argparse
import mmap
import os
import sys

from kcodec.commands.common import (
    EXIT_CHECK_FAILED,
    EXIT_OK,
    TOPIC_DECODER_OPTIONS,
    UsageError,
    add_json,
    add_max_decompressed_size,
    existing_file,
    non_negative_int,
    offset_int,
    positive_int,
    print_json,
)


def _colour(choice: str) -> bool:
    if choice == "always":
        return True
    if choice == "never":
        return False
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def find_offset(inspector, buf, target: int) -> int:
    """Byte position of the entry holding offset ``target``; a usage error when none does."""
    pos, last_seen = inspector.position_of_offset(buf, target)
    if pos is not None:
        return pos
    where = f"; the last entry read ends at offset {last_seen}" if last_seen is not None else ""
    raise UsageError(f"no entry holds offset {target}{where}")


def _registry(args: argparse.Namespace, path) -> str | None:
    """The internal topic whose records' keys and values are read: the one a kafka-dump-log decoder option
    names, else the one the file's partition directory is named after."""
    from kcodec.tools.dump_internal import DECODER_OPTIONS, registry_for_path

    chosen = [registry for option, registry in DECODER_OPTIONS.items() if getattr(args, option, False)]
    return chosen[0] if chosen else registry_for_path(path)


def cmd_inspect(args: argparse.Namespace) -> int:
    from kcodec.tools.inspect import BAD, Inspector, render_text

    path = existing_file(args.file)
    inspector = Inspector(
        expand=args.records, max_decompressed_size=args.max_decompressed_size, registry=_registry(args, path)
    )
    colour = _colour(args.color)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        buf = memoryview(mm) if mm is not None else memoryview(b"")
        try:
            start = 0
            if args.at is not None:
                if not 0 <= args.at < max(size, 1) or size == 0:
                    raise UsageError(f"--at {args.at} is outside the file ({size} bytes)")
                start = args.at
            elif args.offset is not None:
                start = find_offset(inspector, buf, args.offset)
            count = (
                args.batches
                if args.batches is not None
                else (1 if args.at is not None or args.offset is not None else None)
            )
            entries = damaged = 0
            end = start
            for span in inspector.entries(buf, start, count):
                entries += 1
                damaged += span.status == BAD
                end = span.end
                if args.json:
                    d = span.as_dict(full=args.records)
                    d["file"] = str(path)
                    print_json(d)
                else:
                    if entries > 1:
                        print()
                    print(render_text(span, colour=colour, max_bytes=args.max_bytes))
            if not args.json:
                summary = (
                    f"{entries} entr{'y' if entries == 1 else 'ies'}, bytes {start}..{end - 1} of "
                    f"{size}: {damaged} damaged"
                    if entries
                    else f"no entries ({size} bytes)"
                )
                print(("\n" if entries else "") + f"-- {path}: {summary}")
        finally:
            buf.release()
            if mm is not None:
                try:
                    mm.close()
                except BufferError:  # a span still points into the map; the GC closes it
                    pass
    return EXIT_CHECK_FAILED if damaged else EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser(
        "inspect",
        help="annotated hex view of log entries: every field's bytes, name and value",
        description="Walk the schemas over real bytes: each field's byte range, raw bytes, schema path and "
        "decoded value, down into every varint of every record and inside compressed streams "
        "(positions there count from the start of the decompressed bytes, marked +). CRCs show "
        "stored and computed values; damaged fields are marked (!) where they are and inspection "
        "goes on as far as the bytes allow. Exit 1 if any entry is damaged.",
    )
    p.add_argument("file", metavar="FILE", help="a segment .log file or any records blob")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--at", type=non_negative_int, metavar="POSITION", help="start at the entry at this byte position"
    )
    where.add_argument(
        "--offset",
        type=offset_int,
        metavar="OFFSET",
        help="start at the entry holding this offset (found by scanning entry headers)",
    )
    p.add_argument(
        "--batches",
        type=positive_int,
        metavar="N",
        help="show at most N entries (default: 1 with --at/--offset, else all)",
    )
    p.add_argument(
        "--records",
        action="store_true",
        help="expand every record into its fields (default: one summary line per record)",
    )
    _add_topic_options(p)
    add_json(p, "one span tree per entry: start/end/path/hex/value/notes/status/children (NDJSON)")
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="ANSI colour (auto: only on a terminal and when NO_COLOR is unset)",
    )
    p.add_argument(
        "--max-bytes",
        type=non_negative_int,
        default=32,
        metavar="N",
        help="raw bytes shown per field before eliding (default 32; 0 shows all)",
    )
    add_max_decompressed_size(p, "streams")
    p.set_defaults(func=cmd_inspect)


def _add_topic_options(p) -> None:
    """kafka-dump-log's decoder options, as dump has them: records' keys and values read as that internal
    topic's."""
    topics = p.add_mutually_exclusive_group()
    for option, topic in TOPIC_DECODER_OPTIONS:
        topics.add_argument(
            f"--{option}-decoder",
            action="store_true",
            help=f"read records' keys and values as {topic}'s (files under a {topic}-N directory are read so "
            "without it)",
        )
