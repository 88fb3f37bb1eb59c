"""`kcodec dump`, `verify` and `inspect` on Kafka 0.7 segments (`.kafka`) and partition directories:
0.7's DumpLogSegments lines with both byte-offset conventions, deep iteration, `--json`, a torn tail as
0.7's recovery sees it, and 0.7 framing told by the file's name (with a hint when the name is wrong)."""

from __future__ import annotations

import json
from pathlib import Path

from kcodec.cli import main
from kcodec.records.kafka07 import encode_kafka07
from tests.helpers.batches import V2_BATCH


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def partition(tmp_path: Path) -> tuple[Path, int]:
    """clicks-0: two plain messages and a gzip set of three; then a snappy set and a torn write."""
    part = tmp_path / "clicks-0"
    part.mkdir()
    first = encode_kafka07([b"hello", b"world"]) + encode_kafka07([b"x", b"y", b"z"], compression="gzip")
    (part / "00000000000000000000.kafka").write_bytes(first)
    second = encode_kafka07([b"more"], compression="snappy") + encode_kafka07([b"torn"])[:7]
    (part / f"{len(first):020d}.kafka").write_bytes(second)
    return part, len(first)


def test_dump_prints_0_7s_lines_with_both_offsets(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    partition(tmp_path)
    code, out, err = run(capsys, "dump", "clicks-0", "--deep-iteration", "--print-data-log")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:10] == [
        "Dumping clicks-0/00000000000000000000.kafka",
        "Starting offset: 0",
        "offset: 0 isvalid: true payloadsize: 5 magic: 1 compresscodec: NoCompressionCodec nextoffset: 15",
        "payload:\thello",
        "offset: 15 isvalid: true payloadsize: 5 magic: 1 compresscodec: NoCompressionCodec nextoffset: 30",
        "payload:\tworld",
        "offset: 30 isvalid: true payloadsize: 46 magic: 1 compresscodec: GZIPCompressionCodec nextoffset: 86",
        "| offset: 30 isvalid: true payloadsize: 1 magic: 1 compresscodec: NoCompressionCodec nextoffset: 30",
        "| payload:\tx",
        "| offset: 30 isvalid: true payloadsize: 1 magic: 1 compresscodec: NoCompressionCodec nextoffset: 30",
    ]
    last = "| offset: 30 isvalid: true payloadsize: 1 magic: 1 compresscodec: NoCompressionCodec nextoffset: 86"
    assert last in lines
    assert lines[lines.index("Dumping clicks-0/00000000000000000086.kafka") - 1] == "tail of the log is at offset: 86"
    assert lines[-2:] == [
        "tail of the log is at offset: 132",
        "Found 7 invalid bytes at the end of the log at position 46 (entry of 14 bytes, only 7 left): "
        "0.7's recovery truncates them",
    ]


def test_dump_json_has_offsets_and_inner_messages(tmp_path, capsys):
    part, _ = partition(tmp_path)
    code, out, _ = run(capsys, "dump", "--json", "--bytes-encoding", "utf8", str(part / "00000000000000000086.kafka"))
    assert code == 0
    wrapper, tail = (json.loads(line) for line in out.splitlines())
    assert (wrapper["format"], wrapper["offset"], wrapper["nextOffset"], wrapper["compression"]) == (
        "0.7",
        86,
        132,
        "snappy",
    )
    assert wrapper["messages"] == [
        {"offset": 86, "nextOffset": 132, "inner": 0, "crc": wrapper["messages"][0]["crc"], "crcValid": True,
         "payloadSize": 4, "payload": "more"}
    ]  # fmt: skip
    assert tail == {"file": tail["file"], "format": "0.7", "position": 46, "size": 7, "partialEntry": True}


def test_verify_reports_the_torn_tail_and_recover_keeps_what_0_7_keeps(tmp_path, capsys):
    part, second = partition(tmp_path)
    code, out, _ = run(capsys, "verify", str(part))
    assert code == 1
    assert f"{part}/00000000000000000000.kafka: 3 batches, 5 records, 86 bytes: valid" in out
    assert "byte 46, byte offset 132: truncated: the last 7 bytes do not hold a whole message" in out
    assert run(capsys, "verify", "--lenient", str(part))[0] == 0
    out_file = tmp_path / "kept.kafka"
    code, out, _ = run(capsys, "verify", str(part / f"{second:020d}.kafka"), "--recover", str(out_file))
    assert code == 1 and "kept 1 batch (46 bytes)" in out
    assert out_file.read_bytes() == (part / f"{second:020d}.kafka").read_bytes()[:46]


def test_verify_finds_a_bad_crc_and_a_gap_between_segments(tmp_path, capsys):
    part, second = partition(tmp_path)
    seg = part / "00000000000000000000.kafka"
    data = bytearray(seg.read_bytes())
    data[14] ^= 1  # the last byte of "hello"
    seg.write_bytes(bytes(data))
    (part / f"{second:020d}.kafka").rename(part / f"{second + 5:020d}.kafka")
    code, out, _ = run(capsys, "verify", "--json", str(part))
    assert code == 1
    reports = [json.loads(line) for line in out.splitlines()]
    assert reports[0]["problems"][0]["position"] == 0 and "corrupt" in reports[0]["problems"][0]["rule"]
    assert "00000000000000000091.kafka starts at byte offset 91, but" in reports[-1]["problems"][0]["rule"]


def test_inspect_walks_the_0_7_schema_with_byte_offsets(tmp_path, capsys):
    part, _ = partition(tmp_path)
    code, out, _ = run(capsys, "inspect", str(part / "00000000000000000000.kafka"), "--offset", "30")
    assert code == 0
    assert out.splitlines()[0] == "entry at byte 30: kafka07_message v1, 56 bytes, byte offset 30"
    assert "attributes.compression <enum kafka07_codec> = gzip (1)" in out
    assert 'payload[2] = payload "z" (1 B)' in out


def test_the_name_decides_the_framing_and_a_wrong_name_gets_a_hint(tmp_path, capsys):
    part, _ = partition(tmp_path)
    as_log = tmp_path / "00000000000000000000.log"
    as_log.write_bytes((part / "00000000000000000000.kafka").read_bytes())
    code, _, err = run(capsys, "dump", str(as_log))
    assert code == 3 and "its bytes are Kafka 0.7 log entries: 0.7 segments are named .kafka" in err
    v2 = tmp_path / "00000000000000000000.kafka"
    v2.write_bytes(V2_BATCH)
    code, _, err = run(capsys, "dump", str(v2))
    assert code == 3 and "its bytes are Kafka 0.8+ log entries: such segments are named .log" in err


def test_options_that_do_not_apply_to_0_7_are_refused(tmp_path, capsys):
    part, _ = partition(tmp_path)
    code, out, err = run(capsys, "dump", "--skip-corrupt", str(part / "00000000000000000000.kafka"))
    assert (code, out) == (3, "")
    assert err.endswith("00000000000000000000.kafka: --skip-corrupt does not apply to a Kafka 0.7 segment\n")
