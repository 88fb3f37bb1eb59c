"""The backend-neutral intermediate representation of kcodec's schemas.

Nothing here knows about construct (or any other backend): it says what the
bytes are, not how some library spells them. Backends read the IR through
:mod:`.resolve`, which resolves an entity at one version.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field

from .versions import VersionRange


@dataclass(frozen=True)
class IntType:
    """A big-endian fixed-width integer or one of Kafka's varints."""

    name: str
    width: int | None  # bytes; None for varints
    signed: bool
    bits: int  # value range in bits (32 or 64 for varints)
    zigzag: bool = False

    @property
    def fixed(self) -> bool:
        return self.width is not None

    @property
    def min(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    @property
    def max_width(self) -> int:
        return self.width if self.width is not None else (self.bits + 6) // 7


INT_TYPES: dict[str, IntType] = {
    t.name: t
    for t in (
        IntType("int8", 1, True, 8),
        IntType("int16", 2, True, 16),
        IntType("uint16", 2, False, 16),
        IntType("int32", 4, True, 32),
        IntType("int64", 8, True, 64),
        IntType("uint32", 4, False, 32),
        IntType("varint", None, True, 32, zigzag=True),
        IntType("varlong", None, True, 64, zigzag=True),
        IntType("uvarint", None, False, 32),
    )
}


@dataclass(frozen=True)
class ScalarType:
    """A fixed-width value that is not an integer: Kafka's bool (one byte, non-zero is true), float64
    (IEEE 754 big-endian) and uuid (16 bytes, shown as URL-safe base64 without padding)."""

    name: str
    width: int

    @property
    def fixed(self) -> bool:
        return True


SCALAR_TYPES: dict[str, ScalarType] = {
    t.name: t for t in (ScalarType("bool", 1), ScalarType("float64", 8), ScalarType("uuid", 16))
}


@dataclass(frozen=True)
class BytesType:
    """Raw bytes (or UTF-8 text) with a length prefix; -1 means null when nullable. ``compact``
    (set per version by the resolver, in flexible versions) replaces the prefix with an unsigned
    varint holding length + 1, 0 meaning null. No prefix (``prefix: none``): the bytes run to the end
    of the length that covers them (a Kafka 0.7 message's payload), never null."""

    prefix: IntType | None
    nullable: bool
    text: bool = False
    compact: bool = False

    @property
    def name(self) -> str:
        return "string" if self.text else "bytes"


@dataclass(frozen=True)
class EntityRef:
    """Another entity (or a struct of this file), nested at the same version as its parent.
    A nullable one has an int8 presence marker (-1 null, 1 present), tagged or not (Kafka's
    MessageDataGenerator writes it for both regular and tagged struct fields)."""

    name: str
    nullable: bool = False


@dataclass(frozen=True)
class ArrayType:
    """A sequence of elements. Exactly one of: an inline count prefix, a count
    held by an earlier (derived) field, or greedy (until the region ends). A prefixed array may be
    nullable (count -1) and, in flexible versions, compact (unsigned varint count + 1, 0 = null)."""

    element: Type
    prefix: IntType | None = None
    count_field: str | None = None
    nullable: bool = False
    compact: bool = False

    @property
    def greedy(self) -> bool:
        return self.prefix is None and self.count_field is None


@dataclass(frozen=True)
class Bit:
    """A named group of bits inside an integer field (bit 0 = least significant)."""

    name: str
    low: int
    width: int
    doc: str
    versions: VersionRange
    enum: str | None = None
    reserved: bool = False

    @property
    def kind(self) -> str:
        if self.enum:
            return "enum"
        if self.reserved or self.width > 1:
            return "int"
        return "flag"

    @property
    def span(self) -> str:
        return str(self.low) if self.width == 1 else f"{self.low}-{self.low + self.width - 1}"


@dataclass(frozen=True)
class BitsType:
    """An integer split into named bit groups (flags, enums, reserved bits)."""

    base: IntType
    bits: tuple[Bit, ...]


Type = IntType | ScalarType | BytesType | EntityRef | ArrayType | BitsType


@dataclass(frozen=True)
class Derived:
    """A field that building fills in and parsing checks.

    kind "length": byte count of the fields from ``covers`` to the end;
    kind "crc": checksum (``algorithm``) of the fields from ``covers`` to the end;
    kind "count": number of elements of the array field ``of``.
    """

    kind: str
    covers: str | None = None
    of: str | None = None
    algorithm: str | None = None


@dataclass(frozen=True)
class Compression:
    """A region passed through the codec named by another field (a path such
    as ``attributes.compression``). ``contents`` is what the decompressed bytes
    hold when it differs from the field's own type (a legacy wrapper's value
    holds a message set). ``versions``: where the field is compressed (None: wherever it exists);
    elsewhere it is plain (a Kafka 0.7 magic-0 message has no codec)."""

    codec_path: tuple[str, ...]
    contents: Type | None = None
    versions: VersionRange | None = None


@dataclass(frozen=True)
class Default:
    """A field's declared default, as the schema spells it (a uuid as its base64 text, bytes as
    "" or null): the value a tagged field is compared with, and what parsing gives where the field
    is absent (a version without it, a tagged field not written)."""

    value: object


@dataclass(frozen=True)
class Field:
    name: str
    doc: str
    type: Type
    versions: VersionRange
    enum: str | None = None
    const: int | str | None = None  # an int, or "version"
    error: str = "corrupt"  # decode error kind when a const does not match
    derived: Derived | None = None
    compressed: Compression | None = None
    nullable_versions: VersionRange | None = None  # None: the type's own nullable flag, at every version
    flexible: bool = True  # False: stays non-compact in flexible versions (Kafka's RequestHeader ClientId)
    tag: int | None = None
    tagged_versions: VersionRange | None = None  # where the field sits in the tagged section
    default: Default | None = None


@dataclass(frozen=True)
class EnumValue:
    name: str
    value: int
    doc: str
    versions: VersionRange


@dataclass(frozen=True)
class Enum:
    name: str
    doc: str
    values: tuple[EnumValue, ...]
    open: bool = False
    error: str = "corrupt"  # the decode error kind for an unknown value
    file: str = ""

    def values_at(self, version: int) -> tuple[EnumValue, ...]:
        return tuple(v for v in self.values if version in v.versions)


@dataclass(frozen=True)
class Entity:
    name: str
    doc: str
    valid_versions: VersionRange
    fields: tuple[Field, ...]
    file: str
    flexible_versions: VersionRange = VersionRange(0, 0, empty=True)
    owner: str | None = None  # a struct: the entity whose file defines it (it shares its versions)

    @property
    def versions(self) -> list[int]:
        return self.valid_versions.versions(self.valid_versions)


@dataclass
class SchemaSet:
    """Everything loaded from one schemas directory."""

    entities: dict[str, Entity] = dc_field(default_factory=dict)
    enums: dict[str, Enum] = dc_field(default_factory=dict)
    sources: dict[str, str] = dc_field(default_factory=dict)  # file name -> sha256 of its bytes
    # how internal topics frame their records, as plain data: name -> {doc, framing, topics, records, file}
    registries: dict[str, dict] = dc_field(default_factory=dict)

    @property
    def sha256(self) -> str:
        import hashlib

        h = hashlib.sha256()
        for name in sorted(self.sources):
            h.update(f"{name}\0{self.sources[name]}\n".encode())
        return h.hexdigest()
