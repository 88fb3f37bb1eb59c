"""A registry's ``_schemas`` topic on disk, built from confluent-kafka's mock registry client's registrations
(records as the Schema Registry writes them), read back by kcodec: the registry state equals the mock
client's; deletions, configs and damaged records as the registry's own replay treats them."""

from __future__ import annotations

import json

import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference

from kcodec.log.writer import SegmentWriter
from kcodec.values.errors import SchemaSourceError
from kcodec.values.registry_topic import find_registry_partition, read_registry_topic
from tests.helpers.schema_registry import (
    mock_client,
    registrations,
    registry_records,
    schema_key,
    schema_value,
    write_topic,
)

AVRO_A1 = '{"type": "record", "name": "A", "fields": [{"name": "x", "type": "int"}]}'
AVRO_A2 = '{"type": "record", "name": "A", "fields": [{"name": "x", "type": "int"}, {"name": "y", "type": "int", "default": 0}]}'  # noqa: E501
PROTO = 'syntax = "proto3"; message P { string s = 1; }'
JSON_S = '{"type": "object"}'


@pytest.fixture
def client():
    c = mock_client()
    c.register_schema("a-value", Schema(AVRO_A1, "AVRO"))
    c.register_schema("a-value", Schema(AVRO_A2, "AVRO"))
    c.register_schema("p.proto", Schema(PROTO, "PROTOBUF"))
    c.register_schema("q-value", Schema(PROTO, "PROTOBUF", [SchemaReference("p.proto", "p.proto", 1)]))
    c.register_schema("j-value", Schema(JSON_S, "JSON"))
    return c


def _state_rows(state) -> list[tuple]:
    return sorted(
        (
            s.subject,
            s.version,
            s.id,
            s.schema_type,
            s.schema,
            tuple((r.name, r.subject, r.version) for r in s.references),
        )
        for s in state.versions.values()
    )


def _mock_rows(client) -> list[tuple]:
    return sorted(
        (subject, version, schema_id, schema.schema_type, schema.schema_str,
         tuple((r.name, r.subject, r.version) for r in schema.references or []))
        for subject, version, schema_id, schema in registrations(client)
    )  # fmt: skip


def test_the_state_equals_the_mock_clients(client, tmp_path) -> None:
    directory = write_topic(tmp_path / "_schemas-0", registry_records(client))
    state = read_registry_topic(str(tmp_path))  # a log directory holding the partition
    assert _state_rows(state) == _mock_rows(client)
    assert state.damaged == [] and state.configs == {None: "BACKWARD"} and state.records == 7
    assert state.latest("a-value").version == 2 and state.latest("a-value").id == 2
    assert state.by_id(4).references[0].subject == "p.proto"
    assert str(find_registry_partition(str(directory)).path) == str(directory)


def test_deletions_as_the_registry_replays_them(client, tmp_path) -> None:
    records = registry_records(client)
    a2 = client.get_version("a-value", 2)
    j1 = client.get_version("j-value", 1)
    records += [
        # soft delete of a-value v2: the same key, deleted:true (the last record per key wins)
        (schema_key("a-value", 2), schema_value("a-value", 2, a2.schema_id, a2.schema, deleted=True)),
        # hard delete of j-value v1: a null value
        (schema_key("j-value", 1), None),
        # DELETE_SUBJECT soft-deletes a-value's versions up to 1
        (json.dumps({"keytype": "DELETE_SUBJECT", "subject": "a-value", "magic": 0}).encode(),
         json.dumps({"subject": "a-value", "version": 1}).encode()),
        (json.dumps({"keytype": "CONFIG", "subject": "a-value", "magic": 0}).encode(),
         json.dumps({"compatibilityLevel": "FULL"}).encode()),
        (json.dumps({"keytype": "MODE", "subject": None, "magic": 0}).encode(), b'{"mode": "READWRITE"}'),
    ]  # fmt: skip
    state = read_registry_topic(str(write_topic(tmp_path / "_schemas-0", records)))
    assert state.version("a-value", 1).deleted and state.version("a-value", 2).deleted
    assert state.latest("a-value") is None
    assert state.by_id(a2.schema_id).deleted  # still served by id, as the registry does
    assert ("j-value", 1) not in state.versions and state.hard_deleted == {("j-value", 1): j1.schema_id}
    assert state.by_id(j1.schema_id) is None
    assert state.configs["a-value"] == "FULL" and state.other_keytypes == {"MODE": 1}


def test_damaged_records_are_reported_and_the_rest_load(client, tmp_path) -> None:
    records = registry_records(client)
    records[3:3] = [
        (b"not json", b"{}"),
        (json.dumps({"keytype": "SCHEMA", "subject": "z", "version": 1, "magic": 1}).encode(), b'{"schema": 5}'),
        (json.dumps({"keytype": "SCHEMA", "subject": "z", "version": 1, "magic": 1}).encode(), b"{truncated"),
        (None, b"{}"),
        (json.dumps({"subject": "no keytype"}).encode(), None),
    ]
    state = read_registry_topic(str(write_topic(tmp_path / "_schemas-0", records)))
    assert _state_rows(state) == _mock_rows(client)
    reasons = [(d.offset, d.reason) for d in state.damaged]
    assert [o for o, _ in reasons] == [3, 4, 5, 6, 7]
    assert "key is not JSON" in reasons[0][1] and "no schema text" in reasons[1][1]
    assert "value is not JSON" in reasons[2][1] and reasons[3][1] == "no key" and "no keytype" in reasons[4][1]


def test_a_damaged_batch_is_skipped_and_reported(client, tmp_path) -> None:
    directory = write_topic(tmp_path / "_schemas-0", registry_records(client), per_batch=1)
    log = directory / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    data[-3] ^= 0xFF  # the last batch's last record (j-value): its CRC no longer holds
    log.write_bytes(bytes(data))
    state = read_registry_topic(str(directory))
    assert len(state.damaged) == 1 and "damaged bytes" in state.damaged[0].reason
    assert _state_rows(state) == [r for r in _mock_rows(client) if r[0] != "j-value"]


def test_no_registry_topic_is_one_error(tmp_path) -> None:
    with SegmentWriter(tmp_path / "orders-0"):
        pass
    with pytest.raises(SchemaSourceError, match="no _schemas-N partition directory"):
        read_registry_topic(str(tmp_path))
