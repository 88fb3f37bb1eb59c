"""The one small API the CLI and Spark share: a :class:`ValueDecoder` over a schema source turns a framed
key or value into ``(schema id, value)``; :meth:`ValueDecoder.try_decode` keeps what does not decode raw
with the reason.

Schemas are compiled once per run (a failure is remembered too, so a bad schema costs one attempt). Avro
values are read with the writer's schema resolved to a reader schema: the ``subject`` given, else the
subject the topic name strategy names (``<topic>-value`` / ``<topic>-key``) when the id is registered
under it, else the only subject the id is registered under; that subject's latest version. Protobuf and
JSON Schema values read with the writer's schema."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from kcodec.values.avro import AvroSchema
from kcodec.values.errors import SchemaParseError, UnknownSchemaIdError, ValueDecodeError
from kcodec.values.frame import HEADER_SIZE, read_frame, read_protobuf_frame
from kcodec.values.json_schema import JsonSchema
from kcodec.values.protobuf import ProtobufSchema
from kcodec.values.references import resolve_references
from kcodec.values.registry import RegisteredSchema
from kcodec.values.sources import SchemaSource

__all__ = ["ValueDecoder", "DecodedValue", "MAX_SCHEMA_BYTES"]

MAX_SCHEMA_BYTES = 16 * 1024 * 1024  # a registry's records are far smaller (its topic's max.message.bytes)


@dataclass(frozen=True)
class DecodedValue:
    """A key or value as :meth:`ValueDecoder.try_decode` found it: the schema id (None when not framed), the
    decoded value, or the error saying why it stays raw."""

    schema_id: int | None
    value: Any = None
    error: ValueDecodeError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class ValueDecoder:
    """Decodes Schema Registry framed keys and values with the schemas of ``source``.

    ``subject`` fixes the reader schema's subject (Avro); ``max_schema_bytes`` refuses larger schemas;
    ``named_union_branches``: an Avro union's branch of a named type (record, enum, fixed) comes as
    ``(full name, value)`` (what tells a union's branches apart for typed columns)."""

    def __init__(
        self,
        source: SchemaSource,
        *,
        subject: str | None = None,
        max_schema_bytes: int = MAX_SCHEMA_BYTES,
        named_union_branches: bool = False,
    ):
        self.source, self.subject, self.max_schema_bytes = source, subject, max_schema_bytes
        self.named_union_branches = named_union_branches
        self._writers: dict[int, RegisteredSchema | None] = {}
        self._compiled: dict[tuple[int, str | None], Any] = {}
        # (schema id, topic, key) -> (compiled schema, Protobuf?): the per-value path is one lookup
        self._ready: dict[tuple[int, str | None, bool], tuple[Any, bool]] = {}

    def schema(self, schema_id: int) -> RegisteredSchema:
        if schema_id not in self._writers:
            self._writers[schema_id] = self.source.by_id(schema_id)
        found = self._writers[schema_id]
        if found is None:
            raise UnknownSchemaIdError(
                f"schema id {schema_id} is not in {self.source.description}", schema_id=schema_id, field="schema_id"
            )
        return found

    def _reader_subject(self, schema_id: int, topic: str | None, key: bool) -> str | None:
        if self.subject is not None:
            return self.subject
        subjects = {s for s, _ in self.source.subjects_of(schema_id)}
        if topic is not None and f"{topic}-{'key' if key else 'value'}" in subjects:
            return f"{topic}-{'key' if key else 'value'}"
        return subjects.pop() if len(subjects) == 1 else None

    def _checked(self, schema: RegisteredSchema) -> RegisteredSchema:
        if len(schema.schema) > self.max_schema_bytes:
            raise SchemaParseError(
                f"schema {schema.id} is {len(schema.schema):,} characters, over the limit of "
                f"{self.max_schema_bytes:,} (max_schema_bytes)"
            )
        return schema

    def _compile(self, writer: RegisteredSchema, reader_subject: str | None):
        refs = resolve_references(self._checked(writer), self.source)
        if writer.schema_type == "PROTOBUF":
            return ProtobufSchema(writer, refs)
        if writer.schema_type == "JSON":
            return JsonSchema(writer, refs)
        reader = self.source.latest(reader_subject) if reader_subject is not None else None
        tagged = self.named_union_branches
        if reader is None or reader.id == writer.id or reader.schema_type != "AVRO":
            return AvroSchema(writer, refs, named_union_branches=tagged)
        reader_refs = resolve_references(reader, self.source)
        return AvroSchema(writer, refs, self._checked(reader), reader_refs, named_union_branches=tagged)

    def compiled(self, schema_id: int, *, topic: str | None = None, key: bool = False):
        """The compiled schema of an id (for Avro, with its reader schema); errors are remembered."""
        writer = self.schema(schema_id)
        reader_subject = self._reader_subject(schema_id, topic, key) if writer.schema_type == "AVRO" else None
        at = (schema_id, reader_subject)
        if at not in self._compiled:
            try:
                self._compiled[at] = self._compile(writer, reader_subject)
            except ValueDecodeError as exc:
                self._compiled[at] = exc
        found = self._compiled[at]
        if isinstance(found, ValueDecodeError):
            raise found
        return found

    def decode_value(self, data: bytes | memoryview, *, topic: str | None = None, key: bool = False) -> tuple[int, Any]:
        """``(schema id, value)`` of a framed key or value; a :class:`~kcodec.values.errors.ValueDecodeError`
        subclass says why not (not framed, truncated header, unknown id, schema or payload that does not
        parse, unresolvable reference). ``topic`` and ``key`` pick the Avro reader schema's subject."""
        view = memoryview(data)
        frame = read_frame(view)
        ready = self._ready.get((frame.schema_id, topic, key))
        if ready is None:
            protobuf = self.schema(frame.schema_id).schema_type == "PROTOBUF"
            ready = (self.compiled(frame.schema_id, topic=topic, key=key), protobuf)
            self._ready[(frame.schema_id, topic, key)] = ready
        compiled, protobuf = ready
        if protobuf:
            frame = read_protobuf_frame(view)
        payload = view[frame.payload_start :]
        try:
            if frame.message_indexes is not None:
                return frame.schema_id, compiled.decode(payload, frame.message_indexes)
            return frame.schema_id, compiled.decode(payload)
        except ValueDecodeError as exc:
            raise exc.at(frame.payload_start) if exc.position is not None else exc from None

    def decode_chunk(
        self, values: Sequence[bytes | None], *, topic: str | None = None, key: bool = False
    ) -> tuple[list[Any], list[ValueDecodeError | None]]:
        """:meth:`decode_value` over a chunk of keys or values (None stays None): their values (None where one
        does not decode) and their errors (None where one does). For the columns a chunk becomes: the
        generated decoder reads each distinct Avro or JSON Schema header once per chunk (that header is its
        first bytes), so a value costs one lookup and its payload's decode."""
        out: list[Any] = []
        errors: list[ValueDecodeError | None] = []
        by_header: dict[bytes, tuple[Any, int] | None] = {}  # header bytes -> (payload decoder, payload start)
        for data in values:
            if data is None:
                out.append(None)
                errors.append(None)
                continue
            head = data[:HEADER_SIZE]
            if head in by_header:
                ready = by_header[head]
            else:
                ready = by_header[head] = self._payload_decoder(data, topic, key)
            try:
                if ready is None:  # Protobuf (a header of its own length), or a header that does not read
                    out.append(self.decode_value(data, topic=topic, key=key)[1])
                else:
                    out.append(ready[0](data[ready[1] :]))
                errors.append(None)
            except ValueDecodeError as exc:
                out.append(None)
                moved = exc.at(ready[1]) if ready is not None and exc.position is not None else exc
                errors.append(cast(ValueDecodeError, moved))  # .at copies the error, class and all
        return out, errors

    def _payload_decoder(self, data: bytes, topic: str | None, key: bool) -> tuple[Any, int] | None:
        """The payload decoder and payload start of a value's Avro or JSON Schema header; None otherwise."""
        try:
            frame = read_frame(data)
            if self.schema(frame.schema_id).schema_type == "PROTOBUF":
                return None
            return self.compiled(frame.schema_id, topic=topic, key=key).decode, frame.payload_start
        except ValueDecodeError:
            return None

    def try_decode(self, data: bytes | memoryview, *, topic: str | None = None, key: bool = False) -> DecodedValue:
        """As :meth:`decode_value`, but a value that does not decode comes back with its error (and its schema
        id when the header was read) instead of raising."""
        try:
            schema_id, value = self.decode_value(data, topic=topic, key=key)
        except ValueDecodeError as exc:
            return DecodedValue(_schema_id_of(data), None, exc)
        return DecodedValue(schema_id, value)


def _schema_id_of(data: bytes | memoryview) -> int | None:
    """The schema id a value's header names, None when it has no whole header."""
    try:
        return read_frame(data).schema_id
    except ValueDecodeError:
        return None
