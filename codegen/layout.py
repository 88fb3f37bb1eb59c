"""Resolve an entity at one version: which fields exist, their fixed offsets
and sizes, overheads. Decided once here so every backend agrees."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .ir import ArrayType, Bit, BitsType, BytesType, Entity, EntityRef, Enum, Field, IntType, SchemaSet, Type


@dataclass(frozen=True)
class ResolvedField:
    field: Field
    type: Type  # bit groups filtered to this version
    offset: int | None  # fixed byte offset, or None when earlier fields vary
    size: int | None  # fixed size, or None when it varies

    @property
    def name(self) -> str:
        return self.field.name


@dataclass(frozen=True)
class EntityVersion:
    schemas: SchemaSet
    entity: Entity
    version: int
    fields: tuple[ResolvedField, ...]

    @property
    def name(self) -> str:
        return self.entity.name

    @property
    def symbol(self) -> str:
        return f"{self.entity.name.upper()}_V{self.version}"

    @property
    def suffix(self) -> str:
        return f"{self.entity.name}_v{self.version}"

    def field(self, name: str) -> ResolvedField:
        return next(f for f in self.fields if f.name == name)

    def index(self, name: str) -> int:
        return next(i for i, f in enumerate(self.fields) if f.name == name)

    @cached_property
    def fixed_size(self) -> int | None:
        sizes = [f.size for f in self.fields]
        return None if None in sizes else sum(sizes)

    @cached_property
    def overhead(self) -> tuple[int, int]:
        """(min, max) bytes excluding payloads: nested entities and array
        elements count 0, bytes count only their length prefix."""
        lo = hi = 0
        for f in self.fields:
            a, b = _overhead(f, self)
            lo, hi = lo + a, hi + b
        return lo, hi

    def enum_values(self, enum: str) -> dict[str, int]:
        return {v.name: v.value for v in self.schemas.enums[enum].values_at(self.version)}

    def enum(self, name: str) -> Enum:
        return self.schemas.enums[name]


def min_size(ev: EntityVersion, f: ResolvedField) -> int:
    """The fewest bytes field f can take (null and empty payloads, one-byte varints)."""
    if f.size is not None:
        return f.size
    t = f.type
    if isinstance(t, IntType):
        return 1  # a varint
    if isinstance(t, (BytesType, ArrayType)):
        p = t.prefix
        return 0 if p is None else (p.width if p.fixed else 1)
    if isinstance(t, EntityRef):
        child = resolve(ev.schemas, ev.schemas.entities[t.name], ev.version)
        return sum(min_size(child, g) for g in child.fields)
    return 0


def min_covered(ev: EntityVersion, length_field: str) -> int:
    """The fewest bytes a length field can count: anything less is corrupt."""
    start = ev.index(ev.field(length_field).field.derived.covers)
    return sum(min_size(ev, f) for f in ev.fields[start:])


def resolve(schemas: SchemaSet, entity: Entity, version: int) -> EntityVersion:
    out: list[ResolvedField] = []
    offset: int | None = 0
    for f in entity.fields:
        if version not in f.versions:
            continue
        t = f.type
        if isinstance(t, BitsType):
            t = BitsType(t.base, tuple(b for b in t.bits if version in b.versions))
        size = None if f.compressed else fixed_size(schemas, t, version)
        out.append(ResolvedField(f, t, offset, size))
        offset = None if offset is None or size is None else offset + size
    return EntityVersion(schemas, entity, version, tuple(out))


def resolve_all(schemas: SchemaSet) -> list[EntityVersion]:
    return [resolve(schemas, e, v) for e in sorted(schemas.entities.values(), key=lambda e: e.name)
            for v in e.versions]


def fixed_size(schemas: SchemaSet, t: Type, version: int) -> int | None:
    if isinstance(t, IntType):
        return t.width
    if isinstance(t, BitsType):
        return t.base.width
    if isinstance(t, EntityRef):
        return resolve(schemas, schemas.entities[t.name], version).fixed_size
    return None  # bytes and arrays vary


def _overhead(f: ResolvedField, ev: EntityVersion) -> tuple[int, int]:
    t = f.type
    if isinstance(t, IntType):
        return (t.width, t.width) if t.fixed else (1, t.max_width)
    if isinstance(t, BitsType):
        return t.base.width, t.base.width
    if isinstance(t, (BytesType, ArrayType)):
        p = t.prefix
        if p is None:
            return 0, 0
        return (p.width, p.width) if p.fixed else (1, p.max_width)
    return 0, 0  # nested entity: a payload


def type_text(t: Type) -> str:
    """The schema spelling of a type, for layout tables."""
    if isinstance(t, IntType):
        return t.name
    if isinstance(t, BitsType):
        return f"{t.base.name} bits"
    if isinstance(t, BytesType):
        return f"{t.name} ({t.prefix.name} length{', nullable' if t.nullable else ''})"
    if isinstance(t, EntityRef):
        return t.name
    if t.prefix is not None:
        return f"[]{type_text(t.element)} ({t.prefix.name} count)"
    if t.count_field:
        return f"[]{type_text(t.element)} (count in {t.count_field})"
    return f"[]{type_text(t.element)} (to the end)"


def bit_type_text(b: Bit) -> str:
    if b.kind == "enum":
        return f"enum {b.enum}"
    if b.kind == "flag":
        return "flag"
    return "reserved" if b.reserved else f"uint{b.width}"
