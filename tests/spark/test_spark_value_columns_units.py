"""The typed value column built without Spark (``TypedPart.arrays``, what each Arrow batch of the source goes
through), on values confluent-kafka's serializers wrote: Avro unions typed as Spark's from_avro types them
(one member of ``member0``, ``member1`` ... set), Protobuf's well-known types (a Timestamp a timestamp), nulls
at every level, and a value that does not fit its column an error of its row alone."""

from __future__ import annotations

import datetime
import json
from decimal import Decimal

import pyarrow as pa
import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer

from kcodec.spark.options import ReadOptions
from kcodec.spark.value_columns import typed_parts
from tests.helpers.schema_registry import ctx, mock_client, proto_classes, registry_records, write_topic

UTC = datetime.timezone.utc
POINT = {"type": "record", "name": "Point", "namespace": "geo", "fields": [{"name": "x", "type": "int"}]}
SHAPE = {
    "type": "record",
    "name": "Shape",
    "namespace": "geo",
    "fields": [
        {"name": "u", "type": ["null", "string", "long", POINT]},
        {"name": "n", "type": ["int", "long"]},
        {"name": "f", "type": ["null", "float", "double"]},
        {"name": "p", "type": ["null", "Point"]},
        {"name": "b", "type": ["string", {"type": "fixed", "name": "Two", "size": 2}]},
        {"name": "l", "type": {"type": "array", "items": ["null", "int", "string"]}},
        {"name": "d", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2},
                               {"type": "long", "logicalType": "timestamp-millis"}]},
        {"name": "w", "type": ["int", {"type": "record", "name": "Inner", "fields": [{"name": "z", "type": "int"}]}]},
    ],
}  # fmt: skip
SHAPES = [
    {"u": "s", "n": 1, "f": 0.5, "p": {"x": 1}, "b": "ab", "l": [1, "x", None], "d": Decimal("1.25"), "w": 5},
    {
        "u": 7,
        "n": 2,
        "f": None,
        "p": None,
        "b": b"\x00\x01",
        "l": [],
        "d": datetime.datetime(2026, 1, 1, tzinfo=UTC),
        "w": {"z": 1},
    },
    {"u": {"x": 3}, "n": 3, "f": 2.0, "p": {"x": 4}, "b": "c", "l": ["y"], "d": None, "w": 7},
    {"u": None, "n": 4, "f": 1.5, "p": None, "b": "d", "l": [None], "d": None, "w": {"z": 2}},
]
PROTO = {
    "ev.proto": 'syntax = "proto3";\npackage ev;\nimport "google/protobuf/timestamp.proto";\n'
    'import "google/protobuf/wrappers.proto";\nimport "google/protobuf/struct.proto";\n'
    'import "google/protobuf/duration.proto";\n'
    "message Event { google.protobuf.Timestamp at = 1; google.protobuf.Int64Value n = 2;\n"
    "  google.protobuf.Struct attrs = 3; google.protobuf.Duration took = 4;\n"
    "  repeated google.protobuf.Timestamp seen = 5; }\n"
}


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("typed-units")
    client = mock_client()
    shape = AvroSerializer(client, json.dumps(SHAPE))
    shapes = [shape(s, ctx("shapes")) for s in SHAPES]
    cls = proto_classes(PROTO)
    event = cls["ev.Event"]()
    event.at.seconds, event.at.nanos = 1_764_230_400, 1_000
    event.n.value = 2**40
    event.attrs.update({"k": [1, "v"]})
    event.took.seconds = 90
    event.seen.add(seconds=1)
    events = [ProtobufSerializer(cls["ev.Event"], client, {"use.deprecated.format": False})(event, ctx("events"))]
    big = JSONSerializer(json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}}), client)
    counts = [big({"n": 1}, ctx("counts")), big({"n": 2**70}, ctx("counts")), big({"n": 3}, ctx("counts"))]
    write_topic(root / "_schemas-0", registry_records(client))
    return {"root": str(root), "client": client, "shapes": shapes, "events": events, "counts": counts}


def _part(logs, topic: str):
    opts = ReadOptions.from_options({"path": logs["root"], "subscribe": topic, "valueFormat": "confluent"})
    (part,) = typed_parts(opts, [topic])
    return part


def test_avro_unions_as_from_avro_member_structs(logs) -> None:
    part = _part(logs, "shapes")
    assert part.spark.simple == (
        "struct<u:struct<member0:string,member1:bigint,member2:struct<x:int>>,n:bigint,f:double,p:struct<x:int>,"
        "b:struct<member0:string,member1:binary>,l:array<struct<member0:int,member1:string>>,"
        "d:struct<member0:decimal(5,2),member1:timestamp>,w:struct<member0:int,member1:struct<z:int>>>"
    )
    typed, errors = part.arrays(pa.array(logs["shapes"], pa.binary()))
    assert errors.to_pylist() == [None] * 4
    rows = typed.to_pylist()
    deserialized = [AvroDeserializer(logs["client"])(v, ctx("shapes")) for v in logs["shapes"]]
    assert deserialized == SHAPES  # what confluent-kafka reads back: the branch values, with no names

    assert [r["u"] for r in rows] == [
        {"member0": "s", "member1": None, "member2": None},
        {"member0": None, "member1": 7, "member2": None},
        {"member0": None, "member1": None, "member2": {"x": 3}},
        None,
    ]
    assert [r["n"] for r in rows] == [1, 2, 3, 4] and [r["f"] for r in rows] == [0.5, None, 2.0, 1.5]
    assert [r["p"] for r in rows] == [{"x": 1}, None, {"x": 4}, None]
    assert [r["b"] for r in rows] == [
        {"member0": "ab", "member1": None},
        {"member0": None, "member1": b"\x00\x01"},
        {"member0": "c", "member1": None},
        {"member0": "d", "member1": None},
    ]
    assert rows[0]["l"] == [{"member0": 1, "member1": None}, {"member0": None, "member1": "x"}, None]
    assert rows[0]["d"] == {"member0": Decimal("1.25"), "member1": None}
    assert rows[1]["d"] == {"member0": None, "member1": datetime.datetime(2026, 1, 1, tzinfo=UTC)}
    # a record named without its namespace (inherited: fastavro names it geo.Inner)
    assert [r["w"] for r in rows] == [
        {"member0": 5, "member1": None},
        {"member0": None, "member1": {"z": 1}},
        {"member0": 7, "member1": None},
        {"member0": None, "member1": {"z": 2}},
    ]
    # what each member holds is the branch's value confluent-kafka's deserializer gives
    for row, value in zip(rows, deserialized):
        chosen = [v for v in (row["u"] or {}).values() if v is not None]
        assert chosen == ([] if value["u"] is None else [value["u"]])


def test_protobuf_well_known_types(logs) -> None:
    part = _part(logs, "events")
    assert part.spark.simple == "struct<at:timestamp,n:bigint,attrs:string,took:string,seen:array<timestamp>>"
    typed, errors = part.arrays(pa.array(logs["events"], pa.binary()))
    assert errors.to_pylist() == [None]
    assert typed.to_pylist() == [
        {
            "at": datetime.datetime(2025, 11, 27, 8, 0, 0, 1, tzinfo=UTC),  # 1,000 ns: 1 us
            "n": 2**40,
            "attrs": '{"k":[1.0,"v"]}',
            "took": "90s",
            "seen": [datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)],
        }
    ]


def test_a_value_that_does_not_fit_is_its_rows_error_alone(logs) -> None:
    part = _part(logs, "counts")
    typed, errors = part.arrays(pa.array([*logs["counts"], None], pa.binary()))
    assert typed.to_pylist() == [{"n": 1}, None, {"n": 3}, None]
    assert errors[1].as_py().startswith("payload: does not fit the column's type:")
    assert errors.to_pylist()[::2] == [None, None]
