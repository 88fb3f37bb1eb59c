"""`kcodec dump` prints what kafka-dump-log.sh prints for the spec's worked examples
(DumpLogSegments' lines for the worked examples), and `kcodec verify` finds what is wrong and where."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kcodec.cli import main
from tests.helpers.batches import COMMIT_BATCH, V0_ENTRY, V1_ENTRY, V2_BATCH

VECTORS = Path(__file__).parents[1] / "vectors" / "public"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def segment(tmp_path: Path, data: bytes, name="00000000000000000000.log") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_v2_dump_equals_kafka_dump_log(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    segment(tmp_path, V2_BATCH)
    code, out, _ = run(capsys, "dump", "00000000000000000000.log", "--print-data-log")
    assert code == 0
    assert out.splitlines() == [
        "Dumping 00000000000000000000.log",
        "Log starting offset: 0",
        "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
        "partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty "
        "position: 0 CreateTime: 0 size: 76 magic: 2 compresscodec: none crc: 470251265 isvalid: true",
        "| offset: 0 CreateTime: 0 keySize: 3 valueSize: 5 sequence: -1 headerKeys: [] key: key payload: value",
    ]


def test_v0_dump_lines(tmp_path, capsys):
    path = segment(tmp_path, V0_ENTRY)
    _, out, _ = run(capsys, "dump", str(path), "--print-data-log", "--kafka-version", "4.2")
    lines = out.splitlines()
    assert lines[2] == (
        "offset: 0 position: 0 NoTimestampType: -1 size: 34 magic: 0 compresscodec: none crc: 592888119 isvalid: true"
    )
    assert lines[3] == (
        "| offset: 0 NoTimestampType: -1 keySize: 3 valueSize: 5 isValid: true crc: 592888119} key: key payload: value"
    )


def test_v1_dump_batch_line(tmp_path, capsys):
    _, out, _ = run(capsys, "dump", str(segment(tmp_path, V1_ENTRY)))
    assert out.splitlines()[2] == (
        "offset: 0 position: 0 CreateTime: 0 size: 42 magic: 1 compresscodec: none crc: 213653215 isvalid: true"
    )


def test_commit_marker_record_line(tmp_path, capsys):
    _, out, _ = run(capsys, "dump", str(segment(tmp_path, COMMIT_BATCH)), "--deep-iteration")
    assert out.splitlines()[-1] == (
        "| offset: 0 CreateTime: 0 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] "
        "endTxnMarker: COMMIT coordinatorEpoch: 5"
    )
    assert "isTransactional: true isControl: true" in out.splitlines()[2]


def test_bad_crc_is_shown_not_fatal(tmp_path, capsys):
    damaged = bytearray(V2_BATCH)
    damaged[-3] ^= 0xFF  # a byte of the value: the structure holds, the CRC does not
    code, out, _ = run(capsys, "dump", str(segment(tmp_path, bytes(damaged))))
    assert code == 0 and "isvalid: false" in out


def test_partial_tail_reported_like_kafka(tmp_path, capsys):
    path = segment(tmp_path, V2_BATCH + V2_BATCH[:30])
    _, out, _ = run(capsys, "dump", str(path))
    assert out.splitlines()[-1] == "Found 30 invalid bytes at the end of 00000000000000000000.log"


def test_non_consecutive_offsets_go_to_stderr(tmp_path, capsys):
    second = (5).to_bytes(8, "big") + V2_BATCH[8:]
    _, _, err = run(capsys, "dump", str(segment(tmp_path, V2_BATCH + second)), "--deep-iteration")
    assert err.splitlines() == [
        f"Non-consecutive offsets in {tmp_path / '00000000000000000000.log'}",
        "  0 is followed by 5",
    ]


@pytest.mark.parametrize(
    "name",
    sorted(
        p.stem
        for p in VECTORS.glob("*.json")
        if json.loads(p.read_text())["expected"] == "ok" and not json.loads(p.read_text()).get("optional")
    ),
)
def test_json_dump_matches_vector(name, capsys):
    want = json.loads((VECTORS / f"{name}.json").read_text())
    code, out, _ = run(capsys, "dump", "--json", "--as-log", str(VECTORS / f"{name}.bin"))
    assert code == 0
    got = [json.loads(line) for line in out.splitlines() if not json.loads(line).get("partialBatch")]
    assert len(got) == len(want["batches"])
    for g, w in zip(got, want["batches"]):
        assert (g["position"], g["magic"], g["crc"], g["crcValid"]) == (
            w["position"],
            w["magic"],
            w["crc"],
            w["crcValid"],
        )
        assert g["compression"] == w["attributes"]["compression"]
    records = [r for g in got for r in g["records"]]
    assert [r["offset"] for r in records] == [r["offset"] for r in want["records"]]
    assert [(r["key"], r["value"]) for r in records] == [(r["key"], r["value"]) for r in want["records"]]
    assert [r["timestamp"] if r["timestampType"] != "NoTimestampType" else None for r in records] == [
        r["timestamp"] for r in want["records"]
    ]
    assert [r["headers"] for r in records] == [r.get("headers", []) for r in want["records"]]


def test_verify_valid_and_damaged(tmp_path, capsys):
    good = segment(tmp_path, V2_BATCH + (1).to_bytes(8, "big") + V0_ENTRY[8:])
    code, out, _ = run(capsys, "verify", str(good))
    assert code == 0 and out.strip().endswith("valid")
    damaged = bytearray(V2_BATCH + V2_BATCH)
    damaged[76 + 40] ^= 0x10  # inside the second batch's header, covered by its CRC
    bad = segment(tmp_path, bytes(damaged), "00000000000000000001.log")
    code, out, _ = run(capsys, "verify", str(bad))
    assert code == 1
    assert "byte 76, batch offset 0: Record is corrupt" in out


def test_verify_strict_partial_tail_and_lenient(tmp_path, capsys):
    path = segment(tmp_path, V2_BATCH + V2_BATCH[:20])
    code, out, _ = run(capsys, "verify", str(path))
    assert code == 1 and "byte 76: truncated" in out
    code, _, _ = run(capsys, "verify", "--lenient", str(path))
    assert code == 0


@pytest.mark.parametrize("name", ["pub_sarama_fetch_partial", "pub_sarama_fetch_overflow", "pub_sarama_magic2_message"])
def test_verify_error_vectors(name, capsys):
    want = json.loads((VECTORS / f"{name}.json").read_text())
    code, out, _ = run(capsys, "verify", str(VECTORS / f"{name}.bin"))
    assert code == 1
    kinds = want["error"]["acceptKinds"]
    assert ("truncated" in kinds and "truncated" in out) or ("length" in kinds and "smaller than" in out)
