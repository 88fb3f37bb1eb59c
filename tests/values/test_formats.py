"""Schema Registry framed values written by confluent-kafka's own serializers (Avro, Protobuf with nested,
non-first messages and references, JSON Schema) over its mock registry client, decoded by kcodec.values with
the schemas of a ``_schemas`` topic built from the mock client's registrations; confluent-kafka's
deserializers give the expected values, fastavro's schemaless_reader is a second opinion for Avro."""

from __future__ import annotations

import datetime
import io
import json
import uuid
from decimal import Decimal

import fastavro
import pytest
from confluent_kafka.schema_registry import Schema
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from google.protobuf import json_format

from kcodec.values.decoder import ValueDecoder
from kcodec.values.errors import (
    BadFrameError,
    NotFramedError,
    PayloadError,
    SchemaParseError,
    SchemaReferenceError,
    TruncatedFrameError,
    UnknownSchemaIdError,
)
from kcodec.values.frame import read_frame, read_protobuf_frame
from kcodec.values.json_text import value_json
from kcodec.values.registry_topic import read_registry_topic
from kcodec.values.sources import RegistryStateSource
from tests.helpers.schema_registry import ctx, mock_client, proto_classes, registry_records, write_topic

ORDER_V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "acme",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 4}},
        {"name": "raw", "type": "bytes"},
        {"name": "digest", "type": {"type": "fixed", "name": "Digest", "size": 4}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["BUY", "SELL"]}},
        {"name": "tags", "type": {"type": "map", "values": "double"}},
        {"name": "lines", "type": {"type": "array", "items": {"type": "record", "name": "Line", "fields": [
            {"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}]}}},
        {"name": "ratio", "type": "float"},
        {"name": "ok", "type": "boolean"},
    ],
}  # fmt: skip
ORDER_V2 = {**ORDER_V1, "fields": [*ORDER_V1["fields"], {"name": "channel", "type": "string", "default": "web"}]}

ORDER = {
    "id": 2**40,
    "amount": Decimal("12345678901234.5678"),
    "raw": b"\x00\xff\x80",
    "digest": b"abcd",
    "note": None,
    "at": datetime.datetime(2026, 11, 27, 8, 0, 0, 123456, tzinfo=datetime.timezone.utc),
    "day": datetime.date(2026, 11, 27),
    "ref": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "kind": "SELL",
    "tags": {"a": 0.1, "b": -2.5},
    "lines": [{"sku": "x", "qty": 3}, {"sku": "y", "qty": -1}],
    "ratio": 0.5,
    "ok": True,
}

PROTO_FILES = {
    "common/money.proto": 'syntax = "proto3";\npackage acme.common;\n'
    "message Money { string currency = 1; int64 units = 2; bytes memo = 3; }\n",
    "orders.proto": 'syntax = "proto3";\npackage acme;\nimport "common/money.proto";\n'
    "message Header { string id = 1; }\n"
    "message Order {\n"
    "  enum Kind { KIND_UNSPECIFIED = 0; BUY = 1; SELL = 2; }\n"
    "  message Line { string sku = 1; sint32 qty = 2; acme.common.Money price = 3;\n"
    "    message Note { string text = 1; } Note note = 4; }\n"
    "  string id = 1; repeated Line lines = 2; Kind kind = 3; map<string, int64> tags = 4;\n"
    "  optional string comment = 5; oneof pay { string card = 6; string iban = 7; } double ratio = 8;\n"
    "  uint64 big = 9; repeated int32 packed = 10; Header header = 11;\n"
    "}\n",
}
JSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Click",
    "type": "object",
    "properties": {"user": {"type": "string"}, "price": {"type": "number"}, "n": {"type": "integer"}},
    "required": ["user"],
}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The mock registry, framed values its serializers wrote, and a decoder over the `_schemas` topic."""
    client = mock_client()
    values: dict[str, bytes] = {}
    v1 = AvroSerializer(client, json.dumps(ORDER_V1))
    values["avro_v1"] = v1(ORDER, ctx("orders"))
    v2 = AvroSerializer(client, json.dumps(ORDER_V2))
    values["avro_v2"] = v2({**ORDER, "channel": "app"}, ctx("orders"))
    values["avro_key"] = AvroSerializer(client, '"string"')("k-1", ctx("orders", key=True))

    classes = proto_classes(PROTO_FILES)
    order_cls, line_cls = classes["acme.Order"], classes["acme.Order.Line"]
    order = order_cls(id="o-1", kind=2, comment="c", iban="DE00", ratio=0.1, big=2**64 - 1, packed=[1, -2, 3])
    line = order.lines.add(sku="s", qty=-7)
    line.price.currency, line.price.units, line.price.memo = "EUR", -(2**40), b"\x00\xff"
    line.note.text = "fragile"
    order.tags["a"] = 2**50
    order.header.id = "h"
    conf = {"use.deprecated.format": False}
    values["proto_order"] = ProtobufSerializer(order_cls, client, conf)(order, ctx("orders-pb"))
    values["proto_line"] = ProtobufSerializer(line_cls, client, conf)(line, ctx("lines"))
    note = line.note
    values["proto_note"] = ProtobufSerializer(classes["acme.Order.Line.Note"], client, conf)(note, ctx("notes"))

    jser = JSONSerializer(json.dumps(JSON_SCHEMA), client)
    click = {"user": "ann", "price": 1.25, "n": 3}
    values["json"] = jser(click, ctx("clicks"))

    directory = write_topic(tmp_path_factory.mktemp("logs") / "_schemas-0", registry_records(client))
    state = read_registry_topic(str(directory))
    return {
        "client": client,
        "values": values,
        "classes": classes,
        "messages": {"proto_order": order, "proto_line": line, "proto_note": note, "json": click},
        "state": state,
        "decoder": ValueDecoder(RegistryStateSource(state, str(directory))),
    }


def test_the_header_is_read_by_the_generated_decoders(world) -> None:
    values = world["values"]
    frame = read_frame(values["avro_v1"])
    assert (frame.schema_id, frame.payload_start, frame.message_indexes) == (1, 5, None)
    # the file's first message: [0] as one 0 byte; a nested message: its path
    order = read_protobuf_frame(values["proto_order"])
    assert order.message_indexes == (1,) and order.payload_start == 7  # Order is the file's second message
    line = read_protobuf_frame(values["proto_line"])
    assert line.message_indexes == (1, 0)
    note = read_protobuf_frame(values["proto_note"])
    assert note.message_indexes == (1, 0, 0)


def test_avro_decodes_as_confluent_kafka_and_fastavro(world) -> None:
    client, values, decoder = world["client"], world["values"], world["decoder"]
    deserializer = AvroDeserializer(client)
    # a v1 value with no subject to resolve to (the topic unknown, two subjects share nothing): as written
    schema_id, value = ValueDecoder(decoder.source, subject="orders-value").decode_value(values["avro_v2"])
    assert schema_id == 2
    assert value == deserializer(values["avro_v2"], ctx("orders"))
    writer = fastavro.parse_schema(ORDER_V2)
    assert value == fastavro.schemaless_reader(io.BytesIO(values["avro_v2"][5:]), writer)
    assert value["amount"] == Decimal("12345678901234.5678") and value["raw"] == b"\x00\xff\x80"


def test_avro_reads_old_writer_versions_as_the_subjects_latest(world) -> None:
    client, values, decoder = world["client"], world["values"], world["decoder"]
    schema_id, value = decoder.decode_value(values["avro_v1"], topic="orders")
    assert schema_id == 1
    assert value["channel"] == "web"  # v2's default: read with the subject's latest version
    reader = AvroDeserializer(client, schema_str=json.dumps(ORDER_V2))  # the same resolution by the library
    assert value == reader(values["avro_v1"], ctx("orders"))
    expected = fastavro.schemaless_reader(io.BytesIO(values["avro_v1"][5:]), fastavro.parse_schema(ORDER_V1))
    assert {k: v for k, v in value.items() if k != "channel"} == expected
    assert decoder.decode_value(values["avro_key"], topic="orders", key=True) == (3, "k-1")


def test_avro_json_text_keeps_exactness(world) -> None:
    _, value = world["decoder"].decode_value(world["values"]["avro_v1"], topic="orders")
    text = value_json(value)
    assert '"amount":12345678901234.5678' in text  # the decimal's own digits, never a float
    assert '"raw":"AP+A"' in text and '"at":"2026-11-27T08:00:00.123456+00:00"' in text
    parsed = json.loads(text, parse_float=Decimal)
    assert parsed["amount"] == ORDER["amount"] and parsed["id"] == 2**40


@pytest.mark.parametrize("which", ["proto_order", "proto_line", "proto_note"])
def test_protobuf_decodes_as_confluent_kafka(world, which: str) -> None:
    """Nested and non-first messages, an imported file registered as a reference; the registry stores what
    confluent-kafka's serializer registered (the descriptor, base64)."""
    values, decoder, message = world["values"], world["decoder"], world["messages"][which]
    cls = type(message)
    expected = ProtobufDeserializer(cls, {"use.deprecated.format": False})(values[which], ctx("t"))
    assert expected == message
    schema_id, value = decoder.decode_value(values[which])
    assert schema_id == read_frame(values[which]).schema_id
    # kcodec's JSON text is the Protobuf JSON mapping with the .proto field names: protobuf's parser reads it back
    assert json_format.Parse(value_json(value), cls()) == expected


def test_protobuf_value_types(world) -> None:
    _, value = world["decoder"].decode_value(world["values"]["proto_order"])
    assert value["big"] == 2**64 - 1 and value["tags"] == {"a": 2**50} and value["kind"] == "SELL"
    assert value["lines"][0]["price"] == {"currency": "EUR", "units": -(2**40), "memo": b"\x00\xff"}
    assert value["card"] is None and value["iban"] == "DE00" and value["comment"] == "c"
    assert value["packed"] == [1, -2, 3] and value["header"] == {"id": "h"}


def test_protobuf_from_proto_text_registered_by_hand(world, tmp_path) -> None:
    """A registry that stores .proto text (the Schema Registry's canonical form): compiled by protoc, the
    import resolved through the same source."""
    client = mock_client()
    from confluent_kafka.schema_registry import SchemaReference

    client.register_schema("common/money.proto", Schema(PROTO_FILES["common/money.proto"], "PROTOBUF"))
    refs = [SchemaReference("common/money.proto", "common/money.proto", 1)]
    client.register_schema("orders-pb-value", Schema(PROTO_FILES["orders.proto"], "PROTOBUF", refs))
    order = world["messages"]["proto_order"]
    # confluent-kafka's serializer reads only descriptors from a registry: its bytes, framed with the text's id
    schema_id = client.get_latest_version("orders-pb-value").schema_id
    data = b"\x00" + schema_id.to_bytes(4, "big") + world["values"]["proto_order"][5:]
    directory = write_topic(tmp_path / "_schemas-0", registry_records(client))
    decoder = ValueDecoder(RegistryStateSource(read_registry_topic(str(directory)), "t"))
    schema_id, value = decoder.decode_value(data)
    assert schema_id == 2
    assert json_format.Parse(value_json(value), type(order)()) == order


def test_json_schema_decodes_as_confluent_kafka(world) -> None:
    values, decoder = world["values"], world["decoder"]
    expected = JSONDeserializer(json.dumps(JSON_SCHEMA), schema_registry_client=world["client"])(
        values["json"], ctx("clicks")
    )
    schema_id, value = decoder.decode_value(values["json"])
    assert value == expected == world["messages"]["json"]
    assert isinstance(value["price"], Decimal)  # exact; 1.25 == Decimal("1.25")


# ---------------------------------------------------------------------------------------------- failures


def test_values_that_stay_raw_say_why(world) -> None:
    decoder, values = world["decoder"], world["values"]
    cases = [
        (b"plain text", NotFramedError, None),
        (b"", NotFramedError, None),
        (b"\x00\x00\x00", TruncatedFrameError, None),
        (b"\x00\x00\x00\x03\xe7" + b"x", UnknownSchemaIdError, 999),
        (values["avro_v1"][:-4], PayloadError, 1),
        (values["avro_v1"] + b"\x01\x02", PayloadError, 1),
        (values["json"][:5] + b"{not json", PayloadError, 8),
        (values["json"][:5] + b'{"price": 1}', PayloadError, 8),  # "user" is required
        (values["json"][:5] + b"[" * 200_000, PayloadError, 8),  # nested past the interpreter's stack
        (values["proto_order"][:5] + b"\x02\x0e" + values["proto_order"][7:], BadFrameError, 5),  # no message 7
        (values["proto_order"][:5] + b"\x7f", BadFrameError, 5),  # a negative count
        (values["proto_order"][:5] + b"\x04\x02", TruncatedFrameError, 5),
        (values["proto_order"][:7] + b"\x0a\xff", PayloadError, 5),  # a length past the end
    ]
    for data, error, schema_id in cases:
        decoded = decoder.try_decode(data)
        assert isinstance(decoded.error, error), (data, decoded)
        assert decoded.schema_id == schema_id and decoded.value is None
        with pytest.raises(error):
            decoder.decode_value(data)


def _state_with(*schemas):
    from kcodec.values.registry import Reference, RegisteredSchema, RegistryState

    state = RegistryState()
    for schema_id, subject, schema_type, text, refs in schemas:
        references = tuple(Reference(n, s, v) for n, s, v in refs)
        state.versions[(subject, 1)] = RegisteredSchema(schema_id, schema_type, text, references, subject, 1)
    return RegistryStateSource(state, "test state")


def test_schemas_that_do_not_parse_or_resolve() -> None:
    source = _state_with(
        (1, "a", "AVRO", '{"type": "record", "name": "A", "fields": [{"name": "x", "type": "nope"}]}', []),
        (2, "b", "PROTOBUF", "syntax = 'proto3'; message { }", []),
        (3, "c", "JSON", "{not json", []),
        (4, "d", "AVRO", '{"type": "record", "name": "D", "fields": [{"name": "e", "type": "E"}]}', [("E", "e", 1)]),
        (5, "e", "AVRO", '{"type": "record", "name": "E", "fields": [{"name": "d", "type": "D"}]}', [("D", "d", 1)]),
        (6, "f", "AVRO", '"int"', [("G", "missing", 3)]),
        (7, "g", "AVRO", '"' + "x" * 200 + '"', []),
    )
    decoder = ValueDecoder(source, max_schema_bytes=100)
    expected = {
        1: (SchemaParseError, "not an Avro schema"),
        2: (SchemaParseError, "protoc"),
        3: (SchemaParseError, "not JSON"),
        4: (SchemaReferenceError, "reference cycle: d v1 -> e v1 -> d v1"),
        6: (SchemaReferenceError, "missing v3"),
        7: (SchemaParseError, "over the limit"),
    }
    for schema_id, (error, words) in expected.items():
        data = bytes([0]) + schema_id.to_bytes(4, "big") + b"\x00"
        with pytest.raises(error, match=words):
            decoder.decode_value(data)
        again = decoder.try_decode(data)  # remembered: the schema is not compiled twice
        assert isinstance(again.error, error) and again.schema_id == schema_id


def test_avro_named_type_references_resolve_through_the_source() -> None:
    money = {"type": "record", "name": "Money", "namespace": "m", "fields": [{"name": "u", "type": "long"}]}
    order = {"type": "record", "name": "O", "fields": [{"name": "p", "type": "m.Money"}]}
    source = _state_with(
        (1, "money", "AVRO", json.dumps(money), []),
        (2, "orders-value", "AVRO", json.dumps(order), [("m.Money", "money", 1)]),
    )
    client = mock_client()
    from confluent_kafka.schema_registry import SchemaReference

    client.register_schema("money", Schema(source.version("money", 1).schema, "AVRO"))
    schema = Schema(source.version("orders-value", 1).schema, "AVRO", [SchemaReference("m.Money", "money", 1)])
    client.register_schema("orders-value", schema)
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    data = AvroSerializer(client, schema, conf=conf)({"p": {"u": 5}}, ctx("orders"))
    assert ValueDecoder(source).decode_value(data) == (2, {"p": {"u": 5}})
    assert AvroDeserializer(client)(data, ctx("orders")) == {"p": {"u": 5}}


def test_json_schema_refs_resolve_through_the_source() -> None:
    """A JSON Schema referring to another by its reference name ($ref), written by confluent-kafka's
    JSONSerializer with the reference registered; a payload breaking the referenced schema is refused."""
    from confluent_kafka.schema_registry import SchemaReference

    address = {"$id": "address.json", "type": "object", "properties": {"zip": {"type": "string"}}, "required": ["zip"]}
    person = {"type": "object", "properties": {"name": {"type": "string"}, "home": {"$ref": "address.json"}}}
    client = mock_client()
    client.register_schema("address", Schema(json.dumps(address), "JSON"))
    schema = Schema(json.dumps(person), "JSON", [SchemaReference("address.json", "address", 1)])
    client.register_schema("people-value", schema)
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    data = JSONSerializer(schema, client, conf=conf)({"name": "ann", "home": {"zip": "10115"}}, ctx("people"))
    source = _state_with(
        (1, "address", "JSON", json.dumps(address), []),
        (2, "people-value", "JSON", json.dumps(person), [("address.json", "address", 1)]),
    )
    decoder = ValueDecoder(source)
    assert decoder.decode_value(data) == (2, {"name": "ann", "home": {"zip": "10115"}})
    bad = data[:5] + b'{"name": "bob", "home": {}}'
    with pytest.raises(PayloadError, match="/home: 'zip' is a required property"):
        decoder.decode_value(bad)


def test_a_missing_optional_dependency_is_one_line_with_the_pip_command(world, monkeypatch) -> None:
    import sys

    from kcodec.values.errors import MissingDependencyError

    monkeypatch.setitem(sys.modules, "fastavro", None)  # import fastavro now raises ImportError
    decoder = ValueDecoder(world["decoder"].source)
    with pytest.raises(MissingDependencyError) as info:
        decoder.decode_value(world["values"]["avro_v1"])
    expected = "decoding Avro values needs fastavro (the confluent extra): pip install 'kcodec[confluent]'"
    assert str(info.value) == expected


def test_an_array_of_items_that_take_no_bytes_is_bounded() -> None:
    """fastavro would loop (and allocate) for the 2^40 nulls a few bytes ask for; kcodec refuses the value,
    and still decodes such arrays of a sane length as fastavro does."""
    from kcodec.runtime.varint import encode_varlong

    schema = {"type": "record", "name": "R", "fields": [
        {"name": "n", "type": "long"},
        {"name": "empties", "type": {"type": "array", "items": {"type": "record", "name": "E", "fields": []}}},
        {"name": "nulls", "type": {"type": "array", "items": "null"}},
    ]}  # fmt: skip
    source = _state_with((1, "r", "AVRO", json.dumps(schema), []))
    decoder = ValueDecoder(source)
    header = b"\x00\x00\x00\x00\x01"
    good = io.BytesIO()
    fastavro.schemaless_writer(good, fastavro.parse_schema(schema), {"n": 5, "empties": [{}] * 3, "nulls": [None] * 4})
    assert decoder.decode_value(header + good.getvalue()) == (1, {"n": 5, "empties": [{}] * 3, "nulls": [None] * 4})
    bomb = header + b"\x0a" + b"\x00" + encode_varlong(2**40) + b"\x00"
    with pytest.raises(PayloadError, match="more than 10,000,000 items that take no bytes"):
        decoder.decode_value(bomb)
    with pytest.raises(PayloadError, match="ends inside a value"):
        decoder.decode_value(header + b"\x0a")


def test_an_avro_payload_error_reads_the_same_every_run() -> None:
    # fastavro names its stream object (with its address) when a double is cut short
    source = _state_with(
        (1, "a", "AVRO", '{"type": "record", "name": "A", "fields": [{"name": "x", "type": "double"}]}', [])
    )
    data = bytes([0]) + (1).to_bytes(4, "big") + b"\x01\x02"
    errors = {str(ValueDecoder(source).try_decode(data).error) for _ in range(3)}
    (text,) = errors
    assert "cannot read double from the payload" in text and "0x" not in text
