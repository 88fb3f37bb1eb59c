"""`kcodec append IN OUT_DIR --kafka VERSION` from the command line: the broker's answer per request, its
exit status, --explain, --json, JSON-lines input, and the one-line usage errors."""

from __future__ import annotations

import io
import json
import sys

import pytest

from kcodec.cli import main
from kcodec.log.partition import Partition
from kcodec.records.encode import encode_batch

NOW = 1_700_000_000_000


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def recs(n: int = 3, ts: int = NOW) -> list[dict]:
    return [{"key": b"k%d" % i, "value": b"v%d" % i, "timestamp": ts + i} for i in range(n)]


@pytest.fixture
def requests_file(tmp_path):
    path = tmp_path / "requests.bin"
    path.write_bytes(
        encode_batch(recs(), compression="gzip")
        + encode_batch(recs(2), magic=1)
        + encode_batch(recs(2, ts=NOW - 10_000_000))
    )
    return path


def test_answers_and_exit_status(capsys, tmp_path, requests_file):
    code, out, err = run(
        capsys,
        "append",
        requests_file,
        tmp_path / "t-0",
        "--kafka",
        "3.9",
        "--now",
        NOW,
        "--topic-config",
        "message.timestamp.before.max.ms=60000",
    )
    lines = out.splitlines()
    assert code == 1 and not err
    assert lines[0].startswith("request 0: NONE base offset 0, last offset 2, 3 records, in place")
    assert lines[1].startswith("request 1: NONE base offset 3, last offset 4, 2 records, rebuilt")
    assert lines[2].startswith("request 2: INVALID_TIMESTAMP (32): ")
    assert lines[3].startswith("  record 0: Timestamp")
    assert lines[-1].startswith(
        "Kafka 3.9 (the rules of 3.6): 3 requests, 2 stored (5 records), 0 duplicates, 1 refused"
    )
    assert [r.offset for r in Partition(tmp_path / "t-0").iter_records()] == [0, 1, 2, 3, 4]


def test_explain_and_json(capsys, tmp_path, requests_file):
    code, out, _ = run(
        capsys, "append", requests_file, tmp_path / "t-0", "--kafka", "4.0", "--now", NOW, "--json", "--explain"
    )
    objs = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert [o["error"] for o in objs[:3]] == ["NONE", "NONE", "NONE"]  # 4.0: no past bound by default
    assert objs[0]["inPlace"] is True and objs[1]["inPlace"] is False
    assert any("magic 1 converted to 2" in why for why in objs[1]["explain"])
    assert objs[-1]["kind"] == "summary" and objs[-1]["logEndOffset"] == 7 and objs[-1]["refused"] == 0


def test_json_lines_input(capsys, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"key": "k", "value": f"v{i}", "timestamp": NOW}) + "\n" for i in range(5)))
    code, out, _ = run(
        capsys, "append", path, tmp_path / "t-0", "--kafka", "2.8", "--now", NOW, "--batch-size", "2",
        "--compression", "lz4",
    )  # fmt: skip
    assert code == 0
    assert out.splitlines()[-1].startswith("Kafka 2.8 (the rules of 2.1): 3 requests, 3 stored (5 records)")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--kafka", "0.7"], "older than the releases covered"),
        (["--kafka", "4.0", "--topic-config", "message.format.version=2.0"], "removed in 4.0"),
        (["--kafka", "3.9", "--topic-config", "compression.type=brotli"], "compression.type=brotli"),
        (["--kafka", "3.9", "--topic-config", "retention.ms"], "expected KEY=VALUE"),
    ],
)
def test_usage_errors_are_one_line(capsys, tmp_path, requests_file, argv, message):
    code, out, err = run(capsys, "append", requests_file, tmp_path / "t-0", *argv)
    assert code == 2 and not out
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t-0").exists()


def test_torn_input_is_refused_in_one_line(capsys, tmp_path):
    path = tmp_path / "torn.bin"
    path.write_bytes(encode_batch(recs())[:-5])
    code, _, err = run(capsys, "append", path, tmp_path / "t-0", "--kafka", "4.0")
    assert code == 3 and len(err.strip().splitlines()) == 1 and "input ends inside a log entry" in err


def test_standard_input_continues_a_log(capsys, tmp_path, monkeypatch, requests_file):
    """IN ``-``: the requests from standard input; a second run continues the directory's log and its
    producers' state (a retried batch is a duplicate)."""
    retry = encode_batch(recs(), producer_id=3, producer_epoch=0, base_sequence=0)
    for expected in ("NONE base offset 0", "NONE, duplicate of offsets 0..2"):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(retry)))
        code, out, _ = run(capsys, "append", "-", tmp_path / "t-0", "--kafka", "4.0", "--now", NOW)
        assert code == 0 and out.startswith(f"request 0: {expected}")


def test_damage_mid_input_keeps_what_was_answered(capsys, tmp_path):
    """Requests are read one at a time: those answered before a torn entry stay stored (their segment is
    sealed), and the damage is one line, exit 3."""
    path = tmp_path / "in.bin"
    path.write_bytes(encode_batch(recs()) + encode_batch(recs())[:-5])
    code, out, err = run(capsys, "append", path, tmp_path / "t-0", "--kafka", "4.0", "--now", NOW)
    assert code == 3 and out.startswith("request 0: NONE base offset 0") and len(err.strip().splitlines()) == 1
    assert [r.offset for r in Partition(tmp_path / "t-0").iter_records()] == [0, 1, 2]
