"""`kcodec dump --start-offset/--end-offset/--from-time`: a window of each log, whole batches as a fetch returns
them (the Spark source's options), in text and JSON; reading stops at the first batch past the end."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

from kcodec.cli import main
from kcodec.records.encode import encode_batch

NAME = "00000000000000000000.log"


def _dump(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["dump", *(str(a) for a in argv)])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def log(tmp_path):
    """Six batches of five records, offsets 0..29, timestamps 1000 + offset."""
    path = tmp_path / NAME
    path.write_bytes(
        b"".join(
            encode_batch(
                [{"key": b"k", "value": b"v", "timestamp": 1000 + o, "offset": o} for o in range(b, b + 5)],
                base_offset=b,
            )
            for b in range(0, 30, 5)
        )
        + b"\0" * 7  # a partial tail, reported only when the whole file is read
    )
    return path


def _bases(out: str) -> list[int]:
    return [int(m) for m in re.findall(r"^baseOffset: (\d+) ", out, re.M)]


@pytest.mark.parametrize(
    "window, bases",
    [
        (("--start-offset", 7), [5, 10, 15, 20, 25]),
        (("--end-offset", 15), [0, 5, 10]),
        (("--start-offset", 7, "--end-offset", 16), [5, 10, 15]),
        (("--from-time", 1021), [20, 25]),
        (("--from-time", 1021, "--end-offset", 25), [20]),
    ],
)
def test_window_prints_the_batches_that_overlap_it(log, window, bases):
    code, out, err = _dump(log, "--deep-iteration", *window)
    assert (code, err) == (0, "")  # no non-consecutive offsets at the window's start
    assert _bases(out) == bases
    records = re.findall(r"^\| offset: (\d+) ", out, re.M)
    assert [int(r) for r in records] == [o for b in bases for o in range(b, b + 5)]
    assert ("invalid bytes at the end" in out) == ("--end-offset" not in window)
    code, out, _ = _dump(log, "--json", *window)
    assert [json.loads(line)["baseOffset"] for line in out.splitlines() if "baseOffset" in line] == bases


def test_an_empty_window_is_a_usage_error(log):
    code, out, err = _dump(log, "--start-offset", 9, "--end-offset", 9)
    assert (code, out) == (2, "") and "--start-offset 9 is not before --end-offset 9" in err
