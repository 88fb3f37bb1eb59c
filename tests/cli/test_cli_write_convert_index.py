"""`kcodec write`, `convert` and `index` from the command line."""

from __future__ import annotations

import json

import pytest

from kcodec.cli import main
from kcodec.log.index import read_offset_index, read_time_index
from kcodec.records.reader import read_batches

LINES = [
    {"key": "a", "value": "one", "timestamp": 1000},
    {"key": None, "value": "two", "headers": {"h": "x"}, "timestamp": 1001},
    {"value": None, "timestamp": 1002},
]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def jsonl(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in LINES))
    return path


def records(path):
    return [(r.offset, r.key, r.value, r.headers, r.timestamp) for b in read_batches(path) for r in b.records]


EXPECTED = [(0, b"a", b"one", (), 1000), (1, None, b"two", (("h", b"x"),), 1001), (2, None, None, (), 1002)]


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_write_segment_file(tmp_path, jsonl, capsys, compression):
    out = tmp_path / "00000000000000000000.log"
    code, text, _ = run(capsys, "write", out, "-i", jsonl, "--compression", compression, "--batch-size", 2)
    assert code == 0 and "3 records in 2 batches" in text
    assert records(out) == EXPECTED
    assert {b.compression for b in read_batches(out)} == {compression}


def test_write_magic_and_base_offset(tmp_path, jsonl, capsys):
    out = tmp_path / "x.log"
    code, _, err = run(capsys, "write", out, "-i", jsonl, "--magic", 1, "--base-offset", 10)
    assert code == 3 and "headers" in err and not out.exists()  # headers cannot go into v1
    jsonl.write_text("".join(json.dumps({k: v for k, v in x.items() if k != "headers"}) + "\n" for x in LINES))
    code, _, _ = run(capsys, "write", out, "-i", jsonl, "--magic", 1, "--base-offset", 10)
    assert code == 0
    assert [r[0] for r in records(out)] == [10, 11, 12]
    assert {b.magic for b in read_batches(out)} == {1}


def test_write_partition_directory_with_indexes(tmp_path, jsonl, capsys):
    out = tmp_path / "topic-0"
    code, text, _ = run(capsys, "write", out, "-i", jsonl, "--batch-size", 1)
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "00000000000000000000.index",
        "00000000000000000000.log",
        "00000000000000000000.timeindex",
    ]
    assert records(out / "00000000000000000000.log") == EXPECTED


def test_dump_json_round_trips_through_write(tmp_path, jsonl, capsys):
    src = tmp_path / "00000000000000000000.log"
    run(capsys, "write", src, "-i", jsonl, "--compression", "lz4")
    _, dumped, _ = run(capsys, "dump", "--json", src)
    (tmp_path / "dump.jsonl").write_text(dumped)
    again = tmp_path / "again.log"
    code, _, _ = run(
        capsys,
        "write",
        again,
        "-i",
        tmp_path / "dump.jsonl",
        "--encoding",
        "hex",
        "--keep-offsets",
        "--compression",
        "lz4",
    )
    assert code == 0 and again.read_bytes() == src.read_bytes()


def test_write_rejects_bad_json_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "a"}\nnot json\n')
    code, _, err = run(capsys, "write", tmp_path / "o.log", "-i", bad)
    assert code == 3 and err.count("\n") == 1 and "line 2" in err
    assert not (tmp_path / "o.log").exists()


@pytest.mark.parametrize("magic,compression", [(0, "gzip"), (1, "snappy"), (2, "zstd"), (2, "none")])
def test_convert_keeps_offsets(tmp_path, jsonl, capsys, magic, compression):
    src = tmp_path / "00000000000000000000.log"
    jsonl.write_text("".join(json.dumps({k: v for k, v in x.items() if k != "headers"}) + "\n" for x in LINES))
    run(capsys, "write", src, "-i", jsonl, "--base-offset", 0)
    out = tmp_path / "out.log"
    code, text, _ = run(
        capsys,
        "convert",
        src,
        out,
        "--magic",
        magic,
        "--compression",
        compression,
        *(["--allow-lossy"] if magic == 0 else []),
    )
    assert code == 0, text
    got = [(r.offset, r.key, r.value) for b in read_batches(out) for r in b.records]
    assert got == [(0, b"a", b"one"), (1, None, b"two"), (2, None, None)]
    assert {(b.magic, b.compression) for b in read_batches(out)} == {(magic, compression)}


def test_convert_refuses_lossy(tmp_path, jsonl, capsys):
    src = tmp_path / "00000000000000000000.log"
    run(capsys, "write", src, "-i", jsonl)
    code, _, err = run(capsys, "convert", src, tmp_path / "o.log", "--magic", 1)
    assert code == 3 and "--allow-lossy" in err and not (tmp_path / "o.log").exists()


def test_index_build_and_check(tmp_path, capsys):
    lines = tmp_path / "many.jsonl"
    lines.write_text(
        "".join(json.dumps({"key": str(i), "value": "v" * 300, "timestamp": 1000 + i}) + "\n" for i in range(100))
    )
    log = tmp_path / "00000000000000000000.log"
    run(capsys, "write", log, "-i", lines, "--batch-size", 5)
    code, text, _ = run(capsys, "index", log, "--interval", 1000)
    assert code == 0
    entries = read_offset_index(tmp_path / "00000000000000000000.index", 0)
    assert entries and all(e.offset % 5 == 4 for e in entries)
    assert read_time_index(tmp_path / "00000000000000000000.timeindex", 0)
    code, text, _ = run(capsys, "index", "--check", log)
    assert code == 0 and "agree" in text
    # damage the offset index: point an entry at the wrong offset
    data = bytearray((tmp_path / "00000000000000000000.index").read_bytes())
    data[3] ^= 0x01
    (tmp_path / "00000000000000000000.index").write_bytes(bytes(data))
    code, text, _ = run(capsys, "index", "--check", log)
    assert code == 1 and "offset" in text


def test_dump_index_files_like_kafka(tmp_path, capsys):
    lines = tmp_path / "many.jsonl"
    lines.write_text(
        "".join(json.dumps({"key": str(i), "value": "v" * 300, "timestamp": 1000 + i}) + "\n" for i in range(40))
    )
    log = tmp_path / "00000000000000000000.log"
    run(capsys, "write", log, "-i", lines, "--batch-size", 5, "--index")
    code, out, err = run(
        capsys, "dump", tmp_path / "00000000000000000000.index", tmp_path / "00000000000000000000.timeindex"
    )
    assert code == 0 and err == ""
    got = out.splitlines()
    assert got[0] == f"Dumping {tmp_path / '00000000000000000000.index'}"
    offsets = [ln for ln in got if ln.startswith("offset: ")]
    assert offsets and all(int(ln.split()[1]) % 5 == 4 for ln in offsets)
    assert any(ln.startswith("timestamp: ") for ln in got)
