"""Resolve an entity at one version: which fields exist, their fixed offsets
and sizes, overheads, and every other fact more than one backend reads
(covered ranges, fixed runs, which decoders take options, what the compiled
kernel covers, the layout table). Decided once here so every backend agrees."""

from __future__ import annotations

from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from functools import cached_property

from kcodec.errors import SchemaError

from .ir import (
    ArrayType,
    Bit,
    BitsType,
    BytesType,
    Entity,
    EntityRef,
    Enum,
    Field,
    IntType,
    ScalarType,
    SchemaSet,
    Type,
)

UNKNOWN_TAGS = "_unknown_tags"  # in a parsed flexible struct: the tags it does not know, as (tag, bytes)


@dataclass(frozen=True)
class ResolvedField:
    field: Field
    type: Type  # bit groups filtered to this version
    offset: int | None  # fixed byte offset, or None when earlier fields vary
    size: int | None  # fixed size, or None when it varies

    @property
    def name(self) -> str:
        return self.field.name

    @property
    def derived_kind(self) -> str | None:
        return self.field.derived.kind if self.field.derived else None

    @property
    def covers(self) -> str:
        """The first field a derived length or CRC covers (the loader checks every such field names one)."""
        d = self.field.derived
        if d is None or d.covers is None:
            raise SchemaError(f"field {self.name!r} is not a derived length or CRC", field=self.name)
        return d.covers

    @property
    def fixed_size(self) -> int:
        """The size of a field known to be fixed (a member of a :class:`FixedRun`)."""
        if self.size is None:
            raise SchemaError(f"field {self.name!r} has no fixed size", field=self.name)
        return self.size

    @property
    def is_fixed_scalar(self) -> bool:
        """A fixed-width integer (or bit field) read as is: it can join a run of fixed fields."""
        t = self.type
        base = t.base if isinstance(t, BitsType) else t
        return isinstance(base, IntType) and base.fixed and self.field.compressed is None


@dataclass(frozen=True)
class FixedRun:
    """Consecutive fixed-width scalar fields, read at once (one struct unpack). A derived length
    ends its run: it is checked before the bytes it covers are read."""

    start: int  # index of the first field
    fields: tuple[ResolvedField, ...]

    @property
    def size(self) -> int:
        return sum(f.fixed_size for f in self.fields)


def module_alias(entity: str) -> str:
    """What a generated module is bound to where another imports it: ``_ENTITY``; a struct's module
    (``ENTITY__STRUCT``, imported only by its own file's modules) ``_s_STRUCT``, as its parent's name in
    front of every symbol already makes long lines (Kafka's internal record names)."""
    _, sep, struct = entity.partition("__")
    return f"_s_{struct}" if sep else f"_{entity}"


@dataclass(frozen=True)
class EntityVersion:
    schemas: SchemaSet
    entity: Entity
    version: int
    fields: tuple[ResolvedField, ...]
    tagged: tuple[ResolvedField, ...] = ()  # the tagged section's known fields, by tag
    absent: tuple[ResolvedField, ...] = ()  # fields with a default that do not exist at this version
    _children: dict = dc_field(default_factory=dict, compare=False, repr=False, hash=False)

    @property
    def name(self) -> str:
        return self.entity.name

    @property
    def symbol(self) -> str:
        return f"{self.entity.name.upper()}_V{self.version}"

    @property
    def suffix(self) -> str:
        return f"{self.entity.name}_v{self.version}"

    @property
    def flexible(self) -> bool:
        """Whether this version ends with a tagged section (and prefixes are compact)."""
        return self.version in self.entity.flexible_versions

    @property
    def value_names(self) -> tuple[str, ...]:
        """What a decoded value holds, in order (the fast decoders' tuples): the fields on the wire,
        the tagged fields, the defaults of absent fields, and the unknown tags."""
        names = [f.name for f in (*self.fields, *self.tagged, *self.absent)]
        return tuple(names + [UNKNOWN_TAGS] if self.flexible else names)

    def field(self, name: str) -> ResolvedField:
        return next(f for f in self.fields if f.name == name)

    def index(self, name: str) -> int:
        return next(i for i, f in enumerate(self.fields) if f.name == name)

    def child(self, entity: str) -> EntityVersion:
        """A nested entity, resolved at this version (nested entities share their parent's version)."""
        if entity not in self._children:
            self._children[entity] = resolve(self.schemas, self.schemas.entities[entity], self.version)
        return self._children[entity]

    @cached_property
    def fixed_size(self) -> int | None:
        sizes = [f.size for f in self.fields]
        return None if None in sizes or self.flexible else sum(f.fixed_size for f in self.fields)

    @cached_property
    def overhead(self) -> tuple[int, int]:
        """(min, max) bytes excluding payloads: nested entities and array
        elements count 0, bytes count only their length prefix."""
        lo = hi = 0
        for f in self.fields:
            a, b = _overhead(f)
            lo, hi = lo + a, hi + b
        if self.flexible:  # the tagged section's count
            lo, hi = lo + 1, hi + 5
        return lo, hi

    @cached_property
    def covered_starts(self) -> dict[str, tuple[str, ...]]:
        """Field name -> the derived lengths and CRCs whose covered range starts there."""
        out: dict[str, list[str]] = {}
        for f in self.fields:
            if f.derived_kind in ("length", "crc"):
                out.setdefault(f.covers, []).append(f.name)
        return {k: tuple(v) for k, v in out.items()}

    def length_starts(self) -> dict[str, tuple[str, ...]]:
        """Like :attr:`covered_starts`, lengths only."""
        out = {k: tuple(o for o in v if self.field(o).derived_kind == "length") for k, v in self.covered_starts.items()}
        return {k: v for k, v in out.items() if v}

    @cached_property
    def fixed_runs(self) -> dict[int, FixedRun]:
        """Index of the first field of each run of fixed scalars -> the run."""
        out: dict[int, FixedRun] = {}
        i = 0
        while i < len(self.fields):
            if not self.fields[i].is_fixed_scalar:
                i += 1
                continue
            j = i
            while (
                j + 1 < len(self.fields)
                and self.fields[j + 1].is_fixed_scalar
                and self.fields[j].derived_kind != "length"
            ):
                j += 1
            out[i] = FixedRun(i, self.fields[i : j + 1])
            i = j + 1
        return out

    def run_of(self, index: int) -> FixedRun:
        """The fixed run holding field ``index``."""
        return next(r for r in self.fixed_runs.values() if r.start <= index < r.start + len(r.fields))

    def enum_values(self, enum: str) -> dict[str, int]:
        return {v.name: v.value for v in self.schemas.enums[enum].values_at(self.version)}

    def enum(self, name: str) -> Enum:
        return self.schemas.enums[name]

    @cached_property
    def refs(self) -> tuple[str, ...]:
        """Entities nested here (as a field, an array element or compressed contents), sorted."""
        out: set[str] = set()
        for f in (*self.fields, *self.tagged):
            out.update(type_refs(f.type))
            if f.field.compressed:
                out.update(type_refs(f.field.compressed.contents))
        return tuple(sorted(out))

    @cached_property
    def needs_options(self) -> bool:
        """Whether decoding this entity version (or anything inside it) checks a
        CRC or decompresses: those decoders take verify_crc / limit / contents."""
        return _needs_options(self, frozenset())

    @cached_property
    def compiled(self) -> bool:
        """Whether the compiled kernel decodes this entity version: integers (fixed or varint, constants,
        bit groups), length-prefixed bytes and strings, nested entities and prefixed arrays of them,
        lengths that cover the rest of the entity right after themselves, CRC-32s, and compressed bytes
        holding a message set (the kernel calls kcodec's decompressor, then decodes the message set).
        Batch headers (CRC-32C, record counts) stay in Python (once per batch)."""
        return _compiled(self, frozenset())

    @cached_property
    def compiled_plain(self) -> bool:
        """Compiled, and nothing but plain integers, bytes and nesting: the kernel also encodes it and
        decodes it into columns (constants, bit groups, CRCs and codecs stay with the Python encoders)."""
        return self.compiled and _plain(self, frozenset())

    def enclosing_length(self, index: int) -> str:
        """The innermost length field whose covered range contains field ``index``."""
        best = None
        for f in self.fields[:index]:
            if f.derived_kind == "length" and self.index(f.covers) <= index:
                if best is None or self.index(f.covers) > self.index(self.field(best).covers):
                    best = f.name
        assert best is not None, "validated by the loader"
        return best

    def min_covered(self, length_field: str) -> int:
        """The fewest bytes a length field can count: anything less is corrupt."""
        start = self.index(self.field(length_field).covers)
        return sum(min_size(self, f) for f in self.fields[start:])


def type_refs(t: Type | None) -> list[str]:
    if isinstance(t, ArrayType):
        return type_refs(t.element)
    if isinstance(t, EntityRef):
        return [t.name]
    return []


def _needs_options(ev: EntityVersion, seen: frozenset) -> bool:
    key = (ev.name, ev.version)
    if key in seen:
        return False
    for f in ev.fields:
        if f.field.compressed or f.derived_kind == "crc":
            return True
        if any(_needs_options(ev.child(ref), seen | {key}) for ref in type_refs(f.type)):
            return True
    return False


def _plain(ev: EntityVersion, seen: frozenset) -> bool:
    key = (ev.name, ev.version)
    if key in seen:
        return True
    for f in ev.fields:
        fld = f.field
        if fld.compressed or fld.const is not None or isinstance(f.type, BitsType):
            return False
        if fld.derived and fld.derived.kind != "length":
            return False
        if not all(_plain(ev.child(ref), seen | {key}) for ref in type_refs(f.type)):
            return False
    return True


def _compiled(ev: EntityVersion, seen: frozenset) -> bool:
    key = (ev.name, ev.version)
    if ev.flexible or ev.absent:
        return False  # the kernel has no tagged sections, compact prefixes or defaults
    if "/" in ev.entity.file:
        return False  # Kafka's internal records (schemas/internal/) are few and small: the kernel is for the log
    if key in seen:
        return True  # a message set inside a compressed wrapper: the entity is being checked already
    for i, f in enumerate(ev.fields):
        fld, t = f.field, f.type
        if fld.enum:
            return False
        if getattr(t, "nullable", False) and not isinstance(t, BytesType) or t == _UINT16:
            return False  # nullable arrays and structs, uint16: not in the kernel
        if fld.derived and not (
            fld.derived.kind == "length" or (fld.derived.kind == "crc" and fld.derived.algorithm == "crc32")
        ):
            return False
        if fld.compressed:
            contents = fld.compressed.contents
            if not (
                isinstance(t, BytesType)
                and t.prefix is not None
                and len(fld.compressed.codec_path) == 2
                and isinstance(contents, ArrayType)
                and contents.greedy
                and isinstance(contents.element, EntityRef)
                and _compiled(ev.child(contents.element.name), seen | {key})
            ):
                return False
            continue
        if isinstance(t, BitsType):
            if not t.base.fixed:
                return False
            continue
        if isinstance(t, IntType):
            if fld.derived and fld.derived.kind == "length" and fld.derived.covers != ev.fields[i + 1].name:
                return False  # the encoder patches a length in front of the bytes it covers
        elif isinstance(t, BytesType):
            if t.prefix is None:
                return False  # bytes to the end of a length (Kafka 0.7): not in the kernel
            continue
        elif isinstance(t, EntityRef):
            if not _compiled(ev.child(t.name), seen | {key}):
                return False
        elif isinstance(t, ArrayType) and t.prefix is not None and isinstance(t.element, EntityRef):
            if not _compiled(ev.child(t.element.name), seen | {key}):
                return False
        else:
            return False
    return True


def min_size(ev: EntityVersion, f: ResolvedField) -> int:
    """The fewest bytes field f can take (null and empty payloads, one-byte varints)."""
    if f.size is not None:
        return f.size
    t = f.type
    if isinstance(t, IntType):
        return 1  # a varint
    if isinstance(t, (BytesType, ArrayType)):
        p = t.prefix
        return 0 if p is None else (p.width if p.fixed and not t.compact and p.width is not None else 1)
    if isinstance(t, EntityRef):
        if t.nullable:
            return 1
        child = ev.child(t.name)
        return sum(min_size(child, g) for g in child.fields) + (1 if child.flexible else 0)
    return 0


def resolve(schemas: SchemaSet, entity: Entity, version: int) -> EntityVersion:
    out: list[ResolvedField] = []
    tagged: list[ResolvedField] = []
    absent: list[ResolvedField] = []
    offset: int | None = 0
    flexible = version in entity.flexible_versions
    for f in entity.fields:
        if version not in f.versions:
            if f.default is not None:
                absent.append(ResolvedField(f, f.type, None, 0))
            continue
        t = field_type_at(f, version, flexible)
        if f.compressed and f.compressed.versions is not None and version not in f.compressed.versions:
            f = replace(f, compressed=None)  # plain at this version: backends see no codec
        if f.tagged_versions is not None and version in f.tagged_versions:
            tagged.append(ResolvedField(f, t, None, None))
            continue
        size = None if f.compressed else fixed_size(schemas, t, version)
        out.append(ResolvedField(f, t, offset, size))
        offset = None if offset is None or size is None else offset + size
    tagged.sort(key=lambda f: f.field.tag if f.field.tag is not None else -1)  # tagged fields all have one
    return EntityVersion(schemas, entity, version, tuple(out), tuple(tagged), tuple(absent))


def field_type_at(f: Field, version: int, flexible: bool) -> Type:
    """A field's type at one version: bit groups of that version, nullable where nullable_versions say,
    prefixes compact in flexible versions (unless the field says ``flexible: false``)."""
    t = f.type
    if isinstance(t, BitsType):
        return BitsType(t.base, tuple(b for b in t.bits if version in b.versions))
    if f.nullable_versions is not None and isinstance(t, (BytesType, ArrayType, EntityRef)):
        t = replace(t, nullable=version in f.nullable_versions)
    if flexible and f.flexible and isinstance(t, (BytesType, ArrayType)) and t.prefix is not None:
        t = replace(t, compact=True)
        if isinstance(t, ArrayType) and isinstance(t.element, BytesType):  # []string: compact elements too
            t = replace(t, element=replace(t.element, compact=True))
    return t


def default_value(ev: EntityVersion, f: ResolvedField, *, tuples: bool = False):
    """The value a field takes when it is not on the wire: its declared default, else Kafka's implicit
    one (0, false, 0.0, the zero uuid, "", empty bytes and arrays, null for nullable structs, a struct of
    defaults). Structs are dicts, or with ``tuples`` tuples in :attr:`EntityVersion.value_names` order
    (the fast backend's values)."""
    from kcodec.runtime.uuids import ZERO_UUID, uuid_from_text

    t = f.type
    if f.field.default is not None:
        value = f.field.default.value
        if value is None:
            return None
        if isinstance(t, ScalarType) and t.name == "uuid":
            return uuid_from_text(str(value))
        if isinstance(t, BytesType) and not t.text:
            return str(value).encode()
        return list(value) if isinstance(value, list) else value
    if isinstance(t, (IntType, BitsType)):
        return 0
    if isinstance(t, ScalarType):
        return {"bool": False, "float64": 0.0, "uuid": ZERO_UUID}[t.name]
    if isinstance(t, BytesType):
        return "" if t.text else b""
    if isinstance(t, ArrayType):
        return []
    if t.nullable:
        return None
    return struct_default(ev.child(t.name), tuples=tuples)


def struct_default(ev: EntityVersion, *, tuples: bool = False):
    """A struct whose every field has its default (a tagged struct field's default)."""
    values = [default_value(ev, f, tuples=tuples) for f in (*ev.fields, *ev.tagged, *ev.absent)]
    if ev.flexible:
        values.append([])
    return tuple(values) if tuples else dict(zip(ev.value_names, values))


def resolve_entity(schemas: SchemaSet, entity: Entity) -> list[EntityVersion]:
    """Every version of one entity, resolved."""
    return [resolve(schemas, entity, v) for v in entity.versions]


def resolve_all(schemas: SchemaSet) -> list[EntityVersion]:
    return [ev for e in sorted(schemas.entities.values(), key=lambda e: e.name) for ev in resolve_entity(schemas, e)]


_UINT16 = IntType("uint16", 2, False, 16)


def fixed_size(schemas: SchemaSet, t: Type, version: int) -> int | None:
    if isinstance(t, (IntType, ScalarType)):
        return t.width
    if isinstance(t, BitsType):
        return t.base.width
    if isinstance(t, EntityRef):
        return None if t.nullable else resolve(schemas, schemas.entities[t.name], version).fixed_size
    return None  # bytes and arrays vary


def _overhead(f: ResolvedField) -> tuple[int, int]:
    t = f.type
    if isinstance(t, IntType):
        return (t.width, t.width) if t.fixed and t.width is not None else (1, t.max_width)
    if isinstance(t, (BitsType, ScalarType)):
        w = t.base.max_width if isinstance(t, BitsType) else t.width
        return w, w
    if isinstance(t, (BytesType, ArrayType)):
        p = t.prefix
        if p is None:
            return 0, 0
        if t.compact:
            return 1, 5
        return (p.width, p.width) if p.fixed and p.width is not None else (1, p.max_width)
    return (1, 1) if t.nullable else (0, 0)  # nested entity: a payload (after its presence marker)


# ---------------------------------------------------------------------------- layout tables


def type_text(t: Type) -> str:
    """The schema spelling of a type, for layout tables."""
    if isinstance(t, (IntType, ScalarType)):
        return t.name
    if isinstance(t, BitsType):
        return f"{t.base.name} bits"
    if isinstance(t, BytesType):
        if t.prefix is None:
            return f"{t.name} (to the end)"
        prefix = "compact" if t.compact else t.prefix.name
        return f"{t.name} ({prefix} length{', nullable' if t.nullable else ''})"
    if isinstance(t, EntityRef):
        return f"{t.name} (nullable)" if t.nullable else t.name
    if t.prefix is not None:
        prefix = "compact" if t.compact else t.prefix.name
        return f"[]{type_text(t.element)} ({prefix} count{', nullable' if t.nullable else ''})"
    if t.count_field:
        return f"[]{type_text(t.element)} (count in {t.count_field})"
    return f"[]{type_text(t.element)} (to the end)"


def bit_type_text(b: Bit) -> str:
    if b.kind == "enum":
        return f"enum {b.enum}"
    if b.kind == "flag":
        return "flag"
    return "reserved" if b.reserved else f"uint{b.width}"


LayoutRow = tuple  # (name, offset, size, type, versions, doc, note, bits): FieldLayout's arguments


def layout_rows(ev: EntityVersion) -> list[LayoutRow]:
    """The rows of the layout table (``kcodec layout``): each field, then its bit groups."""
    rows: list[LayoutRow] = []
    for i, f in enumerate(ev.fields):
        fld = f.field
        rows.append((f.name, f.offset, f.size, type_text(f.type), str(fld.versions), fld.doc, _note(ev, i), None))
        if isinstance(f.type, BitsType):
            for b in sorted(f.type.bits, key=lambda b: b.low):
                rows.append(
                    (f"{f.name}.{b.name}", f.offset, None, bit_type_text(b), str(b.versions), b.doc, "", b.span)
                )
    if ev.flexible:
        for f in ev.tagged:
            fld = f.field
            note = f"tag {fld.tag}, tagged versions {fld.tagged_versions}"
            rows.append((f.name, None, None, type_text(f.type), str(fld.versions), fld.doc, note, None))
        doc = "Tagged fields: uvarint count, then per field uvarint tag, uvarint size and payload, by tag."
        rows.append(("_tagged_fields", None, None, "tagged fields", "", doc, "", None))
    return rows


def _note(ev: EntityVersion, i: int) -> str:
    f = ev.fields[i]
    fld = f.field
    d = fld.derived
    notes = []
    if d and d.kind in ("length", "crc"):
        start = ev.field(f.covers).offset
        where = f" (bytes {start}..end)" if start is not None else ""
        what = "length" if d.kind == "length" else d.algorithm
        notes.append(f"{what} of {d.covers}..end{where}")
    if d and d.kind == "count":
        notes.append(f"count of {d.of}")
    if fld.const is not None:
        notes.append(f"always {ev.version if fld.const == 'version' else fld.const}")
    if fld.enum:
        notes.append(f"enum {fld.enum}")
    if fld.compressed:
        notes.append(f"compressed by {'.'.join(fld.compressed.codec_path)}")
        if fld.compressed.contents is not None:
            notes.append(f"holding {type_text(fld.compressed.contents)}")
    if isinstance(f.type, ArrayType) and f.type.count_field:
        notes.append(f"count in {f.type.count_field}")
    return "; ".join(notes)


def constants(ev: EntityVersion) -> list[tuple[str, int]]:
    """Named facts readers import instead of retyping: field offsets, bit group masks and
    shifts, overheads and the fixed size."""
    out = []
    for f in ev.fields:
        if f.offset is not None:
            out.append((f"{ev.symbol}_OFFSET_{f.name.upper()}", f.offset))
    for f in ev.fields:
        if isinstance(f.type, BitsType):
            for b in sorted(f.type.bits, key=lambda b: b.low):
                if not b.reserved:
                    prefix = f"{ev.symbol}_{f.name.upper()}_{b.name.upper()}"
                    out.append((f"{prefix}_MASK", ((1 << b.width) - 1) << b.low))
                    out.append((f"{prefix}_SHIFT", b.low))
    lo, hi = ev.overhead
    if lo == hi:
        out.append((f"{ev.symbol}_OVERHEAD", lo))
    out.append((f"{ev.symbol}_MIN_OVERHEAD", lo))
    out.append((f"{ev.symbol}_MAX_OVERHEAD", hi))
    if ev.fixed_size is not None:
        out.append((f"{ev.symbol}_SIZE", ev.fixed_size))
    return out
