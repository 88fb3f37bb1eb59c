"""``kcodec inspect --value-decoder confluent`` / ``--key-decoder confluent``: inside a segment's records, a
Schema Registry framed value's header is read field by field (magic, schema id, Protobuf's message-index
path) and its payload is decoded, on values and keys confluent-kafka's serializers wrote."""

from __future__ import annotations

import json

import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from google.protobuf import json_format

from kcodec.cli import main
from tests.helpers.schema_registry import ctx, mock_client, proto_classes, registry_records, write_topic

ORDER = {
    "type": "record",
    "name": "Order",
    "fields": [{"name": "id", "type": "long"}, {"name": "note", "type": ["null", "string"], "default": None}],
}
PROTO = {
    "shop.proto": 'syntax = "proto3";\npackage shop;\nmessage Session { string id = 1; }\n'
    "message Click { string url = 1; message Device { string os = 1; } Device device = 2; }\n"
}
SEGMENT = "00000000000000000000.log"


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("inspect-confluent")
    client = mock_client()
    key = AvroSerializer(client, '"string"')("k", ctx("orders", key=True))
    order = AvroSerializer(client, json.dumps(ORDER))({"id": 42, "note": "hi"}, ctx("orders"))
    orders = [(key, order), (None, b"plain"), (None, b"\x00\x00\x00\x00\x63x"), (None, b"\x00\x00")]
    cls = proto_classes(PROTO)
    click = cls["shop.Click"](url="/x")
    click.device.os = "ios"
    clicks = [(None, ProtobufSerializer(cls["shop.Click"], client, {"use.deprecated.format": False})(click, ctx("c")))]
    write_topic(root / "orders-0", orders, per_batch=10)
    write_topic(root / "clicks-0", clicks)
    write_topic(root / "_schemas-0", registry_records(client))
    return {"root": root, "client": client, "orders": orders, "clicks": clicks, "cls": cls}


def _spans(capsys, *argv) -> dict:
    code = main(["inspect", "--json", *map(str, argv)])
    out, err = capsys.readouterr()
    assert code == 0, err

    def walk(span):
        yield span
        for child in span.get("children", ()):
            yield from walk(child)

    return {s["path"]: s for line in out.splitlines() for s in walk(json.loads(line))}


def test_avro_value_and_key_headers_and_payloads_inside_the_records(logs, capsys) -> None:
    segment = logs["root"] / "orders-0" / SEGMENT
    spans = _spans(capsys, "--records", "--value-decoder", "confluent", "--key-decoder", "confluent", segment)
    key, value = logs["orders"][0]
    data = "records[0].value.data"
    assert spans[data]["type"] == "schema_registry_frame v0"
    assert spans[f"{data}.magic"]["value"] == 0 and spans[f"{data}.magic"]["hex"] == "00"
    assert spans[f"{data}.schema_id"]["value"] == int.from_bytes(value[1:5], "big")
    payload = spans[f"{data}.payload"]
    assert bytes.fromhex(payload["hex"]) == value[5:]
    assert payload["value"] == AvroDeserializer(logs["client"])(value, ctx("orders")) == {"id": 42, "note": "hi"}
    assert payload["display"] == '{"id":42,"note":"hi"}' and payload["status"] == "ok"
    assert spans["records[0].key.data.payload"]["value"] == "k"
    # not framed: the bytes stay as they are, with the reason
    assert "not Schema Registry framed: first byte 112" in spans["records[1].value.data"]["notes"][0]
    # an unknown id: the header is read, the payload is not decoded and says why
    unknown = spans["records[2].value.data.payload"]
    assert spans["records[2].value.data.schema_id"]["value"] == 99
    assert unknown["status"] == "warn" and unknown["notes"][0].startswith("unknown_schema_id: schema id 99")
    # a header cut short: the bytes stay as they are, with the reason (not damage of the log)
    cut = spans["records[3].value.data"]
    assert cut["status"] == "warn" and cut["notes"] == ["truncated_frame: 2 bytes end inside the wire format's header"]


def test_protobuf_message_index_path(logs, capsys) -> None:
    spans = _spans(capsys, "--records", "--value-decoder", "confluent", logs["root"] / "clicks-0" / SEGMENT)
    data = "records[0].value.data"
    assert spans[data]["type"] == "schema_registry_protobuf_frame v0"
    assert spans[f"{data}.message_indexes[0]"]["value"] == 1  # Click, the file's second message
    payload = spans[f"{data}.payload"]
    cls = logs["cls"]["shop.Click"]
    expected = ProtobufDeserializer(cls, {"use.deprecated.format": False})(logs["clicks"][0][1], ctx("c"))
    assert json_format.ParseDict(payload["value"], cls()) == expected


def test_text_lines_and_usage_errors(logs, capsys, tmp_path) -> None:
    segment = logs["root"] / "orders-0" / SEGMENT
    assert main(["inspect", "--value-decoder", "confluent", str(segment)]) == 0
    out = capsys.readouterr().out
    order_id = int.from_bytes(logs["orders"][0][1][1:5], "big")
    assert f'value schema_registry_frame(schema_id {order_id}, payload {{"id":42,"note":"hi"}})' in out
    lonely = tmp_path / "orders-0"
    lonely.mkdir()
    (lonely / SEGMENT).write_bytes(segment.read_bytes())
    assert main(["inspect", "--records", "--value-decoder", "confluent", str(lonely / SEGMENT)]) == 0
    assert "no schemas to decode the payload with" in capsys.readouterr().out  # the headers still read
    for argv, said in (
        (["--schemas", logs["root"], segment], "--schemas names the schemas of --key-decoder/--value-decoder"),
        (["--entity", "schema_registry_frame", "--value-decoder", "confluent", segment], "drop --value-decoder"),
        (["--offsets-decoder", "--value-decoder", "confluent", segment], "drop --key/--value-decoder"),
    ):
        assert main(["inspect", *map(str, argv)]) == 2
        assert said in capsys.readouterr().err
