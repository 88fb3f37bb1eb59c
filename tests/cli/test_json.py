"""Every reporting command takes the same --json flag and prints the fields docs/commands.md documents
(section "JSON output"); dump's bytes come as hex, utf8 or base64 by --bytes-encoding, and
`kcodec write` reads each back. The commands run in this process (``kcodec.cli.main``), the bytes-encoding
round trip through the installed entry point, over a real pipe."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.in_process import kcodec_in_process as kcodec

KCODEC = Path(sys.executable).with_name("kcodec")
LOG = "00000000000000000000.log"

#: the fields docs/commands.md documents for each command's --json
DOCUMENTED = {
    "dump": {
        "file",
        "position",
        "size",
        "magic",
        "baseOffset",
        "lastOffset",
        "crc",
        "crcValid",
        "compression",
        "timestampType",
        "maxTimestamp",
        "recordCount",
        "records",
    },
    "dump record": {"offset", "timestamp", "timestampType", "key", "value", "headers", "sequence"},
    "verify": {"file", "batches", "records", "bytes", "valid", "problems"},
    "verify problem": {"position", "offset", "rule"},
    "verify recovered": {
        "output",
        "keptBatches",
        "keptBytes",
        "droppedBatches",
        "droppedBytes",
        "partialTailBytes",
        "reason",
    },
    "index": {"log", "offsetEntries", "timeEntries", "abortedTransactions", "written"},
    "index --check": {"log", "ok", "problems"},
    "convert": {
        "input",
        "output",
        "records",
        "batches",
        "magic",
        "compression",
        "inputBytes",
        "outputBytes",
        "partialTailBytes",
    },
    "write": {"output", "records", "batches", "bytes", "indexed"},
    "write directory": {"output", "records", "batches", "segments"},
    "size": {"magic", "bytes"},
    "layout": {"entity", "version", "fields"},
    "layout --svg": {"svg", "entity", "version"},
    "inspect": {"path", "kind", "start", "end", "status"},
}


def entry_point(*argv, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    """``kcodec argv`` through the installed entry point, in a process of its own."""
    return subprocess.run(
        [str(KCODEC), *map(str, argv)], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120
    )


def json_out(*argv, cwd: Path, status: int = 0) -> list:
    done = kcodec(*argv, "--json", cwd=cwd)
    assert done.returncode == status, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def has(obj: dict, what: str) -> None:
    assert DOCUMENTED[what] <= set(obj), (what, sorted(DOCUMENTED[what] - set(obj)))


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("json")
    rows = [{"key": "k\u00e9", "value": "v" * 50, "headers": [["h", "x"]], "timestamp": 1000 + i} for i in range(20)]
    (d / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert kcodec("write", LOG, "-i", "in.jsonl", "--batch-size", "5", "--index", cwd=d).returncode == 0
    return d


def test_dump(work):
    lines = json_out("dump", LOG, cwd=work)
    assert len(lines) == 4
    has(lines[0], "dump")
    has(lines[0]["records"][0], "dump record")
    assert lines[0]["records"][0]["key"] == "k\u00e9".encode().hex()


def test_verify(work, tmp_path):
    (line,) = json_out("verify", LOG, cwd=work)
    has(line, "verify")
    assert line["valid"] is True and line["problems"] == []
    damaged = tmp_path / LOG
    damaged.write_bytes((work / LOG).read_bytes()[:-10])
    (line,) = json_out("verify", damaged, "--recover", tmp_path / "kept.log", cwd=work, status=1)
    has(line, "verify")
    has(line["problems"][0], "verify problem")
    has(line["recovered"], "verify recovered")


def test_index(work, tmp_path):
    copy = tmp_path / LOG
    copy.write_bytes((work / LOG).read_bytes())
    (line,) = json_out("index", copy, cwd=work)
    has(line, "index")
    (line,) = json_out("index", copy, "--check", cwd=work)
    has(line, "index --check")
    assert line["ok"] is True


def test_convert_and_write(work, tmp_path):
    (line,) = json_out("convert", LOG, tmp_path / "v1.log", "--magic", "1", "--allow-lossy", cwd=work)
    has(line, "convert")
    assert line["records"] == 20 and line["magic"] == 1
    (line,) = json_out("write", tmp_path / LOG, "-i", "in.jsonl", cwd=work)
    has(line, "write")
    (line,) = json_out("write", tmp_path / "part-0", "-i", "in.jsonl", cwd=work)
    has(line, "write directory")


def test_size_layout_inspect(work, tmp_path):
    (doc,) = json_out("size", "--key-size", "3", "--value-size", "5", cwd=work)
    assert len(doc) == 3
    has(doc[0], "size")
    (doc,) = json_out("layout", "record_batch", "--version", "2", cwd=work)
    has(doc, "layout")
    (line,) = json_out("layout", "record_batch", "--version", "2", "--svg", tmp_path / "rb.svg", cwd=work)
    has(line, "layout --svg")
    lines = json_out("inspect", LOG, cwd=work)
    has(lines[0], "inspect")


@pytest.mark.parametrize("encoding", ["hex", "utf8", "base64"])
def test_bytes_encoding_round_trips_through_write(work, tmp_path, encoding):
    done = entry_point("dump", LOG, "--json", "--bytes-encoding", encoding, cwd=work)
    assert done.returncode == 0, done.stderr
    first = json.loads(done.stdout.splitlines()[0])
    record = first["records"][0]
    want = {"hex": "k\u00e9".encode().hex(), "utf8": "k\u00e9", "base64": base64.b64encode("k\u00e9".encode()).decode()}
    assert record["key"] == want[encoding]
    assert record["headers"] == [["h", {"hex": b"x".hex(), "utf8": "x", "base64": "eA=="}[encoding]]]
    copy = tmp_path / LOG
    back = entry_point("write", copy, "--keep-offsets", cwd=work, stdin=done.stdout)
    assert back.returncode == 0, back.stderr
    assert copy.read_bytes() == (work / LOG).read_bytes()


def test_utf8_refuses_bytes_that_are_not_utf8(tmp_path):
    (tmp_path / "in.jsonl").write_text(json.dumps({"key": "ff00", "value": "61"}) + "\n")
    assert kcodec("write", LOG, "-i", "in.jsonl", "--encoding", "hex", cwd=tmp_path).returncode == 0
    done = kcodec("dump", LOG, "--json", "--bytes-encoding", "utf8", cwd=tmp_path)
    assert done.returncode == 3
    assert done.stderr.count("\n") == 1
    assert "key is not UTF-8" in done.stderr and "--bytes-encoding hex or base64" in done.stderr


def test_one_spelling_everywhere():
    """Each reporting command's help lists --json, and only dump adds --bytes-encoding."""
    for command in ("dump", "verify", "index", "convert", "write", "size", "layout", "inspect", "pipeline"):
        done = kcodec(command, "--help", cwd=Path.cwd())
        assert "--json" in done.stdout, command
        assert ("--bytes-encoding" in done.stdout) == (command == "dump"), command
