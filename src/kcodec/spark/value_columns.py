"""``valueFormat=confluent`` / ``keyFormat=confluent``: Schema Registry framed values (and keys) as typed
columns. The column's type is the reader schema's (``subject``, else ``<topic>-value`` / ``<topic>-key`` of
the one topic read; its latest version), mapped to Spark types as Spark's ``from_avro`` / ``from_protobuf``
map them (Protobuf: the ``messageName`` message, else the file's first). ``value_raw`` keeps the bytes and
``value_error`` says why a value is null (``key_raw`` and ``key_error`` for keys). A row is never dropped
for a value that does not decode.

Avro: records are structs, ``[null, T]`` a nullable T, ``int``/``long`` unions bigint, ``float``/``double``
unions double, other unions a struct of ``member0``, ``member1`` ... (the non-null branches; the value's
member set), enums strings, fixed and bytes binary, decimals decimal(p, s), timestamps timestamp, dates
date, times int (millis) / bigint (micros), uuid string. Protobuf: values of another message than the
column's are errors; int32 int, uint32 and 64-bit bigint, uint64 decimal(20,0), enums by name, maps map,
repeated array; well-known types: Timestamp timestamp, the wrappers their wrapped type, Duration and
FieldMask their JSON strings, Struct, Value, ListValue and Any their JSON text. JSON Schema:
objects with properties structs, integer bigint, number double, string, boolean, arrays of a typed item;
anything else its JSON text."""

from __future__ import annotations

import datetime
import functools
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa

from kcodec.spark.avro_columns import AvroColumns, avro_columns
from kcodec.spark.options import OptionError
from kcodec.values.decoder import ValueDecoder
from kcodec.values.errors import BadFrameError, ValueDecodeError
from kcodec.values.frame import read_protobuf_frame
from kcodec.values.json_text import value_json
from kcodec.values.protobuf import JSON_MAPPED, WRAPPERS
from kcodec.values.registry import RegisteredSchema
from kcodec.values.sources import default_schemas_path, open_schema_source

__all__ = ["TypedPart", "TypedColumns", "typed_parts", "schema_source", "SparkType"]

_TS = pa.timestamp("us", tz="UTC")
Convert = Callable[[Any], Any]
Build = Callable[[list], pa.Array]  # the decoded values of a chunk (None: null) -> their Arrow column


@dataclass(frozen=True)
class SparkType:
    """A column type three ways (Spark's simpleString, its DDL with field names quoted, the Arrow type) and
    how a chunk's decoded values become that Arrow column: field by field, never a value per record."""

    simple: str
    ddl: str
    arrow: pa.DataType
    build: Build


def _leaf(simple: str, arrow: pa.DataType, convert: Convert | None = None) -> SparkType:
    if convert is None:
        return SparkType(simple, simple, arrow, lambda values: pa.array(values, type=arrow))
    return SparkType(
        simple, simple, arrow, lambda values: pa.array([None if v is None else convert(v) for v in values], type=arrow)
    )


STRING = _leaf("string", pa.string())
JSON_TEXT = _leaf("string", pa.string(), lambda v: value_json(v))
_NO_FIELDS: dict = {}


def _null_mask(values: list) -> pa.Array | None:
    return pa.array([v is None for v in values], type=pa.bool_()) if None in values else None


def _struct(fields: list[tuple[str, SparkType]]) -> SparkType:
    if not fields:
        fields = [("_empty", _leaf("boolean", pa.bool_(), lambda v: None))]  # Spark has no empty struct
    simple = "struct<" + ",".join(f"{n}:{t.simple}" for n, t in fields) + ">"
    ddl = "struct<" + ",".join(f"`{n.replace('`', '``')}`:{t.ddl}" for n, t in fields) + ">"
    arrow_fields = [pa.field(n, t.arrow, nullable=True) for n, t in fields]

    def build(values: list) -> pa.Array:
        present = [_NO_FIELDS if v is None else v for v in values]
        children = [t.build([v.get(n) for v in present]) for n, t in fields]
        return pa.StructArray.from_arrays(children, fields=arrow_fields, mask=_null_mask(values))

    return SparkType(simple, ddl, pa.struct(arrow_fields), build)


def _offsets(values: list) -> tuple[pa.Array, list]:
    """The list offsets of a chunk of sequences (None: an empty run) and their items, flattened."""
    flat: list = []
    offsets = [0]
    for v in values:
        if v is not None:
            flat.extend(v)
        offsets.append(len(flat))
    return pa.array(offsets, type=pa.int32()), flat


def _array(item: SparkType) -> SparkType:
    arrow = pa.list_(pa.field("element", item.arrow, nullable=True))

    def build(values: list) -> pa.Array:
        offsets, flat = _offsets(values)
        return pa.ListArray.from_arrays(offsets, item.build(flat), type=arrow, mask=_null_mask(values))

    return SparkType(f"array<{item.simple}>", f"array<{item.ddl}>", arrow, build)


def _map(key: SparkType, value: SparkType) -> SparkType:
    arrow = pa.map_(pa.field("key", key.arrow, nullable=False), pa.field("value", value.arrow, nullable=True))

    def build(values: list) -> pa.Array:
        offsets, keys = _offsets(values)  # a dict iterates its keys; its values follow in the same order
        items = [x for v in values if v is not None for x in v.values()]
        return pa.MapArray.from_arrays(
            offsets, key.build(keys), value.build(items), type=arrow, mask=_null_mask(values)
        )

    return SparkType(f"map<{key.simple},{value.simple}>", f"map<{key.ddl},{value.ddl}>", arrow, build)


def _decimal(precision: int, scale: int) -> SparkType:
    if not 0 < precision <= 38:
        return _leaf("string", pa.string(), lambda v: format(v, "f"))  # wider than Spark's decimals: exact text
    return _leaf(f"decimal({precision},{scale})", pa.decimal128(precision, scale))


# ---------------------------------------------------------------------------------------------- Avro

_AVRO_PRIMITIVES = {
    "null": _leaf("string", pa.string(), lambda v: None),
    "boolean": _leaf("boolean", pa.bool_()),
    "int": _leaf("int", pa.int32()),
    "long": _leaf("bigint", pa.int64()),
    "float": _leaf("float", pa.float32()),
    "double": _leaf("double", pa.float64()),
    "bytes": _leaf("binary", pa.binary()),
    "string": _leaf("string", pa.string()),
}


def _micros_of_day(t) -> int:
    return ((t.hour * 60 + t.minute) * 60 + t.second) * 1_000_000 + t.microsecond


def _avro_type(schema: Any, named: dict[str, Any], path: tuple[str, ...]) -> SparkType:
    if isinstance(schema, str):
        if schema in _AVRO_PRIMITIVES:
            return _AVRO_PRIMITIVES[schema]
        if schema not in named:
            raise OptionError(f"Avro type {schema!r} is not defined")
        return _avro_type(named[schema], named, path)
    if isinstance(schema, list):
        return _avro_union([b for b in schema if b != "null"], named, path)
    kind = schema.get("type")
    logical = schema.get("logicalType")
    if logical == "decimal" and kind in ("bytes", "fixed"):
        return _decimal(int(schema.get("precision", 0)), int(schema.get("scale", 0)))
    if logical in ("timestamp-millis", "timestamp-micros", "local-timestamp-millis", "local-timestamp-micros"):
        return _leaf("timestamp", _TS)
    if logical == "date":
        return _leaf("date", pa.date32())
    if logical == "time-millis":
        return _leaf("int", pa.int32(), lambda t: _micros_of_day(t) // 1000)
    if logical == "time-micros":
        return _leaf("bigint", pa.int64(), _micros_of_day)
    if logical == "uuid":
        return _leaf("string", pa.string(), str)
    if kind in ("record", "error"):
        name = schema.get("name", "")
        if name in path:
            raise OptionError(f"Avro record {name} is recursive: Spark types cannot hold it")
        if name:
            named.setdefault(name, schema)
        fields = [(f["name"], _avro_type(f["type"], named, (*path, name))) for f in schema.get("fields", ())]
        return _struct(fields)
    if kind == "enum":
        if schema.get("name"):
            named.setdefault(schema["name"], schema)
        return STRING
    if kind == "fixed":
        if schema.get("name"):
            named.setdefault(schema["name"], schema)
        return _leaf("binary", pa.binary())
    if kind == "array":
        return _array(_avro_type(schema["items"], named, path))
    if kind == "map":
        return _map(STRING, _avro_type(schema["values"], named, path))
    return _avro_type(kind, named, path)


_AVRO_NAMED = ("record", "error", "enum", "fixed")


def _avro_kind(schema: Any, named: dict[str, Any]) -> tuple[str, str | None, str | None]:
    """A union branch's (type, logical type, full name of a named type)."""
    if isinstance(schema, str):
        if schema in _AVRO_PRIMITIVES:
            return schema, None, None
        schema = named.get(schema, {"type": schema, "name": schema})
    kind = schema.get("type")
    if isinstance(kind, (dict, list)) or kind in named:  # {"type": {...}} or {"type": "Name"}
        return _avro_kind(kind, named)
    name = schema.get("name") if kind in _AVRO_NAMED else None
    if name and "." not in name and schema.get("namespace"):
        name = f"{schema['namespace']}.{name}"
    return kind, schema.get("logicalType"), name


def _fits(kind: str, logical: str | None, name: str | None) -> Callable[[Any], bool]:
    """Whether a decoded value is of a union branch: fastavro tags a named branch's value with its name
    (``return_named_type``); the other branches tell apart by their Python type."""
    if name is not None:  # a name as written may lack the namespace it inherits: the short names decide
        short = name.rpartition(".")[2]
        return lambda v: type(v) is tuple and v[0].rpartition(".")[2] == short
    if logical == "decimal":
        return lambda v: isinstance(v, Decimal)
    if logical is not None and logical.startswith(("timestamp", "local-timestamp")):
        return lambda v: isinstance(v, datetime.datetime)
    if logical == "date":
        return lambda v: isinstance(v, datetime.date) and not isinstance(v, datetime.datetime)
    if logical is not None and logical.startswith("time-"):
        return lambda v: isinstance(v, datetime.time)
    if logical == "uuid":
        return lambda v: isinstance(v, (uuid.UUID, str))
    python = {"boolean": bool, "string": str, "bytes": bytes, "float": float, "double": float}
    python.update({"array": list, "map": dict})
    if kind in ("int", "long"):
        return lambda v: type(v) is int
    wanted = python.get(kind, object)
    return lambda v: isinstance(v, wanted) and type(v) is not tuple


def _untagged(v: Any) -> Any:
    return v[1] if type(v) is tuple else v


def _avro_union(branches: list, named: dict[str, Any], path: tuple[str, ...]) -> SparkType:
    """A union as Spark's from_avro types it: ``[null, T]`` a nullable T; ``int``/``long`` a bigint and
    ``float``/``double`` a double; any other union a struct of ``member0``, ``member1`` ... (its non-null
    branches in order), only the member of the value's branch set."""
    kinds = [_avro_kind(b, named) for b in branches]
    types = [_avro_type(b, named, path) for b in branches]
    if len(branches) == 1:
        only = types[0]
        if kinds[0][2] is None:
            return only
        return SparkType(only.simple, only.ddl, only.arrow, lambda values: only.build([_untagged(v) for v in values]))
    plain = {k for k, logical, _ in kinds if logical is None}
    if len(kinds) == 2 and plain in ({"int", "long"}, {"float", "double"}):
        return _AVRO_PRIMITIVES["long" if "long" in plain else "double"]
    members = _struct([(f"member{i}", t) for i, t in enumerate(types)])
    fits = [_fits(*k) for k in kinds]
    names = [f"member{i}" for i in range(len(branches))]

    def as_members(v: Any) -> dict | None:
        if v is None:
            return None
        for name, fit in zip(names, fits):
            if fit(v):
                return {name: _untagged(v)}
        raise TypeError(f"a {type(v).__name__} is of none of the union's branches")

    return SparkType(
        members.simple, members.ddl, members.arrow, lambda values: members.build([as_members(v) for v in values])
    )


# ---------------------------------------------------------------------------------------------- Protobuf

_PROTO_SCALARS = {  # FieldDescriptor.TYPE_* numbers
    1: _leaf("double", pa.float64()),
    2: _leaf("float", pa.float32()),
    3: _leaf("bigint", pa.int64()),
    4: _leaf("decimal(20,0)", pa.decimal128(20, 0), Decimal),  # uint64
    5: _leaf("int", pa.int32()),
    6: _leaf("decimal(20,0)", pa.decimal128(20, 0), Decimal),  # fixed64
    7: _leaf("bigint", pa.int64()),  # fixed32
    8: _leaf("boolean", pa.bool_()),
    9: STRING,
    12: _leaf("binary", pa.binary()),
    13: _leaf("bigint", pa.int64()),  # uint32
    14: _leaf("string", pa.string(), str),  # enum: its value name (the number as text when unnamed)
    15: _leaf("int", pa.int32()),
    16: _leaf("bigint", pa.int64()),
    17: _leaf("int", pa.int32()),
    18: _leaf("bigint", pa.int64()),
}


def _proto_type(descriptor, path: tuple[str, ...]) -> SparkType:
    if descriptor.full_name in path:
        raise OptionError(f"Protobuf message {descriptor.full_name} is recursive: Spark types cannot hold it")
    fields = []
    for field in descriptor.fields:
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            entry = field.message_type
            key = _proto_field(entry.fields_by_name["key"], path)
            fields.append((field.name, _map(key, _proto_field(entry.fields_by_name["value"], path))))
            continue
        item = _proto_field(field, (*path, descriptor.full_name))
        fields.append((field.name, _array(item) if field.is_repeated else item))
    return _struct(fields)


def _proto_field(field, path: tuple[str, ...]) -> SparkType:
    message = field.message_type
    if message is None:
        return _PROTO_SCALARS[field.type]
    if message.full_name == "google.protobuf.Timestamp":
        return _leaf("timestamp", _TS)
    if message.full_name in WRAPPERS:
        return _proto_field(message.fields_by_name["value"], path)
    if message.full_name in JSON_MAPPED:  # Duration and FieldMask are strings already; the others JSON
        return STRING if message.full_name.endswith(("Duration", "FieldMask")) else JSON_TEXT
    return _proto_type(message, path)


# ---------------------------------------------------------------------------------------------- JSON Schema

_JSON_LEAVES = {
    "string": STRING,
    "integer": _leaf("bigint", pa.int64(), int),
    "number": _leaf("double", pa.float64(), float),
    "boolean": _leaf("boolean", pa.bool_()),
}


def _json_type(schema: Any) -> SparkType:
    if not isinstance(schema, dict):
        return JSON_TEXT
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind in _JSON_LEAVES:
        return _JSON_LEAVES[kind]
    if kind == "object" and isinstance(schema.get("properties"), dict) and schema["properties"]:
        return _struct([(n, _json_type(s)) for n, s in schema["properties"].items()])
    if kind == "array" and isinstance(schema.get("items"), dict):
        return _array(_json_type(schema["items"]))
    return JSON_TEXT


# ---------------------------------------------------------------------------------------------- columns


def _message_path(compiled, name: str | None) -> tuple[int, ...]:
    """The message-index path of the column's Protobuf message: ``messageName`` (full or short), or the
    file's first message."""
    if name is None:
        return (0,)
    paths = compiled.message_paths()
    found = [path for full, path in paths.items() if full == name or full.rpartition(".")[2] == name]
    if len(found) != 1:
        listed = ", ".join(sorted(paths))
        raise OptionError(f"kafka-segments: messageName {name!r} names {len(found)} messages of: {listed}")
    return found[0]


def _spark_type(reader: RegisteredSchema, decoder: ValueDecoder, path: tuple[int, ...]) -> SparkType:
    compiled = decoder.compiled(reader.id)
    if reader.schema_type == "AVRO":
        return _avro_type(compiled.writer, dict(compiled.named), ())
    if reader.schema_type == "PROTOBUF":
        return _proto_type(compiled.message_class(path).DESCRIPTOR, ())
    return _json_type(compiled.schema)


@dataclass
class TypedPart:
    """The typed column of a record's key or value: its name (``value``/``key``), type and decoder."""

    part: str
    spark: SparkType
    decoder: ValueDecoder
    message_path: tuple[int, ...] | None  # Protobuf: the column's message; others: None
    topic: str | None
    avro: AvroColumns | None = None  # Avro: the generated decoder of the column's own schema id's values

    def columns(self) -> list[tuple[str, str, str, pa.DataType]]:
        """(name, simpleString, DDL type, Arrow type) of the three columns."""
        return [
            (self.part, self.spark.simple, self.spark.ddl, self.spark.arrow),
            (f"{self.part}_raw", "binary", "binary", pa.binary()),
            (f"{self.part}_error", "string", "string", pa.string()),
        ]

    def arrays(self, raw: pa.Array) -> tuple[pa.Array, pa.Array]:
        """The typed array and the error array of a chunk of raw values: the chunk decoded at once
        (:meth:`ValueDecoder.decode_chunk`), then built into Arrow column by column; or, when every value
        is one the column's generated Avro decoder reads (:mod:`kcodec.spark.avro_columns`), by it."""
        data = raw.to_pylist()
        if self.avro is not None:
            typed = self.avro.column(data)
            if typed is not None:
                return typed, pa.nulls(len(data), pa.string())
        values, found = self.decoder.decode_chunk(data, topic=self.topic, key=self.part == "key")
        errors = [None if e is None else f"{e.kind}: {e}" for e in found]
        if self.message_path is not None:
            for i, v in enumerate(values):
                path = None if v is None else read_protobuf_frame(data[i]).message_indexes
                if path is not None and path != self.message_path:
                    wrong = BadFrameError(
                        f"message index path {list(path)} is not the column's message {list(self.message_path)}"
                    )
                    values[i], errors[i] = None, f"{wrong.kind}: {wrong}"
        try:
            typed = self.spark.build(values)
        except _UNFIT:  # find the values that do not fit, one by one: they become errors
            for i, v in enumerate(values):
                try:
                    self.spark.build([v])
                except _UNFIT as exc:
                    values[i], errors[i] = None, f"payload: does not fit the column's type: {exc}"
            typed = self.spark.build(values)
        return typed, pa.array(errors, type=pa.string())


_UNFIT = (TypeError, ValueError, KeyError, AttributeError, OverflowError, pa.ArrowException)


@functools.lru_cache(maxsize=8)
def _source(spec: str):
    return open_schema_source(spec)


def schema_source(schemas: str | None, path: str):
    """The schemas a read decodes with: the ``schemas`` option, else the ``_schemas-N`` directory at or
    beside ``path`` (opened once per process)."""
    spec = schemas or default_schemas_path(path)
    if spec is None:
        raise OptionError(
            "kafka-segments: valueFormat/keyFormat=confluent needs schemas: no _schemas-N directory at or beside "
            f"{path}; name one with the schemas option (a directory, an export, a registry URL)"
        )
    return _source(spec)


def typed_parts(opts, topics: list[str] | None = None) -> list[TypedPart]:
    """The typed key/value columns ``opts`` ask for (none unless keyFormat/valueFormat is confluent)."""
    parts = [p for p, fmt in (("key", opts.key_format), ("value", opts.value_format)) if fmt == "confluent"]
    if not parts:
        return []
    source = schema_source(opts.schemas, opts.path)
    topic = opts.topic or (topics[0] if topics and len(set(topics)) == 1 else None)
    out = []
    for part in parts:
        subject = opts.subject if part == "value" and opts.subject else (f"{topic}-{part}" if topic else None)
        if subject is None:
            raise OptionError(
                f"kafka-segments: {part}Format=confluent reads several topics: name the reader schema's subject "
                "with the subject option"
            )
        reader = source.latest(subject)
        if reader is None:
            raise OptionError(f"kafka-segments: subject {subject!r} has no live version in {source.description}")
        decoder = ValueDecoder(source, subject=subject, named_union_branches=True)
        protobuf = reader.schema_type == "PROTOBUF"
        try:
            path = _message_path(decoder.compiled(reader.id), opts.message_name) if protobuf else (0,)
            spark = _spark_type(reader, decoder, path)
        except ValueDecodeError as exc:
            raise OptionError(f"kafka-segments: subject {subject!r}: {exc}") from None
        generated = _generated(reader, decoder, spark)
        out.append(TypedPart(part, spark, decoder, path if protobuf else None, topic, generated))
    return out


def _generated(reader: RegisteredSchema, decoder: ValueDecoder, spark: SparkType) -> AvroColumns | None:
    """The generated decoder of an Avro column's values framed with its own schema id (read as written),
    when it reads every type of the schema and builds the column's very type."""
    if reader.schema_type != "AVRO":
        return None
    compiled = decoder.compiled(reader.id)
    if compiled.reader is not None or compiled.guard is not None:
        return None
    found = avro_columns(reader.id, compiled.writer, dict(compiled.named))
    return found if found is not None and found.arrow == spark.arrow else None


class TypedColumns:
    """A split's record batches with their typed key/value columns: the raw ``key``/``value`` columns are
    read (:attr:`raw_columns`, for :class:`kcodec.spark.arrow.RecordColumns`), then :meth:`finish` puts the
    requested columns in place (``value``, ``value_raw``, ``value_error`` ...)."""

    def __init__(self, requested: list, parts: list[TypedPart], raw: dict):
        self.requested, self.parts = requested, {p.part: p for p in parts}
        self._roles: dict[str, tuple[str, int | None]] = {}  # column name -> (part, 0 typed | 1 error | None raw)
        for p in parts:
            self._roles.update({p.part: (p.part, 0), f"{p.part}_raw": (p.part, None), f"{p.part}_error": (p.part, 1)})
        self.raw_columns: list = []
        for c, nullable in requested:
            role = self._roles.get(c.name)
            if role is None:
                self.raw_columns.append((c, nullable))
            elif all(rc.name != role[0] for rc, _ in self.raw_columns):
                self.raw_columns.append((raw[role[0]], True))
        self.schema = pa.schema([pa.field(c.name, c.arrow, nullable=n) for c, n in requested])

    def finish(self, rb: pa.RecordBatch) -> pa.RecordBatch:
        decoded: dict[str, tuple[pa.Array, pa.Array]] = {}
        arrays = []
        for c, _ in self.requested:
            role = self._roles.get(c.name)
            if role is None:
                arrays.append(rb.column(c.name))
                continue
            part, which = role
            if which is None:
                arrays.append(rb.column(part))
                continue
            if part not in decoded:
                decoded[part] = self.parts[part].arrays(rb.column(part))
            arrays.append(decoded[part][which])
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)
