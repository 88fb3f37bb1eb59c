"""``kcodec dump --offsets-decoder`` on the group coordinator's newer records (consumer, share and streams
groups, record types 3-23): a __consumer_offsets segment written with kcodec's own encoders dumps to the
lines Kafka's DumpLogSegments (CoordinatorRecordMessageParser) prints for them, a tombstone to ``<DELETE>``,
and unknown or damaged records are reported one by one while the dump goes on."""

from __future__ import annotations

import json
from pathlib import Path

from kcodec.cli import main
from tests.helpers.coordinator_logs import coordinator_segment

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
    path = coordinator_segment(tmp_path / "copy")
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
    path = coordinator_segment(tmp_path / "__consumer_offsets-3")  # decoded because of the directory's name
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
