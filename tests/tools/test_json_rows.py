"""`kcodec write`'s JSON fast path (blocks of lines read by pyarrow into Arrow columns, written by the
kernel's column encoder) against the per-line path (`records_io.parse_record`, `encode_batch`): the same
bytes on valid input, the same one-line error (same line number) on bad input, whichever block the bad
line falls in."""

from __future__ import annotations

import base64
import json
import random

import pytest

pytest.importorskip("pyarrow")

from kcodec.cli import main
from kcodec.tools import json_rows
from tests.helpers.damage import damaged

pytestmark = pytest.mark.usefixtures("one_command_line")  # tests/conftest.py

if not json_rows.available():
    pytest.skip("no compiled column encoder: kcodec write reads line by line only", allow_module_level=True)


def _text(data: bytes | None, encoding: str):
    if data is None:
        return None
    if encoding == "hex":
        return data.hex()
    if encoding == "base64":
        return base64.b64encode(data).decode()
    return data.decode("utf-8")


def _valid_lines(n: int, encoding: str, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        raw = rng.randbytes(rng.randrange(0, 40)) if encoding != "utf8" else f'v{i} é\u2028"q\\'.encode()
        record: dict = {"value": _text(raw if i % 9 else None, encoding)}
        if i % 4:
            record["key"] = _text(b"k%d" % i if i % 6 else b"", encoding)
        if i % 5 == 1:
            record["headers"] = None
        elif i % 5:
            record["headers"] = [["h", _text(b"x" * (i % 3), encoding)], ['q"\\é', None]][: i % 3]
        if i % 7:
            record["timestamp"] = 1_700_000_000_000 + i if i % 11 else None
        if i % 13 == 0:
            record.update(offset="ignored", crc=1, sequence=None)  # fields parse_record reads over
        out.append(json.dumps(record, ensure_ascii=i % 2 == 0, separators=(",", ":") if i % 3 else None))
    return out


def _write(tmp_path, monkeypatch, lines: list[str] | bytes, fast: bool, *options: str, name: str = "out.log"):
    src = tmp_path / "in.jsonl"
    src.write_bytes(lines if isinstance(lines, bytes) else "".join(x + "\n" for x in lines).encode())
    out = tmp_path / name
    monkeypatch.setattr(json_rows, "BLOCK_BYTES", 700)  # many blocks, batches across them
    if not fast:
        monkeypatch.setattr(json_rows, "available", lambda: False)
    return main(["write", str(out), "-i", str(src), "--batch-size", "10", *options]), out


def _both(tmp_path, monkeypatch, capsys, lines, *options):
    results = []
    for fast in (True, False):
        with monkeypatch.context() as m:
            code, out = _write(tmp_path, m, lines, fast, *options, name=f"out-{fast}.log")
        captured = capsys.readouterr()
        results.append((code, out.read_bytes() if out.exists() else None, captured.err))
    return results


@pytest.mark.parametrize("encoding", ["utf8", "hex", "base64"])
@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_valid_input_writes_the_same_bytes(tmp_path, monkeypatch, capsys, encoding, compression):
    lines = _valid_lines(97, encoding)
    fast, slow = _both(tmp_path, monkeypatch, capsys, lines, "--encoding", encoding, "--compression", compression)
    assert fast == slow
    assert fast[0] == 0 and len(fast[1]) > 97 * 20


def test_fast_path_takes_the_plain_blocks(tmp_path, monkeypatch):
    seen = []
    real = json_rows._columns
    monkeypatch.setattr(json_rows, "_columns", lambda *a: seen.append(real(*a)) or seen[-1])
    code, _ = _write(tmp_path, monkeypatch, _valid_lines(60, "hex"), True, "--encoding", "hex")
    assert code == 0
    assert len(seen) > 5 and all(chunk is not None for chunk in seen)


def test_mixed_input_writes_the_same_bytes(tmp_path, monkeypatch, capsys):
    """Blank lines, headers as objects and dumped batches send their blocks to the per-line path; the
    blocks around them stay columns, and batches are cut at the same records."""
    lines = _valid_lines(80, "utf8")
    lines[20] = "   "
    lines[33] = json.dumps({"value": "v", "headers": {"a": "b"}})
    dumped = {"baseOffset": 0, "magic": 2, "records": [{"key": "6b", "value": "76", "timestamp": 5}]}
    lines.insert(50, json.dumps(dumped))
    fast, slow = _both(tmp_path, monkeypatch, capsys, lines)
    assert fast == slow and fast[0] == 0


BAD = {
    "not JSON": "{oops",
    "unknown field": '{"value":"a","colour":"red"}',
    "a number key": '{"key":5}',
    "a boolean timestamp": '{"timestamp":true}',
    "a float timestamp": '{"timestamp":1.5}',
    "a negative timestamp": '{"timestamp":-5}',
    "a timestamp past int64": '{"timestamp":99999999999999999999}',
    "headers not pairs": '{"headers":[["h"]]}',
    "a null header": '{"headers":[null]}',
    "a null header key": '{"headers":[[null,"v"]]}',
    "a header value number": '{"headers":[["h",1]]}',
    "a lone surrogate": '{"value":"\\ud800"}',
    "two objects on a line": '{"value":"a"} {"value":"b"}',
    "an array": "[1,2]",
    "null": "null",
    "null with spaces": "  null ",
    "false": "false",
    "a string": '"text"',
    "a dumped batch line": '{"records":[{"control":{"typeName":"COMMIT"}}]}',
}
WORDED_BY_THE_ENCODER = {"a negative timestamp", "a timestamp past int64"}  # as before: no line number


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("at", [0, 37])
def test_bad_input_gives_the_same_error(tmp_path, monkeypatch, capsys, case, at):
    lines = _valid_lines(60, "utf8")
    lines.insert(at, BAD[case])
    fast, slow = _both(tmp_path, monkeypatch, capsys, lines)
    assert fast == slow
    assert fast[0] != 0 and fast[1] is None
    assert fast[2].count("\n") == 1
    assert f"line {at + 1}" in fast[2] or case in WORDED_BY_THE_ENCODER


@pytest.mark.parametrize(
    "line",
    [
        '{"value":"a","value":"b"}',  # pyarrow refuses a duplicate name, json.loads keeps the last
        '{"timestamp":9223372036854775}',  # fits in ms, not in the column's microseconds
    ],
)
def test_unusual_valid_lines_are_written_as_before(tmp_path, monkeypatch, capsys, line):
    lines = _valid_lines(40, "utf8")
    lines.insert(25, line)
    fast, slow = _both(tmp_path, monkeypatch, capsys, lines)
    assert fast == slow and fast[0] == 0


@pytest.mark.parametrize(
    "encoding,value",
    [("hex", "abc"), ("hex", "zz"), ("hex", "ab cd"), ("base64", "YQ"), ("base64", "Y*=="), ("utf8", None)],
)
def test_bad_or_unusual_text_is_decided_by_the_per_line_path(tmp_path, monkeypatch, capsys, encoding, value):
    lines = _valid_lines(40, encoding)
    lines.insert(25, json.dumps({"key": value, "value": _text(b"v", encoding)}))
    fast, slow = _both(tmp_path, monkeypatch, capsys, lines, "--encoding", encoding)
    assert fast == slow


def test_invalid_utf8_gives_the_same_error(tmp_path, monkeypatch, capsys):
    data = "".join(x + "\n" for x in _valid_lines(30, "utf8")).encode() + b'{"value":"\xff"}\n'
    fast, slow = _both(tmp_path, monkeypatch, capsys, data)
    assert fast == slow and "line 31: not UTF-8" in fast[2]


def test_partition_directory_and_last_line_without_newline(tmp_path, monkeypatch, capsys):
    data = "\n".join(_valid_lines(45, "hex")).encode()  # no newline at the end
    results = []
    for fast in (True, False):
        with monkeypatch.context() as m:
            code, out = _write(tmp_path, m, data, fast, "--encoding", "hex", name=f"dir-{fast}")
        capsys.readouterr()
        results.append((code, sorted((p.name, p.read_bytes()) for p in out.iterdir() if p.name != ".lock")))
    assert results[0] == results[1] and results[0][0] == 0


def _read(data: bytes, fast: bool, encoding: str = "utf8"):
    """Every record as (key, value, headers, timestamp), or the error's text, from one path."""
    import io

    from kcodec.errors import KcodecError
    from kcodec.records.arrow_encode import new_records
    from kcodec.tools.records_io import read_json_records

    out = []
    try:
        if fast:
            for item in json_rows.read_json_items(io.BytesIO(data), encoding, "in", block_bytes=256):
                if isinstance(item, json_rows.RowsChunk):
                    for r in new_records(item.rows, (0, item.count)):
                        out.append((r.key, r.value, tuple(r.headers), r.timestamp))
                else:
                    out.append(item)
        else:
            for item in read_json_records(data.split(b"\n"), encoding, False, "in"):
                out.append(item)
    except KcodecError as exc:
        return str(exc)
    normal = []
    for item in out:
        if isinstance(item, dict):
            item = (item["key"], item["value"], tuple(item["headers"]), item.get("timestamp", -1))
        normal.append(item)
    return normal


@pytest.mark.parametrize("encoding", ["hex", "utf8"])
@pytest.mark.parametrize("seed", range(3))
def test_mutated_lines_read_the_same_on_both_paths(seed, encoding):
    """Random damage to valid lines (a character dropped, doubled or replaced by JSON punctuation): both paths
    give the same records or the same error."""
    rng = random.Random(seed)
    base = "\n".join(_valid_lines(30, encoding, seed)).encode() + b"\n"
    alphabet = b'{}[]",:\\ nul0123456789abcdefxz\t\r\n'
    for _ in range(60):
        data = damaged(rng, base, alphabet, rng.randrange(1, 4))
        assert _read(data, True, encoding) == _read(data, False, encoding), data
