"""``kcodec dump --value-decoder confluent`` / ``--key-decoder confluent`` and ``kcodec schemas`` on a log
directory whose values confluent-kafka's serializers wrote (Avro, Protobuf, JSON Schema) and whose
``_schemas`` topic holds its mock registry's registrations: each printed payload is what confluent-kafka's
deserializer gives for the same record."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from google.protobuf import json_format

from kcodec.cli import main
from tests.helpers.schema_registry import (
    ctx,
    mock_client,
    proto_classes,
    registrations,
    registry_records,
    write_topic,
)

ORDER = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 8}},
    ],
}
PROTO = {
    "clicks.proto": 'syntax = "proto3";\npackage web;\nmessage Session { string id = 1; }\n'
    "message Click { string url = 1; int64 at = 2; message Meta { bytes tag = 1; } Meta meta = 3; }\n"
}
JSON_SCHEMA = {"type": "object", "properties": {"user": {"type": "string"}, "price": {"type": "number"}}}
SEGMENT = "00000000000000000000.log"


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("confluent")
    client = mock_client()
    avro = AvroSerializer(client, json.dumps(ORDER))
    key = AvroSerializer(client, '"string"')
    orders = [
        (key(f"k{i}", ctx("orders", key=True)), avro({"id": i, "amount": Decimal("0.1") * i}, ctx("orders")))
        for i in range(3)
    ]
    orders += [(b"k9", b"not framed"), (b"k8", b"\x00\x00\x00\x00\x63x")]  # raw: no magic byte; unknown id 99
    cls = proto_classes(PROTO)
    click = cls["web.Click"](url="/a", at=2**40)
    click.meta.tag = b"\x01\xfe"
    pb = ProtobufSerializer(cls["web.Click.Meta"], client, {"use.deprecated.format": False})(click.meta, ctx("meta"))
    clicks = [
        (None, ProtobufSerializer(cls["web.Click"], client, {"use.deprecated.format": False})(click, ctx("clicks")))
    ]
    clicks.append((None, pb))
    events = [(None, JSONSerializer(json.dumps(JSON_SCHEMA), client)({"user": "ann", "price": 19.99}, ctx("events")))]
    write_topic(root / "orders-0", orders)
    write_topic(root / "clicks-0", clicks)
    write_topic(root / "events-0", events)
    write_topic(root / "_schemas-0", registry_records(client))
    return {"root": root, "client": client, "orders": orders, "clicks": clicks, "events": events, "classes": cls}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _payloads(out: str) -> list[str]:
    return [line.split(" payload: ", 1)[1] for line in out.splitlines() if " payload: " in line]


def test_avro_payloads_print_as_the_deserializer_decodes_them(logs, capsys) -> None:
    code, out, err = run(capsys, "dump", "--value-decoder", "confluent", logs["root"] / "orders-0" / SEGMENT)
    assert code == 0, err
    payloads = _payloads(out)
    deserializer = AvroDeserializer(logs["client"])
    for text, (_, value) in zip(payloads[:3], logs["orders"]):
        assert json.loads(text, parse_float=Decimal) == deserializer(value, ctx("orders"))
    assert payloads[1] == '{"id":1,"amount":0.10000000}'  # the decimal's own digits and scale
    assert payloads[3:] == ["not framed", "\x00\x00\x00\x00cx"]  # raw, as the string decoder prints them
    assert err.strip().endswith("2 value(s) not decoded (not_framed 1, unknown_schema_id 1), printed as UTF-8 "
                                "(--json says why per record)")  # fmt: skip


def test_protobuf_and_json_schema_payloads(logs, capsys) -> None:
    code, out, err = run(capsys, "dump", "--value-decoder-class", "confluent", logs["root"] / "clicks-0" / SEGMENT)
    assert code == 0 and err == ""
    cls = logs["classes"]
    click, meta = _payloads(out)
    conf = {"use.deprecated.format": False}
    expected = ProtobufDeserializer(cls["web.Click"], conf)(logs["clicks"][0][1], ctx("clicks"))
    assert json_format.Parse(click, cls["web.Click"]()) == expected
    assert json.loads(click) == {"url": "/a", "at": 2**40, "meta": {"tag": "Af4="}}
    expected_meta = ProtobufDeserializer(cls["web.Click.Meta"], conf)(logs["clicks"][1][1], ctx("meta"))
    assert json_format.Parse(meta, cls["web.Click.Meta"]()) == expected_meta
    code, out, err = run(capsys, "dump", "--value-decoder", "confluent", logs["root"] / "events-0" / SEGMENT)
    expected_event = JSONDeserializer(json.dumps(JSON_SCHEMA), schema_registry_client=logs["client"])(
        logs["events"][0][1], ctx("events")
    )
    assert code == 0 and json.loads(_payloads(out)[0]) == expected_event
    assert _payloads(out) == ['{"user":"ann","price":19.99}']


def test_keys_too_and_the_json_fields(logs, capsys) -> None:
    segment = logs["root"] / "orders-0" / SEGMENT
    code, out, err = run(
        capsys, "dump", "--key-decoder", "confluent", "--value-decoder", "confluent", "--json", segment
    )
    assert code == 0
    records = [r for line in out.splitlines() for r in json.loads(line, parse_float=Decimal)["records"]]
    first = records[0]
    assert (first["keySchemaId"], first["keyDecoded"], first["keyError"]) == (1, "k0", None)
    assert (first["valueSchemaId"], first["valueDecoded"], first["valueError"]) == (2, {"id": 0, "amount": 0}, None)
    assert first["value"] == logs["orders"][0][1].hex()  # the bytes stay as they were
    assert records[3]["valueError"].startswith("not_framed: first byte 110") and records[3]["valueSchemaId"] is None
    assert records[4]["valueError"].startswith("unknown_schema_id: schema id 99") and records[4]["valueSchemaId"] == 99
    assert records[3]["keyError"].startswith("not_framed")
    assert "3 value(s)" not in err and "2 value(s) not decoded" in err and "2 key(s) not decoded" in err


def test_schemas_named_explicitly_or_missing(logs, capsys, tmp_path) -> None:
    export = tmp_path / "export.json"
    export.write_text(
        json.dumps(
            [{"subject": s, "version": v, "id": i, "schemaType": sc.schema_type, "schema": sc.schema_str}
             for s, v, i, sc in registrations(logs["client"])]
        )
    )  # fmt: skip
    alone = tmp_path / "orders-0"
    write_topic(alone, logs["orders"][:1])
    code, out, err = run(capsys, "dump", "--value-decoder", "confluent", "--schemas", export, alone / SEGMENT)
    assert code == 0 and _payloads(out) == ['{"id":0,"amount":0.00000000}']
    code, out, err = run(capsys, "dump", "--value-decoder", "confluent", alone / SEGMENT)
    assert code == 2 and out == "" and err.count("\n") == 1 and "no _schemas-N directory" in err
    code, out, err = run(capsys, "dump", "--schemas", export, alone / SEGMENT)
    assert code == 2 and "--schemas names the schemas of" in err
    code, out, err = run(capsys, "dump", "--value-decoder", "hex", "--json", alone / SEGMENT)
    assert code == 2 and "only confluent adds decoded fields" in err
    code, out, err = run(
        capsys, "dump", "--value-decoder", "confluent", "--schemas", tmp_path / "nope", alone / SEGMENT
    )
    assert code == 3 and err.count("\n") == 1 and "no such file or directory" in err


def test_kcodec_schemas_lists_the_registry_state(logs, capsys) -> None:
    code, out, err = run(capsys, "schemas", logs["root"])
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"Schema Registry state in {logs['root']}: ")
    assert "subject orders-value" in lines and "  version 1: id 2 AVRO" in lines
    assert any(line.startswith("  version 1: id ") and "PROTOBUF" in line for line in lines)
    code, out, _ = run(capsys, "schemas", logs["root"] / "_schemas-0", "--json")
    doc = json.loads(out)
    mock = {(s, v, i, sc.schema_type) for s, v, i, sc in registrations(logs["client"])}
    found = {(s["subject"], v["version"], v["id"], v["schemaType"]) for s in doc["subjects"] for v in s["versions"]}
    assert found == mock and doc["damaged"] == [] and doc["globalCompatibility"] == "BACKWARD"


def test_kcodec_schemas_refuses_what_is_not_a_registry(capsys, tmp_path) -> None:
    code, _, err = run(capsys, "schemas", tmp_path / "missing")
    assert code == 2 and "no such directory" in err
    code, _, err = run(capsys, "schemas", tmp_path)
    assert code == 3 and err.count("\n") == 1 and "no _schemas-N partition directory" in err


def test_inspect_shows_a_values_header(logs, capsys, tmp_path) -> None:
    value = Path(tmp_path / "value.bin")
    value.write_bytes(logs["clicks"][1][1])  # Click.Meta: message-index path [1, 0]
    code, out, err = run(capsys, "inspect", "--entity", "schema_registry_protobuf_frame", value)
    assert code == 0, err
    assert "header.schema_id <int32> = " in out and "message_indexes[1] <varint> = 0" in out


def test_damaged_schemas_records_are_said_once_and_the_rest_decode(logs, capsys, tmp_path) -> None:
    write_topic(tmp_path / "_schemas-0", [(b"{broken", b"{}"), *registry_records(logs["client"])])
    write_topic(tmp_path / "orders-0", logs["orders"][:1])
    code, out, err = run(capsys, "dump", "--value-decoder", "confluent", tmp_path / "orders-0" / SEGMENT)
    assert code == 0 and _payloads(out) == ['{"id":0,"amount":0.00000000}']
    assert err == (
        f"kcodec dump: {tmp_path / '_schemas-0'}: 1 damaged _schemas record(s) or batch(es) left out "
        f"(kcodec schemas {tmp_path / '_schemas-0'} lists them)\n"
    )
