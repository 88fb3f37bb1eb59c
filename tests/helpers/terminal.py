"""Pseudo-terminals for CLI tests: what a child wrote to one, read until it is closed."""

from __future__ import annotations

import os


def read_terminal(master: int) -> bytes:
    """All a child wrote to the terminal whose master end is ``master`` (closed here), until the child's
    exit ends it (EIO); bounded, as every loop in the tests."""
    chunks = []
    for _ in range(100_000):
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return b"".join(chunks)
