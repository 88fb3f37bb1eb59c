"""construct primitives that generated codecs are built from.

construct lacks what Kafka's formats need: bounded zigzag varints, nullable
length-prefixed bytes, strict enums with typed errors, a length or CRC field
that precedes the bytes it describes, compressed regions. These classes add
them, raise kcodec's typed errors, and keep the generated code declarative.
"""

from __future__ import annotations

import contextlib
import copy
import io
import struct
import uuid
from collections.abc import Callable, Mapping

import construct as c

from kcodec.errors import (
    BadLengthError,
    CompressionError,
    CorruptError,
    CrcMismatchError,
    DecodeError,
    EncodeError,
    KcodecError,
    RecordCountError,
    TruncatedError,
    UnknownMagicError,
    record_corrupt_message,
)
from kcodec.runtime import compression as compress_lib
from kcodec.runtime import varint
from kcodec.runtime.crc import CRC_FUNCTIONS
from kcodec.runtime.tagged import check_unknown_tags, is_default, write_tagged

__all__ = [
    "BitGroup",
    "BitField",
    "VarInt32",
    "VarInt64",
    "UVarInt32",
    "KBytes",
    "EnumOf",
    "ConstInt",
    "LengthCheck",
    "CrcField",
    "Compressed",
    "CompressedBytes",
    "UntilEnd",
    "CountedArray",
    "field_path",
    "LengthBound",
    "CompactLength",
    "KArray",
    "KBool",
    "KUuid",
    "NullableStruct",
    "Flexible",
    "TaggedField",
]

_ERRORS = {"corrupt": CorruptError, "compression": CompressionError, "magic": UnknownMagicError}


def field_path(path: str) -> str:
    """construct's '(parsing) -> records -> key' as the schema path 'records.key'."""
    parts = [p.strip() for p in path.split("->")]
    return ".".join(p for p in parts if p and not p.startswith("("))


def _tell(stream) -> int | None:
    try:
        return stream.tell()
    except (OSError, AttributeError):
        return None


def _read_exact(stream, n: int, path: str, what: str) -> bytes:
    """Read n bytes or raise TruncatedError; never allocates more than is there."""
    pos = _tell(stream)
    data = stream.read(n)
    if len(data) != n:
        raise TruncatedError(
            f"{what}: needs {n} bytes but only {len(data)} remain", position=pos, field=field_path(path)
        )
    return data


class _Varint(c.Construct):
    _decode: Callable
    _encode: Callable
    _max = 5

    def _parse(self, stream, context, path):
        start = _tell(stream)
        buf = bytearray()
        for _ in range(self._max):
            b = stream.read(1)
            if not b:
                raise TruncatedError(
                    f"{self.kind} runs past the end of the input", position=start, field=field_path(path)
                )
            buf += b
            if not b[0] & 0x80:
                break
        try:
            return type(self)._decode(bytes(buf), 0)[0]
        except KcodecError as exc:
            raise exc.at(start or 0).replace(field=field_path(path)) from None

    def _build(self, obj, stream, context, path):
        if not isinstance(obj, int) or isinstance(obj, bool):
            raise EncodeError(f"{self.kind} needs an integer, not {type(obj).__name__}", field=field_path(path))
        try:
            data = type(self)._encode(obj)
        except EncodeError as exc:
            raise exc.replace(field=field_path(path)) from None
        c.stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context, path):
        raise c.SizeofError(f"{self.kind} has no fixed size", path=path)


class VarInt32(_Varint):
    """Kafka's zigzag varint: a signed 32-bit value in at most 5 bytes."""

    kind = "varint"
    _decode = staticmethod(varint.decode_varint)
    _encode = staticmethod(varint.encode_varint)


class VarInt64(_Varint):
    """Kafka's zigzag varlong: a signed 64-bit value in at most 10 bytes."""

    kind = "varlong"
    _max = 10
    _decode = staticmethod(varint.decode_varlong)
    _encode = staticmethod(varint.encode_varlong)


class UVarInt32(_Varint):
    """Kafka's unsigned varint (5 bytes at most)."""

    kind = "uvarint"
    _decode = staticmethod(varint.decode_uvarint)
    _encode = staticmethod(varint.encode_uvarint)


def _build_null(prefix, nullable: bool, stream, context, path) -> None:
    """Null as a length or count prefix writes it: -1 (0 when compact)."""
    if not nullable:
        raise EncodeError("cannot be null", field=field_path(path))
    prefix._build(-1, stream, context, path)
    return None


class KBytes(c.Construct):
    """Bytes (or UTF-8 text) after a length prefix; a negative length is null
    when nullable, as Kafka reads it (writers always emit -1). Without a prefix
    (``None``) the bytes run to the end of the stream, which the caller bounds
    (a Kafka 0.7 message's payload, inside its entry's size)."""

    def __init__(self, prefix: c.Construct | None, nullable: bool, text: bool = False):
        super().__init__()
        self.prefix, self.nullable, self.text = prefix, nullable, text

    def _parse(self, stream, context, path):
        if self.prefix is None:
            data = stream.read()
            return data.decode("utf-8", "replace") if self.text else data
        pos = _tell(stream)
        n = self.prefix._parsereport(stream, context, path)
        if n < 0:
            if self.nullable:
                return None
            raise BadLengthError(
                f"length {n} is negative but {field_path(path) or 'this field'} cannot be null",
                position=pos,
                field=field_path(path),
            )
        data = _read_exact(stream, n, path, field_path(path) or "bytes")
        if not self.text:
            return data
        return data.decode("utf-8", "replace")  # as Kafka's Java client decodes text: replacement characters

    def _build(self, obj, stream, context, path):
        if obj is None:
            return _build_null(self.prefix, self.nullable, stream, context, path)
        if self.text:
            if not isinstance(obj, str):
                raise EncodeError(f"needs a str, not {type(obj).__name__}", field=field_path(path))
            data = obj.encode("utf-8")
        elif isinstance(obj, (bytes, bytearray, memoryview)):
            data = bytes(obj)
        else:
            raise EncodeError(f"needs bytes, not {type(obj).__name__}", field=field_path(path))
        if self.prefix is not None:
            self.prefix._build(len(data), stream, context, path)
        c.stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context, path):
        raise c.SizeofError("bytes have no fixed size", path=path)


class CompactLength(UVarInt32):
    """A compact length or count (KIP-482): an unsigned varint holding n + 1, so 0 is null (-1 here)."""

    kind = "compact length"

    def _parse(self, stream, context, path):
        return super()._parse(stream, context, path) - 1

    def _build(self, obj, stream, context, path):
        if not isinstance(obj, int) or isinstance(obj, bool) or obj < -1:
            raise EncodeError(f"a compact length is -1 (null) or more, not {obj!r}", field=field_path(path))
        super()._build(obj + 1, stream, context, path)
        return obj


def _remaining(stream) -> int | None:
    try:
        here = stream.tell()
        end = stream.seek(0, io.SEEK_END)
        stream.seek(here)
        return end - here
    except (OSError, AttributeError):
        return None


class KArray(c.Subconstruct):
    """Elements after a count prefix (int32, or compact); a negative count is null when nullable. A count
    larger than the bytes left is refused before anything is read, as Kafka refuses it."""

    def __init__(self, prefix: c.Construct, subcon, nullable: bool):
        super().__init__(subcon)
        self.prefix, self.nullable = prefix, nullable

    def _parse(self, stream, context, path):
        pos = _tell(stream)
        n = self.prefix._parsereport(stream, context, path)
        where = field_path(path) or "array"
        if n < 0:
            if self.nullable:
                return None
            raise RecordCountError(f"{where}: count {n} is negative but it cannot be null", position=pos, field=where)
        left = _remaining(stream)
        if left is not None and n > left:
            raise RecordCountError(
                f"{where}: {n} elements cannot fit in the {left} bytes left", position=pos, field=field_path(path)
            )
        items = c.ListContainer()
        for i in range(n):
            context._index = i
            items.append(self.subcon._parsereport(stream, context, path))
        return items

    def _build(self, obj, stream, context, path):
        if obj is None:
            return _build_null(self.prefix, self.nullable, stream, context, path)
        if not isinstance(obj, (list, tuple)):
            raise EncodeError(f"needs a list, not {type(obj).__name__}", field=field_path(path))
        self.prefix._build(len(obj), stream, context, path)
        for i, item in enumerate(obj):
            context._index = i
            self.subcon._build(item, stream, context, path)
        return obj

    def _sizeof(self, context, path):
        raise c.SizeofError("arrays have no fixed size", path=path)


class KBool(c.Construct):
    """Kafka's boolean: one byte, non-zero is true; written as 1 or 0."""

    def _parse(self, stream, context, path):
        return _read_exact(stream, 1, path, field_path(path) or "bool")[0] != 0

    def _build(self, obj, stream, context, path):
        if not isinstance(obj, bool):
            raise EncodeError(f"needs a bool, not {type(obj).__name__}", field=field_path(path))
        c.stream_write(stream, b"\x01" if obj else b"\x00", 1, path)
        return obj

    def _sizeof(self, context, path):
        return 1


class KUuid(c.Construct):
    """Kafka's Uuid: 16 bytes (most significant half first), parsed as a :class:`uuid.UUID`."""

    def _parse(self, stream, context, path):
        return uuid.UUID(bytes=_read_exact(stream, 16, path, field_path(path) or "uuid"))

    def _build(self, obj, stream, context, path):
        if not isinstance(obj, uuid.UUID):
            raise EncodeError(f"needs a uuid.UUID, not {type(obj).__name__}", field=field_path(path))
        c.stream_write(stream, obj.bytes, 16, path)
        return obj

    def _sizeof(self, context, path):
        return 16


class NullableStruct(c.Subconstruct):
    """A nullable struct that is not tagged: an int8 marker, -1 null, 1 present (Kafka reads any
    negative marker as null)."""

    def _parse(self, stream, context, path):
        marker = _read_exact(stream, 1, path, field_path(path) or "struct")[0]
        if marker >= 0x80:
            return None
        return self.subcon._parsereport(stream, context, path)

    def _build(self, obj, stream, context, path):
        if obj is None:
            c.stream_write(stream, b"\xff", 1, path)
            return obj
        c.stream_write(stream, b"\x01", 1, path)
        return self.subcon._build(obj, stream, context, path)


class TaggedField:
    """One known field of a tagged section: its name, tag, payload construct and default."""

    __slots__ = ("name", "tag", "subcon", "default")

    def __init__(self, name: str, tag: int, subcon, default):
        self.name, self.tag, self.subcon, self.default = name, tag, subcon, default


class Flexible(c.Subconstruct):
    """A struct of a flexible version: its fields, then the tagged section (KIP-482). Parsing gives the
    tagged fields (their default when absent), the defaults of fields this version lacks, and
    ``_unknown_tags``, the (tag, bytes) pairs it does not know, which building writes back as they were;
    a tagged field is written only when it differs from its default."""

    def __init__(self, subcon, tagged: list[TaggedField], absent: Mapping | None = None, flexible: bool = True):
        super().__init__(subcon)
        self.tagged, self.absent, self.flexible = tagged, dict(absent or {}), flexible
        self.by_tag = {t.tag: t for t in tagged}

    def _parse(self, stream, context, path):
        obj = self.subcon._parsereport(stream, context, path)
        for name, value in self.absent.items():
            obj[name] = copy.deepcopy(value)
        if not self.flexible:
            return obj
        for t in self.tagged:
            obj[t.name] = copy.deepcopy(t.default)
        unknown = []
        where = field_path(path)
        start = _tell(stream)
        count = _UVARINT._parsereport(stream, context, path)
        left = _remaining(stream)
        if left is not None and count > left:  # every entry takes two bytes at least: refuse before looping
            raise TruncatedError(
                f"{count} tagged fields cannot fit in the {left} bytes left", position=start, field=where
            )
        previous = -1
        for _ in range(count):
            at = _tell(stream)
            tag = _UVARINT._parsereport(stream, context, path)
            size = _UVARINT._parsereport(stream, context, path)
            if tag <= previous:
                raise CorruptError(f"tag {tag} follows tag {previous}: tags must ascend", position=at, field=where)
            previous = tag
            payload = _read_exact(stream, size, path, f"tagged field {tag}")
            known = self.by_tag.get(tag)
            if known is None:
                unknown.append((tag, payload))
                continue
            name = _join(where, known.name)
            at = None if at is None else _tell(stream) - size
            obj[known.name] = _parse_all(known.subcon, payload, context, name, name, start=at)
        obj["_unknown_tags"] = unknown
        return obj

    def _build(self, obj, stream, context, path):
        self.subcon._build(obj, stream, context, path)
        if not self.flexible:
            return obj
        entries = check_unknown_tags(obj.get("_unknown_tags"), frozenset(self.by_tag))
        for t in self.tagged:
            value = obj.get(t.name, t.default)
            if is_default(value, t.default):
                continue
            inner = io.BytesIO()
            t.subcon._build(value, inner, context, _join(field_path(path), t.name))
            entries.append((t.tag, inner.getvalue()))
        data = write_tagged(entries)
        c.stream_write(stream, data, len(data), path)
        return obj


_UVARINT = UVarInt32()


def _join(head: str, tail: str | None) -> str:
    return ".".join(p for p in (head, tail) if p)


class BitGroup:
    """One named group of bits in a BitField (bit 0 = least significant)."""

    __slots__ = ("name", "low", "width", "kind", "mapping", "reverse", "enum", "open", "error")

    def __init__(
        self,
        name: str,
        low: int,
        width: int,
        kind: str = "flag",
        mapping: Mapping[str, int] | None = None,
        enum: str | None = None,
        open: bool = False,
        error: str = "corrupt",
    ):
        self.name, self.low, self.width, self.kind = name, low, width, kind
        self.mapping = dict(mapping or {})
        self.reverse = {v: k for k, v in self.mapping.items()}
        self.enum, self.open, self.error = enum, open, _ERRORS[error]


class BitField(c.Subconstruct):
    """An integer split into named flags, enums and reserved bits. Parsed as a
    dict of groups; unknown enum values raise the enum's error kind at the
    field's byte position. Reserved groups default to 0 when building."""

    def __init__(self, subcon, groups: list[BitGroup], bits: int):
        super().__init__(subcon)
        self.groups, self.bits = groups, bits

    def _parse(self, stream, context, path):
        pos = _tell(stream)
        raw = self.subcon._parsereport(stream, context, path) & ((1 << self.bits) - 1)
        out = c.Container()
        for g in self.groups:
            v = (raw >> g.low) & ((1 << g.width) - 1)
            if g.kind == "flag":
                out[g.name] = bool(v)
            elif g.kind == "enum":
                name = g.reverse.get(v)
                if name is None and not g.open:
                    known = ", ".join(f"{n}={k}" for k, n in g.mapping.items())
                    fpath = f"{field_path(path)}.{g.name}".lstrip(".")
                    raise g.error(
                        f"unknown or disallowed {g.enum} {v} (allowed here: {known})", position=pos, field=fpath
                    )
                out[g.name] = v if name is None else name
            else:
                out[g.name] = v
        return out

    def _build(self, obj, stream, context, path):
        if not isinstance(obj, Mapping):
            raise EncodeError(f"needs a mapping of bit groups, not {type(obj).__name__}", field=field_path(path))
        raw = 0
        for g in self.groups:
            fpath = f"{field_path(path)}.{g.name}".lstrip(".")
            if g.name not in obj:
                if g.kind == "int":
                    continue  # reserved bits default to 0
                raise EncodeError(f"missing bit group {g.name!r}", field=fpath)
            v = obj[g.name]
            if g.kind == "enum" and isinstance(v, str):
                if v not in g.mapping:
                    raise EncodeError(f"{v!r} is not a {g.enum} here (allowed: {', '.join(g.mapping)})", field=fpath)
                v = g.mapping[v]
            elif g.kind == "enum" and not (g.open or v in g.reverse):
                raise EncodeError(f"{v!r} is not a {g.enum} here (allowed: {', '.join(g.mapping)})", field=fpath)
            v = int(v)
            if not 0 <= v < (1 << g.width):
                raise EncodeError(f"{v} does not fit in {g.width} bits", field=fpath)
            raw |= v << g.low
        if raw >= 1 << (self.bits - 1) and self.signed:
            raw -= 1 << self.bits
        self.subcon._build(raw, stream, context, path)
        return obj

    @property
    def signed(self) -> bool:
        return getattr(self.subcon, "fmtstr", ">i")[-1].islower()


class EnumOf(c.Subconstruct):
    """An integer read as a name from a closed set (unknown values raise the
    schema's error kind) or, for an open enum, kept as an integer."""

    def __init__(self, subcon, mapping: Mapping[str, int], enum: str, open: bool = False, error: str = "corrupt"):
        super().__init__(subcon)
        self.mapping = dict(mapping)
        self.reverse = {v: k for k, v in mapping.items()}
        self.enum, self.open, self.error = enum, open, _ERRORS[error]

    def _parse(self, stream, context, path):
        pos = _tell(stream)
        raw = self.subcon._parsereport(stream, context, path)
        name = self.reverse.get(raw)
        if name is not None:
            return name
        if self.open:
            return raw
        known = ", ".join(f"{v}={k}" for k, v in self.mapping.items())
        raise self.error(
            f"unknown or disallowed {self.enum} {raw} (allowed here: {known})", position=pos, field=field_path(path)
        )

    def _build(self, obj, stream, context, path):
        if isinstance(obj, str):
            if obj not in self.mapping:
                raise EncodeError(
                    f"{obj!r} is not a {self.enum} here (allowed: {', '.join(self.mapping)})", field=field_path(path)
                )
            raw = self.mapping[obj]
        elif isinstance(obj, int) and not isinstance(obj, bool) and (self.open or obj in self.reverse):
            raw = obj
        else:
            raise EncodeError(
                f"{obj!r} is not a {self.enum} here (allowed: {', '.join(self.mapping)})", field=field_path(path)
            )
        self.subcon._build(raw, stream, context, path)
        return obj


class ConstInt(c.Subconstruct):
    """A field with one allowed value (a magic byte); built without input."""

    flagbuildnone = True

    def __init__(self, value: int, subcon, error: str = "corrupt"):
        super().__init__(subcon)
        self.value, self.error = value, _ERRORS[error]
        self.flagbuildnone = True

    def _parse(self, stream, context, path):
        pos = _tell(stream)
        raw = self.subcon._parsereport(stream, context, path)
        if raw != self.value:
            raise self.error(
                f"{field_path(path) or 'value'} is {raw}, expected {self.value}", position=pos, field=field_path(path)
            )
        return raw

    def _build(self, obj, stream, context, path):
        if obj is not None and obj != self.value:
            raise EncodeError(f"must be {self.value}, not {obj!r}", field=field_path(path))
        self.subcon._build(self.value, stream, context, path)
        return self.value


class _Checkpoint(c.Construct):
    """A zero-width member placed in a struct to check (or, for CRCs, patch)
    bytes around it; it takes no input when building."""

    flagbuildnone = True

    def __init__(self):
        super().__init__()
        self.flagbuildnone = True

    def _build(self, obj, stream, context, path):
        return None

    def _sizeof(self, context, path):
        return 0


class LengthBound(_Checkpoint):
    """Placed where a length field's covered bytes start: parsing checks the
    length against the fewest bytes the covered fields can take and against
    the bytes that remain, before anything is read or allocated."""

    def __init__(self, field: str, minimum: int):
        super().__init__()
        self.field, self.minimum = field, minimum

    def _parse(self, stream, context, path):
        declared = context[self.field]
        start = stream.tell()
        if declared < self.minimum:
            raise BadLengthError(
                f"{self.field} is {declared}, less than the {self.minimum} bytes the fields it covers need at least",
                position=start,
                field=self.field,
            )
        end = stream.seek(0, io.SEEK_END)
        stream.seek(start)
        if end - start < declared:
            raise TruncatedError(
                f"{self.field} says {declared} bytes but only {end - start} remain", position=start, field=self.field
            )
        return None


class LengthCheck(_Checkpoint):
    """Placed after the bytes a length field covers: parsing checks that the
    length matches what was read (building computed it with Rebuild)."""

    def __init__(self, field: str, start_key: str):
        super().__init__()
        self.field, self.start_key = field, start_key

    def _parse(self, stream, context, path):
        end = _tell(stream)
        start = context[self.start_key]
        declared = context[self.field]
        if end is not None and end - start != declared:
            raise BadLengthError(
                f"{self.field} says {declared} bytes but the fields it covers take {end - start}",
                position=start,
                field=self.field,
            )
        return None


class CrcField(_Checkpoint):
    """Placed after the bytes a CRC covers. Building computes the checksum and
    writes it back into the earlier field; parsing recomputes and compares
    unless the parse was called with ``verify_crc=False``."""

    def __init__(self, field: str, algorithm: str, at_key: str, start_key: str):
        super().__init__()
        self.field, self.algorithm = field, algorithm
        self.at_key, self.start_key = at_key, start_key
        self.crc = CRC_FUNCTIONS[algorithm]

    def _covered(self, stream, context) -> bytes:
        end = stream.tell()
        start = context[self.start_key]
        stream.seek(start)
        data = stream.read(end - start)
        stream.seek(end)
        return data

    def _parse(self, stream, context, path):
        if not context._params.get("verify_crc", True):
            return None
        computed = self.crc(self._covered(stream, context))
        stored = context[self.field]
        if computed != stored:
            raise CrcMismatchError(
                record_corrupt_message(stored, computed),
                position=context[self.at_key],
                field=self.field,
            )
        return None

    def _build(self, obj, stream, context, path):
        computed = self.crc(self._covered(stream, context))
        end = stream.tell()
        stream.seek(context[self.at_key])
        stream.write(struct.pack(">I", computed))
        stream.seek(end)
        context[self.field] = computed
        return None


_compress_memo: tuple[tuple, bytes] | None = None


def compress_cached(codec: str, data: bytes, magic: int, level: int | None = None) -> bytes:
    """Compress, remembering the last result: the size function and the
    builder both ask for the same stream, and compression is deterministic."""
    global _compress_memo
    key = (codec, magic, level, data)
    memo = _compress_memo
    if memo is not None and memo[0] == key:
        return memo[1]
    out = compress_lib.compress(codec, data, magic=magic, level=level)
    _compress_memo = (key, out)
    return out


def compression_level(context) -> int | None:
    """The level a build was asked for (``build(value, compression_level=N)``)."""
    return context._params.get("compression_level")


_IN_STREAM = "_kcodec_in_compressed_stream"


def _decompress(codec: str, data: bytes, magic: int, context, stream, path, start: int | None) -> bytes:
    """Decompress a region stored at ``start``. A compressed region inside a decompressed stream is
    refused: Kafka allows one wrapper level, and refusing it bounds recursion and memory."""
    if context._params.get(_IN_STREAM):
        raise CorruptError(
            f"a compressed ({codec}) {field_path(path) or 'region'} inside a compressed stream: "
            "only one level of compression is allowed",
            position=start,
            field=field_path(path),
        )
    limit = context._params.get("max_decompressed_size", compress_lib.DEFAULT_MAX_DECOMPRESSED_SIZE)
    try:
        return compress_lib.decompress(codec, data, magic=magic, max_size=limit)
    except DecodeError as exc:
        raise exc.at(start or 0).replace(field=exc.field or field_path(path)) from None


def _parse_all(subcon, data: bytes, context, path, what: str, codec: str = "none", start: int | None = None):
    """Parse all of ``data``; inside a decompressed stream, errors are placed at the stored region
    (``start``) and say where in the stream they are."""
    inner = io.BytesIO(data)
    params = context._params
    nested = codec != "none"
    if nested:
        params[_IN_STREAM] = True
    try:
        obj = subcon._parsereport(inner, context, path)
        left = len(data) - inner.tell()
        if left:
            raise BadLengthError(f"{left} bytes left over after {what}", position=inner.tell(), field=field_path(path))
    except DecodeError as exc:
        if nested:
            message = f"{exc.message} (at byte {exc.position or 0} of the decompressed {codec} stream)"
            raise exc.replace(message=message, position=start) from None
        if start is not None:
            raise exc.at(start) from None  # stored as is: a position in the input
        raise
    finally:
        if nested:
            params[_IN_STREAM] = False
    return obj


class Compressed(c.Subconstruct):
    """A region that runs to the end of its (bounded) stream and is passed
    through the codec named by another field."""

    def __init__(self, subcon, codec: Callable, magic: int, at: str | None = None):
        super().__init__(subcon)
        self.codec, self.magic, self.at = codec, magic, at  # at: the context key of the region's position

    def _parse(self, stream, context, path):
        start = context[self.at] if self.at else _tell(stream)  # a FixedSized substream starts at 0
        data = stream.read()
        name = self.codec(context)
        if not context._params.get("parse_contents", True):
            return data  # the stored bytes, still compressed: the caller decodes them
        if name != "none":
            data = _decompress(name, data, self.magic, context, stream, path, start)
        return _parse_all(self.subcon, data, context, path, field_path(path) or "the records", name, start)

    def _build(self, obj, stream, context, path):
        inner = io.BytesIO()
        built = self.subcon._build(obj, inner, context, path)
        data = inner.getvalue()
        name = self.codec(context)
        if name != "none":
            data = compress_cached(name, data, self.magic, compression_level(context))
        c.stream_write(stream, data, len(data), path)
        return built


class CompressedBytes(c.Construct):
    """A legacy message value: plain bytes when the codec is none, otherwise
    one compressed stream whose contents (a message set) are parsed."""

    def __init__(self, prefix, nullable: bool, codec: Callable, magic: int, contents, at: str | None = None):
        super().__init__()
        self.plain = KBytes(prefix, nullable)
        self.prefix, self.codec, self.magic, self.contents = prefix, codec, magic, contents
        self.at = at  # without a prefix (in a FixedSized substream): the context key of the region's position

    def _parse(self, stream, context, path):
        name = self.codec(context)
        if name == "none":
            return self.plain._parsereport(stream, context, path)
        pos = context[self.at] if self.at else _tell(stream)
        data = self.plain._parsereport(stream, context, path)
        if data is None:
            raise CorruptError(f"compressed ({name}) wrapper has a null value", position=pos, field=field_path(path))
        if not context._params.get("parse_contents", True):
            return data  # the stored bytes, still compressed: the caller decodes them
        end = None if self.at else _tell(stream)
        start = pos if self.at else None if pos is None or end is None else end - len(data)
        data = _decompress(name, data, self.magic, context, stream, path, start)
        return _parse_all(self.contents, data, context, path, "the compressed message set", name, start)

    def _build(self, obj, stream, context, path):
        name = self.codec(context)
        if name == "none":
            return self.plain._build(obj, stream, context, path)
        if not isinstance(obj, list):
            raise EncodeError(f"a {name} wrapper's value is a list of inner entries", field=field_path(path))
        inner = io.BytesIO()
        self.contents._build(obj, inner, context, path)
        data = compress_cached(name, inner.getvalue(), self.magic, compression_level(context))
        if self.prefix is not None:
            self.prefix._build(len(data), stream, context, path)
        c.stream_write(stream, data, len(data), path)
        return obj


class CountedArray(c.Array):
    """``count`` elements, the count a field of the entity (a v2 batch's records_count). Elements inside
    bytes framed by a length that end before the count does: the count lies, a RecordCountError as the
    fast decoders and the compiled kernel raise, not a truncation."""

    def _parse(self, stream, context, path):
        count = c.evaluate(self.count, context)
        if not isinstance(count, int) or count < 0:
            return super()._parse(stream, context, path)
        items = c.ListContainer()
        for i in range(count):
            if _remaining(stream) == 0:
                raise RecordCountError(
                    f"the count says {count} elements but the bytes end after {i}",
                    position=_tell(stream),
                    field=field_path(path),
                )
            context._index = i
            items.append(self.subcon._parsereport(stream, context, path))
        return items


class UntilEnd(c.Subconstruct):
    """Elements until the stream ends; unlike GreedyRange, a damaged element
    is an error, not a silent stop."""

    def _parse(self, stream, context, path):
        items = c.ListContainer()
        while True:
            pos = stream.tell()
            if not stream.read(1):
                return items
            stream.seek(pos)
            context._index = len(items)
            items.append(self.subcon._parsereport(stream, context, path))

    def _build(self, obj, stream, context, path):
        for i, item in enumerate(obj):
            context._index = i
            self.subcon._build(item, stream, context, path)
        return obj


def _translate(exc: Exception, building: bool) -> KcodecError:
    """construct's and Python's own errors as kcodec errors."""
    path = getattr(exc, "path", None) or ""
    field = field_path(path) or None
    text = str(exc).split("\n")[0]
    if building:
        return EncodeError(text or type(exc).__name__, field=field)
    if isinstance(exc, c.StreamError):
        return TruncatedError(f"input ends early: {text}", field=field)
    return CorruptError(text or type(exc).__name__, field=field)


class EntityCodec:
    """Parse, build and size one entity at one version (the construct backend)."""

    def __init__(
        self, entity: str, version: int, definition: c.Construct, size: Callable, field_sizes: Callable, layout
    ):
        self.entity, self.version, self.construct = entity, version, definition
        self._size, self._field_sizes, self.layout = size, field_sizes, layout

    def size(self, value, *, compression_level: int | None = None) -> int:
        """Exact bytes ``build(value)`` produces (compresses when it must); a value ``build`` refuses
        is refused here alike (:class:`EncodeError` naming a missing field)."""
        with self._encoding():
            return self._size(value, compression_level)

    def field_sizes(self, value, *, compression_level: int | None = None) -> dict:
        """Bytes of each field of ``build(value)``."""
        with self._encoding():
            return self._field_sizes(value, compression_level)

    @contextlib.contextmanager
    def _encoding(self):
        """Python's and construct's errors on a value to encode, as :class:`EncodeError`."""
        try:
            yield
        except KcodecError:
            raise
        except (c.ConstructError, struct.error, ValueError, KeyError, TypeError, OverflowError, AttributeError) as exc:
            if isinstance(exc, KeyError):
                raise EncodeError(f"missing field {exc.args[0]!r} in {self.entity} v{self.version}") from None
            raise _translate(exc, building=True) from None

    def __repr__(self) -> str:
        return f"<EntityCodec {self.entity} v{self.version}>"

    def parse_prefix(
        self, data, *, verify_crc: bool = True, parse_contents: bool = True, max_decompressed_size: int | None = None
    ) -> tuple[c.Container, int]:
        """Parse one entity from the start of ``data``; returns it and the bytes consumed.

        ``verify_crc=False`` skips CRC checks; ``parse_contents=False`` leaves
        compressed regions as their stored bytes."""
        stream = io.BytesIO(bytes(data))
        params: dict[str, bool | int] = {"verify_crc": verify_crc, "parse_contents": parse_contents}
        if max_decompressed_size is not None:
            params["max_decompressed_size"] = max_decompressed_size
        try:
            value = self.construct.parse_stream(stream, **params)
        except KcodecError:
            raise
        except (
            c.ConstructError,
            struct.error,
            ValueError,
            IndexError,
            KeyError,
            TypeError,
            OverflowError,
            UnicodeDecodeError,
            RecursionError,
        ) as exc:
            raise _translate(exc, building=False) from None
        return value, stream.tell()

    def parse(self, data, **options) -> c.Container:
        """Parse ``data``, which must hold exactly one entity."""
        value, used = self.parse_prefix(data, **options)
        if used != len(data):
            raise BadLengthError(f"{len(data) - used} bytes left after {self.entity} v{self.version}", position=used)
        return value

    def build(self, value, *, compression_level: int | None = None) -> bytes:
        """Bytes of ``value``; derived fields are filled in. Compressed regions
        use the codec's default level unless ``compression_level`` is given."""
        with self._encoding():
            if compression_level is None:
                return self.construct.build(value)
            return self.construct.build(value, compression_level=compression_level)
