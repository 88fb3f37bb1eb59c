"""``valueFormat=confluent`` / ``keyFormat=confluent``: Schema Registry framed values written by
confluent-kafka's serializers read as typed columns, each row equal to what confluent-kafka's deserializer
gives; values that do not decode keep their bytes in ``value_raw`` and say why in ``value_error``."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from google.protobuf import json_format

from tests.helpers.schema_registry import ctx, mock_client, proto_classes, registry_records, write_topic

ORDER_V1 = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
        {"name": "tags", "type": {"type": "map", "values": "int"}},
        {"name": "lines", "type": {"type": "array", "items": {"type": "record", "name": "Line", "fields": [
            {"name": "sku", "type": "string"}, {"name": "qty", "type": ["null", "int"], "default": None}]}}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["BUY", "SELL"]}},
    ],
}  # fmt: skip
ORDER_V2 = {**ORDER_V1, "fields": [*ORDER_V1["fields"], {"name": "channel", "type": "string", "default": "web"}]}
PROTO = {
    "shop.proto": 'syntax = "proto3";\npackage shop;\nmessage Session { string id = 1; }\n'
    "message Click { string url = 1; uint64 at = 2; message Device { string os = 1; bytes fp = 2; }\n"
    "  Device device = 3; map<string, int32> counts = 4; repeated string tags = 5; }\n"
}
EVENT = {"type": "object", "properties": {"user": {"type": "string"}, "score": {"type": "number"}}}


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("confluent-spark")
    client = mock_client()
    order = {
        "id": 1,
        "amount": Decimal("19.99"),
        "tags": {"a": 1},
        "lines": [{"sku": "x", "qty": None}],
        "kind": "SELL",
    }
    v1 = AvroSerializer(client, json.dumps(ORDER_V1))(order, ctx("orders"))
    v2 = AvroSerializer(client, json.dumps(ORDER_V2))({**order, "id": 2, "channel": "app"}, ctx("orders"))
    key = AvroSerializer(client, '"string"')("k", ctx("orders", key=True))
    orders = [(key, v1), (key, v2), (None, b"raw text"), (None, b"\x00\x00\x00\x00\x63x"), (None, None)]
    cls = proto_classes(PROTO)
    click = cls["shop.Click"](url="/a", at=2**64 - 1, tags=["t"])
    click.device.os, click.device.fp = "ios", b"\x01"
    click.counts["n"] = 3
    conf = {"use.deprecated.format": False}
    clicks = [
        (None, ProtobufSerializer(cls["shop.Click"], client, conf)(click, ctx("clicks"))),
        (None, ProtobufSerializer(cls["shop.Session"], client, conf)(cls["shop.Session"](id="s"), ctx("clicks"))),
    ]
    events = [(None, JSONSerializer(json.dumps(EVENT), client)({"user": "ann", "score": 0.5}, ctx("events")))]
    write_topic(root / "orders-0", orders)
    write_topic(root / "clicks-0", clicks)
    write_topic(root / "events-0", events)
    write_topic(root / "_schemas-0", registry_records(client))
    return {"root": str(root), "client": client, "orders": orders, "clicks": clicks, "events": events, "cls": cls}


def _read(spark, logs, topic: str, **options):
    reader = spark.read.format("kafka-segments").option("subscribe", topic)
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load(logs["root"])


def test_avro_values_as_a_typed_column(spark, logs) -> None:
    df = _read(spark, logs, "orders", valueFormat="confluent", keyFormat="confluent")
    types = dict(df.dtypes)
    assert types["value"] == (
        "struct<id:bigint,amount:decimal(12,2),tags:map<string,int>,lines:array<struct<sku:string,qty:int>>,"
        "kind:string,channel:string>"
    )
    assert types["key"] == "string" and types["value_raw"] == "binary" and types["value_error"] == "string"
    rows = df.orderBy("offset").collect()
    assert len(rows) == len(logs["orders"])  # no row dropped
    reader = AvroDeserializer(logs["client"], schema_str=json.dumps(ORDER_V2))  # v1 read as the latest, v2
    for row, (_, value) in zip(rows[:2], logs["orders"]):
        expected = reader(value, ctx("orders"))
        expected["tags"] = list(expected["tags"].items())  # Spark gives a map as (key, value) pairs here
        got = row["value"].asDict(recursive=True)
        got["tags"] = list(got["tags"].items())
        assert got == expected and row["value_raw"] == value and row["value_error"] is None
        assert row["key"] == "k" and row["key_error"] is None
    assert rows[0]["value"]["channel"] == "web"
    assert rows[2]["value"] is None and rows[2]["value_raw"] == b"raw text"
    assert rows[2]["value_error"].startswith("not_framed:")
    assert rows[3]["value_error"].startswith("unknown_schema_id: schema id 99")
    assert rows[4]["value"] is None and rows[4]["value_raw"] is None and rows[4]["value_error"] is None


def test_protobuf_values_of_the_named_message(spark, logs) -> None:
    df = _read(spark, logs, "clicks", valueFormat="confluent", messageName="shop.Click")
    assert dict(df.dtypes)["value"] == (
        "struct<url:string,at:decimal(20,0),device:struct<os:string,fp:binary>,counts:map<string,int>,"
        "tags:array<string>>"
    )
    rows = df.orderBy("offset").collect()
    cls = logs["cls"]["shop.Click"]
    expected = ProtobufDeserializer(cls, {"use.deprecated.format": False})(logs["clicks"][0][1], ctx("clicks"))
    got = rows[0]["value"].asDict(recursive=True)
    assert got["at"] == Decimal(2**64 - 1) and got["device"] == {"os": "ios", "fp": b"\x01"}
    got["at"] = int(got["at"])
    got["device"]["fp"] = "AQ=="
    assert json_format.ParseDict(got, cls()) == expected
    assert (
        rows[1]["value"] is None and "message index path [0] is not the column's message [1]" in rows[1]["value_error"]
    )


def test_json_schema_values(spark, logs) -> None:
    df = _read(spark, logs, "events", valueFormat="confluent")
    assert dict(df.dtypes)["value"] == "struct<user:string,score:double>"
    (row,) = df.collect()
    expected = JSONDeserializer(json.dumps(EVENT), schema_registry_client=logs["client"])(
        logs["events"][0][1], ctx("events")
    )
    assert row["value"].asDict() == expected


def test_what_the_typed_columns_need_is_said_at_load(spark, logs, tmp_path) -> None:
    from pyspark.errors import PySparkException

    reader = spark.read.format("kafka-segments").option("valueFormat", "confluent")
    with pytest.raises(PySparkException, match="reads several topics: name the reader schema's subject"):
        reader.load(logs["root"])
    write_topic(tmp_path / "alone-0", [(None, b"x")])
    with pytest.raises(PySparkException, match="needs schemas: no _schemas-N directory"):
        reader.load(str(tmp_path))


def test_a_stream_reads_typed_values(spark, logs, tmp_path) -> None:
    query = (
        spark.readStream.format("kafka-segments")
        .option("subscribe", "events")
        .option("startingOffsets", "earliest")
        .option("valueFormat", "confluent")
        .load(logs["root"])
        .select("value.user", "value.score")
        .writeStream.format("memory")
        .queryName("confluent_events")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert [tuple(r) for r in spark.sql("select * from confluent_events").collect()] == [("ann", 0.5)]


def test_pipeline_writes_typed_value_tables_and_a_line_per_topic(spark, logs, tmp_path, capsys, monkeypatch) -> None:
    from kcodec.cli import main
    from tests.helpers.pipeline_runs import PipelineRuns

    runs = PipelineRuns(monkeypatch)
    dest = tmp_path / "tables"
    argv = ["pipeline", logs["root"], str(dest), "--value-format", "confluent", "--no-sizes", "--no-internal-tables"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Schema Registry values (--value-format confluent):" in out
    assert (
        f"  orders: 2 of 5 rows decoded; not decoded: not_framed 1, unknown_schema_id 1  -> {dest}/values/orders" in out
    )
    assert "  clicks: 1 of 2 rows decoded; not decoded: bad_frame 1" in out  # the file's first message: Session
    assert "  events: 1 of 1 row decoded  -> " in out
    orders = spark.read.parquet(str(dest / "values" / "orders"))
    assert dict(orders.dtypes)["value"].startswith("struct<id:bigint,amount:decimal(12,2),")
    assert [r["id"] for r in orders.orderBy("offset").select("value.id").collect()] == [1, 2, None, None, None]
    runs.replay_next()  # the --json summary of the same run (tests/helpers/pipeline_runs.py)
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    tables = {t["topic"]: t for t in doc["value_tables"]}
    assert tables["orders"]["raw"] == {"not_framed": 1, "unknown_schema_id": 1} and tables["orders"]["rows"] == 5
