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
from kcodec.errors import BackendError, KcodecError
from kcodec.runtime.kernel import backend_setting

# Subcommand modules under kcodec.commands, in the order --help lists them: what users run first, the
# developers' tools (fuzz, bench, generate) last.
COMMANDS = (
    "dump",
    "verify",
    "inspect",
    "write",
    "convert",
    "index",
    "metadata",
    "schemas",
    "txn",
    "append",
    "compact",
    "pipeline",
    "layout",
    "size",
    "completion",
    "fuzz",
    "bench",
    "generate",
)


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one line on stderr (argparse prints the whole usage first)."""

    subcommands: dict[str, argparse.ArgumentParser] = {}

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_args(self, args=None, namespace=None):
        """As argparse's, but arguments no parser knows are the subcommand's error, pointing at its help
        (argparse reports them as the top-level parser's, sending the user to ``kcodec --help``)."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            where = self.subcommands.get(getattr(parsed, "command", None) or "", self)
            where.error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every command's, or only ``command``'s (all a run of that command
    needs: building the others' parsers was most of the start-up of a short call)."""
    parser = _Parser(
        prog="kcodec",
        description="Schema-driven codecs for Apache Kafka's record formats (message format v0, v1, v2).",
    )
    from kcodec import __version__

    parser.add_argument("--version", action="version", version=f"kcodec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS if command is None else (command,):
        importlib.import_module(f"kcodec.commands.{name}").add_parser(sub)
    parser.subcommands = dict(sub.choices)
    # handed to the commands that describe or run the whole command line (completion; bench's command rows),
    # which import nothing from here
    parser.set_defaults(root_parser=parser, entry_point=main)
    return parser


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(_only_command(words))
    if not words:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    args = parser.parse_args(argv)
    try:
        backend_setting()  # a bad KCODEC_BACKEND is a usage error before any work, not an error per input
        return args.func(args)
    except (UsageError, BackendError) as exc:  # BackendError: KCODEC_BACKEND names no usable backend
        return _fail(args.command, exc, EXIT_USAGE)
    except KcodecError as exc:
        return _fail(args.command, exc, EXIT_ERROR)
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # unreadable input, unwritable output
        return _fail(args.command, exc, EXIT_ERROR)
    except MemoryError:
        return _fail(args.command, "out of memory (the input asks for more than this machine has)", EXIT_ERROR)
    except RecursionError:
        return _fail(args.command, "input nested too deeply to process", EXIT_ERROR)
    except Exception as exc:  # the last resort: a bug, but still one line
        name = type(exc).__name__
        return _fail(args.command, f"internal error, a bug in kcodec: {name}: {exc} (please report it)", EXIT_ERROR)


def _only_command(words: list[str]) -> str | None:
    """The command ``words`` run when its parser alone parses them: the first word names one (the top level
    takes no option before it but --version and --help, which need the whole), and it is not completion,
    which describes every command."""
    first = words[0] if words else None
    return first if isinstance(first, str) and first in COMMANDS and first != "completion" else None


def _fail(command: str, error: object, status: int) -> int:
    message = " ".join(str(error).split()) or type(error).__name__  # one line, whatever the message holds
    print(f"kcodec {command}: {message}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
