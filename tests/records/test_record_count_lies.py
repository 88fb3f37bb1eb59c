"""A v2 batch whose recordCount says more records than it holds: the batch is framed by its length, so
nothing was cut off; its count lies. Every decoding path reports a RecordCountError (kind
``record_count``) at the byte where the records end, never a ``truncated`` error: the pure-Python and
the compiled decoders (records as objects, as projected tuples, as Arrow columns), the construct codec,
and a compressed batch's records. A header count that outruns its record is the same lie, one level down."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kcodec import errors as E
from kcodec.generated import codec
from kcodec.runtime import compression
from tests.helpers.batches import batch, record, vint

TWO_RECORDS = record() + record()


def _lying(codec_name: str = "none") -> bytes:
    """Two records under a count of 5 (and a last offset delta of 4), CRC and length correct."""
    if codec_name == "none":
        return batch(TWO_RECORDS, 5, last_delta=4)
    stored = compression.compress(codec_name, TWO_RECORDS)
    return batch(stored, 5, last_delta=4, attributes=compression.CODEC_IDS[codec_name])


CASES = {
    "plain": _lying(),
    "gzip": _lying("gzip"),
    "headers": batch(record(headers=vint(3) + vint(1) + b"k" + vint(1) + b"v"), 1),
}

# every path in a child per backend: the compiled kernel is chosen at import
SCRIPT = """
import json, sys
from kcodec.errors import DecodeError
from kcodec.records.reader import read_batches
from kcodec.records.columnar import iter_arrow
out = {}
for name, hexdata in json.loads(sys.argv[1]).items():
    data = bytes.fromhex(hexdata)
    for path, read in (("objects", lambda: list(read_batches(data, strict=True))),
                       ("columns", lambda: list(iter_arrow(data)))):
        try:
            read()
            out[f"{name} {path}"] = None
        except DecodeError as exc:
            out[f"{name} {path}"] = [exc.kind, exc.position, exc.field]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def outcomes() -> dict[str, dict]:
    cases = json.dumps({k: v.hex() for k, v in CASES.items()})
    got = {}
    for backend in ("python", "c"):
        env = dict(os.environ, KCODEC_BACKEND=backend)
        run = subprocess.run([sys.executable, "-c", SCRIPT, cases], env=env, capture_output=True, text=True)
        if backend == "c" and run.returncode and "compiled kernel is not available" in run.stderr:
            continue
        assert run.returncode == 0, run.stderr
        got[backend] = json.loads(run.stdout)
    return got


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_count_beyond_the_records_is_a_record_count_error(outcomes, case: str) -> None:
    for backend, found in outcomes.items():
        for path in ("objects", "columns"):
            kind, position, field = found[f"{case} {path}"]
            assert kind == "record_count", (backend, path, found)
    seen = {tuple(found[f"{case} {p}"]) for found in outcomes.values() for p in ("objects", "columns")}
    assert len(seen) == 1, f"the paths disagree: {seen}"  # the same kind, position and field everywhere


def test_the_plain_count_error_is_at_the_end_of_the_records(outcomes) -> None:
    kind, position, field = outcomes["python"]["plain objects"]
    assert position == len(CASES["plain"]) and field == "records"


def test_the_construct_codec_says_the_same() -> None:
    with pytest.raises(E.RecordCountError, match="the count says 5 elements but the bytes end after 2"):
        codec("record_batch", 2).parse(CASES["plain"])
