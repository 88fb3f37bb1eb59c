"""`kcodec dump --json | kcodec write` is a round trip: each batch line's magic, compression, partition
leader epoch, LogAppendTime and delete horizon come back as they were (byte for byte where the codec's
output is reproducible), unless --magic / --compression say otherwise."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.records.encode import encode_batch
from kcodec.records.model import TimestampType

NAME = "00000000000000000000.log"


def _run(*argv) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    assert code == 0, err.getvalue()
    return out.getvalue()


def _records(first: int, n: int, magic: int) -> list[dict]:
    return [
        {
            "offset": first + i,
            "key": b"key-%d" % (first + i),
            "value": b"a value that repeats, a value that repeats %d" % i,
            "timestamp": -1 if magic == 0 else 1_700_000_000_000 + first + i,
        }
        for i in range(n)
    ]


def _segment(magic: int, compression: str) -> bytes:
    """Batches of 1, 7 and 3 records; v2 ones carry a partition leader epoch."""
    epoch = {"partition_leader_epoch": 5} if magic == 2 else {}
    parts, offset = [], 0
    for n in (1, 7, 3):
        parts.append(encode_batch(_records(offset, n, magic), magic=magic, compression=compression, **epoch))
        offset += n
    return b"".join(parts)


def _round_trip(tmp_path: Path, data: bytes, *write_options: str) -> bytes:
    dumped = tmp_path / "dumped.jsonl"
    dumped.write_text(_run("dump", "--json", _write(tmp_path, data, "src")))
    out = tmp_path / "out" / NAME
    out.parent.mkdir(exist_ok=True)
    _run("write", out, "-i", dumped, *write_options)
    return out.read_bytes()


@pytest.mark.parametrize(
    "magic, compression",
    [(2, "none"), (2, "gzip"), (2, "zstd"), (1, "none"), (1, "gzip"), (0, "none"), (0, "gzip")],
)
def test_dump_json_then_write_gives_the_same_bytes(tmp_path, magic, compression):
    data = _segment(magic, compression)
    assert _round_trip(tmp_path, data) == data


def test_command_line_format_and_codec_override_the_dumped_ones(tmp_path):
    data = _segment(1, "gzip")
    batches = [json.loads(line) for line in _run("dump", "--json", _write(tmp_path, data)).splitlines()]
    assert {(b["magic"], b["compression"]) for b in batches} == {(1, "gzip")}
    out = _round_trip(tmp_path, data, "--magic", "2", "--compression", "lz4")
    rewritten = [json.loads(line) for line in _run("dump", "--json", _write(tmp_path, out, "o")).splitlines()]
    assert {(b["magic"], b["compression"]) for b in rewritten} == {(2, "lz4")}
    assert [r["value"] for b in rewritten for r in b["records"]] == [r["value"] for b in batches for r in b["records"]]


def test_log_append_time_and_delete_horizon_come_back(tmp_path):
    data = encode_batch(
        _records(0, 4, 2),
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        log_append_time=1_800_000_000_000,
        partition_leader_epoch=9,
    ) + encode_batch(_records(4, 2, 2), base_offset=4, delete_horizon_ms=1_750_000_000_000)
    out = _round_trip(tmp_path, data)
    before = [json.loads(line) for line in _run("dump", "--json", _write(tmp_path, data, "a")).splitlines()]
    after = [json.loads(line) for line in _run("dump", "--json", _write(tmp_path, out, "b")).splitlines()]
    keep = ("timestampType", "maxTimestamp", "partitionLeaderEpoch", "deleteHorizonMs", "magic", "compression")
    assert [{k: b[k] for k in keep} for b in after] == [{k: b[k] for k in keep} for b in before]
    assert before[0]["timestampType"] == "LogAppendTime" and before[1]["deleteHorizonMs"] == 1_750_000_000_000


def _write(tmp_path: Path, data: bytes, folder: str = "x") -> Path:
    path = tmp_path / folder / NAME
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    return path
