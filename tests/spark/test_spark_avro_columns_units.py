"""The generated Avro decoder (:mod:`kcodec.spark.avro_columns`) against the per-value path (fastavro's
dicts built into Arrow) and confluent-kafka's deserializer, without Spark: every Avro type it reads, in
values confluent-kafka's serializer wrote, gives the same typed column; every damaged value (each byte
of a value set to each of a few values, each cut, a byte too many) gives the same column and the same
``value_error`` as the per-value path; schemas with a type it does not read keep the per-value path."""

from __future__ import annotations

import dataclasses
import datetime
import json
import re
from decimal import Decimal

import pyarrow as pa
import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer

from kcodec.spark.options import ReadOptions
from kcodec.spark.value_columns import typed_parts
from tests.helpers.schema_registry import ctx, mock_client, registry_records, write_topic

UTC = datetime.timezone.utc
POINT = {"type": "record", "name": "Point", "namespace": "geo", "fields": [{"name": "x", "type": "int"}]}
ALL = {
    "type": "record",
    "name": "All",
    "namespace": "geo",
    "fields": [
        {"name": "flag", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "b", "type": "bytes"},
        {"name": "s", "type": "string"},
        {"name": "nothing", "type": "null"},
        {"name": "e", "type": {"type": "enum", "name": "Colour", "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "fx", "type": {"type": "fixed", "name": "Two", "size": 2}},
        {"name": "p", "type": POINT},
        {"name": "maybe_p", "type": ["null", "Point"]},
        {"name": "maybe_s", "type": ["null", "string"]},
        {"name": "maybe_l", "type": ["long", "null"]},
        {"name": "again", "type": "Colour"},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 3}},
        {"name": "dec_fx", "type": {"type": "fixed", "name": "D8", "size": 8, "logicalType": "decimal",
                                    "precision": 18, "scale": 2}},
        {"name": "wide", "type": {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 0}},
    ],
}  # fmt: skip
ROWS = [
    {
        "flag": True, "i": -(2**31), "l": 2**63 - 1, "f": 1.5, "d": -0.1, "b": b"\x00\xff", "s": "héllo",
        "nothing": None, "e": "BLUE", "fx": b"ab", "p": {"x": 2**31 - 1}, "maybe_p": {"x": -1}, "maybe_s": None,
        "maybe_l": -(2**63), "again": "RED", "day": datetime.date(1, 1, 1),
        "ms": datetime.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
        "us": datetime.datetime(1, 1, 1, tzinfo=UTC), "dec": Decimal("-999999.999"), "dec_fx": Decimal("12.34"),
        "wide": Decimal(10**38 - 1),
    },
    {
        "flag": False, "i": 0, "l": 0, "f": 0.0, "d": float("inf"), "b": b"", "s": "", "nothing": None,
        "e": "RED", "fx": b"\x00\x00", "p": {"x": 0}, "maybe_p": None, "maybe_s": "x" * 300, "maybe_l": None,
        "again": "GREEN", "day": datetime.date(2026, 11, 27),
        "ms": datetime.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
        "us": datetime.datetime(2026, 11, 27, 14, 30, 0, 123456, tzinfo=UTC), "dec": Decimal("0.001"),
        "dec_fx": Decimal("-0.01"), "wide": Decimal(-(10**38) + 1),
    },
]  # fmt: skip
V1 = {"type": "record", "name": "Row", "fields": [{"name": "id", "type": "long"}]}
V2 = {**V1, "fields": [*V1["fields"], {"name": "tag", "type": "string", "default": "none"}]}
UNREAD = {  # types the generated decoder leaves to the per-value path, and a value of each
    "arrays": ({"type": "array", "items": "int"}, [1]),
    "maps": ({"type": "map", "values": "int"}, {"k": 1}),
    "unions": (["null", "int", "string"], 1),
    "uuids": ({"type": "string", "logicalType": "uuid"}, "5f0c3a52-7b38-4e8e-9b52-0d4c3e0c8a11"),
}


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("avro-columns")
    client = mock_client()
    rows = [AvroSerializer(client, json.dumps(ALL))(r, ctx("all")) for r in ROWS]
    old = AvroSerializer(client, json.dumps(V1))({"id": 1}, ctx("versions"))
    new = AvroSerializer(client, json.dumps(V2))({"id": 2, "tag": "b"}, ctx("versions"))
    for topic, (field_type, value) in UNREAD.items():
        schema = {"type": "record", "name": "U", "fields": [{"name": "u", "type": field_type}]}
        AvroSerializer(client, json.dumps(schema))({"u": value}, ctx(topic))
    write_topic(root / "_schemas-0", registry_records(client))
    return {"root": str(root), "client": client, "rows": rows, "versions": [old, new]}


def _part(logs, topic: str):
    opts = ReadOptions.from_options({"path": logs["root"], "subscribe": topic, "valueFormat": "confluent"})
    (part,) = typed_parts(opts, [topic])
    return part


def _both(part, values: list) -> tuple:
    """The typed column and errors of the generated decoder's path and of the per-value path alone."""
    raw = pa.array(values, pa.binary())
    return part.arrays(raw), dataclasses.replace(part, avro=None).arrays(raw)


def _same(a: pa.Array, b: pa.Array) -> bool:
    """Equal columns, a NaN equal to a NaN of the same bits (Arrow's equals holds NaN unequal to itself)."""
    if a.equals(b):
        return True
    widths = {"f": pa.int32(), "d": pa.int64()}
    bits = [(a.field(n).view(w), b.field(n).view(w)) for n, w in widths.items()]
    rest = [[f for f in x.type if f.name not in widths] for x in (a, b)]
    plain = [
        pa.StructArray.from_arrays([x.field(f.name) for f in fs], fields=fs, mask=x.is_null())
        for x, fs in zip((a, b), rest)
    ]
    return all(x.equals(y) for x, y in bits) and plain[0].equals(plain[1])


def _unplaced(errors: pa.Array) -> list:
    """The errors, fastavro's object addresses in them (``<_io.BytesIO object at 0x...>``) left out."""
    return [None if e is None else re.sub(r" at 0x[0-9a-f]+", "", e) for e in errors.to_pylist()]


def test_every_type_it_reads_as_the_per_value_path_and_confluent_kafka(logs) -> None:
    part = _part(logs, "all")
    assert part.avro is not None
    chunk = [logs["rows"][0], None, logs["rows"][1]]
    assert part.avro.column(chunk) is not None  # read by the generated decoder, not handed on
    (typed, errors), (slow, slow_errors) = _both(part, chunk)
    assert typed.type == part.spark.arrow and _same(typed, slow)
    assert errors.to_pylist() == slow_errors.to_pylist() == [None] * 3
    got = typed.to_pylist()
    assert got[1] is None
    deserialize = AvroDeserializer(logs["client"])
    for row, value, written in zip((got[0], got[2]), logs["rows"], ROWS):
        assert deserialize(value, ctx("all")) == written
        assert row == written  # Arrow gives back the same Python values: dates, aware datetimes, Decimals


def test_damaged_values_give_the_same_columns_and_errors(logs) -> None:
    part = _part(logs, "all")
    good = logs["rows"][0]
    damaged = [good[:cut] for cut in range(len(good))] + [good + b"\x00"]
    for at in range(len(good)):
        for byte in (0x00, 0x01, 0x02, 0x7F, 0x80, 0xC3, 0xFF):
            damaged.append(good[:at] + bytes([byte]) + good[at + 1 :])
    misses = 0
    for value in damaged:
        misses += part.avro.column([value]) is None
        (typed, errors), (slow, slow_errors) = _both(part, [good, value])
        assert _same(typed, slow), value
        assert _unplaced(errors) == _unplaced(slow_errors), value
    assert misses > len(damaged) // 2  # most damage is seen and left to the per-value path


def test_other_writer_versions_and_unread_types_take_the_per_value_path(logs) -> None:
    part = _part(logs, "versions")  # the column is v2's; v1's values are resolved to it by fastavro
    assert part.avro is not None and part.avro.column(logs["versions"]) is None
    (typed, errors), (slow, _) = _both(part, logs["versions"])
    assert _same(typed, slow) and typed.to_pylist() == [{"id": 1, "tag": "none"}, {"id": 2, "tag": "b"}]
    for topic in UNREAD:
        assert _part(logs, topic).avro is None, topic


@pytest.mark.parametrize("size", ["4\n__import__('os')._exit(7)", 4.5, -1, True])
def test_a_fixed_size_that_is_not_a_count_is_never_code(size) -> None:
    # the schema comes from the registry's topic: its text must never reach the generated decoder
    from kcodec.spark.avro_columns import avro_columns

    schema = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "f", "type": {"type": "fixed", "name": "F", "size": size}}],
    }
    assert avro_columns(1, schema, {}) is None
    ok = {"type": "record", "name": "R", "fields": [{"name": "f", "type": {"type": "fixed", "name": "F", "size": 4}}]}
    assert avro_columns(1, ok, {}) is not None
