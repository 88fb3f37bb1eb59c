"""Every bad command line ends in one line on stderr and a documented exit status, never a traceback:
run through the installed ``kcodec`` entry point, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.records.reader import read_batches

KCODEC = str(Path(sys.executable).parent / "kcodec")
SEGMENT = "00000000000000000000.log"
USAGE, REFUSED = 2, 3

GOOD_LINE = b'{"key": "k", "value": "v", "timestamp": 5}\n'

# (id, argv, stdin, extra environment, exit status, a fragment the one line holds)
CASES = [
    # malformed JSON values in `kcodec write` input
    ("headers-number", ["write", "out.log"], b'{"headers": 5}\n', {}, REFUSED, "headers must be a list"),
    ("records-number", ["write", "out.log"], b'{"records": 5}\n', {}, REFUSED, "records must be an array"),
    ("record-number", ["write", "out.log"], b'{"records": [5]}\n', {}, REFUSED, "record 0: a record must be"),
    ("line-number", ["write", "out.log"], b"5\n", {}, REFUSED, "a record must be a JSON object, not a number"),
    ("deep-nesting", ["write", "out.log"], b"[" * 100_000 + b"]" * 100_000, {}, REFUSED, "nested too deeply"),
    ("lone-surrogate", ["write", "out.log"], b'{"key": "\\ud800"}\n', {}, REFUSED, "lone surrogate"),
    ("surrogate-header", ["write", "out.log"], b'{"headers": {"\\udc00": "v"}}\n', {}, REFUSED, "lone surrogate"),
    ("not-utf8", ["write", "out.log"], b'{"key": "\xff"}\n', {}, REFUSED, "line 1: not UTF-8 (byte 0xff"),
    ("magic0-timestamp", ["write", "out.log", "--magic", "0"], GOOD_LINE, {}, REFUSED, "pass --allow-lossy"),
    # numeric options out of range, refused when the command line is parsed
    ("segment-bytes-0", ["write", "part", "--segment-bytes", "0"], GOOD_LINE, {}, USAGE, "--segment-bytes: 0"),
    ("segment-bytes-int32", ["write", "part", "--segment-bytes", str(2**31)], b"", {}, USAGE, "--segment-bytes"),
    ("batch-size-0", ["write", "out.log", "--batch-size", "0"], GOOD_LINE, {}, USAGE, "--batch-size: 0"),
    ("base-offset-neg", ["write", "out.log", "--base-offset", "-1"], GOOD_LINE, {}, USAGE, "--base-offset: -1"),
    ("base-offset-int64", ["write", "out.log", "--base-offset", str(2**63)], b"", {}, USAGE, "--base-offset"),
    ("level-huge", ["write", "out.log", "--compression", "gzip", "--level", str(2**40)], b"", {}, USAGE, "--level"),
    ("interval-neg", ["index", "--interval", "-1", SEGMENT], b"", {}, USAGE, "--interval: -1"),
    ("dump-max-neg", ["dump", "--max-decompressed-size", "-1", SEGMENT], b"", {}, USAGE, "--max-decompressed-size"),
    ("verify-max-0", ["verify", "--max-decompressed-size", "0", SEGMENT], b"", {}, USAGE, "--max-decompressed-size"),
    ("inspect-at-neg", ["inspect", "--at", "-1", SEGMENT], b"", {}, USAGE, "--at: -1"),
    ("inspect-batches-0", ["inspect", "--batches", "0", SEGMENT], b"", {}, USAGE, "--batches: 0"),
    ("inspect-max-bytes", ["inspect", "--max-bytes", "-1", SEGMENT], b"", {}, USAGE, "--max-bytes: -1"),
    ("inspect-offset", ["inspect", "--offset", "-3", SEGMENT], b"", {}, USAGE, "--offset: -3"),
    ("convert-level", ["convert", SEGMENT, "o.log", "--magic", "2", "--level", "x"], b"", {}, USAGE, "not an integer"),
    ("size-records-0", ["size", "--key-size", "1", "--value-size", "1", "--records", "0"], b"", {}, USAGE, "0 is"),
    ("fuzz-jobs-0", ["fuzz", "--jobs", "0"], b"", {}, USAGE, "--jobs: 0"),
    ("fuzz-time-neg", ["fuzz", "--time", "-1"], b"", {}, USAGE, "--time"),
    ("fuzz-time-nan", ["fuzz", "--time", "nan"], b"", {}, USAGE, "--time"),
    ("fuzz-iterations", ["fuzz", "--iterations", "-1"], b"", {}, USAGE, "--iterations: -1"),
    ("fuzz-reference", ["fuzz", "--reference-every", "0"], b"", {}, USAGE, "--reference-every: 0"),
    ("bench-repeats", ["bench", "--repeats", "0"], b"", {}, USAGE, "--repeats: 0"),
    ("bench-segment-mib", ["bench", "--segment-mib", "-1"], b"", {}, USAGE, "--segment-mib: -1"),
    ("layout-version", ["layout", "record", "--version", "-1"], b"", {}, USAGE, "--version: -1"),
    # the environment and stray file names
    ("backend-bogus", ["dump", SEGMENT], b"", {"KCODEC_BACKEND": "bogus"}, USAGE, "KCODEC_BACKEND='bogus'"),
    ("stray-index", ["dump", "foo.index"], b"", {}, USAGE, "named after its segment's base offset"),
    ("stray-timeindex", ["dump", "1.timeindex"], b"", {}, USAGE, "named after its segment's base offset"),
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A directory holding a valid segment and index files with names that are not segment names."""
    work = tmp_path_factory.mktemp("cli-errors")
    proc = subprocess.run([KCODEC, "write", SEGMENT, "--index"], input=GOOD_LINE, cwd=work, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    (work / "foo.index").write_bytes((work / "00000000000000000000.index").read_bytes())
    (work / "1.timeindex").write_bytes((work / "00000000000000000000.timeindex").read_bytes())
    return work


def one_line(stderr: bytes) -> str:
    text = stderr.decode("utf-8", "replace")
    assert "Traceback" not in text, text
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert lines[0].startswith("kcodec "), text
    return lines[0]


@pytest.mark.parametrize("argv, stdin, env, status, fragment", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_command_line_is_one_line(workdir: Path, argv, stdin: bytes, env: dict, status: int, fragment: str):
    environment = {**os.environ, **env}
    proc = subprocess.run([KCODEC, *argv], input=stdin, cwd=workdir, env=environment, capture_output=True, timeout=120)
    line = one_line(proc.stderr)
    assert proc.returncode == status, line
    assert fragment in line, line
    assert "allow_lossy" not in line  # command lines speak of options, not Python keywords
    assert not (workdir / "out.log").exists() and not (workdir / "part").exists()


def test_write_allow_lossy_drops_timestamps_for_magic_0(tmp_path: Path) -> None:
    out = tmp_path / "v0.log"
    proc = subprocess.run(
        [KCODEC, "write", str(out), "--magic", "0", "--allow-lossy"], input=GOOD_LINE, capture_output=True
    )
    assert proc.returncode == 0, proc.stderr
    (record,) = [r for b in read_batches(out) for r in b.records]
    assert (record.magic, record.timestamp, record.key, record.value) == (0, -1, b"k", b"v")


def test_unexpected_exception_is_one_line_naming_it(monkeypatch, capsys) -> None:
    """The last resort: an exception no layer types still ends as one line that names it as a bug."""
    import kcodec.commands.size as size_command

    def broken(args):
        raise TypeError("planted\nsecond line")

    monkeypatch.setattr(size_command, "cmd_size", broken)
    status = main(["size", "--key-size", "1", "--value-size", "1"])
    err = capsys.readouterr().err
    assert status == REFUSED
    line = one_line(err.encode())
    assert "TypeError: planted second line" in line and "bug" in line
