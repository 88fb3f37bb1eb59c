"""What every subcommand shares: exit statuses, the usage error, packaged paths.

Exit status: 0 success; 1 a check failed (``generate --check`` found stale
files, ``verify`` found a bad batch); 2 bad usage; 3 kcodec refused the input
(bad schema, bad value, undecodable bytes).
"""
from __future__ import annotations

import importlib
from pathlib import Path

EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3


class UsageError(Exception):
    """A command line that asks for something impossible."""


def packaged(name: str) -> Path:
    """The directory of a package shipped inside kcodec (schemas, generated)."""
    return Path(importlib.import_module(f"kcodec.{name}").__path__[0])
