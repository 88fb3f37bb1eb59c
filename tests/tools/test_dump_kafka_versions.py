"""`kcodec dump` prints Kafka 4.3's kafka-dump-log lines by default (the Java tool, KAFKA-14579) and the
Scala tool's lines of Kafka up to 4.2 under --kafka-version 4.2: the record line's CRC brace, the
--skip-record-metadata data line without a key, non-consecutive offsets; and, as both do, index and
time-index errors and non-consecutive offsets on stderr after all files, under absolute paths."""

from __future__ import annotations

import json

import pytest

from kcodec.cli import main
from tests.helpers.batches import V0_ENTRY, V2_BATCH

LOG = "00000000000000000000.log"
V0_RECORD = "| offset: 0 NoTimestampType: -1 keySize: 3 valueSize: 5 isValid: true crc: 592888119"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def at_offset(batch: bytes, offset: int) -> bytes:
    return offset.to_bytes(8, "big") + batch[8:]


def test_legacy_record_line_loses_the_stray_brace_by_default(tmp_path, capsys):
    log = tmp_path / LOG
    log.write_bytes(V0_ENTRY)
    _, out, _ = run(capsys, "dump", log, "--print-data-log")
    assert out.splitlines()[3] == V0_RECORD + " key: key payload: value"
    _, out, _ = run(capsys, "dump", log, "--print-data-log", "--kafka-version", "4.2")
    assert out.splitlines()[3] == V0_RECORD + "} key: key payload: value"


def test_skip_record_metadata_without_a_key(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"key": None, "value": "v"}) + "\n")
    log = tmp_path / LOG
    assert run(capsys, "write", log, "-i", src)[0] == 0
    _, out, _ = run(capsys, "dump", log, "--print-data-log", "--skip-record-metadata")
    assert out.splitlines()[3] == "| payload: v"
    _, out, _ = run(capsys, "dump", log, "--print-data-log", "--skip-record-metadata", "--kafka-version", "3.9")
    assert out.splitlines()[3] == " payload: v"  # the Scala tool's prefix went with the key


def test_non_consecutive_offsets_after_all_files_with_absolute_paths(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / LOG).write_bytes(V2_BATCH + at_offset(V2_BATCH, 5) + at_offset(V2_BATCH, 9))
    (tmp_path / "b" / "00000000000000000100.log").write_bytes(at_offset(V2_BATCH, 100))
    names = ["a/" + LOG, "b/00000000000000000100.log"]
    code, out, err = run(capsys, "dump", *names, "--deep-iteration")
    assert code == 0 and out.count("Dumping") == 2
    a, b = (str((tmp_path / n).resolve()) for n in names)
    # the Java tool counts from -1: a file whose first record is not offset 0 reports it; ascending order
    assert err.splitlines() == [
        f"Non-consecutive offsets in {a}",
        "  0 is followed by 5",
        "  5 is followed by 9",
        f"Non-consecutive offsets in {b}",
        "  -1 is followed by 100",
    ]
    _, _, err = run(capsys, "dump", *names, "--deep-iteration", "--kafka-version", "4.2")
    assert err.splitlines() == [f"Non-consecutive offsets in {a}", "  5 is followed by 9", "  0 is followed by 5"]


@pytest.fixture
def indexed(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text(
        "".join(json.dumps({"key": str(i), "value": "v" * 300, "timestamp": 1000 + i}) + "\n" for i in range(40))
    )
    log = tmp_path / LOG
    code, _, err = run(capsys, "write", log, "-i", src, "--batch-size", "5", "--index")
    assert code == 0, err
    return tmp_path / "00000000000000000000.index", tmp_path / "00000000000000000000.timeindex"


def test_time_index_errors_in_kafkas_words_after_all_files(indexed, capsys, monkeypatch):
    index, timeindex = indexed
    monkeypatch.chdir(timeindex.parent)
    data = bytearray(timeindex.read_bytes())
    first_ts = int.from_bytes(data[0:8], "big")
    data[0:8] = (first_ts + 7).to_bytes(8, "big")  # the first entry's timestamp no longer matches its batch
    timeindex.write_bytes(bytes(data))
    code, out, err = run(capsys, "dump", timeindex.name, index.name)
    assert code == 0
    assert out.splitlines()[0] == f"Dumping {timeindex.name}"
    assert f"Dumping {index.name}" in out.splitlines()  # the report waits for the last file
    assert err.splitlines() == [
        f"Found timestamp mismatch in :{timeindex.resolve()}",
        f"  Index timestamp: {first_ts + 7}, log timestamp: {first_ts}",
    ]


def test_index_mismatches_after_all_files(indexed, capsys, monkeypatch):
    index, _ = indexed
    monkeypatch.chdir(index.parent)
    data = bytearray(index.read_bytes())
    data[0:4] = (3).to_bytes(4, "big")  # its batch ends at offset 4
    data[8:12] = (6).to_bytes(4, "big")  # its batch ends at offset 9
    index.write_bytes(bytes(data))
    _, _, err = run(capsys, "dump", index.name, LOG)
    lines = err.splitlines()
    assert lines[0] == f"Mismatches in :{index.resolve()}"
    assert [ln.split(",")[0] for ln in lines[1:3]] == [
        "  Index offset: 6",
        "  Index offset: 3",
    ]  # a TreeMap, descending


@pytest.mark.parametrize("version", ["4", "four.two", "4.2.1"])
def test_bad_kafka_version_is_a_usage_error(tmp_path, capsys, version):
    log = tmp_path / LOG
    log.write_bytes(V2_BATCH)
    with pytest.raises(SystemExit) as exc:
        main(["dump", str(log), "--kafka-version", version])
    assert exc.value.code == 2
    assert "Kafka release" in capsys.readouterr().err
