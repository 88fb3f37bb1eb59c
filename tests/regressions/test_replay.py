"""Replay every fuzzing reproducer ever found (tests/regressions/*.bin): each must now decode or fail
with a kcodec DecodeError in every decoder of its target, keep every promise, and take under a second."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kcodec.fuzz.targets import replay

HERE = Path(__file__).parent
REPRODUCERS = sorted(HERE.glob("*.bin"))


def test_there_are_reproducers():
    assert REPRODUCERS, "tests/regressions/ lost its reproducers"
    for path in REPRODUCERS:
        assert path.with_suffix(".json").is_file(), f"{path.name} has no .json note"


@pytest.mark.parametrize("path", REPRODUCERS, ids=[p.stem for p in REPRODUCERS])
def test_reproducer_is_fixed(path: Path):
    meta = json.loads(path.with_suffix(".json").read_text())
    data = path.read_bytes()
    start = time.perf_counter()
    result = replay(data, meta)
    elapsed = time.perf_counter() - start
    assert not result.unexpected, "\n".join(f"{u.decoder}: {u.error}: {u.message}\n{u.traceback}"
                                            for u in result.unexpected)
    assert elapsed < 1.0 or replay_twice_fast(data, meta), f"took {elapsed:.2f} s"


def replay_twice_fast(data: bytes, meta: dict) -> bool:
    """A loaded machine can stall once; a hang is slow every time."""
    start = time.perf_counter()
    replay(data, meta)
    return time.perf_counter() - start < 1.0
