"""Partition directories and standard input wherever a FILE is read: `kcodec dump DIR` and `verify DIR` read a
partition directory's files as they read an object-store prefix (segments by base offset); `verify -` and
`inspect -` read standard input as `dump -` does."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.records.encode import encode_batch
from tests.helpers.batches import V2_BATCH


def _run(*argv, stdin: bytes | None = None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def partition(tmp_path) -> Path:
    """payments-0: three segments with their indexes, as kcodec's writer rolls them."""
    lines = tmp_path / "in.jsonl"
    lines.write_text("".join(json.dumps({"key": f"k{i}", "value": "v" * 50}) + "\n" for i in range(30)))
    out = tmp_path / "payments-0"
    assert _run("write", out, "-i", lines, "--batch-size", "5", "--segment-bytes", "400")[0] == 0
    return out


@pytest.mark.parametrize("slash", ["", "/"])
def test_dump_of_a_partition_directory_is_the_dump_of_its_files(partition, slash):
    files = sorted(partition.iterdir())
    logs = [f for f in files if f.suffix == ".log"]
    assert len(logs) >= 3
    # each segment's log first, then its indexes, by base offset: the order a prefix is dumped in
    ordered = sorted(files, key=lambda f: (f.stem, f.suffix != ".log", f.suffix))
    code, out, err = _run("dump", f"{partition}{slash}")
    assert (code, err) == (0, "")
    _, expected, _ = _run("dump", *(Path(f"{partition}{slash}") / f.name for f in ordered))
    assert out == expected
    assert [line for line in out.splitlines() if line.startswith("Dumping ")] == [
        f"Dumping {Path(f'{partition}{slash}') / f.name}" for f in ordered
    ]


def test_verify_of_a_partition_directory_checks_each_segment(partition):
    code, out, err = _run("verify", partition)
    logs = sorted(partition.glob("*.log"))
    assert (code, err) == (0, "")
    assert [line.split(": ")[0] for line in out.splitlines()] == [str(log) for log in logs]
    damaged = bytearray(logs[1].read_bytes())
    damaged[-3] ^= 0xFF
    logs[1].write_bytes(bytes(damaged))
    code, out, _ = _run("verify", partition)
    assert code == 1 and f"{logs[1]}: " in out and out.splitlines()[-1].endswith("valid")


def test_verify_reads_standard_input(tmp_path, monkeypatch):
    data = V2_BATCH + encode_batch([{"key": b"k", "value": b"v"}] * 3, base_offset=1)
    (tmp_path / "x.log").write_bytes(data)
    _, expected, _ = _run("verify", tmp_path / "x.log")
    code, out, err = _run("verify", "-", stdin=data, monkeypatch=monkeypatch)
    assert (code, err) == (0, "")
    assert (
        out
        == expected.replace(str(tmp_path / "x.log"), "<stdin>")
        == f"<stdin>: 2 batches, 4 records, {len(data)} bytes: valid\n"
    )
    damaged = bytearray(V2_BATCH)
    damaged[-3] ^= 0xFF
    code, out, _ = _run("verify", "-", "--json", stdin=bytes(damaged), monkeypatch=monkeypatch)
    assert code == 1 and json.loads(out)["file"] == "<stdin>" and not json.loads(out)["valid"]
    code, out, err = _run("verify", "-", "-", stdin=b"", monkeypatch=monkeypatch)
    assert code == 2 and out == "" and "standard input (-) can be read only once" in err
    code, _, err = _run("verify", "-", "--recover", "x.log", stdin=b"", monkeypatch=monkeypatch)
    assert code == 2 and "--recover" in err and err.count("\n") == 1


def test_inspect_reads_standard_input(tmp_path, monkeypatch):
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(V2_BATCH)
    _, expected, _ = _run("inspect", log, "--color", "never")
    code, out, err = _run("inspect", "-", "--color", "never", stdin=V2_BATCH, monkeypatch=monkeypatch)
    assert (code, err) == (0, "")
    assert out == expected.replace(str(log), "<stdin>")
    code, out, _ = _run("inspect", "-", "--json", stdin=V2_BATCH[:-5], monkeypatch=monkeypatch)
    assert code == 1 and json.loads(out.splitlines()[0])["file"] == "<stdin>"
