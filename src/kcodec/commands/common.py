"""What every subcommand shares: exit statuses, the usage error, packaged paths, checks of
inputs and options that more than one command takes.

Exit status: 0 success; 1 a check failed (``generate --check`` found stale
files, ``verify`` found a bad batch); 2 bad usage; 3 kcodec refused the input
(bad schema, bad value, undecodable bytes).
"""

from __future__ import annotations

import fnmatch
import importlib
import os
from collections.abc import Iterable
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
        raise UsageError(f"{name}: no such file")
    return path


def _real(path: str | os.PathLike) -> str:
    """The path a local name finally points at (symlinks resolved, even for a file not yet
    written); a URI stays as written, without a trailing slash."""
    from kcodec.log.fs import resolve

    fs, name = resolve(os.fspath(path))
    return os.path.realpath(name) if fs.local else name.rstrip("/")


def _within(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def refuse_overlap(inputs: Iterable[str | os.PathLike], outputs: Iterable[str | os.PathLike]) -> None:
    """A usage error when an output is, or lies inside, or contains an input: writing it would
    replace or delete what the command is still reading. An input may be a glob: every match
    counts, and so does an output the pattern would match."""
    from kcodec.log.fs import has_glob, resolve

    reads: list[tuple[str, str]] = []
    for given in inputs:
        text = os.fspath(given)
        fs, name = resolve(text)
        if has_glob(name):
            reads += [(text, _real(m)) for m in fs.glob(name)]
            reads.append((text, _real(name)))  # the pattern itself, matched against outputs below
        else:
            reads.append((text, _real(text)))
    for given in outputs:
        out = _real(given)
        for text, real in reads:
            if has_glob(real):
                hit = fnmatch.fnmatchcase(out, real)  # an output the pattern would read next time
            else:
                hit = _within(out, real) or _within(real, out)
            if hit:
                raise UsageError(f"output {given} overlaps input {text}: writing it would destroy what is read")


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
