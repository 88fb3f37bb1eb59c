"""In Spark, with values confluent-kafka's serializers wrote: an Avro union of several non-null types is
from_avro's ``member0``, ``member1`` ... struct, and a Protobuf ``google.protobuf.Timestamp`` is a Spark
timestamp column, each row what confluent-kafka's deserializer gives."""

from __future__ import annotations

import datetime
import json

from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer

from tests.helpers.schema_registry import ctx, mock_client, proto_classes, registry_records, write_topic

READING = {
    "type": "record",
    "name": "Reading",
    "fields": [
        {"name": "v", "type": ["null", "string", "double", {"type": "record", "name": "Pair", "fields": [
            {"name": "a", "type": "int"}, {"name": "b", "type": "int"}]}]},
    ],
}  # fmt: skip
PROTO = {
    "tick.proto": 'syntax = "proto3";\npackage t;\nimport "google/protobuf/timestamp.proto";\n'
    "message Tick { google.protobuf.Timestamp at = 1; string sym = 2; }\n"
}


def test_avro_union_members_and_a_protobuf_timestamp_column(spark, tmp_path) -> None:
    client = mock_client()
    avro = AvroSerializer(client, json.dumps(READING))
    readings = [avro(r, ctx("readings")) for r in ({"v": "hot"}, {"v": 21.5}, {"v": {"a": 1, "b": 2}}, {"v": None})]
    cls = proto_classes(PROTO)
    tick = cls["t.Tick"](sym="K")
    tick.at.seconds, tick.at.nanos = 1_764_230_400, 250_000_000
    ticks = [ProtobufSerializer(cls["t.Tick"], client, {"use.deprecated.format": False})(tick, ctx("ticks"))]
    write_topic(tmp_path / "readings-0", [(None, v) for v in readings])
    write_topic(tmp_path / "ticks-0", [(None, v) for v in ticks])
    write_topic(tmp_path / "_schemas-0", registry_records(client))
    reader = spark.read.format("kafka-segments").option("valueFormat", "confluent")

    df = reader.option("subscribe", "readings").load(str(tmp_path))
    assert dict(df.dtypes)["value"] == "struct<v:struct<member0:string,member1:double,member2:struct<a:int,b:int>>>"
    rows = [r["value"]["v"] for r in df.orderBy("offset").collect()]
    expected = [AvroDeserializer(client)(v, ctx("readings"))["v"] for v in readings]
    assert [None if r is None else [m for m in r.asDict(recursive=True).values() if m is not None] for r in rows] == [
        [e] if e is not None else None for e in expected
    ]
    assert rows[2]["member2"].asDict() == {"a": 1, "b": 2} and rows[2]["member0"] is None

    df = reader.option("subscribe", "ticks").load(str(tmp_path))
    assert dict(df.dtypes)["value"] == "struct<at:timestamp,sym:string>"
    got = df.selectExpr("value.sym", "unix_micros(value.at) AS at_us").collect()[0]
    decoded = ProtobufDeserializer(cls["t.Tick"], {"use.deprecated.format": False})(ticks[0], ctx("ticks"))
    assert got["sym"] == decoded.sym
    assert got["at_us"] == decoded.at.ToMicroseconds() == 1_764_230_400_250_000
    assert decoded.at.ToDatetime(datetime.timezone.utc).year == 2025
