"""What every subcommand shares: exit statuses, the usage error, packaged paths, checks of
inputs and options that more than one command takes.

Exit status: 0 success; 1 a check failed (``generate --check`` found stale
files, ``verify`` found a bad batch); 2 bad usage; 3 kcodec refused the input
(bad schema, bad value, undecodable bytes).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from kcodec.runtime.compression import CODECS, DEFAULT_MAX_DECOMPRESSED_SIZE

EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3


class UsageError(Exception):
    """A command line that asks for something impossible."""


def packaged(name: str) -> Path:
    """The directory of a package shipped inside kcodec (schemas, generated)."""
    return Path(importlib.import_module(f"kcodec.{name}").__path__[0])


def existing_file(name: str | Path) -> Path:
    """``name`` as a path, or a usage error when it is not a file (said as the user wrote it)."""
    path = Path(name)
    if not path.is_file():
        raise UsageError(f"{name}: {'not a regular file' if path.exists() else 'no such file'}")
    return path


def require_at_least(option: str, value: int, minimum: int = 1) -> None:
    if value < minimum:
        raise UsageError(f"{option} must be at least {minimum}")


def compression_choices() -> tuple[str, ...]:
    """The compression codecs the runtime implements, in id order: what --compression may name."""
    return tuple(CODECS[i] for i in sorted(CODECS))


def add_max_decompressed_size(
    parser, what: str = "batches", default: int | None = DEFAULT_MAX_DECOMPRESSED_SIZE, help: str | None = None
) -> None:
    """``--max-decompressed-size BYTES``: the cap on what one compressed region may inflate to
    (None leaves it to the readers, whose default is the runtime's)."""
    parser.add_argument(
        "--max-decompressed-size",
        type=int,
        default=default,
        metavar="BYTES",
        help=help
        or f"refuse compressed {what} that inflate past this (default {DEFAULT_MAX_DECOMPRESSED_SIZE >> 20} MiB)",
    )
