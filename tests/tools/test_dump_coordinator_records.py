"""``kcodec dump --offsets-decoder`` on the group coordinator's newer records (consumer, share and streams
groups, record types 3-23): a __consumer_offsets segment written here with kcodec's own encoders dumps to the
lines Kafka's DumpLogSegments (CoordinatorRecordMessageParser) prints for them, a tombstone to ``<DELETE>``,
and unknown or damaged records are reported one by one while the dump goes on."""

from __future__ import annotations

import json
import struct
import uuid
from pathlib import Path

from kcodec.cli import main
from kcodec.generated import codec
from kcodec.records.encode import NewRecord, encode_batch

TS = 1700000000000
TOPIC = uuid.UUID(bytes=bytes(15) + b"\x01")  # Kafka prints it as AAAAAAAAAAAAAAAAAAAAAQ


def _key(record_type: int, entity: str, value: dict) -> bytes:
    return struct.pack(">h", record_type) + codec(entity, 0).build(value)


def _value(entity: str, value: dict, version: int = 0) -> bytes:
    return struct.pack(">h", version) + codec(entity, version).build(value)


def _member_metadata() -> dict:
    return {
        "instance_id": None,
        "rack_id": "r1",
        "client_id": "c",
        "client_host": "/127.0.0.1",
        "subscribed_topic_names": ["orders"],
        "subscribed_topic_regex": None,
        "rebalance_timeout_ms": 30000,
        "server_assignor": "uniform",
        "classic_member_metadata": {
            "session_timeout_ms": 45000,
            "supported_protocols": [{"name": "range", "metadata": b"\x00\x01"}],
        },
    }


def _streams_member() -> dict:
    return {
        "instance_id": None,
        "rack_id": None,
        "client_id": "s",
        "client_host": "/127.0.0.1",
        "rebalance_timeout_ms": -1,
        "topology_epoch": 2,
        "process_id": "p1",
        "user_endpoint": {"host": "h", "port": 8080},
        "client_tags": [{"key": "zone", "value": "a"}],
    }


def _topology() -> dict:
    changelog = {"name": "app-store-changelog", "partitions": 0, "replication_factor": 0, "topic_configs": []}
    return {
        "epoch": 2,
        "subtopologies": [
            {
                "subtopology_id": "0",
                "source_topics": ["orders"],
                "source_topic_regex": [],
                "state_changelog_topics": [changelog],
                "repartition_sink_topics": [],
                "repartition_source_topics": [],
                "copartition_groups": [
                    {"source_topics": [0], "source_topic_regex": [], "repartition_source_topics": []}
                ],
            }
        ],
    }


def _segment(directory: Path) -> Path:
    g = {"group_id": "g1"}
    gm = {"group_id": "g1", "member_id": "m1"}
    records = [
        (
            _key(3, "consumer_group_metadata_key", g),
            _value("consumer_group_metadata_value", {"epoch": 4, "metadata_hash": 77}),
        ),
        (
            _key(5, "consumer_group_member_metadata_key", gm),
            _value("consumer_group_member_metadata_value", _member_metadata()),
        ),
        (
            _key(8, "consumer_group_current_member_assignment_key", gm),
            _value(
                "consumer_group_current_member_assignment_value",
                {
                    "member_epoch": 4,
                    "previous_member_epoch": 3,
                    "state": 0,
                    "assigned_partitions": [{"topic_id": TOPIC, "partitions": [0, 1]}],
                    "partitions_pending_revocation": [],
                },
            ),
        ),
        (
            _key(16, "consumer_group_regular_expression_key", {"group_id": "g1", "regular_expression": "ord.*"}),
            _value("consumer_group_regular_expression_value", {"topics": ["orders"], "version": 12, "timestamp": TS}),
        ),
        (
            _key(11, "share_group_metadata_key", g),
            _value("share_group_metadata_value", {"epoch": 1, "metadata_hash": -5}),
        ),
        (
            _key(15, "share_group_state_partition_metadata_key", g),
            _value(
                "share_group_state_partition_metadata_value",
                {
                    "initializing_topics": [],
                    "initialized_topics": [{"topic_id": TOPIC, "topic_name": "orders", "partitions": [0]}],
                    "deleting_topics": [],
                },
            ),
        ),
        (_key(23, "streams_group_topology_key", g), _value("streams_group_topology_value", _topology())),
        (
            _key(19, "streams_group_member_metadata_key", gm),
            _value("streams_group_member_metadata_value", _streams_member()),
        ),
        (_key(19, "streams_group_member_metadata_key", gm), None),  # a tombstone
        (struct.pack(">h", 99) + b"\x00\x02g1", b"\x00\x00"),  # a record type Kafka 4.1 does not define
        (_key(17, "streams_group_metadata_key", g), b"\x00\x00\x00\x00"),  # a value cut short
        (
            _key(20, "streams_group_target_assignment_metadata_key", g),
            _value("streams_group_target_assignment_metadata_value", {"assignment_epoch": 9}),
        ),
    ]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "00000000000000000000.log"
    path.write_bytes(encode_batch([NewRecord(key=k, value=v, timestamp=TS) for k, v in records]))
    return path


# What DumpLogSegments prints after "headerKeys: [] " for each record: the key's record type as a string,
# the value's version as a string, lowerCamel names, uuids in Kafka's base64, bytes in standard base64,
# tagged fields only when they differ from their defaults.
EXPECTED = [
    'key: {"type":"3","data":{"groupId":"g1"}} payload: {"version":"0","data":{"epoch":4,"metadataHash":77}}',
    'key: {"type":"5","data":{"groupId":"g1","memberId":"m1"}} payload: {"version":"0","data":{"instanceId":null,'
    '"rackId":"r1","clientId":"c","clientHost":"/127.0.0.1","subscribedTopicNames":["orders"],'
    '"subscribedTopicRegex":null,"rebalanceTimeoutMs":30000,"serverAssignor":"uniform","classicMemberMetadata":'
    '{"sessionTimeoutMs":45000,"supportedProtocols":[{"name":"range","metadata":"AAE="}]}}}',
    'key: {"type":"8","data":{"groupId":"g1","memberId":"m1"}} payload: {"version":"0","data":{"memberEpoch":4,'
    '"previousMemberEpoch":3,"state":0,"assignedPartitions":[{"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":[0,1]}],'
    '"partitionsPendingRevocation":[]}}',
    'key: {"type":"16","data":{"groupId":"g1","regularExpression":"ord.*"}} payload: {"version":"0","data":'
    '{"topics":["orders"],"version":12,"timestamp":1700000000000}}',
    'key: {"type":"11","data":{"groupId":"g1"}} payload: {"version":"0","data":{"epoch":1,"metadataHash":-5}}',
    'key: {"type":"15","data":{"groupId":"g1"}} payload: {"version":"0","data":{"initializingTopics":[],'
    '"initializedTopics":[{"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","topicName":"orders","partitions":[0]}],'
    '"deletingTopics":[]}}',
    'key: {"type":"23","data":{"groupId":"g1"}} payload: {"version":"0","data":{"epoch":2,"subtopologies":[{'
    '"subtopologyId":"0","sourceTopics":["orders"],"sourceTopicRegex":[],"stateChangelogTopics":[{"name":'
    '"app-store-changelog","partitions":0,"replicationFactor":0,"topicConfigs":[]}],"repartitionSinkTopics":[],'
    '"repartitionSourceTopics":[],"copartitionGroups":[{"sourceTopics":[0],"sourceTopicRegex":[],'
    '"repartitionSourceTopics":[]}]}]}}',
    'key: {"type":"19","data":{"groupId":"g1","memberId":"m1"}} payload: {"version":"0","data":{"instanceId":null,'
    '"rackId":null,"clientId":"s","clientHost":"/127.0.0.1","rebalanceTimeoutMs":-1,"topologyEpoch":2,'
    '"processId":"p1","userEndpoint":{"host":"h","port":8080},"clientTags":[{"key":"zone","value":"a"}]}}',
    'key: {"type":"19","data":{"groupId":"g1","memberId":"m1"}} payload: <DELETE>',
    "key: Unknown record type 99 at offset 9, skipping.",
    "key: Error at offset 10, skipping. Could not read record with version 0 from value's buffer due to: ",
    'key: {"type":"20","data":{"groupId":"g1"}} payload: {"version":"0","data":{"assignmentEpoch":9}}',
]


def _record_tails(out: str) -> list[str]:
    return [line.split("headerKeys: [] ", 1)[1] for line in out.splitlines() if line.startswith("| offset:")]


def test_new_group_records_print_as_kafka_prints_them(tmp_path: Path, capsys) -> None:
    path = _segment(tmp_path / "copy")
    assert main(["dump", "--offsets-decoder", str(path)]) == 0
    tails = _record_tails(capsys.readouterr().out)
    assert len(tails) == len(EXPECTED)
    damaged = 10
    for i, (got, want) in enumerate(zip(tails, EXPECTED)):
        if i == damaged:  # Kafka's prefix, then what kcodec found and where
            assert got.startswith(want) and "(at byte" in got, got
        else:
            assert got == want


def test_new_group_records_as_typed_json(tmp_path: Path, capsys) -> None:
    path = _segment(tmp_path / "__consumer_offsets-3")  # decoded because of the directory's name
    assert main(["dump", "--print-data-log", "--json", str(path)]) == 0
    records = json.loads(capsys.readouterr().out.splitlines()[0])["records"]
    names = [r["recordName"] for r in records]
    assert names[:9] == [
        "consumer_group_metadata",
        "consumer_group_member_metadata",
        "consumer_group_current_member_assignment",
        "consumer_group_regular_expression",
        "share_group_metadata",
        "share_group_state_partition_metadata",
        "streams_group_topology",
        "streams_group_member_metadata",
        "streams_group_member_metadata",
    ]
    assert records[0]["key"] == {"type": 3, "version": 0, "data": {"groupId": "g1"}}
    assert records[0]["value"] == {"version": 0, "data": {"epoch": 4, "metadataHash": 77}}
    assert records[7]["value"]["data"]["userEndpoint"] == {"host": "h", "port": 8080}
    assert records[8]["value"] is None  # the tombstone
    assert "unknown record type 99" in records[9]["decodeError"]
    assert "value's buffer" in records[10]["decodeError"]
    assert records[11]["value"]["data"] == {"assignmentEpoch": 9}  # the dump went on
