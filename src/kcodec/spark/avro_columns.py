"""Avro values of one schema decoded straight into Arrow columns: a decoder generated per schema (straight-line
Python, one list per leaf column, no dict per record) for the typed ``value``/``key`` column of
``valueFormat=confluent`` (:mod:`kcodec.spark.value_columns`).

It reads what it is sure of and nothing else: the values framed with the column's own schema id (no
resolution to another reader schema), of records, the primitive types, enums, fixed, ``[null, T]`` unions,
timestamps (millis, micros), dates and decimals of at most 38 digits. Any value it does not read the way
fastavro does (another schema id, bytes left over or missing, a number out of its type's range, an index
out of its union's or enum's, text that is not UTF-8 ...) makes the whole chunk go the per-value path
(:meth:`kcodec.values.decoder.ValueDecoder.decode_chunk`), which decides the values and their errors:
what is written is the same either way. A schema with any other type gets no generated decoder."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

__all__ = ["AvroColumns", "avro_columns"]

_TS = pa.timestamp("us", tz="UTC")
_MIN_MICROS = -62135596800 * 1_000_000  # datetime's range (0001-01-01 .. 9999-12-31, UTC) in epoch micros
_MAX_MICROS = 253402300800 * 1_000_000 - 1
_MIN_DAYS, _MAX_DAYS = -719162, 2932896  # date's range in days from 1970-01-01
_PLAIN = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}


class _Unsupported(Exception):
    """A type the generated decoder does not read: the schema keeps the per-value path."""


@dataclass
class _Leaf:
    index: int  # the column list's number
    arrow: pa.DataType
    decimal: bool = False  # unscaled ints: built as decimal128 buffers


@dataclass
class _Struct:
    index: int  # the null mask list's number
    fields: list[tuple[str, Any]] = field(default_factory=list)

    @property
    def arrow(self) -> pa.DataType:
        return pa.struct([pa.field(n, c.arrow, nullable=True) for n, c in self.fields])


class _Generator:
    def __init__(self, named: dict[str, Any]):
        self.named = dict(named)
        self.lines: list[str] = []
        self.lists = 0
        self.constants: dict[str, Any] = {}

    def _list(self) -> int:
        self.lists += 1
        return self.lists - 1

    def emit(self, depth: int, *lines: str) -> None:
        self.lines += ["    " * depth + line for line in lines]

    def varint(self, depth: int, low: int, high: int) -> None:
        """``n``: the zig-zag varint at ``pos`` (at most 10 bytes, as fastavro's 64-bit read), in [low, high]."""
        self.emit(
            depth,
            "b = buf[pos]; pos += 1; n = b & 127",
            "if b > 127:",
            "    s = 7",
            "    while True:",
            "        b = buf[pos]; pos += 1; n |= (b & 127) << s",
            "        if b < 128: break",
            "        s += 7",
            "        if s > 63: raise _Miss",
            "    if n >> 64: raise _Miss",
            "n = (n >> 1) ^ -(n & 1)",
            f"if n < {low} or n > {high}: raise _Miss",
        )

    def sized(self, depth: int, size: int | None) -> None:
        """``end``: where the bytes at ``pos`` end (a length prefix, or the fixed ``size``)."""
        if size is None:
            self.varint(depth, 0, 2**63 - 1)
            self.emit(depth, "end = pos + n")
        elif type(size) is int and size >= 0:  # the schema's number, never its text, goes into the code
            self.emit(depth, f"end = pos + {size}")
        else:
            raise _Unsupported(f"fixed size {size!r}")
        self.emit(depth, "if end > size: raise _Miss")

    def resolve(self, schema: Any) -> Any:
        while isinstance(schema, str) and schema not in _PLAIN and schema != "null":
            if schema not in self.named:
                raise _Unsupported(schema)
            schema = self.named[schema]
        if isinstance(schema, dict) and (isinstance(schema.get("type"), (dict, list)) or schema["type"] in self.named):
            if "logicalType" not in schema:
                return self.resolve(schema["type"])
        return schema

    def node(self, schema: Any, path: tuple[str, ...]) -> Any:
        """The column(s) a schema's values go to."""
        schema = self.resolve(schema)
        if isinstance(schema, list):
            branches = [b for b in schema if b != "null"]
            if len(branches) != 1:
                raise _Unsupported("a union of several types")
            return self.node(branches[0], path)
        if isinstance(schema, str):
            if schema == "null":
                return _Leaf(self._list(), pa.string())
            return _Leaf(self._list(), _PLAIN[schema])
        kind, logical = schema.get("type"), schema.get("logicalType")
        if logical == "decimal" and kind in ("bytes", "fixed"):
            precision = int(schema.get("precision", 0))
            if not 0 < precision <= 38:
                raise _Unsupported("a decimal wider than 38 digits")
            return _Leaf(self._list(), pa.decimal128(precision, int(schema.get("scale", 0))), decimal=True)
        if logical in ("timestamp-millis", "timestamp-micros") and kind == "long":
            return _Leaf(self._list(), _TS)
        if logical == "date" and kind == "int":
            return _Leaf(self._list(), pa.date32())
        if logical is not None:  # uuid, times, local timestamps, durations: the per-value path
            raise _Unsupported(f"logical type {logical}")
        if kind in ("record", "error"):
            name = schema.get("name", "")
            if name in path or not schema.get("fields"):
                raise _Unsupported("a recursive or empty record")
            if name:
                self.named.setdefault(name, schema)
            out = _Struct(self._list())
            out.fields = [(f["name"], self.node(f["type"], (*path, name))) for f in schema["fields"]]
            return out
        if kind == "enum":
            if schema.get("name"):
                self.named.setdefault(schema["name"], schema)
            return _Leaf(self._list(), pa.string())
        if kind == "fixed":
            if schema.get("name"):
                self.named.setdefault(schema["name"], schema)
            return _Leaf(self._list(), pa.binary())
        if kind in _PLAIN or kind == "null":
            return self.node(kind, path)
        raise _Unsupported(f"Avro type {kind}")

    def nulls(self, depth: int, node: Any) -> None:
        """A null at ``node``: every list under it gets one (as the per-value path builds a null struct)."""
        if isinstance(node, _Leaf):
            self.emit(depth, f"a{node.index}(None)")
            return
        self.emit(depth, f"a{node.index}(True)")
        for _, child in node.fields:
            self.nulls(depth, child)

    def read(self, depth: int, schema: Any, node: Any) -> None:
        """The code reading one value of ``schema`` at ``pos`` into ``node``."""
        schema = self.resolve(schema)
        if isinstance(schema, list):
            branches = list(schema)
            if len(branches) == 1:
                self.read(depth, branches[0], node)
                return
            at_null = branches.index("null")
            self.varint(depth, 0, len(branches) - 1)
            self.emit(depth, f"if n == {at_null}:")
            self.nulls(depth + 1, node)
            self.emit(depth, "else:")
            self.read(depth + 1, branches[1 - at_null], node)
            return
        append = f"a{node.index}"
        if isinstance(schema, str):
            kind, logical = schema, None
        else:
            kind, logical = schema.get("type"), schema.get("logicalType")
        if logical == "decimal":
            self.sized(depth, schema["size"] if kind == "fixed" else None)
            self.emit(
                depth,
                "n = _int(buf[pos:end], 'big', signed=True); pos = end",
                f"if n >= {10**node.arrow.precision} or n <= -{10**node.arrow.precision}: raise _Miss",
                f"{append}(n)",
            )
        elif kind in ("record", "error"):
            self.emit(depth, f"{append}(False)")
            for f, (_, child) in zip(schema["fields"], node.fields):
                self.read(depth, f["type"], child)
        elif kind == "null":
            self.emit(depth, f"{append}(None)")
        elif kind == "boolean":
            self.emit(depth, "b = buf[pos]; pos += 1", "if b > 1: raise _Miss", f"{append}(b == 1)")
        elif kind == "int" and logical == "date":
            self.varint(depth, _MIN_DAYS, _MAX_DAYS)
            self.emit(depth, f"{append}(n)")
        elif kind == "int":
            self.varint(depth, -(2**31), 2**31 - 1)
            self.emit(depth, f"{append}(n)")
        elif kind == "long" and logical == "timestamp-millis":
            self.varint(depth, _MIN_MICROS // 1000 + 1, _MAX_MICROS // 1000)
            self.emit(depth, f"{append}(n * 1000)")
        elif kind == "long":
            low, high = (_MIN_MICROS, _MAX_MICROS) if logical == "timestamp-micros" else (-(2**63), 2**63 - 1)
            self.varint(depth, low, high)
            self.emit(depth, f"{append}(n)")
        elif kind in ("float", "double"):
            width = 4 if kind == "float" else 8
            self.emit(depth, f"{append}(_{kind}(buf, pos)[0]); pos += {width}")
        elif kind in ("bytes", "string", "fixed"):
            self.sized(depth, schema["size"] if kind == "fixed" else None)
            text = ".decode()" if kind == "string" else ""
            self.emit(depth, f"{append}(buf[pos:end]{text}); pos = end")
        elif kind == "enum":
            symbols = self.constants[f"_symbols{node.index}"] = tuple(schema["symbols"])
            self.varint(depth, 0, len(symbols) - 1)
            self.emit(depth, f"{append}(_symbols{node.index}[n])")
        else:  # node() refused it already
            raise _Unsupported(f"Avro type {kind}")


class _Miss(Exception):
    """A value the generated decoder does not read as fastavro would: the chunk takes the per-value path."""


class AvroColumns:
    """The generated decoder of one schema id's values and the Arrow column it builds."""

    def __init__(self, header: bytes, decode, root: _Struct, source: str):
        self.header, self._decode, self.root, self.source = header, decode, root, source

    @property
    def arrow(self) -> pa.DataType:
        return self.root.arrow

    def column(self, values: list[bytes | None]) -> pa.Array | None:
        """The typed column of a chunk of framed values (None: null); None when a value is not one the
        generated decoder reads (the chunk then takes the per-value path)."""
        try:
            lists = self._decode(values, self.header)
        except Exception:  # _Miss, IndexError (bytes end early), struct.error, UnicodeDecodeError ...
            return None
        return _build(self.root, lists)


def _build(node: Any, lists: list[list]) -> pa.Array:
    values = lists[node.index]
    if isinstance(node, _Leaf):
        if not node.decimal:
            return pa.array(values, type=node.arrow)
        # unscaled ints as decimal128's 16-byte little-endian two's complement, nulls as zeros
        data = b"".join(b"\0" * 16 if v is None else v.to_bytes(16, "little", signed=True) for v in values)
        valid = pa.array([v is not None for v in values], type=pa.bool_())
        nulls = values.count(None)
        return pa.Array.from_buffers(
            node.arrow, len(values), [valid.buffers()[1] if nulls else None, pa.py_buffer(data)], null_count=nulls
        )
    children = [_build(child, lists) for _, child in node.fields]
    mask = pa.array(values, type=pa.bool_()) if True in values else None
    return pa.StructArray.from_arrays(children, fields=list(node.arrow), mask=mask)


def avro_columns(schema_id: int, schema: Any, named: dict[str, Any]) -> AvroColumns | None:
    """The generated decoder of the values framed with ``schema_id`` whose writer schema is ``schema`` (a
    record; ``named``: the named types its references define), read as written; None when the schema has a
    type it does not read (module doc)."""
    from kcodec.generated.fast.schema_registry_frame import encode_schema_registry_frame_v0

    gen = _Generator(named)
    try:
        root = gen.node(schema, ())
        if not isinstance(root, _Struct):
            return None
        gen.read(3, schema, root)
    except (_Unsupported, KeyError, TypeError, ValueError):
        return None
    header = encode_schema_registry_frame_v0((0, schema_id))
    lists = ", ".join(f"l{i}" for i in range(gen.lists))
    lines = ["def decode(values, header):"]
    lines += [f"    l{i} = []; a{i} = l{i}.append" for i in range(gen.lists)]
    lines += ["    for buf in values:", "        if buf is None:"]
    gen_nulls = _Generator(named)
    gen_nulls.nulls(3, root)
    lines += gen_nulls.lines
    lines += [
        "            continue",
        f"        if buf[:{len(header)}] != header: raise _Miss",
        f"        pos = {len(header)}; size = len(buf)",
        "        if True:",
    ]
    lines += gen.lines
    lines += ["        if pos != size: raise _Miss", f"    return [{lists}]"]
    source = "\n".join(lines) + "\n"
    scope: dict[str, Any] = {
        "_Miss": _Miss,
        "_int": int.from_bytes,
        "_float": struct.Struct("<f").unpack_from,
        "_double": struct.Struct("<d").unpack_from,
        **gen.constants,
    }
    exec(compile(source, f"<avro decoder of schema {schema_id}>", "exec"), scope)  # the text is ours, generated above
    return AvroColumns(header, scope["decode"], root, source)
