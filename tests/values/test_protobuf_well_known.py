"""Protobuf's well-known types decoded by Protobuf's JSON mapping: values confluent-kafka's ProtobufSerializer
wrote (a message holding a Timestamp, a Duration, wrappers, a Struct, a FieldMask, an Any, repeated and map
Timestamps), decoded by kcodec.values; the JSON text kcodec prints is what protobuf's own ``json_format``
prints for the message confluent-kafka's deserializer gives (a Timestamp as RFC 3339 with its nanoseconds)."""

from __future__ import annotations

import datetime
import json

import pytest
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from google.protobuf import json_format

from kcodec.values.decoder import ValueDecoder
from kcodec.values.errors import PayloadError
from kcodec.values.json_text import value_json
from kcodec.values.registry_topic import read_registry_topic
from kcodec.values.sources import RegistryStateSource
from tests.helpers.schema_registry import ctx, mock_client, proto_classes, registry_records, write_topic

PROTO = {
    "wkt.proto": 'syntax = "proto3";\npackage wkt;\n'
    'import "google/protobuf/timestamp.proto";\nimport "google/protobuf/duration.proto";\n'
    'import "google/protobuf/wrappers.proto";\nimport "google/protobuf/struct.proto";\n'
    'import "google/protobuf/field_mask.proto";\nimport "google/protobuf/any.proto";\n'
    "message Tag { string name = 1; }\n"
    "message Event { google.protobuf.Timestamp at = 1; google.protobuf.Duration took = 2;\n"
    "  google.protobuf.Int32Value retries = 3; google.protobuf.StringValue note = 4;\n"
    "  google.protobuf.Struct attrs = 5; google.protobuf.FieldMask mask = 6; google.protobuf.Any extra = 7;\n"
    "  repeated google.protobuf.Timestamp seen = 8; map<string, google.protobuf.Timestamp> due = 9;\n"
    "  google.protobuf.BytesValue blob = 10; }\n"
}


@pytest.fixture(scope="module")
def decoded(tmp_path_factory):
    root = tmp_path_factory.mktemp("wkt")
    client = mock_client()
    cls = proto_classes(PROTO)
    event = cls["wkt.Event"]()
    event.at.seconds, event.at.nanos = 1_764_230_400, 123_456_789
    event.took.seconds, event.took.nanos = 1, 500_000_000
    event.retries.value = 3
    event.note.value = ""  # set, though empty: the wrapper says so
    event.attrs.update({"tier": "gold", "score": 1.5, "tags": ["a", None]})
    event.mask.paths.extend(["a.b", "c"])
    event.extra.Pack(cls["wkt.Tag"](name="t"))
    event.seen.add(seconds=0)
    event.due["x"].seconds = 86_400
    event.blob.value = b"\x00\xff"
    conf = {"use.deprecated.format": False}
    value = ProtobufSerializer(cls["wkt.Event"], client, conf)(event, ctx("events"))
    write_topic(root / "_schemas-0", registry_records(client))
    decoder = ValueDecoder(RegistryStateSource(read_registry_topic(root / "_schemas-0"), "test"))
    expected = ProtobufDeserializer(cls["wkt.Event"], conf)(value, ctx("events"))
    return decoder.decode_value(value, topic="events")[1], expected, cls


def test_dump_text_is_protobufs_json_mapping(decoded) -> None:
    value, expected, cls = decoded
    text = value_json(value)
    pool = cls["wkt.Event"].DESCRIPTOR.file.pool  # the schema's: it holds the Any's type
    assert json_format.Parse(text, cls["wkt.Event"](), descriptor_pool=pool) == expected  # protobuf reads it back
    mapped = json.loads(json_format.MessageToJson(expected, preserving_proto_field_name=True, descriptor_pool=pool))
    assert json.loads(text) == mapped
    assert json.loads(text)["at"] == "2025-11-27T08:00:00.123456789Z"
    assert json.loads(text)["extra"] == {"@type": "type.googleapis.com/wkt.Tag", "name": "t"}


def test_values_are_python_values(decoded) -> None:
    value, _, _ = decoded
    at = value["at"]
    assert at == datetime.datetime(2025, 11, 27, 8, 0, 0, 123456, tzinfo=datetime.timezone.utc)
    assert value["seen"] == [datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)]
    assert value["due"]["x"].isoformat() == "1970-01-02T00:00:00Z"
    assert value["took"] == "1.500s" and value["mask"] == "a.b,c"
    assert value["retries"] == 3 and value["note"] == "" and value["blob"] == b"\x00\xff"
    assert value["attrs"] == {"tier": "gold", "score": 1.5, "tags": ["a", None]}


def test_a_timestamp_out_of_range_is_a_payload_error(decoded) -> None:
    _, _, cls = decoded
    from kcodec.values.protobuf import message_value

    bad = cls["wkt.Event"]()
    bad.at.seconds = 2**40  # past 9999-12-31
    with pytest.raises(PayloadError, match="google.protobuf.Timestamp"):
        message_value(bad)
