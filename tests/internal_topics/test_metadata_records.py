"""The KRaft metadata records completed for Kafka 4.1's MetadataRecordType (ACLs, SCRAM credentials,
delegation tokens, ClearElr), the __share_group_state and __remote_log_metadata registries: each record
decodes by its api key or record type from bytes kcodec's encoders framed, and prints as kafka-dump-log
names it; a frame version other than 1 is a typed error."""

from __future__ import annotations

import struct
import uuid

import pytest

from kcodec.cli import main
from kcodec.generated import codec
from kcodec.generated.registries import REGISTRIES
from kcodec.internal_topics.registry import FrameVersionError, decode_internal, registry_for_topic
from kcodec.records.encode import NewRecord, encode_batch
from kcodec.runtime.varint import encode_uvarint

# Kafka 4.1's MetadataRecordType: api key -> record (6, 13 and 16 were retired before 3.0)
KAFKA_41_METADATA = {
    0: "register_broker_record",
    1: "unregister_broker_record",
    2: "topic_record",
    3: "partition_record",
    4: "config_record",
    5: "partition_change_record",
    7: "fence_broker_record",
    8: "unfence_broker_record",
    9: "remove_topic_record",
    10: "delegation_token_record",
    11: "user_scram_credential_record",
    12: "feature_level_record",
    14: "client_quota_record",
    15: "producer_ids_record",
    17: "broker_registration_change_record",
    18: "access_control_entry_record",
    19: "remove_access_control_entry_record",
    20: "no_op_record",
    21: "zk_migration_state_record",
    22: "remove_user_scram_credential_record",
    23: "begin_transaction_record",
    24: "end_transaction_record",
    25: "abort_transaction_record",
    26: "remove_delegation_token_record",
    27: "register_controller_record",
    28: "clear_elr_record",
}

ACL_ID = uuid.UUID(int=1)
NEW_RECORDS = {
    10: {
        "owner": "User:alice",
        "requester": "User:admin",
        "renewers": ["User:bob", "User:carol"],
        "issue_timestamp": 1,
        "max_timestamp": 3,
        "expiration_timestamp": 2,
        "token_id": "tok",
    },
    11: {
        "name": "alice",
        "mechanism": 1,
        "salt": b"salt",
        "stored_key": b"\x01\x02",
        "server_key": b"\x03",
        "iterations": 4096,
    },
    18: {
        "id": ACL_ID,
        "resource_type": 2,
        "resource_name": "orders",
        "pattern_type": 3,
        "principal": "User:alice",
        "host": "*",
        "operation": 3,
        "permission_type": 3,
    },
    19: {"id": ACL_ID},
    22: {"name": "alice", "mechanism": 1},
    26: {"token_id": "tok"},
    28: {"topic_name": ""},
}


def _framed(api_key: int, entity: str, value: dict, frame: int = 1) -> bytes:
    return encode_uvarint(frame) + encode_uvarint(api_key) + encode_uvarint(0) + codec(entity, 0).build(value)


def test_the_cluster_metadata_registry_covers_kafka_41() -> None:
    registry = {r["type"]: r["value"] for r in REGISTRIES["cluster_metadata"]["records"]}
    assert registry == KAFKA_41_METADATA


@pytest.mark.parametrize("api_key", sorted(NEW_RECORDS))
def test_new_metadata_records_decode_by_api_key(api_key: int) -> None:
    entity = KAFKA_41_METADATA[api_key]
    r = decode_internal("cluster_metadata", None, _framed(api_key, entity, NEW_RECORDS[api_key]))
    assert r.error is None and r.name == entity and r.value is not None
    assert {k: r.value.value[k] for k in NEW_RECORDS[api_key]} == NEW_RECORDS[api_key]


def test_new_metadata_records_print_as_kafka_names_them(tmp_path, capsys) -> None:
    values = [_framed(k, KAFKA_41_METADATA[k], v) for k, v in sorted(NEW_RECORDS.items())]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(encode_batch([NewRecord(key=None, value=v, timestamp=0) for v in values]))
    assert main(["dump", "--cluster-metadata-decoder", str(path)]) == 0
    out = capsys.readouterr().out
    payloads = [line.split("payload: ", 1)[1] for line in out.splitlines() if line.startswith("| offset:")]
    assert payloads[0] == (
        '{"type":"DELEGATION_TOKEN_RECORD","version":0,"data":{"owner":"User:alice","requester":"User:admin",'
        '"renewers":["User:bob","User:carol"],"issueTimestamp":1,"maxTimestamp":3,"expirationTimestamp":2,'
        '"tokenId":"tok"}}'
    )
    assert payloads[1] == (
        '{"type":"USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"alice","mechanism":1,"salt":"c2FsdA==",'
        '"storedKey":"AQI=","serverKey":"Aw==","iterations":4096}}'
    )
    assert payloads[2] == (
        '{"type":"ACCESS_CONTROL_ENTRY_RECORD","version":0,"data":{"id":"AAAAAAAAAAAAAAAAAAAAAQ","resourceType":2,'
        '"resourceName":"orders","patternType":3,"principal":"User:alice","host":"*","operation":3,'
        '"permissionType":3}}'
    )
    assert [p.split('"', 4)[3] for p in payloads[3:]] == [
        "REMOVE_ACCESS_CONTROL_ENTRY_RECORD",
        "REMOVE_USER_SCRAM_CREDENTIAL_RECORD",
        "REMOVE_DELEGATION_TOKEN_RECORD",
        "CLEAR_ELR_RECORD",
    ]
    assert payloads[-1] == '{"type":"CLEAR_ELR_RECORD","version":0,"data":{"topicName":""}}'


def test_share_group_state_records_decode_by_record_type() -> None:
    key = {"group_id": "g", "topic_id": uuid.UUID(int=2), "partition": 0}
    value = {"snapshot_epoch": 0, "leader_epoch": 1, "start_offset": 5, "state_batches": []}
    r = decode_internal(
        "share_group_state",
        struct.pack(">h", 1) + codec("share_update_key", 0).build(key),
        struct.pack(">h", 0) + codec("share_update_value", 0).build(value),
    )
    assert r.error is None and r.name == "share_update" and r.key is not None and r.value is not None
    assert r.value.value["delivery_complete_count"] == -1  # the tagged field's default when absent
    assert registry_for_topic("__share_group_state-11") == "share_group_state"
    assert registry_for_topic("__remote_log_metadata-0") == "remote_log_metadata"


def test_a_frame_version_other_than_1_is_a_typed_error() -> None:
    value = _framed(19, "remove_access_control_entry_record", {"id": ACL_ID}, frame=2)
    r = decode_internal("remote_log_metadata", None, value)
    assert isinstance(r.error, FrameVersionError) and r.error.frame_version == 2 and r.error.position == 0
    r = decode_internal("cluster_metadata", None, value)
    assert isinstance(r.error, FrameVersionError)
