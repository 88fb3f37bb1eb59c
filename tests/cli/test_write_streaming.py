"""`kcodec write` streams: one batch in memory at a time, the same bytes as encoding every batch."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from kcodec.records.encode import encode_batch
from kcodec.tools.records_io import read_json_records

# The child runs `kcodec write` and prints its own peak RSS in KiB: VmHWM, as ru_maxrss keeps the size of a
# forking parent (the test process) across exec.
_PEAK_RSS = """
import sys
from kcodec.cli import main
code = main(sys.argv[1:])
hwm = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")]
print(code, hwm[0], file=sys.stderr)
"""


def _write_input(path, n: int) -> None:
    rng = random.Random(n)
    with open(path, "w") as f:
        for i in range(n):
            value = rng.randbytes(150).hex()  # compresses about 2:1, whatever the codec
            f.write(json.dumps({"key": f"k{i}", "value": value, "headers": [["h", "x"]], "timestamp": i}) + "\n")


def _peak_rss_mib(tmp_path, n: int, *options: str) -> float:
    src = tmp_path / f"in{n}.jsonl"
    _write_input(src, n)
    out = tmp_path / f"out{n}.log"
    proc = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, "write", str(out), "-i", str(src), *options],
        capture_output=True,
        text=True,
        check=False,
    )
    code, rss_kib = proc.stderr.split()[-2:]
    assert code == "0", proc.stderr
    assert out.stat().st_size > n * 150  # the whole output was written
    src.unlink()
    out.unlink()
    return int(rss_kib) / 1024


@pytest.mark.parametrize("options", [(), ("--compression", "zstd")])
def test_write_peak_rss_does_not_grow_with_input(tmp_path, options):
    small = _peak_rss_mib(tmp_path, 20_000, *options)  # about 7 MB of output
    large = _peak_rss_mib(tmp_path, 160_000, *options)  # about 55 MB: held whole, it would show
    assert large < 150
    # held whole, the 48 MB more of output (and its input) would add at least that much; the peak of one
    # run moves by up to ~13 MiB from run to run (pyarrow's JSON reader threads and allocator, under load)
    assert large - small < 25, (small, large)


@pytest.mark.parametrize("magic,compression", [(2, "none"), (2, "lz4"), (1, "gzip"), (0, "none")])
def test_write_output_is_every_batch_encoded_in_order(tmp_path, magic, compression):
    from kcodec.cli import main

    src = tmp_path / "in.jsonl"
    with open(src, "w") as f:
        for i in range(2_500):
            record = {"key": f"k{i}", "value": f"value {i}"} | ({"timestamp": 1_000 + i} if magic else {})
            f.write(json.dumps(record) + "\n")
    out = tmp_path / "out.log"
    argv = ["write", str(out), "-i", str(src), "--magic", str(magic), "--compression", compression]
    assert main([*argv, "--batch-size", "1000"]) == 0
    parsed = list(read_json_records(src.read_bytes().splitlines()))
    expected = b"".join(
        encode_batch(parsed[i : i + 1000], base_offset=i, magic=magic, compression=compression)
        for i in range(0, len(parsed), 1000)
    )
    assert out.read_bytes() == expected


def test_write_error_after_written_batches_leaves_nothing(tmp_path, capsys):
    from kcodec.cli import main

    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"value": str(i)}) + "\n" for i in range(50)) + "not json\n")
    out = tmp_path / "out.log"
    assert main(["write", str(out), "-i", str(src), "--batch-size", "10"]) == 3
    assert "line 51" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [src]  # neither out.log nor its temporary
