"""Avro payloads: binary without a container header, read by fastavro (the ``confluent`` extra) with the
writer's schema, resolved to a reader schema (the subject's latest version) by Avro's evolution rules.

Values are fastavro's: records as dicts with the schema's field names, ``bytes``/``fixed`` as bytes,
decimals as :class:`decimal.Decimal` (exact), timestamps as aware datetimes, dates, times, UUIDs."""

from __future__ import annotations

import functools
import io
import json
import re
from typing import Any

from kcodec.values.avro_bounds import EmptyItemsGuard
from kcodec.values.errors import MissingDependencyError, PayloadError, SchemaParseError
from kcodec.values.registry import Reference, RegisteredSchema

__all__ = ["AvroSchema", "fastavro_module"]

_STREAM = re.compile(r"<_io\.BytesIO object at 0x[0-9a-fA-F]+>")  # fastavro names its stream in some messages
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def fastavro_module():
    """fastavro, imported on first use; :class:`MissingDependencyError` with the pip command without it."""
    try:
        import fastavro
    except ImportError:
        raise MissingDependencyError("fastavro", "decoding Avro values") from None
    return fastavro


def _parse(schema: RegisteredSchema, refs: list[tuple[Reference, RegisteredSchema]]):
    """The parsed schema, its referenced named types parsed first into the same namespace."""
    fastavro = fastavro_module()
    named: dict[str, Any] = {}
    for ref, target in refs + [(None, schema)]:
        where = f"schema {target.id}" if ref is None else f"reference {ref.name!r} ({ref.subject} v{ref.version})"
        if target.schema_type != "AVRO":
            raise SchemaParseError(f"{where} is {target.schema_type}, not AVRO")
        try:
            parsed = fastavro.parse_schema(json.loads(target.schema), named_schemas=named)
        except Exception as exc:  # fastavro raises SchemaParseException, ValueError, KeyError, TypeError ...
            raise SchemaParseError(f"{where} is not an Avro schema: {type(exc).__name__}: {exc}") from None
    return parsed, named


class AvroSchema:
    """A writer schema, and the reader schema its values are resolved to (None: read as written);
    ``named_union_branches``: a union's branch of a named type comes as ``(full name, value)``."""

    def __init__(
        self,
        writer: RegisteredSchema,
        writer_refs: list[tuple[Reference, RegisteredSchema]],
        reader: RegisteredSchema | None = None,
        reader_refs: list[tuple[Reference, RegisteredSchema]] | None = None,
        *,
        named_union_branches: bool = False,
    ):
        self.writer, self.named = _parse(writer, writer_refs)  # named: the types references define
        self.reader = _parse(reader, reader_refs or [])[0] if reader is not None else None
        guard = EmptyItemsGuard(self.writer, self.named)
        self.guard = guard if guard.needed else None  # arrays of items that take no bytes: bounded first
        self.reader_id = reader.id if reader is not None else writer.id
        read = fastavro_module().schemaless_reader
        self._read = functools.partial(read, return_named_type=True) if named_union_branches else read

    def decode(self, payload: memoryview) -> Any:
        if self.guard is not None:
            self.guard.check(payload)
        stream = io.BytesIO(payload)
        try:
            value = self._read(stream, self.writer, self.reader)
        except Exception as exc:  # fastavro: EOFError, ValueError, SchemaResolutionError, UnicodeDecodeError ...
            # an object's address would make the text differ from run to run
            why = _ADDRESS.sub("", _STREAM.sub("the payload", str(exc)))
            raise PayloadError(f"Avro payload does not decode: {type(exc).__name__}: {why}") from None
        left = len(payload) - stream.tell()
        if left:
            raise PayloadError(f"{left} bytes left after the Avro value", position=stream.tell())
        return value
