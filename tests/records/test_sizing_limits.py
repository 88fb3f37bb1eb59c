"""``kcodec size`` is arithmetic: no buffer of the asked size, no Record per asked record. Small cases agree
with what the encoder writes; huge ones answer in little memory, or are refused in one line when the
format's int32 fields cannot hold them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kcodec.records.encode import encode_batch
from kcodec.records.sizing import SizeQuery, size_on_disk

_CHILD = """import sys
from kcodec.cli import main
try:
    rc = main(sys.argv[1:])
finally:
    sys.stdout.flush()
    hwm = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")]
    sys.stderr.write(f"peak_kib {hwm[0]}\\n")
sys.exit(rc)
"""


def _size(*args: str) -> tuple[int, str, str, float]:
    """``kcodec size ARGS`` in a child: exit status, stdout, stderr and the child's own peak RSS (MiB)."""
    done = subprocess.run([sys.executable, "-c", _CHILD, "size", *args], capture_output=True, text=True, timeout=120)
    *lines, last = done.stderr.splitlines()
    assert last.startswith("peak_kib "), done.stderr
    return done.returncode, done.stdout, "\n".join(lines), int(last.split()[1]) / 1024


@pytest.mark.parametrize("records", [1, 63, 64, 65, 8192, 8193])
@pytest.mark.parametrize("magic", [0, 1, 2])
def test_sizes_agree_with_the_encoder(magic, records):
    headers = ((2, 3), (1, -1)) if magic == 2 else ()
    q = SizeQuery(3, 17, records, headers)
    recs = [
        {
            "key": b"k" * 3,
            "value": b"v" * 17,
            "timestamp": 0 if magic else None,
            "headers": [("h" * k, None if v < 0 else b"x" * v) for k, v in headers],
        }
        for _ in range(records)
    ]
    if magic < 2:
        for r in recs:
            del r["headers"]
            if magic == 0:
                del r["timestamp"]
    assert size_on_disk(magic, q).total == len(encode_batch(recs, magic=magic, base_offset=0))


def test_huge_record_counts_cost_no_memory():
    code, out, err, peak = _size("--key-size", "1", "--value-size", "100", "--records", str(10**12), "--magic", "1")
    assert code == 0 and err == "" and peak < 100
    one = size_on_disk(1, SizeQuery(1, 100, 1)).total
    assert json.loads(_size("--key-size", "1", "--value-size", "100", "--magic", "1", "--format", "json")[1]) == {
        "magic": 1,
        "bytes": one,
    }
    code, out, err, peak = _size(
        "--key-size", "1", "--value-size", "100", "--records", str(10**12), "--magic", "1", "--format", "json"
    )
    assert json.loads(out) == {"magic": 1, "bytes": one * 10**12}


@pytest.mark.parametrize(
    "args, says",
    [
        (["--value-size", str(2**40)], "do not fit a key or value"),
        (["--value-size", "1", "--records", str(10**12)], "do not fit one v2 batch"),
        (["--value-size", "100", "--records", str(2**31 - 1), "--magic", "2"], "the batch of"),
        (["--value-size", str(2**31 - 1), "--magic", "0"], "a message of"),
    ],
)
def test_what_int32_fields_cannot_hold_is_refused_in_one_line(args, says):
    code, out, err, peak = _size("--key-size", "1", *args)
    assert code == 3 and out == "" and len(err.splitlines()) == 1 and says in err, err
    assert peak < 100
