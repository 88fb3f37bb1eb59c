"""``kcodec write``'s kernel scanner (csrc/json_scan.c) for JSON lines of one exact shape
(``{"key":K,"value":V,"headers":[[name,V],...],"timestamp":T}``, hex): blocks it takes give the columns
pyarrow's reader gives; randomly damaged blocks give the same records or the same error (line numbers
included) as the per-line path; the command writes the same bytes."""

from __future__ import annotations

import io
import random
import re

import pytest

pytest.importorskip("pyarrow")

from kcodec.cli import main
from kcodec.errors import KcodecError
from kcodec.records.arrow_encode import kernel, new_records
from kcodec.tools import json_rows
from kcodec.tools.records_io import read_json_records
from tests.helpers.damage import damaged

if getattr(kernel(), "scan_hex_records", None) is None:
    pytest.skip("no compiled kernel scanner", allow_module_level=True)

_NAMES = ["h", "", "trace id", "a:b,c", "x-y_z.1", "{[]}", "~!@#$%^&*()"]


def _hex(rng: random.Random) -> str:
    if rng.random() < 0.2:
        return "null"
    return '"' + rng.randbytes(rng.choice([0, 1, 2, 7, 16, rng.randrange(60)])).hex() + '"'


def _line(rng: random.Random) -> str:
    sp = (lambda: " ") if rng.random() < 0.3 else (lambda: "")  # json.dumps's default separators, or none
    headers = ",".join(f'["{rng.choice(_NAMES)}",{sp()}{_hex(rng)}]' for _ in range(rng.choice([0, 0, 1, 2, 3])))
    ts = rng.choice(
        ["0", "-1", "-5", "1700000000000", "999999999999999", "-999999999999999", str(rng.randrange(10**9))]
    )
    return (
        f'{{"key":{sp()}{_hex(rng)},{sp()}"value":{sp()}{_hex(rng)},{sp()}"headers":{sp()}[{headers}],'
        f'{sp()}"timestamp":{sp()}{ts}}}'
    )


def _block(seed: int, n: int) -> bytes:
    rng = random.Random(seed)
    return "\n".join(_line(rng) for _ in range(n)).encode() + (b"\n" if seed % 2 else b"")


def _pylists(chunk) -> list:
    rows = chunk.rows
    return [None if a is None else a.to_pylist() for a in (rows.key, rows.value, rows.timestamp_us, rows.headers)]


@pytest.mark.parametrize("seed", range(8))
def test_the_scanner_gives_the_columns_of_pyarrow_s_reader(seed):
    block = _block(seed, 40)
    lines = block.count(b"\n") + (not block.endswith(b"\n"))
    scanned = json_rows._scanned(block)
    assert scanned is not None and scanned.count == lines == 40
    read = json_rows._columns(block, "hex", lines)
    assert read is not None
    assert _pylists(scanned) == _pylists(read)


@pytest.mark.parametrize(
    "line",
    [
        '{"key":"AB","value":null,"headers":[],"timestamp":1}',  # uppercase hex
        '{"key":"abc","value":null,"headers":[],"timestamp":1}',  # odd length
        '{"value":null,"key":null,"headers":[],"timestamp":1}',  # another order
        '{"key":null,"value":null,"headers":[],"timestamp":01}',  # not JSON
        '{"key":null,"value":null,"headers":[],"timestamp":1234567890123456}',  # 16 digits
        '{"key":null,"value":null,"headers":[],"timestamp":1.0}',
        '{"key":null,"value":null,"headers":[["\\u0041","00"]],"timestamp":1}',  # an escape
        '{"key":null,"value":null,"headers":[["é","00"]],"timestamp":1}',  # not ASCII
        '{"key":null,"value":null,"headers":[],"timestamp":1} ',
        '{"key":null,"value":null,"headers":[],"timestamp":1}\r',
        '{"key":null,"value":null,"headers":[],"timestamp":1,"offset":3}',
        '{"key":null,"value":null,"headers":[["h"]],"timestamp":1}',
        '{"key" :null,"value":null,"headers":[],"timestamp":1}',
        "",
    ],
)
def test_other_shapes_are_left_to_the_general_way(line):
    block = ("{" + '"key":null,"value":"00","headers":[],"timestamp":1}\n') * 3 + line + "\n"
    assert json_rows._scanned(block.encode()) is None


def _read(data: bytes, fast: bool):
    """Every record as (key, value, headers, timestamp), or the error's text, from one path."""
    out = []
    try:
        if fast:
            for item in json_rows.read_json_items(io.BytesIO(data), "hex", "in", block_bytes=300):
                if isinstance(item, json_rows.RowsChunk):
                    out += [
                        (r.key, r.value, tuple(r.headers), r.timestamp) for r in new_records(item.rows, (0, item.count))
                    ]
                else:
                    out.append(item)
        else:
            out += read_json_records(data.split(b"\n"), "hex", False, "in")
    except KcodecError as exc:
        return str(exc)
    return [
        (i["key"], i["value"], tuple(i["headers"]), i.get("timestamp", -1)) if isinstance(i, dict) else i for i in out
    ]


@pytest.mark.parametrize("seed", range(4))
def test_damaged_lines_read_the_same_as_line_by_line(seed):
    rng = random.Random(100 + seed)
    base = _block(seed, 30)
    alphabet = b'{}[]",:\\ nul0123456789abcdefABxz-.\t\r\n'
    taken = 0
    for _ in range(80):
        data = damaged(rng, base, alphabet, rng.randrange(1, 3))
        taken += json_rows._scanned(data) is not None
        assert _read(data, True) == _read(data, False), data
    assert _read(base, True) == _read(base, False)
    assert taken  # some damage keeps the shape (a digit for a digit)


@pytest.mark.parametrize("bad", [False, True])
def test_the_command_writes_the_same_bytes(tmp_path, monkeypatch, capsys, bad):
    lines = re.sub(r"(\"timestamp\": ?)-", r"\1", _block(3, 500).decode()).splitlines()
    if bad:  # a timestamp the writer refuses, late in the input: the same error, nothing written
        lines[431] = '{"key":null,"value":"00","headers":[],"timestamp":-7}'
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n")
    results = []
    for fast in (True, False):
        with monkeypatch.context() as m:
            if not fast:
                m.setattr(json_rows, "available", lambda: False)
            out = tmp_path / f"out-{fast}.log"
            code = main(["write", str(out), "-i", str(src), "--encoding", "hex", "--batch-size", "64"])
            results.append((code, out.read_bytes() if out.exists() else None, capsys.readouterr().err))
    assert results[0] == results[1]
    assert (results[0][0] == 0) != bad


@pytest.mark.parametrize("block_bytes", [17, 64, 1 << 20])
def test_lines_longer_than_a_read_are_read_whole(block_bytes):
    data = _block(5, 25)
    records = []
    for item in json_rows.read_json_items(io.BytesIO(data), "hex", "in", block_bytes=block_bytes):
        assert isinstance(item, json_rows.RowsChunk)
        records += [(r.key, r.value, tuple(r.headers), r.timestamp) for r in new_records(item.rows, (0, item.count))]
    assert records == _read(data, False)


@pytest.mark.parametrize("size", [0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 48, 100])
def test_hex_of_every_length_with_a_wrong_character_anywhere(size):
    """The scanner decodes 32 digits a step where it can, then pairs: a value of any length is taken whole, and
    one character that is not a lowercase digit, wherever it is in the steps, leaves the block to the general way."""
    good = random.Random(size).randbytes(size).hex()

    def block(value: str) -> bytes:
        line = f'{{"key":"{good[:32]}","value":"{value}","headers":[["h","{value}"]],"timestamp":1}}\n'
        return line.encode() * 2

    scanned = json_rows._scanned(block(good))
    assert scanned is not None
    assert scanned.rows.value.to_pylist() == [bytes.fromhex(good)] * 2
    assert _pylists(scanned) == _pylists(json_rows._columns(block(good), "hex", 2))
    for i in range(len(good)):
        for wrong in "AFG/:`g\\ \x00\x80":
            assert json_rows._scanned(block(good[:i] + wrong + good[i + 1 :])) is None, (i, wrong)
    if good:
        assert json_rows._scanned(block(good[:-1])) is None  # an odd number of digits


class _ReadOnly:
    """A source with only read(): no readinto1, as some file-like objects are."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)

    def read(self, n: int = -1) -> bytes:
        return self._data.read(min(n, 50))  # short reads, as a pipe gives


def test_a_source_with_only_read_gives_the_same_records():
    data = _block(6, 40)
    records = []
    for item in json_rows.read_json_items(_ReadOnly(data), "hex", "in", block_bytes=256):
        assert isinstance(item, json_rows.RowsChunk)
        records += [(r.key, r.value, tuple(r.headers), r.timestamp) for r in new_records(item.rows, (0, item.count))]
    assert records == _read(data, False)
