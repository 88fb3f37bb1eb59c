"""The Schema Registry wire format's header, read by the decoders generated from
``schemas/values/schema_registry_frame.yaml`` and ``schema_registry_protobuf_frame.yaml`` (the only
header parser: its layout, offsets and checks are the schemas')."""

from __future__ import annotations

from typing import NamedTuple

from kcodec.errors import DecodeError, RecordCountError, TruncatedError, UnknownMagicError
from kcodec.generated.fast.schema_registry_frame import decode_schema_registry_frame_v0
from kcodec.generated.fast.schema_registry_protobuf_frame import decode_schema_registry_protobuf_frame_v0
from kcodec.generated.schema_registry_frame import SCHEMA_REGISTRY_FRAME_V0_SIZE
from kcodec.values.errors import BadFrameError, NotFramedError, TruncatedFrameError

__all__ = ["Frame", "read_frame", "read_protobuf_frame", "HEADER_SIZE", "MAGIC"]

HEADER_SIZE = SCHEMA_REGISTRY_FRAME_V0_SIZE
MAGIC = 0


class Frame(NamedTuple):
    """A framed value's header: the schema id, the Protobuf message-index path (``[0]`` for the common
    empty path; ``None`` for Avro and JSON Schema) and where the payload starts."""

    schema_id: int
    payload_start: int
    message_indexes: tuple[int, ...] | None = None


def _framing_error(exc: DecodeError, data: bytes | memoryview) -> Exception:
    if not data:
        return NotFramedError("empty value", position=0, field="magic")
    if isinstance(exc, UnknownMagicError) or data[0] != MAGIC:
        return NotFramedError(
            f"first byte {data[0]} is not the wire format's magic byte {MAGIC}", position=0, field="magic"
        )
    if isinstance(exc, (TruncatedError, RecordCountError)) or len(data) < HEADER_SIZE:  # a count past the end too
        return TruncatedFrameError(
            f"{len(data)} bytes end inside the wire format's header", position=exc.position, field=exc.field
        )
    return BadFrameError(exc.message, position=exc.position, field=exc.field)


def read_frame(data: bytes | memoryview) -> Frame:
    """The header of an Avro or JSON Schema value (and the schema id of any framed value).

    :class:`NotFramedError` when the first byte is not 0 or the value is empty; :class:`TruncatedFrameError`
    when the bytes end inside the header. The magic byte is checked by the schema's decoder alone."""
    try:
        (_, schema_id), pos = decode_schema_registry_frame_v0(data, 0)
    except DecodeError as exc:
        raise _framing_error(exc, data) from None
    return Frame(schema_id, pos)


def read_protobuf_frame(data: bytes | memoryview) -> Frame:
    """The header of a Protobuf value: also its message-index path (the empty path is ``[0]``)."""
    try:
        ((_, schema_id), indexes), pos = decode_schema_registry_protobuf_frame_v0(data, 0)
    except DecodeError as exc:
        raise _framing_error(exc, data) from None
    return Frame(schema_id, pos, tuple(indexes) if indexes else (0,))
