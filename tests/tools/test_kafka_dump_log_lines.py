"""The lines kafka-dump-log's own test suite expects from its coordinator decoders (DumpLogSegmentsTest's
testOffsetsMessageParser and testTransactionLogMessageParser, Kafka 4.x), reproduced with kcodec: the same
records are built with kcodec's encoders, written to a one-record segment and dumped with
``kcodec dump --offsets-decoder`` / ``--transaction-log-decoder``.

Two deliberate differences: after Kafka's ``Could not read record with version 0 from value's buffer due
to:`` kcodec says what it found in its own words (Java's exception text cannot be reproduced), and a record
without a key is reported and skipped where Kafka's parser throws and ends the dump."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.generated import codec
from kcodec.records.encode import NewRecord, encode_batch


def _key(record_type: int, entity: str, version: int, value: dict) -> bytes:
    """Kafka's MessageUtil.toCoordinatorTypePrefixedBytes: the record type, then the key."""
    return struct.pack(">h", record_type) + codec(entity, version).build(value)


def _value(entity: str, version: int, value: dict) -> bytes:
    """Kafka's MessageUtil.toVersionPrefixedBytes: the version, then the value."""
    return struct.pack(">h", version) + codec(entity, version).build(value)


def _dump_one(tmp_path: Path, capsys, option: str, key: bytes | None, value: bytes | None) -> str:
    """What kcodec prints for a one-record segment after ``headerKeys: [] ``."""
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(encode_batch([NewRecord(key=key, value=value, timestamp=-1)]))
    assert main(["dump", option, str(path)]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| offset: 0 ")]
    assert len(lines) == 1
    return lines[0].split("headerKeys: [] ", 1)[1]


def _group_member(subscription: bytes, assignment: bytes) -> dict:
    return {
        "member_id": "member",
        "group_instance_id": "instance",
        "client_id": "client",
        "client_host": "host",
        "rebalance_timeout": 1000,
        "session_timeout": 100,
        "subscription": subscription,
        "assignment": assignment,
    }


def _group_metadata(member: dict) -> bytes:
    group = {
        "protocol_type": "consumer",
        "generation": 10,
        "protocol": "range",
        "leader": "member",
        "current_state_timestamp": -1,
        "members": [member],
    }
    return _value("group_metadata_value", 4, group)  # GroupMetadataValue.HIGHEST_SUPPORTED_VERSION


CONSUMER_GROUP_KEY = _key(3, "consumer_group_metadata_key", 0, {"group_id": "group"})
GROUP_KEY = _key(2, "group_metadata_key", 2, {"group": "group"})
TXN_KEY = _key(0, "transaction_log_key", 0, {"transactional_id": "txnId"})

# ConsumerProtocol.serializeSubscription / serializeAssignment write their highest version (3).
SUBSCRIPTION = _value(
    "consumer_protocol_subscription",
    3,
    {
        "topics": ["foo"],
        "user_data": None,
        "owned_partitions": [{"topic": "foo", "partitions": [0]}],
        "generation_id": 0,
        "rack_id": "rack",
    },
)
ASSIGNMENT = _value(
    "consumer_protocol_assignment", 3, {"assigned_partitions": [{"topic": "foo", "partitions": [0]}], "user_data": None}
)

GROUP_PREFIX = (
    'key: {"type":"2","data":{"group":"group"}} payload: {"version":"4","data":{"protocolType":"consumer",'
    '"generation":10,"protocol":"range","leader":"member","currentStateTimestamp":-1,"members":[{"memberId":'
    '"member","groupInstanceId":"instance","clientId":"client","clientHost":"host","rebalanceTimeout":1000,'
    '"sessionTimeout":100,'
)

OFFSETS_CASES = {
    "a valid key and value": (
        CONSUMER_GROUP_KEY,
        _value("consumer_group_metadata_value", 0, {"epoch": 10, "metadata_hash": 0}),
        'key: {"type":"3","data":{"groupId":"group"}} payload: {"version":"0","data":{"epoch":10}}',
    ),
    "the consumer embedded protocol parsed": (
        GROUP_KEY,
        _group_metadata(_group_member(SUBSCRIPTION, ASSIGNMENT)),
        GROUP_PREFIX + '"subscription":{"topics":["foo"],"userData":null,"ownedPartitions":[{"topic":"foo",'
        '"partitions":[0]}],"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":[{"topic":"foo",'
        '"partitions":[0]}],"userData":null}}]}}',
    ),
    "a malformed embedded protocol kept as bytes": (
        GROUP_KEY,
        _group_metadata(_group_member(b"Subscription", b"Assignment")),
        GROUP_PREFIX + '"subscription":"U3Vic2NyaXB0aW9u","assignment":"QXNzaWdubWVudA=="}]}}',
    ),
    "a tombstone": (CONSUMER_GROUP_KEY, None, 'key: {"type":"3","data":{"groupId":"group"}} payload: <DELETE>'),
    "an unknown record type": (
        struct.pack(">h", 32767),
        b"",
        "key: Unknown record type 32767 at offset 0, skipping.",
    ),
}

TXN_CASES = {
    "a valid key and value": (
        TXN_KEY,
        _value(
            "transaction_log_value",
            0,
            {
                "producer_id": 123,
                "producer_epoch": 0,
                "transaction_timeout_ms": 0,
                "transaction_status": 0,
                "transaction_partitions": [],
                "transaction_last_update_timestamp_ms": 0,
                "transaction_start_timestamp_ms": 0,
            },
        ),
        'key: {"type":"0","data":{"transactionalId":"txnId"}} payload: {"version":"0","data":{"producerId":123,'
        '"producerEpoch":0,"transactionTimeoutMs":0,"transactionStatus":0,"transactionPartitions":[],'
        '"transactionLastUpdateTimestampMs":0,"transactionStartTimestampMs":0}}',
    ),
    "a tombstone": (TXN_KEY, None, 'key: {"type":"0","data":{"transactionalId":"txnId"}} payload: <DELETE>'),
    "an unknown record type": (
        struct.pack(">h", 32767),
        b"",
        "key: Unknown record type 32767 at offset 0, skipping.",
    ),
    "every field set, flexible version 1": (
        TXN_KEY,
        _value(
            "transaction_log_value",
            1,
            {
                "producer_id": 12,
                "previous_producer_id": 11,
                "next_producer_id": 10,
                "producer_epoch": 2,
                "transaction_timeout_ms": 14,
                "transaction_status": 0,
                "transaction_partitions": [
                    {"topic": "topic1", "partition_ids": [0, 1, 2]},
                    {"topic": "topic2", "partition_ids": [3, 4, 5]},
                ],
                "transaction_last_update_timestamp_ms": 123,
                "transaction_start_timestamp_ms": 13,
                "client_transaction_version": 0,  # its default: not printed
            },
        ),
        'key: {"type":"0","data":{"transactionalId":"txnId"}} payload: {"version":"1","data":{"producerId":12,'
        '"previousProducerId":11,"nextProducerId":10,"producerEpoch":2,"transactionTimeoutMs":14,'
        '"transactionStatus":0,"transactionPartitions":[{"topic":"topic1","partitionIds":[0,1,2]},{"topic":'
        '"topic2","partitionIds":[3,4,5]}],"transactionLastUpdateTimestampMs":123,"transactionStartTimestampMs":13}}',
    ),
}


@pytest.mark.parametrize("case", list(OFFSETS_CASES))
def test_offsets_message_parser_lines(tmp_path: Path, capsys, case: str) -> None:
    key, value, expected = OFFSETS_CASES[case]
    assert _dump_one(tmp_path, capsys, "--offsets-decoder", key, value) == expected


@pytest.mark.parametrize("case", list(TXN_CASES))
def test_transaction_log_message_parser_lines(tmp_path: Path, capsys, case: str) -> None:
    key, value, expected = TXN_CASES[case]
    assert _dump_one(tmp_path, capsys, "--transaction-log-decoder", key, value) == expected


def test_a_value_of_another_record_type_is_reported_with_kafkas_prefix(tmp_path: Path, capsys) -> None:
    # Kafka's case: an empty ConsumerGroupMemberMetadataValue under a ConsumerGroupMetadata key
    member = {
        "instance_id": None,
        "rack_id": None,
        "client_id": "",
        "client_host": "",
        "subscribed_topic_names": [],
        "subscribed_topic_regex": None,
        "rebalance_timeout_ms": -1,
        "server_assignor": None,
        "classic_member_metadata": None,
    }
    value = _value("consumer_group_member_metadata_value", 0, member)
    line = _dump_one(tmp_path, capsys, "--offsets-decoder", CONSUMER_GROUP_KEY, value)
    prefix = "key: Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: "
    assert line.startswith(prefix) and line.endswith(")") and "(at byte" in line, line


def test_a_record_without_a_key_is_reported_not_fatal(tmp_path: Path, capsys) -> None:
    line = _dump_one(tmp_path, capsys, "--offsets-decoder", None, None)
    assert line == "key: Error at offset 0, skipping. a coordinator record needs a key"


def test_leader_change_is_labelled_as_kafka_labels_it() -> None:
    # DumpLogSegments' printControlRecord: " LeaderChange: " and the JSON (the other KRaft labels have no colon)
    from kcodec.tools.dump.internal import control_text

    value = codec("leader_change_message", 0).build(
        {"version": 0, "leader_id": 1, "voters": [{"voter_id": 1}], "granting_voters": [{"voter_id": 1}]}
    )
    assert control_text(2, value) == (
        'LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}'
    )
