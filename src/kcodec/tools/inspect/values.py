"""Schema Registry framed keys and values inside a segment's records (``inspect --value-decoder confluent``,
``--key-decoder confluent``): the header is read by the walker as the schema ``schema_registry_frame``
describes it (``schema_registry_protobuf_frame`` when the id names a Protobuf schema, so the message-index
path shows too), and the payload after it is one span annotated with its schema and decoded value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kcodec.tools.inspect.spans import WARN, Span, plural
from kcodec.values.errors import NotFramedError, ValueDecodeError
from kcodec.values.frame import read_frame, read_protobuf_frame
from kcodec.values.json_text import value_json

if TYPE_CHECKING:
    from kcodec.values.decoder import ValueDecoder

__all__ = ["FramedPart", "framed_hints"]

AVRO_OR_JSON_HEADER = ("schema_registry_frame", 0)
PROTOBUF_HEADER = ("schema_registry_protobuf_frame", 0)


@dataclass(frozen=True)
class FramedPart:
    """How a record's ``field`` (``key`` or ``value``) is read when it is framed: ``decoder`` (None when no
    schemas were found) picks the header's entity and decodes the payload; ``topic`` picks the reader
    schema's subject, as in ``dump``."""

    field: str
    decoder: ValueDecoder | None
    topic: str | None = None

    def header(self, data: bytes) -> tuple[str, int] | ValueDecodeError:
        """The header's entity and version, or why the bytes are not read as one: not framed, or a header
        the value's bytes end inside (neither is damage of the log: the value stays as it is)."""
        try:
            schema_id = read_frame(data).schema_id
            if self.decoder is not None and self._schema_type(schema_id) == "PROTOBUF":
                read_protobuf_frame(data)
                return PROTOBUF_HEADER
        except ValueDecodeError as exc:
            return exc
        return AVRO_OR_JSON_HEADER

    def _schema_type(self, schema_id: int) -> str | None:
        assert self.decoder is not None
        try:
            return self.decoder.schema(schema_id).schema_type
        except ValueDecodeError:
            return None  # an unknown id: the payload's span says so

    @staticmethod
    def unframed(data: Span, why: ValueDecodeError) -> Span:
        """The bytes of a value that is not framed (as they are, with why), or whose header is cut short."""
        if isinstance(why, NotFramedError):
            data.notes.append(f"not Schema Registry framed: {why.message}")
            return data
        return data.mark(WARN, f"{why.kind}: {why.message}")

    def payload(self, data: bytes, start: int, end: int, path: str, space: str) -> Span:
        """The span of the payload (bytes ``start``..``end`` of the file, the tail of ``data``)."""
        span = Span(start, end, f"{path}.payload", kind="data", raw=data[len(data) - (end - start) :], space=space)
        span.display = f"{end - start} byte{plural(end - start)}, not decoded"
        if self.decoder is None:
            return span.mark(WARN, "no schemas to decode the payload with (name them with --schemas)")
        got = self.decoder.try_decode(data, topic=self.topic, key=self.field == "key")
        if got.error is not None:
            return span.mark(WARN, f"{got.error.kind}: {got.error}")
        assert got.schema_id is not None  # decoded, so framed
        kind = self.decoder.schema(got.schema_id).schema_type
        span.type = f"{kind} payload, schema id {got.schema_id}"
        span.value = got.value
        span.display = value_json(got.value)
        return span


def framed_hints(parts: list[FramedPart]) -> dict:
    """The hints of a (non-control) record's fields that hold framed keys or values."""
    return {p.field: p for p in parts}
