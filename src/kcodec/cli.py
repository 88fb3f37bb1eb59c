"""The ``kcodec`` command: one entry point, one subcommand per job.

Exit status: 0 success; 1 a check failed (``generate --check`` found stale
files); 2 bad usage; 3 kcodec refused the input (bad schema, bad value).
Errors print as one line on stderr, never as a traceback.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .errors import KcodecError

EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3


class UsageError(Exception):
    """A command line that asks for something impossible."""


def _packaged(name: str) -> Path:
    import importlib

    return Path(importlib.import_module(f"kcodec.{name}").__path__[0])


# ---------------------------------------------------------------------------- generate

def cmd_generate(args: argparse.Namespace) -> int:
    from .codegen import generate  # the generator (jinja2, yaml) loads only for this command

    schemas = Path(args.schemas) if args.schemas else _packaged("schemas")
    out = Path(args.out) if args.out else _packaged("generated")
    result = generate(schemas, out, check=args.check)
    if args.check:
        if result.stale:
            for name in result.written:
                print(f"stale: {out / name}", file=sys.stderr)
            for name in result.deleted:
                print(f"no longer produced: {out / name}", file=sys.stderr)
            print(f"kcodec: {out} is stale against {schemas}; run `kcodec generate`", file=sys.stderr)
            return EXIT_CHECK_FAILED
        print(f"{out} is fresh ({len(result.unchanged)} files, schemas sha256 {result.schema_sha256[:12]})")
        return EXIT_OK
    for name in result.written:
        print(f"wrote {out / name}")
    for name in result.deleted:
        print(f"deleted {out / name}")
    print(f"{len(result.written)} written, {len(result.unchanged)} unchanged, {len(result.deleted)} deleted "
          f"(schemas sha256 {result.schema_sha256[:12]})")
    return EXIT_OK


# ---------------------------------------------------------------------------- layout

def cmd_layout(args: argparse.Namespace) -> int:
    from .generated import ENTITY_VERSIONS, layout

    if args.entity not in ENTITY_VERSIONS:
        raise UsageError(f"unknown entity {args.entity!r}; known: {', '.join(sorted(ENTITY_VERSIONS))}")
    versions = ENTITY_VERSIONS[args.entity]
    if args.version is not None:
        if args.version not in versions:
            raise UsageError(f"{args.entity} has no version {args.version}; valid: "
                             f"{', '.join(map(str, versions))}")
        versions = (args.version,)
    layouts = [layout(args.entity, v) for v in versions]
    if args.format == "json":
        print(json.dumps([lay.as_dict() for lay in layouts] if len(layouts) > 1 else layouts[0].as_dict(),
                         indent=2))
        return EXIT_OK
    from .layout_view import render_layout

    print("\n\n".join(render_layout(lay, markdown=args.format == "markdown") for lay in layouts))
    return EXIT_OK


# ---------------------------------------------------------------------------- size

def _size_arg(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a size is an integer (-1 for null), not {text!r}") from None
    if n < -1:
        raise argparse.ArgumentTypeError("a size is >= 0, or -1 for null")
    return n


def _header_arg(text: str) -> tuple[int, int]:
    try:
        k, v = text.split(":")
        key, value = int(k), int(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--header takes KEY_SIZE:VALUE_SIZE, e.g. 1:8, not {text!r}") from None
    if key < 0 or value < -1:
        raise argparse.ArgumentTypeError("a header key size is >= 0; its value size >= 0 or -1 for null")
    return key, value


def cmd_size(args: argparse.Namespace) -> int:
    from .sizing import SizeQuery, size_on_disk

    query = SizeQuery(args.key_size, args.value_size, args.records, tuple(args.header or ()))
    magics = [args.magic] if args.magic is not None else [0, 1, 2]
    if query.headers and any(m < 2 for m in magics):
        if args.magic is not None:
            raise UsageError("headers need magic 2 (v0 and v1 messages have no headers)")
        magics = [2]
    results = [size_on_disk(m, query) for m in magics]
    if args.format == "json":
        out = [r.as_dict(breakdown=args.breakdown) for r in results]
        print(json.dumps(out[0] if len(out) == 1 else out, indent=2))
        return EXIT_OK
    from .layout_view import render_sizes

    print(render_sizes(query, results, breakdown=args.breakdown))
    return EXIT_OK


# ---------------------------------------------------------------------------- dump / verify

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
    from .dump import as_ndjson, batch_json, dump_log_lines
    from .runtime.reader import read_batches

    status = EXIT_OK
    for name in args.files:
        path = Path(name)
        if not path.is_file():
            raise UsageError(f"{name}: no such file")
        reader = read_batches(path, verify_crc=False, max_decompressed_size=args.max_decompressed_size)
        progress = _Progress(path)
        try:
            if args.json:
                for batch in reader:
                    progress(batch.position + batch.size)
                    print(as_ndjson(batch_json(batch, str(path))))
                if reader.partial_tail is not None:
                    t = reader.partial_tail
                    print(as_ndjson({"file": str(path), "position": t.position, "size": t.size,
                                     "partialBatch": True}))
                continue
            pairs: list[tuple[int, int]] = []
            for line in dump_log_lines(path, reader, args.deep_iteration, args.print_data_log,
                                       args.skip_record_metadata, progress, pairs):
                print(line)
            if pairs:
                print(f"Non-consecutive offsets in {path}", file=sys.stderr)
                for a, b in pairs:
                    print(f"  {a} is followed by {b}", file=sys.stderr)
        except KcodecError as exc:
            sys.stdout.flush()
            print(f"kcodec dump: {path}: {exc}", file=sys.stderr)
            status = EXIT_ERROR
        finally:
            progress.close()
    return status


def cmd_verify(args: argparse.Namespace) -> int:
    from .verify import verify_path

    status = EXIT_OK
    for name in args.files:
        path = Path(name)
        if not path.is_file():
            raise UsageError(f"{name}: no such file")
        report = verify_path(path, strict=not args.lenient)
        for problem in report.problems:
            print(f"{path}: {problem}")
        verdict = "valid" if report.ok else f"{len(report.problems)} problem(s)"
        print(f"{path}: {report.batches} batches, {report.records} records, {report.bytes} bytes: {verdict}")
        if not report.ok:
            status = EXIT_CHECK_FAILED
    return status


# ---------------------------------------------------------------------------- main

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kcodec",
        description="Schema-driven codecs for Apache Kafka's record formats (message format v0, v1, v2).",
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"kcodec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("generate", help="regenerate generated/ from schemas/ (or check it is fresh)",
                       description="Load and validate the YAML schemas and render the codecs into generated/.")
    p.add_argument("--schemas", metavar="DIR", help="schema directory (default: the package's schemas/)")
    p.add_argument("--out", metavar="DIR", help="output directory (default: the package's generated/)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if the output is stale")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("layout", help="print an entity's field layout",
                       description="Every field of an entity version: byte offset (or 'var'), size, type, "
                                   "version range, derived facts and doc.")
    p.add_argument("entity", help="entity name, e.g. record_batch, legacy_message, record")
    p.add_argument("--version", type=int, help="one version (default: every valid version)")
    p.add_argument("--format", choices=("table", "json", "markdown"), default="table")
    p.set_defaults(func=cmd_layout)

    p = sub.add_parser("size", help="bytes on disk for records of a given shape",
                       description="Bytes that records take on disk in each message format, from the "
                                   "generated size functions. A size of -1 means null.")
    p.add_argument("--magic", type=int, choices=(0, 1, 2), help="one format (default: compare 0, 1 and 2)")
    p.add_argument("--key-size", type=_size_arg, required=True, metavar="K", help="key bytes, -1 for a null key")
    p.add_argument("--value-size", type=_size_arg, required=True, metavar="V",
                   help="value bytes, -1 for a null value")
    p.add_argument("--records", type=int, default=1, metavar="R", help="number of records (default 1)")
    p.add_argument("--header", type=_header_arg, action="append", metavar="K:V",
                   help="a header with a K-byte key and a V-byte value (-1: null); repeatable; magic 2 only")
    p.add_argument("--breakdown", action="store_true", help="show the bytes of every field")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(func=cmd_size)

    p = sub.add_parser("dump", help="print batches and records as kafka-dump-log does (or NDJSON)",
                       description="Print every batch of each file in kafka-dump-log.sh's format, so the output "
                                   "can be diffed against Kafka's own tool. CRCs are checked and shown "
                                   "(isvalid), not enforced.")
    p.add_argument("files", nargs="+", metavar="FILE", help="segment .log files or any records blob")
    p.add_argument("--deep-iteration", action="store_true", help="print every record, not only batches")
    p.add_argument("--print-data-log", action="store_true",
                   help="print keys and payloads as UTF-8 (implies --deep-iteration)")
    p.add_argument("--skip-record-metadata", action="store_true", help="record lines hold only key and payload")
    p.add_argument("--json", action="store_true",
                   help="NDJSON: one object per batch with its records (bytes as hex, nulls as null)")
    p.add_argument("--max-decompressed-size", type=int, default=64 * 1024 * 1024, metavar="BYTES",
                   help="refuse compressed batches that inflate past this (default 64 MiB)")
    p.set_defaults(func=cmd_dump)

    p = sub.add_parser("verify", help="check every CRC and structural rule; exit 0 only when all is valid",
                       description="Check each file: CRCs (v2 batches and every v0/v1 message, inner ones "
                                   "too), lengths, counts, offsets, codecs. Prints each bad batch with its byte "
                                   "position, offset and the rule broken; exit 1 if any.")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--lenient", action="store_true",
                   help="accept a partial batch at the end of a file, as Kafka's readers do")
    p.set_defaults(func=cmd_verify)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if getattr(args, "records", 1) < 1:
            raise UsageError("--records must be at least 1")
        return args.func(args)
    except UsageError as exc:
        print(f"kcodec {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KcodecError as exc:
        print(f"kcodec {args.command}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:  # unreadable input, unwritable output
        if isinstance(exc, BrokenPipeError):
            return EXIT_OK
        print(f"kcodec {args.command}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
