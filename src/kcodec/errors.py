"""kcodec's exception tree.

Every failure kcodec reports is a :class:`KcodecError`. Decoding failures are
:class:`DecodeError` subclasses, one per kind of damage; each carries where it
happened (byte position in the input, the batch's base offset, the field path
from the schema) so a person can find the bad bytes.
"""

from __future__ import annotations

import copy

__all__ = [
    "needs_extra",
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
    "UnknownCodecError",
    "BackendError",
    "NotRegularFileError",
    "PathExistsError",
    "UsageError",
    "EXIT_OK",
    "EXIT_CHECK_FAILED",
    "EXIT_USAGE",
    "EXIT_ERROR",
    "record_corrupt_message",
]


def record_corrupt_message(stored: int, computed: int | None) -> str:
    """Kafka's wording for a CRC that does not hold (DefaultRecordBatch / LegacyRecord ensureValid)."""
    return f"Record is corrupt (stored crc = {stored}, computed crc = {computed})"


class KcodecError(Exception):
    """Base class of every error kcodec raises on purpose."""

    kind = "error"

    def __init__(
        self, message: str, *, position: int | None = None, base_offset: int | None = None, field: str | None = None
    ):
        super().__init__(message)
        self.message = message
        self.position = position
        self.base_offset = base_offset
        self.field = field

    def replace(self, **changes) -> KcodecError:
        """A copy of this error (same class, same extra attributes) with some of ``message``, ``position``,
        ``base_offset``, ``field`` changed. The original is left as it was."""
        unknown = changes.keys() - {"message", "position", "base_offset", "field"}
        if unknown:
            raise TypeError(f"KcodecError.replace: unknown field(s) {', '.join(sorted(unknown))}")
        out = copy.copy(self)
        for name, value in changes.items():
            setattr(out, name, value)
        if "message" in changes:
            out.args = (changes["message"],) + self.args[1:]
        return out

    def at(self, offset: int, *, base_offset: int | None = None) -> KcodecError:
        """A copy relocated by ``offset`` bytes: an error raised while decoding a slice that starts at
        ``offset`` of a larger input, placed in that input. A missing position counts as 0 (the start of
        the slice). ``base_offset`` fills in the batch offset when the error does not know it yet."""
        return self.replace(
            position=offset + (self.position or 0),
            base_offset=base_offset if self.base_offset is None else self.base_offset,
        )

    def inside(self, field: str) -> KcodecError:
        """A copy whose field path is scoped under ``field`` (an element decoder names only its own
        fields): ``key`` inside ``headers`` is ``headers.key``, ``[2].size`` inside ``records`` is
        ``records[2].size``; no field becomes ``field``; a path already under ``field`` stays."""
        own = self.field
        if not own:
            return self.replace(field=field)
        if own == field or own.startswith((field + ".", field + "[")):
            return self.replace()
        return self.replace(field=f"{field}{own}" if own.startswith("[") else f"{field}.{own}")

    def in_stream(self, start: int, codec: str) -> KcodecError:
        """A copy for an error raised while decoding a decompressed ``codec`` stream: placed at the stored
        (compressed) region, which starts at ``start``; the message says where in the stream it was."""
        return self.replace(
            message=f"{self.message} (at byte {self.position or 0} of the decompressed {codec} stream)",
            position=start,
        )

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

    def __init__(self, message: str, *, file: str | None = None, entity: str | None = None, field: str | None = None):
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


class UnknownCodecError(KcodecError, KeyError):
    """No generated codec for that entity and version (also a KeyError, as a lookup that misses)."""

    kind = "unknown_codec"

    def __str__(self) -> str:  # KeyError would quote the message
        return KcodecError.__str__(self)


class BackendError(KcodecError, ImportError):
    """``KCODEC_BACKEND`` asks for decoders that cannot be used (also an ImportError, as before)."""

    kind = "backend"


class NotRegularFileError(KcodecError):
    """A path to read records or an index from is not a regular file (a FIFO, a device, a directory):
    such a file has no size a reader can trust, and may block or never end."""

    kind = "not_regular_file"


class PathExistsError(KcodecError):
    """A write in Spark's ``ErrorIfExists`` save mode (its default) found data at the target path."""

    kind = "path_exists"


class UsageError(Exception):
    """A command line (or a printer's options) asking for something impossible: exit 2, one line."""


# Every command's exit status: 0 success; 1 a check failed (``generate --check`` found stale files,
# ``verify`` found a bad batch); 2 bad usage; 3 kcodec refused the input or cannot run. The printers
# in kcodec.tools return them too, so they live below both.
EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3


def needs_extra(module: str, extra: str) -> str:
    """How kcodec says an optional dependency is missing, everywhere: the module and the pip command."""
    return f"needs {module} (the {extra} extra): pip install 'kcodec[{extra}]'"
