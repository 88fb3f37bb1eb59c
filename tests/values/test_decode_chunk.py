"""``ValueDecoder.decode_chunk``, the path a chunk of values takes into typed columns (Spark, pipeline):
value by value the same values and the same errors (kind, message, byte position) as ``try_decode``, over
values confluent-kafka's serializers wrote (two Avro writer versions read as the latest, Protobuf, JSON
Schema) mixed with every kind of value that does not decode."""

from __future__ import annotations

import json

from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer

from kcodec.values.decoder import ValueDecoder
from kcodec.values.registry_topic import read_registry_topic
from kcodec.values.sources import RegistryStateSource
from tests.helpers.schema_registry import ctx, mock_client, proto_classes, registry_records, write_topic

V1 = {"type": "record", "name": "Row", "fields": [{"name": "id", "type": "long"}]}
V2 = {**V1, "fields": [*V1["fields"], {"name": "tag", "type": "string", "default": "none"}]}


def test_a_chunk_decodes_as_its_values_one_by_one(tmp_path) -> None:
    client = mock_client()
    one = AvroSerializer(client, json.dumps(V1))({"id": 1}, ctx("rows"))
    two = AvroSerializer(client, json.dumps(V2))({"id": 2, "tag": "b"}, ctx("rows"))
    cls = proto_classes({"m.proto": 'syntax = "proto3";\nmessage A { string s = 1; }\nmessage B { int64 n = 1; }\n'})
    proto = ProtobufSerializer(cls["B"], client, {"use.deprecated.format": False})(cls["B"](n=7), ctx("clicks"))
    doc = JSONSerializer(json.dumps({"type": "object"}), client)({"x": [1]}, ctx("docs"))
    write_topic(tmp_path / "_schemas-0", registry_records(client))
    decoder = ValueDecoder(RegistryStateSource(read_registry_topic(tmp_path / "_schemas-0"), "test"))
    chunk = [
        one,
        None,
        two,
        b"text",  # not framed
        b"\x00\x00",  # truncated header
        b"\x00\x00\x00\x00\x63\x02",  # unknown id
        one + b"\x00",  # a byte left after the value
        one[:5] + b"\x81",  # a varint that never ends
        proto,
        proto[:6] + b"\x7f",  # a message index past the file's messages
        doc,
        two,
    ]
    values, errors = decoder.decode_chunk(chunk, topic="rows")
    assert len(values) == len(errors) == len(chunk)
    for data, value, error in zip(chunk, values, errors):
        if data is None:
            assert value is None and error is None
            continue
        one_by_one = decoder.try_decode(data, topic="rows")
        assert value == one_by_one.value
        if one_by_one.error is None:
            assert error is None
        else:
            assert (type(error), str(error), error.position) == (
                type(one_by_one.error),
                str(one_by_one.error),
                one_by_one.error.position,
            )
    assert values[0] == AvroDeserializer(client, json.dumps(V2))(one, ctx("rows"))  # v1 read as v2
    assert values[0] == {"id": 1, "tag": "none"} and values[2] == {"id": 2, "tag": "b"}
    assert values[8] == {"n": 7} and values[10] == {"x": [1]}
    assert [e.kind if e else None for e in errors] == [
        None, None, None, "not_framed", "truncated_frame", "unknown_schema_id", "payload", "payload", None,
        "bad_frame", None, None,
    ]  # fmt: skip
    assert errors[6].position == len(one)  # the left-over byte, placed in the whole value
