"""Why a Schema Registry framed key or value did not decode: one error class per reason.

A value that is not framed, or names a schema no source has, is not damage of the log: callers keep the
raw bytes and say why (``kind`` is the reason's short name, used in summaries and in ``valueError``)."""

from __future__ import annotations

from kcodec.errors import KcodecError, needs_extra

__all__ = [
    "ValueDecodeError",
    "NotFramedError",
    "TruncatedFrameError",
    "BadFrameError",
    "UnknownSchemaIdError",
    "SchemaParseError",
    "SchemaReferenceError",
    "PayloadError",
    "SchemaSourceError",
    "MissingDependencyError",
    "error_kinds",
]


class ValueDecodeError(KcodecError):
    """A framed value that did not decode; subclasses say why."""

    kind = "value"


class NotFramedError(ValueDecodeError):
    """The first byte is not the wire format's magic byte 0 (or the value is empty)."""

    kind = "not_framed"


class TruncatedFrameError(ValueDecodeError):
    """The value ends inside its header (magic, schema id, Protobuf message indexes)."""

    kind = "truncated_frame"


class BadFrameError(ValueDecodeError):
    """The Protobuf message-index path is impossible (a negative count, more indexes than bytes left)."""

    kind = "bad_frame"


class UnknownSchemaIdError(ValueDecodeError):
    """No schema with that id in the schema source (or it was hard-deleted)."""

    kind = "unknown_schema_id"

    def __init__(self, message: str, *, schema_id: int, **where):
        super().__init__(message, **where)
        self.schema_id = schema_id


class SchemaParseError(ValueDecodeError):
    """The schema text does not parse (Avro JSON, .proto, JSON Schema), or names a message that is not there."""

    kind = "schema_parse"


class SchemaReferenceError(ValueDecodeError):
    """A schema reference that cannot be resolved: missing subject/version, or a cycle."""

    kind = "schema_reference"


class PayloadError(ValueDecodeError):
    """The payload after the header does not decode with its schema."""

    kind = "payload"


class SchemaSourceError(KcodecError):
    """The schema source itself cannot be read: a `_schemas` directory, a file, a registry URL."""

    kind = "schema_source"


class MissingDependencyError(KcodecError, ImportError):
    """An optional dependency of a format is not installed; the message names the pip command, worded as
    everywhere in kcodec (:func:`kcodec.errors.needs_extra`)."""

    kind = "missing_dependency"

    def __init__(self, module: str, what: str):
        super().__init__(f"{what} {needs_extra(module, 'confluent')}")


def error_kinds() -> tuple[str, ...]:
    """Every reason's short name (the ``kind`` of each error class here): what a summary counts by."""
    classes = [globals()[name] for name in __all__ if name != "error_kinds"]
    return tuple(dict.fromkeys(c.kind for c in classes))
