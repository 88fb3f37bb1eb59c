"""The ``kcodec`` command: one entry point, one subcommand per job.

Exit status: 0 success; 1 a check failed (``generate --check`` found stale
files, ``verify`` found a bad batch); 2 bad usage; 3 kcodec refused the input
(bad schema, bad value, undecodable bytes). Errors print as one line on
stderr, never as a traceback.

``kcodec`` alone prints the full help on stderr and exits 2, as a missing
command is a usage error (stdout stays empty for pipes).

Each subcommand lives in :mod:`kcodec.commands` as a module with
``add_parser(subparsers)``; heavy imports happen inside the command.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from kcodec.commands.common import EXIT_ERROR, EXIT_OK, EXIT_USAGE, UsageError
from kcodec.errors import KcodecError

# Subcommand modules under kcodec.commands, in the order --help lists them.
COMMANDS = (
    "generate",
    "layout",
    "size",
    "dump",
    "write",
    "convert",
    "index",
    "inspect",
    "fuzz",
    "pipeline",
    "bench",
    "completion",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kcodec",
        description="Schema-driven codecs for Apache Kafka's record formats (message format v0, v1, v2).",
    )
    from kcodec import __version__

    parser.add_argument("--version", action="version", version=f"kcodec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"kcodec.commands.{name}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    if not (sys.argv[1:] if argv is None else argv):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"kcodec {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KcodecError as exc:
        print(f"kcodec {args.command}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # unreadable input, unwritable output
        print(f"kcodec {args.command}: {exc}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
