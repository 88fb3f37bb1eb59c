"""`kcodec dump --as-kafka07 [BASE]`: a Kafka 0.7 segment from standard input (or under any name), where
no `.kafka` name says the framing; the output equals the dump of the same bytes as a named segment."""

from __future__ import annotations

import io
import json
import sys

from kcodec.cli import main
from kcodec.records.encode import encode_batch
from kcodec.records.kafka07 import encode_kafka07

SEGMENT = encode_kafka07([b"hello", b"world"]) + encode_kafka07([b"a", b"b"], compression="gzip")


def run(capsys, monkeypatch, *argv, stdin: bytes | None = None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_stdin_dumps_as_the_named_segment(capsys, monkeypatch, tmp_path):
    named = tmp_path / f"{1000:020d}.kafka"
    named.write_bytes(SEGMENT)
    code, want, _ = run(capsys, monkeypatch, "dump", named, "--deep-iteration")
    assert code == 0
    code, got, err = run(capsys, monkeypatch, "dump", "-", "--as-kafka07", "1000", "--deep-iteration", stdin=SEGMENT)
    assert code == 0 and not err
    assert got == want.replace(str(named), "<stdin>")
    assert "| offset: 1030 " in got and got.rstrip().endswith("tail of the log is at offset: 1079")


def test_base_offset_from_the_name_else_zero(capsys, monkeypatch, tmp_path):
    copied = tmp_path / "copy.bin"
    copied.write_bytes(SEGMENT)
    code, out, _ = run(capsys, monkeypatch, "dump", copied, "--as-kafka07", "--json")
    offsets = [json.loads(line)["offset"] for line in out.splitlines()]
    assert code == 0 and offsets == [0, 15, 30]
    named = tmp_path / f"{500:020d}.kafka"
    named.write_bytes(SEGMENT)
    code, out, _ = run(capsys, monkeypatch, "dump", named, "--as-kafka07", "--json")
    assert [json.loads(line)["offset"] for line in out.splitlines()] == [500, 515, 530]


def test_refusals_are_one_line(capsys, monkeypatch):
    code, out, err = run(capsys, monkeypatch, "dump", "-", "--as-kafka07", "--as-log", stdin=SEGMENT)
    assert code == 2 and not out and "choose one" in err and len(err.splitlines()) == 1
    v2 = encode_batch([{"value": b"x"}])
    code, _, err = run(capsys, monkeypatch, "dump", "-", "--as-kafka07", stdin=v2)
    assert code == 3 and "drop --as-kafka07" in err and len(err.splitlines()) == 1
