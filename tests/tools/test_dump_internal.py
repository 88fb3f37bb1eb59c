"""``kcodec dump`` with kafka-dump-log's internal-topic decoders: the KRaft segments of the shared vectors
decode to their metadata records, and a __consumer_offsets segment built here with kcodec's encoder dumps to
the lines Kafka's DumpLogSegments prints (coordinator key/payload JSON, <DELETE>, unknown record types)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.generated import codec
from kcodec.records.encode import NewRecord, encode_batch
from kcodec.tools.dump.internal import control_text

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "public"
TS = 1700000000000


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _versioned(entity: str, version: int, value: dict) -> bytes:
    return struct.pack(">h", version) + codec(entity, version).build(value)


def _offsets_segment(directory: Path) -> Path:
    key = _versioned("offset_commit_key", 1, {"group": "g1", "topic": "orders", "partition": 0})
    commit = _versioned(
        "offset_commit_value", 3, {"offset": 42, "leader_epoch": 7, "metadata": "", "commit_timestamp": TS}
    )
    subscription = _versioned(
        "consumer_protocol_subscription",
        1,
        {"topics": ["orders"], "user_data": None, "owned_partitions": [{"topic": "orders", "partitions": [0]}]},
    )
    assignment = _versioned(
        "consumer_protocol_assignment",
        0,
        {"assigned_partitions": [{"topic": "orders", "partitions": [0, 1]}], "user_data": None},
    )
    member = {
        "member_id": "m1",
        "group_instance_id": None,
        "client_id": "c",
        "client_host": "/127.0.0.1",
        "rebalance_timeout": 300000,
        "session_timeout": 45000,
        "subscription": subscription,
        "assignment": assignment,
    }
    group = _versioned(
        "group_metadata_value",
        3,
        {
            "protocol_type": "consumer",
            "generation": 5,
            "protocol": "range",
            "leader": "m1",
            "current_state_timestamp": TS + 1,
            "members": [member],
        },
    )
    records = [
        NewRecord(key=key, value=commit, timestamp=TS),
        NewRecord(key=key, value=None, timestamp=TS),  # a tombstone
        NewRecord(key=_versioned("group_metadata_key", 2, {"group": "g1"}), value=group, timestamp=TS),
        NewRecord(key=struct.pack(">h", 99) + b"\x00\x01x", value=b"\x00\x00", timestamp=TS),  # unknown type
    ]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "00000000000000000000.log"
    path.write_bytes(encode_batch(records))
    return path


# What DumpLogSegments prints after "headerKeys: [] " for each record, from Kafka's format rules.
EXPECTED = [
    'key: {"type":"1","data":{"group":"g1","topic":"orders","partition":0}} '
    'payload: {"version":"3","data":{"offset":42,"leaderEpoch":7,"metadata":"","commitTimestamp":1700000000000}}',
    'key: {"type":"1","data":{"group":"g1","topic":"orders","partition":0}} payload: <DELETE>',
    'key: {"type":"2","data":{"group":"g1"}} payload: {"version":"3","data":{"protocolType":"consumer",'
    '"generation":5,"protocol":"range","leader":"m1","currentStateTimestamp":1700000000001,"members":[{'
    '"memberId":"m1","groupInstanceId":null,"clientId":"c","clientHost":"/127.0.0.1","rebalanceTimeout":300000,'
    '"sessionTimeout":45000,"subscription":{"topics":["orders"],"userData":null,"ownedPartitions":[{"topic":'
    '"orders","partitions":[0]}]},"assignment":{"assignedPartitions":[{"topic":"orders","partitions":[0,1]}],'
    '"userData":null}}]}}',
    "key: Unknown record type 99 at offset 3, skipping.",
]


def _record_tails(out: str) -> list[str]:
    return [line.split("headerKeys: [] ", 1)[1] for line in out.splitlines() if line.startswith("| offset:")]


def test_offsets_decoder_prints_kafkas_lines(tmp_path: Path, capsys) -> None:
    path = _offsets_segment(tmp_path / "copy")
    code, out, err = run(capsys, "dump", "--offsets-decoder", str(path))
    assert code == 0, err
    assert _record_tails(out) == EXPECTED


def test_a_consumer_offsets_directory_is_decoded_when_data_is_printed(tmp_path: Path, capsys) -> None:
    path = _offsets_segment(tmp_path / "__consumer_offsets-12")
    code, out, _ = run(capsys, "dump", "--print-data-log", str(path))
    assert code == 0 and _record_tails(out) == EXPECTED
    code, out, _ = run(capsys, "dump", "--deep-iteration", str(path))
    assert code == 0 and "payload" not in out  # nothing printed without --print-data-log, as in Kafka


def test_offsets_decoder_json_gives_typed_keys_and_values(tmp_path: Path, capsys) -> None:
    path = _offsets_segment(tmp_path / "copy")
    code, out, _ = run(capsys, "dump", "--offsets-decoder", "--json", str(path))
    assert code == 0
    records = json.loads(out.splitlines()[0])["records"]
    assert records[0]["key"] == {"type": 1, "version": 1, "data": {"group": "g1", "topic": "orders", "partition": 0}}
    assert records[0]["value"]["version"] == 3 and records[0]["value"]["data"]["offset"] == 42
    assert records[1]["value"] is None and records[1]["recordName"] == "offset_commit"
    assert "unknown record type 99" in records[3]["decodeError"]


def test_two_topic_decoders_are_a_usage_error(tmp_path: Path, capsys) -> None:
    path = _offsets_segment(tmp_path / "copy")
    code, _, err = run(capsys, "dump", "--offsets-decoder", "--cluster-metadata-decoder", str(path))
    assert code == 2 and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["jamestjw", "thanhliemtu"])
def test_shared_kraft_segments_decode_to_their_records(name: str, capsys) -> None:
    vector = json.loads((VECTORS / f"pub_segment_cluster_metadata_{name}.json").read_text())
    path = VECTORS / vector["file"]
    code, out, err = run(capsys, "dump", "--cluster-metadata-decoder", "--as-log", str(path))
    assert code == 0, err
    payloads = [json.loads(t.split("payload: ", 1)[1]) for t in _record_tails(out)]
    assert len(payloads) == vector["recordCount"]
    assert {p["type"] for p in payloads} <= {"FEATURE_LEVEL_RECORD", "TOPIC_RECORD", "PARTITION_RECORD"}
    assert payloads[0] == {
        "type": "FEATURE_LEVEL_RECORD",
        "version": 0,
        "data": {"name": "metadata.version", "featureLevel": 20},
    }
    topics = [p["data"] for p in payloads if p["type"] == "TOPIC_RECORD"]
    partitions = [p["data"] for p in payloads if p["type"] == "PARTITION_RECORD"]
    assert topics and partitions
    assert {p["topicId"] for p in partitions} <= {t["topicId"] for t in topics}  # partitions of the topics listed
    # the same bytes the vector lists, value by value
    values = [r["value"] for b in vector["batches"] for r in b["records"]]
    assert len(values) == len(payloads)


def test_kraft_control_records_print_as_kafka_names_them() -> None:
    header = codec("snapshot_header_record", 0).build({"version": 0, "last_contained_log_timestamp": 5})
    assert control_text(3, header) == 'SnapshotHeader {"version":0,"lastContainedLogTimestamp":5}'
    voters = codec("voters_record", 0).build(
        {
            "version": 0,
            "voters": [
                {
                    "voter_id": 1,
                    "voter_directory_id": __import__("uuid").UUID(int=0),
                    "endpoints": [{"name": "CONTROLLER", "host": "h", "port": 9093}],
                    "k_raft_version_feature": {"min_supported_version": 0, "max_supported_version": 1},
                }
            ],
        }
    )
    assert control_text(6, voters) == (
        'KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA",'
        '"endpoints":[{"name":"CONTROLLER","host":"h","port":9093}],'
        '"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}'
    )
    assert control_text(0, b"") is None  # transaction markers print as before
