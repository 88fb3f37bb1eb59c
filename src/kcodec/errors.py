"""kcodec's exception tree.

Every failure kcodec reports is a :class:`KcodecError`. Decoding failures are
:class:`DecodeError` subclasses, one per kind of damage; each carries where it
happened (byte position in the input, the batch's base offset, the field path
from the schema) so a person can find the bad bytes.
"""
from __future__ import annotations

__all__ = [
    "KcodecError",
    "SchemaError",
    "EncodeError",
    "DecodeError",
    "CrcMismatchError",
    "TruncatedError",
    "BadLengthError",
    "VarintTooLongError",
    "RecordCountError",
    "UnknownMagicError",
    "CompressionError",
    "DecompressionError",
    "DecompressionLimitError",
    "CorruptError",
]


class KcodecError(Exception):
    """Base class of every error kcodec raises on purpose."""

    kind = "error"

    def __init__(self, message: str, *, position: int | None = None,
                 base_offset: int | None = None, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.position = position
        self.base_offset = base_offset
        self.field = field

    def where(self) -> str:
        parts = []
        if self.position is not None:
            parts.append(f"byte {self.position}")
        if self.base_offset is not None:
            parts.append(f"batch offset {self.base_offset}")
        if self.field:
            parts.append(f"field {self.field}")
        return ", ".join(parts)

    def __str__(self) -> str:
        where = self.where()
        return f"{self.message} (at {where})" if where else self.message


class SchemaError(KcodecError):
    """A schema file is invalid; names the file, entity and field."""

    kind = "schema"

    def __init__(self, message: str, *, file: str | None = None,
                 entity: str | None = None, field: str | None = None):
        super().__init__(message, field=field)
        self.file = file
        self.entity = entity

    def __str__(self) -> str:
        loc = [p for p in (self.file, self.entity, self.field) if p]
        return f"{': '.join(loc)}: {self.message}" if loc else self.message


class EncodeError(KcodecError):
    """A value cannot be encoded (out of range, missing field, disallowed combination)."""

    kind = "encode"


class DecodeError(KcodecError):
    """Bytes that do not decode; subclasses say which rule they break."""

    kind = "corrupt"


class CrcMismatchError(DecodeError):
    kind = "crc"


class TruncatedError(DecodeError):
    kind = "truncated"


class BadLengthError(DecodeError):
    kind = "length"


class VarintTooLongError(DecodeError):
    kind = "varint"


class RecordCountError(DecodeError):
    kind = "record_count"


class UnknownMagicError(DecodeError):
    kind = "magic"


class CompressionError(DecodeError):
    """Unknown codec id, or a codec the format does not allow here."""

    kind = "compression"


class DecompressionError(DecodeError):
    kind = "decompression"


class DecompressionLimitError(DecompressionError):
    """Decompressed output would exceed the configured cap (a compression bomb)."""

    kind = "decompression_limit"


class CorruptError(DecodeError):
    """Any other structural damage."""

    kind = "corrupt"
