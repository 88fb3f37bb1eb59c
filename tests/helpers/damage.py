"""Random damage to text inputs for differential tests (two paths must give the same result)."""

from __future__ import annotations

import random


def damaged(rng: random.Random, data: bytes, alphabet: bytes, edits: int) -> bytes:
    """``data`` with ``edits`` random edits: a byte dropped, doubled or replaced by one of ``alphabet``."""
    out = bytearray(data)
    for _ in range(edits):
        at = rng.randrange(len(out))
        kind = rng.randrange(3)
        if kind == 0:
            del out[at]
        elif kind == 1:
            out.insert(at, out[at])
        else:
            out[at] = rng.choice(alphabet)
    return bytes(out)
