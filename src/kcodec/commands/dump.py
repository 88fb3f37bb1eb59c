"""``kcodec dump`` and ``kcodec verify``: print a log as kafka-dump-log does; check every rule.

Exit status: 0 all read (dump) / all valid (verify); 1 verify found a problem,
or ``dump --skip-corrupt`` skipped damaged bytes; 2 bad usage; 3 dump stopped
at bytes it could not decode (the one-line error on stderr says where and why).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kcodec.commands.common import (
    EXIT_CHECK_FAILED,
    EXIT_ERROR,
    EXIT_OK,
    UsageError,
    add_max_decompressed_size,
    existing_file,
)
from kcodec.errors import KcodecError


class _Progress:
    """A percentage on stderr, only for big inputs on a terminal."""

    THRESHOLD = 64 * 1024 * 1024

    def __init__(self, path: Path):
        try:
            self.total = path.stat().st_size
        except OSError:
            self.total = 0
        self.enabled = sys.stderr.isatty() and self.total >= self.THRESHOLD
        self.shown = -1

    def __call__(self, done: int) -> None:
        if not self.enabled:
            return
        pct = done * 100 // self.total
        if pct != self.shown:
            self.shown = pct
            print(f"\r{self.total and pct:3d}% of {self.total:,} bytes", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.enabled and self.shown >= 0:
            print("\r" + " " * 40 + "\r", end="", file=sys.stderr, flush=True)


def cmd_dump(args: argparse.Namespace) -> int:
    from kcodec.records.reader import read_batches, shrank_message
    from kcodec.tools.dump import as_ndjson, batch_json, dump_log_lines
    from kcodec.tools.dump_index import INDEX_SUFFIXES, dump_index_lines

    status = EXIT_OK
    for name in args.files:
        path = existing_file(name)
        if path.suffix in INDEX_SUFFIXES and not args.json:  # .index / .timeindex / .txnindex, as Kafka's tool
            try:
                lines, problems = dump_index_lines(path)
            except KcodecError as exc:
                print(f"kcodec dump: {path}: {exc}", file=sys.stderr)
                status = EXIT_ERROR
                continue
            print("\n".join(lines))
            for line in problems:
                print(line, file=sys.stderr)
            continue

        def print_skipped(r, path=path) -> None:  # printed where the bytes were, between the batches around them
            if args.json:
                print(
                    as_ndjson(
                        {
                            "file": str(path),
                            "position": r.start,
                            "size": r.size,
                            "skipped": True,
                            "kind": r.kind,
                            "reason": r.reason,
                        }
                    )
                )
            else:
                print(f"Skipped {r.size} corrupt bytes at position {r.start}..{r.end}: {r.reason}")

        reader = read_batches(
            path,
            verify_crc=False,
            max_decompressed_size=args.max_decompressed_size,
            skip_corrupt=args.skip_corrupt,
            on_skip=print_skipped if args.skip_corrupt else None,
        )
        progress = _Progress(path)
        try:
            if args.json:
                for batch in reader:
                    progress(batch.position + batch.size)
                    print(as_ndjson(batch_json(batch, str(path))))
                if reader.partial_tail is not None:
                    t = reader.partial_tail
                    print(as_ndjson({"file": str(path), "position": t.position, "size": t.size, "partialBatch": True}))
                continue
            pairs: list[tuple[int, int]] = []
            for line in dump_log_lines(
                path, reader, args.deep_iteration, args.print_data_log, args.skip_record_metadata, progress, pairs
            ):
                print(line)
            if pairs:
                print(f"Non-consecutive offsets in {path}", file=sys.stderr)
                for a, b in pairs:
                    print(f"  {a} is followed by {b}", file=sys.stderr)
        except KcodecError as exc:
            sys.stdout.flush()
            hint = "" if args.skip_corrupt else " (--skip-corrupt reads on past damaged batches)"
            print(f"kcodec dump: {path}: {exc}{hint}", file=sys.stderr)
            status = EXIT_ERROR
        finally:
            progress.close()
        if reader.shrank_to is not None:
            print(f"kcodec dump: {path}: {shrank_message(reader.shrank_to)}", file=sys.stderr)
        if reader.partial_tail is not None and not args.skip_corrupt and status == EXIT_OK:
            _hint_hidden_batches(path, reader.partial_tail.position)
        if reader.skipped:
            n = sum(r.size for r in reader.skipped)
            print(f"kcodec dump: {path}: skipped {len(reader.skipped)} damaged range(s), {n} bytes", file=sys.stderr)
            status = max(status, EXIT_CHECK_FAILED)
    return status


def _hint_hidden_batches(path: Path, start: int) -> None:
    """Kafka stops at an entry that claims more bytes than are left; say so when valid batches follow it."""
    from kcodec.records.resync import find_next_entry
    from kcodec.records.source import open_input

    with open_input(path) as source:
        found = find_next_entry(source, start + 1)
    if found is not None:
        print(
            f"kcodec dump: {path}: the entry at byte {start} claims more bytes than are left, but a valid batch "
            f"starts at byte {found}: --skip-corrupt reads on",
            file=sys.stderr,
        )


def cmd_verify(args: argparse.Namespace) -> int:
    from kcodec.tools.verify import recover, verify_path

    if args.recover and len(args.files) != 1:
        raise UsageError("--recover takes one input file")
    status = EXIT_OK
    for name in args.files:
        path = existing_file(name)
        report = verify_path(path, strict=not args.lenient, max_decompressed_size=args.max_decompressed_size)
        for problem in report.problems:
            print(f"{path}: {problem}")
        verdict = "valid" if report.ok else f"{len(report.problems)} problem(s)"
        print(f"{path}: {report.batches} batches, {report.records} records, {report.bytes} bytes: {verdict}")
        if not report.ok:
            status = EXIT_CHECK_FAILED
        if args.recover:
            print(recover(path, args.recover, max_decompressed_size=args.max_decompressed_size))
    return status


def add_parser(sub) -> None:
    p = sub.add_parser(
        "dump",
        help="print batches and records as kafka-dump-log does (or NDJSON)",
        description="Print every batch of each file in kafka-dump-log.sh's format, so the output "
        "can be diffed against Kafka's own tool. CRCs are checked and shown "
        "(isvalid), not enforced.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="segment .log files or any records blob")
    p.add_argument("--deep-iteration", action="store_true", help="print every record, not only batches")
    p.add_argument(
        "--print-data-log", action="store_true", help="print keys and payloads as UTF-8 (implies --deep-iteration)"
    )
    p.add_argument("--skip-record-metadata", action="store_true", help="record lines hold only key and payload")
    p.add_argument(
        "--json",
        action="store_true",
        help="NDJSON: one object per batch with its records (bytes as hex, nulls as null)",
    )
    add_max_decompressed_size(p)
    p.add_argument(
        "--skip-corrupt",
        action="store_true",
        help="after a batch that does not decode, scan forward to the next position where a whole batch "
        "parses and its CRC holds; print each skipped byte range with the reason (exit 1 if any)",
    )
    p.epilog = (
        "exit status: 0 everything was read; 1 --skip-corrupt skipped damaged bytes; 2 bad usage; "
        "3 stopped at bytes that do not decode"
    )
    p.set_defaults(func=cmd_dump)

    p = sub.add_parser(
        "verify",
        help="check every CRC and structural rule; exit 0 only when all is valid",
        description="Check each file: CRCs (v2 batches and every v0/v1 message, inner ones "
        "too), lengths, counts, offsets, codecs. Prints each bad batch with its byte "
        "position, offset and the rule broken; exit 1 if any.",
    )
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument(
        "--lenient", action="store_true", help="accept a partial batch at the end of a file, as Kafka's readers do"
    )
    p.add_argument(
        "--recover",
        metavar="OUT",
        help="write the longest valid prefix of the file to OUT (atomically; OUT may be the file itself), "
        "as Kafka's log recovery truncates a segment, and say how many batches and bytes were dropped",
    )
    add_max_decompressed_size(p, default=None)
    p.epilog = "exit status: 0 valid; 1 a problem was found (the recovered copy is written all the same); 2 bad usage"
    p.set_defaults(func=cmd_verify)
