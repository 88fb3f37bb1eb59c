"""Kafka's internal topics decoded by the registries (schemas/internal/registries.yaml): coordinator framing
(int16 record type key, int16 version value, null value a tombstone), metadata framing (uvarint frame
version 1, api key, version), KRaft control records; unknown types and damaged values are reported per
record and decoding goes on."""

from __future__ import annotations

import struct
import uuid

import pytest

from kcodec.errors import SchemaError
from kcodec.generated import codec
from kcodec.generated.registries import REGISTRIES
from kcodec.internal_topics.registry import (
    UnknownRecordTypeError,
    UnsupportedVersionError,
    decode_control,
    decode_internal,
    registry_for_topic,
)
from kcodec.runtime.varint import encode_uvarint


def _key(rtype: int, entity: str, version: int, value: dict) -> bytes:
    return struct.pack(">h", rtype) + codec(entity, version).build(value)


def _value(entity: str, version: int, value: dict) -> bytes:
    return struct.pack(">h", version) + codec(entity, version).build(value)


OFFSET_KEY = {"group": "g", "topic": "t", "partition": 3}
OFFSET_V3 = {"offset": 42, "leader_epoch": 5, "metadata": "", "commit_timestamp": 1000}


def test_registries_are_generated_from_the_schemas() -> None:
    assert REGISTRIES["consumer_offsets"]["topics"] == ["__consumer_offsets"]
    assert {r["type"]: r["value"] for r in REGISTRIES["cluster_metadata"]["records"]}[2] == "topic_record"
    assert registry_for_topic("__consumer_offsets-17") == "consumer_offsets"
    assert registry_for_topic("__cluster_metadata-0") == "cluster_metadata"
    assert registry_for_topic("__consumer_offsets-x") is None and registry_for_topic("orders-0") is None


def test_coordinator_record_and_tombstone() -> None:
    r = decode_internal(
        "consumer_offsets", _key(1, "offset_commit_key", 1, OFFSET_KEY), _value("offset_commit_value", 3, OFFSET_V3)
    )
    assert (r.type, r.name, r.error) == (1, "offset_commit", None)
    assert r.key.value["topic"] == "t" and r.value.version == 3 and r.value.value["leader_epoch"] == 5
    gone = decode_internal("consumer_offsets", _key(2, "group_metadata_key", 2, {"group": "g"}), None)
    assert gone.error is None and gone.value is None and gone.key.value["group"] == "g"


def test_flexible_offset_commit_value_v4() -> None:
    data = _value("offset_commit_value", 4, OFFSET_V3)
    # v4 is flexible: compact metadata string (1 = empty) and an empty tagged section
    assert data == b"\x00\x04" + struct.pack(">qi", 42, 5) + b"\x01" + struct.pack(">q", 1000) + b"\x00"
    r = decode_internal("consumer_offsets", _key(0, "offset_commit_key", 0, OFFSET_KEY), data)
    assert r.value.value["offset"] == 42 and r.value.value["_unknown_tags"] == []


def test_unknown_types_versions_and_damage_are_reported_per_record() -> None:
    unknown = decode_internal("consumer_offsets", struct.pack(">h", 99) + b"xx", b"")
    assert isinstance(unknown.error, UnknownRecordTypeError) and unknown.type == 99
    version = decode_internal("consumer_offsets", _key(1, "offset_commit_key", 1, OFFSET_KEY), b"\x00\x09abc")
    assert isinstance(version.error, UnsupportedVersionError)
    damaged = decode_internal("consumer_offsets", _key(1, "offset_commit_key", 1, OFFSET_KEY), b"\x00\x03\x00")
    assert damaged.error is not None and damaged.error.position is not None
    assert decode_internal("consumer_offsets", None, b"").error is not None  # a coordinator record needs a key


def test_metadata_framing() -> None:
    topic = {"name": "orders", "topic_id": uuid.UUID(int=7)}
    body = codec("topic_record", 0).build(topic)
    r = decode_internal("cluster_metadata", None, encode_uvarint(1) + encode_uvarint(2) + encode_uvarint(0) + body)
    assert (r.name, r.value.version, r.value.value["name"]) == ("topic_record", 0, "orders")
    bad_frame = decode_internal("cluster_metadata", None, encode_uvarint(2) + encode_uvarint(2) + b"\x00" + body)
    assert "frame version 2" in str(bad_frame.error)
    unknown = decode_internal("cluster_metadata", None, b"\x01\x7f\x00")
    assert isinstance(unknown.error, UnknownRecordTypeError) and unknown.type == 127


def test_kraft_control_records() -> None:
    header = codec("snapshot_header_record", 0).build({"version": 0, "last_contained_log_timestamp": 5})
    r = decode_control(3, header)
    assert r.name == "snapshot_header" and r.value.value["last_contained_log_timestamp"] == 5
    assert decode_control(0, b"") is None  # an abort marker is not a KRaft control record
    assert decode_control(3, b"\x00").error is not None


def test_registries_are_checked(tmp_path) -> None:
    from kcodec.codegen import load_schemas

    (tmp_path / "e.yaml").write_text(
        'entity: e\ndoc: E.\nvalid_versions: "0"\nfields:\n  - {name: a, type: int8, doc: A.}\n'
    )
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "r.yaml").write_text(
        "registries:\n  t:\n    doc: T.\n    framing: metadata\n    records:\n      - {type: 1, name: x, value: nope}\n"
    )
    with pytest.raises(SchemaError, match="nope"):
        load_schemas(tmp_path)
    (tmp_path / "sub" / "r.yaml").write_text(
        "registries:\n  t:\n    doc: T.\n    framing: metadata\n    records:\n      - {type: 1, name: x, value: e}\n"
    )
    assert load_schemas(tmp_path).registries["t"]["records"] == [{"type": 1, "name": "x", "value": "e"}]
