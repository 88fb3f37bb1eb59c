"""A bound fastavro does not keep: an Avro array whose items take no bytes (``null``, ``fixed`` of size 0,
records of only such fields) holds as many items as its block count says, so a few payload bytes can ask
for 2^62 items and fastavro loops (and allocates) until the machine gives out. For the rare schema that
has such an array, the payload is walked first (no values built), counting those items against a budget;
every other type takes at least one byte per item, so its count is bounded by the payload's length."""

from __future__ import annotations

from typing import Any

from kcodec.values.errors import PayloadError

__all__ = ["MAX_EMPTY_ITEMS", "EmptyItemsGuard"]

MAX_EMPTY_ITEMS = 10_000_000  # items that take no bytes, per value
_FIXED_SIZES = {"float": 4, "double": 8, "boolean": 1}


class EmptyItemsGuard:
    """Built from a parsed (fastavro) schema and the named types it may refer to; :attr:`needed` says
    whether the schema has an array of zero-byte items, :meth:`check` walks a payload."""

    def __init__(self, schema: Any, named: dict[str, Any], budget: int = MAX_EMPTY_ITEMS):
        self.named = dict(named)
        self.budget = budget
        self._collect(schema)
        self.root = schema
        self.needed = self._has_empty_arrays(schema, set())

    def _collect(self, schema: Any) -> None:
        if isinstance(schema, list):
            for branch in schema:
                self._collect(branch)
        elif isinstance(schema, dict):
            if "name" in schema and schema.get("type") in ("record", "error", "enum", "fixed"):
                self.named.setdefault(schema["name"], schema)
            for field in schema.get("fields", ()):
                self._collect(field["type"])
            for key in ("items", "values"):
                if key in schema:
                    self._collect(schema[key])

    def _resolve(self, schema: Any) -> Any:
        while isinstance(schema, str) and schema in self.named:
            schema = self.named[schema]
        return schema

    def _empty(self, schema: Any, seen: set[str]) -> bool:
        """Whether the type always encodes to zero bytes."""
        schema = self._resolve(schema)
        if schema == "null":
            return True
        if isinstance(schema, dict):
            kind = schema.get("type")
            if kind == "fixed":
                return schema.get("size") == 0
            if kind in ("record", "error"):
                name = schema.get("name", "")
                if name in seen:
                    return False  # a recursive record holds at least a union index on the way down
                return all(self._empty(f["type"], seen | {name}) for f in schema.get("fields", ()))
            if isinstance(kind, (str, dict, list)) and kind not in ("array", "map", "enum"):
                return self._empty(kind, seen)  # a logical type over its base type
        return False

    def _has_empty_arrays(self, schema: Any, seen: set[str]) -> bool:
        schema = self._resolve(schema)
        if isinstance(schema, list):
            return any(self._has_empty_arrays(b, seen) for b in schema)
        if not isinstance(schema, dict):
            return False
        kind = schema.get("type")
        if kind == "array":
            return self._empty(schema["items"], set()) or self._has_empty_arrays(schema["items"], seen)
        if kind == "map":
            return self._has_empty_arrays(schema["values"], seen)
        if kind in ("record", "error"):
            name = schema.get("name", "")
            if name in seen:
                return False
            return any(self._has_empty_arrays(f["type"], seen | {name}) for f in schema.get("fields", ()))
        return False

    # ------------------------------------------------------------------ the walk

    def check(self, payload: memoryview) -> None:
        """PayloadError when the payload's zero-byte array items exceed the budget, or it ends early."""
        self._left = self.budget
        self._data, self._pos = payload, 0
        try:
            self._skip(self.root)
        except IndexError:
            raise PayloadError("Avro payload ends inside a value", position=len(payload)) from None

    def _long(self) -> int:
        data, pos, shift, out = self._data, self._pos, 0, 0
        while True:
            b = data[pos]
            pos += 1
            out |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
            if shift > 63:
                raise PayloadError("Avro varint longer than 10 bytes", position=pos)
        self._pos = pos
        return (out >> 1) ^ -(out & 1)

    def _advance(self, n: int) -> None:
        if n < 0 or self._pos + n > len(self._data):
            raise IndexError
        self._pos += n

    def _skip(self, schema: Any) -> None:
        schema = self._resolve(schema)
        if isinstance(schema, list):
            index = self._long()
            if not 0 <= index < len(schema):
                raise PayloadError(f"Avro union index {index} out of range", position=self._pos)
            self._skip(schema[index])
            return
        if isinstance(schema, dict):
            kind = schema.get("type")
            if kind in ("record", "error"):
                for field in schema.get("fields", ()):
                    self._skip(field["type"])
            elif kind == "fixed":
                self._advance(schema.get("size", 0))
            elif kind == "enum":
                self._long()
            elif kind in ("array", "map"):
                self._blocks(schema, kind)
            else:
                self._skip(kind)  # a logical type over its base type
            return
        if schema in ("int", "long"):
            self._long()
        elif schema in ("bytes", "string"):
            self._advance(self._long())
        elif schema in _FIXED_SIZES:
            self._advance(_FIXED_SIZES[schema])
        elif schema != "null":
            raise PayloadError(f"Avro type {schema!r} is not known", position=self._pos)

    def _blocks(self, schema: dict, kind: str) -> None:
        item = schema["items"] if kind == "array" else schema["values"]
        empty = kind == "array" and self._empty(item, set())
        while True:
            count = self._long()
            if count == 0:
                return
            if count < 0:
                count = -count
                self._long()  # the block's byte size
            if empty:
                self._left -= count
                if self._left < 0:
                    raise PayloadError(
                        f"Avro array asks for more than {self.budget:,} items that take no bytes", position=self._pos
                    )
                continue
            for _ in range(count):  # each item takes a byte at least: bounded by the payload
                if self._pos >= len(self._data):
                    raise IndexError
                if kind == "map":
                    self._advance(self._long())
                self._skip(item)
