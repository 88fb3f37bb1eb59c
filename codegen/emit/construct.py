"""Decide every piece of text the templates print, from resolved entities.

The templates only lay this out (betterproto's rule: the IR decides, templates
print). This module is the construct backend: it spells the IR as construct
expressions and as straight-line, varint-aware size functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..schema import (
    ArrayType,
    BitsType,
    BytesType,
    EntityRef,
    EntityVersion,
    IntType,
    ScalarType,
    Type,
    constants,
    default_value,
    layout_rows,
    module_alias,
)

_FIXED_CONSTRUCT = {
    "int8": "Int8sb",
    "int16": "Int16sb",
    "uint16": "Int16ub",
    "int32": "Int32sb",
    "int64": "Int64sb",
    "uint32": "Int32ub",
    "varint": "VarInt32()",
    "varlong": "VarInt64()",
    "uvarint": "UVarInt32()",
}
_SIZE_FN = {"varint": "size_varint", "varlong": "size_varlong", "uvarint": "size_uvarint"}
_PREFIXED_SIZE_FN = {"varint": "varint_prefixed", "uvarint": "uvarint_prefixed"}
_SCALAR_CONSTRUCT = {"bool": "KBool()", "float64": "Float64b", "uuid": "KUuid()"}


@dataclass
class SizeFunction:
    name: str
    doc: str
    lines: list[str]  # statements that set s_<field> for the variable fields, last field first
    result: str  # the return expression


@dataclass
class EntityView:
    symbol: str
    suffix: str
    entity: str
    version: int
    doc: str
    members: list[str]
    helpers: list[tuple[str, str]]  # (name, construct expression) defined before the struct
    size: SizeFunction
    field_sizes: SizeFunction
    covered: list[SizeFunction]
    layout_rows: list[str]
    constants: list[tuple[str, int]]
    min_overhead: int
    max_overhead: int
    fixed_size: int | None
    head: str = "Struct("  # the definition's opening and closing (a flexible version wraps its struct)
    tail: str = ")"


@dataclass
class ModuleView:
    name: str
    source_file: str
    source_sha256: str
    schema_sha256: str
    doc: str
    imports: list[str]
    entities: list[EntityView] = field(default_factory=list)


def module_view(
    name: str, source_file: str, source_sha: str, schema_sha: str, doc: str, versions: list[EntityVersion]
) -> ModuleView:
    refs = sorted({r for ev in versions for r in ev.refs} - {name}, key=_module_alias)
    mod = ModuleView(
        name, source_file, source_sha, schema_sha, doc, [f"from . import {r} as {_module_alias(r)}" for r in refs]
    )
    mod.entities = [_entity_view(ev) for ev in versions]
    return mod


def _module_alias(entity: str) -> str:
    return module_alias(entity)


def _ref(ev: EntityVersion, entity: str) -> str:
    """How ``ev``'s module names a symbol of ``entity``'s: through its import, or bare for itself (a Kafka 0.7
    compressed message holds messages of its own entity)."""
    return "" if entity == ev.name else f"{_module_alias(entity)}."


# ---------------------------------------------------------------------------- construct


def _entity_view(ev: EntityVersion) -> EntityView:
    members: list[str] = []
    helpers: list[tuple[str, str]] = []
    checks: list[str] = []
    for i, f in enumerate(ev.fields):
        for owner in ev.covered_starts.get(f.name, ()):
            members.append(f'"_start_{owner}" / Tell,')
            if ev.field(owner).derived_kind == "length":
                members.append(f'LengthBound("{owner}", {ev.min_covered(owner)}),')
        d = f.field.derived
        if d and d.kind == "crc" or _to_end(f.type, f.field.compressed is not None):
            members.append(f'"_at_{f.name}" / Tell,')
        members.append(f'"{f.name}" / {_member(ev, i, helpers)},')
        if d and d.kind == "length":
            checks.append(f'LengthCheck("{f.name}", "_start_{f.name}"),')
        if d and d.kind == "crc":
            checks.append(f'CrcField("{f.name}", "{d.algorithm}", "_at_{f.name}", "_start_{f.name}"),')
    members.extend(checks)
    helpers.extend(raw_helpers(ev))
    lo, hi = ev.overhead
    head, tail = "Struct(", ")"
    if ev.flexible or ev.absent:
        tagged = ", ".join(
            f"TaggedField({f.name!r}, {f.field.tag}, {_type(ev, f.type)}, {default_value(ev, f)!r})" for f in ev.tagged
        )
        absent = "{" + ", ".join(f"{f.name!r}: {default_value(ev, f)!r}" for f in ev.absent) + "}"
        head, tail = "Flexible(Struct(", f"), tagged=[{tagged}], absent={absent}, flexible={ev.flexible})"
    return EntityView(
        symbol=ev.symbol,
        suffix=ev.suffix,
        entity=ev.name,
        version=ev.version,
        doc=ev.entity.doc,
        members=members,
        helpers=helpers,
        size=_size_function(ev, "size", "Bytes {e} v{v} takes when built from ``value``."),
        field_sizes=_size_function(ev, "field_sizes", "Bytes each field of {e} v{v} takes when built from ``value``."),
        covered=[
            _covered_function(ev, f.name) for f in ev.fields if f.field.derived and f.field.derived.kind == "length"
        ],
        layout_rows=[_row(*row) for row in layout_rows(ev)],
        constants=constants(ev),
        min_overhead=lo,
        max_overhead=hi,
        fixed_size=ev.fixed_size,
        head=head,
        tail=tail,
    )


def _int(t: Type) -> str:
    """An integer's construct (derived, const and enum fields are integers: the loader checks)."""
    assert isinstance(t, IntType), t
    return _FIXED_CONSTRUCT[t.name]


def _enum(ev: EntityVersion, name: str, sub: str) -> str:
    e = ev.enum(name)
    return f'EnumOf({sub}, {ev.enum_values(name)!r}, "{name}", open={e.open}, error="{e.error}")'


def _member(ev: EntityVersion, i: int, helpers: list[tuple[str, str]]) -> str:
    f = ev.fields[i]
    fld, t = f.field, f.type
    d = fld.derived
    if d and d.kind == "length":
        return f"Rebuild({_int(t)}, lambda ctx: _covered_{ev.suffix}_{f.name}(ctx, compression_level(ctx)))"
    if d and d.kind == "crc":
        return f"Rebuild({_int(t)}, 0)"
    if d and d.kind == "count":
        # fields by subscript: a field may be named like a Container method (items, keys, values)
        return f"Rebuild({_int(t)}, lambda ctx: len(ctx[{d.of!r}]))"
    if fld.const is not None:
        value = ev.version if fld.const == "version" else fld.const
        return f'ConstInt({value}, {_int(t)}, error="{fld.error}")'
    if fld.enum:
        return _enum(ev, fld.enum, _int(t))
    if fld.compressed:
        codec = "lambda ctx: ctx" + "".join(f"[{p!r}]" for p in fld.compressed.codec_path)
        if isinstance(t, ArrayType):
            inner = f'Compressed({_type(ev, t)}, {codec}, magic={ev.version}, at="_at_{f.name}")'
            return f"FixedSized({_extent(ev, i)}, {inner})"
        # compressed bytes hold what ``contents`` names (the loader requires it when the field is not an array)
        assert fld.compressed.contents is not None and isinstance(t, BytesType), f.name
        contents = _type(ev, fld.compressed.contents)
        helpers.append((f"_{ev.symbol}_{f.name.upper()}_CONTENTS", contents))
        prefix = "None" if t.prefix is None else _int(t.prefix)
        member = (
            f"CompressedBytes({prefix}, nullable={t.nullable}, codec={codec}, "
            f"magic={ev.version}, contents=_{ev.symbol}_{f.name.upper()}_CONTENTS"
        )
        if t.prefix is not None:
            return member + ")"
        return f'FixedSized({_extent(ev, i)}, {member}, at="_at_{f.name}"))'
    if isinstance(t, ArrayType) and t.count_field is None and t.prefix is None:
        raise AssertionError("greedy arrays only appear as compressed contents")
    if isinstance(t, BytesType) and t.prefix is None:
        return f"FixedSized({_extent(ev, i)}, KBytes(None, nullable=False, text={t.text}))"
    return _type(ev, t)


def _to_end(t: Type, compressed: bool) -> bool:
    """A field with no length of its own, running to the end of the length covering it."""
    return isinstance(t, ArrayType) and compressed or isinstance(t, BytesType) and t.prefix is None


def _extent(ev: EntityVersion, i: int) -> str:
    """The bytes left for field i (one that runs to the end) within the length that covers it."""
    name, length = ev.fields[i].name, ev.enclosing_length(i)
    return f"lambda ctx: ctx[{length!r}] - (ctx._at_{name} - ctx._start_{length})"


def _type(ev: EntityVersion, t: Type) -> str:
    if isinstance(t, IntType):
        return _int(t)
    if isinstance(t, ScalarType):
        return _SCALAR_CONSTRUCT[t.name]
    if isinstance(t, BitsType):
        groups = []
        for b in sorted(t.bits, key=lambda b: b.low):
            args = [repr(b.name), str(b.low), str(b.width), repr(b.kind)]
            if b.enum:  # kind "enum"
                e = ev.enum(b.enum)
                args += [repr(ev.enum_values(b.enum)), repr(b.enum), f"open={e.open}", f"error={e.error!r}"]
            groups.append(f"BitGroup({', '.join(args)})")
        # the loader checked the base is fixed-width (max_width is its width)
        return f"BitField({_int(t.base)}, [{', '.join(groups)}], {t.base.max_width * 8})"
    if isinstance(t, BytesType):
        assert t.prefix is not None, t  # bytes to the end are a member of their own (_member)
        prefix = "CompactLength()" if t.compact else _int(t.prefix)
        return f"KBytes({prefix}, nullable={t.nullable}, text={t.text})"
    if isinstance(t, EntityRef):
        ref = f"LazyBound(lambda: {_ref(ev, t.name)}{t.name.upper()}_V{ev.version})"
        return f"NullableStruct({ref})" if t.nullable else ref
    element = _type(ev, t.element)
    if t.prefix is not None and (t.compact or t.nullable):
        prefix = "CompactLength()" if t.compact else _int(t.prefix)
        return f"KArray({prefix}, {element}, nullable={t.nullable})"
    if t.prefix is not None:
        return f"PrefixedArray({_int(t.prefix)}, {element})"
    if t.count_field:
        return f"CountedArray(this[{t.count_field!r}], {element})"
    return f"UntilEnd({element})"


# ---------------------------------------------------------------------------- sizes


def _value(name: str) -> str:
    return f'value["{name}"]'


def _size_expr(ev: EntityVersion, i: int) -> str | tuple[str, str, str] | None:
    """Python expression for the size of field i, None when it is fixed, or for a compressed
    field (the codec expression, the size when plain, the size when compressed)."""
    f = ev.fields[i]
    if f.size is not None:
        return None
    fld, t = f.field, f.type
    d = fld.derived
    if d and d.kind == "count":
        assert isinstance(t, IntType) and d.of is not None, f.name  # the loader checks both
        return f"{_SIZE_FN[t.name]}(len({_value(d.of)}))"
    if d and d.kind == "length":
        assert isinstance(t, IntType), f.name  # a derived field is an integer (the loader checks)
        return f"{_SIZE_FN[t.name]}({_covered_sum(ev, ev.index(f.covers))})"
    v = _value(f.name)
    if not fld.compressed:
        return _type_size(ev, t, v)
    if fld.compressed:
        codec = "value" + "".join(f'["{p}"]' for p in fld.compressed.codec_path)
        if isinstance(t, ArrayType):
            plain = _array_size(ev, t, v)
            raw = f"_{ev.symbol}_{f.name.upper()}_RAW.build({v})"
        else:
            assert isinstance(t, BytesType), f.name  # compressed: an array or bytes
            plain = _bytes_size(t, v)
            raw = f"_{ev.symbol}_{f.name.upper()}_CONTENTS.build({v})"
        packed = f"len(compress_cached({codec}, {raw}, {ev.version}, level))"
        if isinstance(t, BytesType) and t.prefix is not None:
            packed = f"{t.prefix.width} + {packed}"
        return codec, plain, packed
    raise AssertionError(t)


def _type_size(ev: EntityVersion, t: Type, v: str) -> str:
    """Python expression for the bytes a value ``v`` of a variable-size type takes."""
    if isinstance(t, ScalarType):
        return str(t.width)
    if isinstance(t, IntType):
        return f"{_SIZE_FN[t.name]}({v})" if not t.fixed else str(t.width)
    if isinstance(t, BytesType):
        return _bytes_size(t, v)
    if isinstance(t, ArrayType):
        return _array_size(ev, t, v)
    if isinstance(t, EntityRef):
        size = f"{_ref(ev, t.name)}size_{t.name}_v{ev.version}({v}, level)"
        return f"(1 if {v} is None else 1 + {size})" if t.nullable else size
    if isinstance(t, BitsType):
        return str(t.base.width)
    raise AssertionError(t)


def _bytes_size(t: BytesType, v: str) -> str:
    n = f"len({v}.encode('utf-8'))" if t.text else f"len({v})"
    if t.prefix is None:
        return n  # no length of its own (never null)
    if t.compact:
        body = f"compact_prefixed({n})"
        null = "1"  # 0: null
    elif t.prefix.fixed:
        body = f"{t.prefix.width} + {n}"
        null = str(t.prefix.width)
    else:
        body = f"{_PREFIXED_SIZE_FN[t.prefix.name]}({n})"
        null = "1"  # -1 is one byte as a zigzag varint
    return f"({null} if {v} is None else {body})" if t.nullable else body


def _array_size(ev: EntityVersion, t: ArrayType, v: str) -> str:
    e = t.element
    if isinstance(e, EntityRef):
        fn = f"{_ref(ev, e.name)}size_{e.name}_v{ev.version}"
        # only a child that compresses needs the level: the rest take the faster map()
        items = f"sum({fn}(x, level) for x in {v})" if ev.child(e.name).needs_options else f"sum(map({fn}, {v}))"
    elif isinstance(e, IntType) and e.fixed:
        items = f"{e.width} * len({v})"
    elif isinstance(e, IntType):
        items = f"sum(map({_SIZE_FN[e.name]}, {v}))"
    elif isinstance(e, ScalarType):
        items = f"{e.width} * len({v})"
    elif isinstance(e, BytesType):
        items = f"sum({_bytes_size(e, 'x')} for x in {v})"
    else:
        assert isinstance(e, BitsType), e  # arrays do not nest
        items = f"{e.base.width} * len({v})"
    if t.prefix is None:
        return items
    if t.compact:
        count, null = f"size_uvarint(len({v}) + 1)", "1"
    else:
        count = str(t.prefix.width) if t.prefix.fixed else f"{_SIZE_FN[t.prefix.name]}(len({v}))"
        null = str(t.prefix.width) if t.prefix.fixed else "1"
    return f"({null} if {v} is None else {count} + {items})" if t.nullable else f"{count} + {items}"


def _covered_sum(ev: EntityVersion, start: int) -> str:
    fixed = sum(f.size for f in ev.fields[start:] if f.size is not None)
    terms = [str(fixed)] if fixed else []
    terms += [f"s_{f.name}" for f in ev.fields[start:] if f.size is None]
    return " + ".join(terms) or "0"


def _size_lines(ev: EntityVersion, start: int = 0) -> list[str]:
    lines = []
    for i in reversed(range(start, len(ev.fields))):
        expr = _size_expr(ev, i)
        name = f"s_{ev.fields[i].name}"
        if isinstance(expr, tuple):
            codec, plain, packed = expr
            lines += [f'if {codec} == "none":', f"    {name} = {plain}", "else:", f"    {name} = {packed}"]
        elif expr is not None:
            lines.append(f"{name} = {expr}")
    return lines


def _tagged_lines(ev: EntityVersion) -> list[str]:
    """Lines setting s__tagged_fields: the tagged section's bytes for ``value`` (a tagged field absent
    from the value takes its default, and a default is not written)."""
    known = "frozenset({" + ", ".join(str(f.field.tag) for f in ev.tagged) + "})" if ev.tagged else "frozenset()"
    lines = [
        f"known_tags = {known}",  # its own line: the wrapper of long lines would split the comprehension
        'tags = [(t, len(p)) for t, p in check_unknown_tags(value.get("_unknown_tags"), known_tags)]',
    ]
    for f in ev.tagged:
        d = repr(default_value(ev, f))
        lines.append(f'v_{f.name} = value.get("{f.name}", {d})')
        lines.append(f"if not is_default(v_{f.name}, {d}):")
        lines.append(f"    tags.append(({f.field.tag}, {_type_size(ev, f.type, f'v_{f.name}')}))")
    lines.append("s__tagged_fields = tagged_size(tags)")
    return lines


def _size_function(ev: EntityVersion, kind: str, doc: str) -> SizeFunction:
    lines = _size_lines(ev)
    if ev.flexible:
        lines += _tagged_lines(ev)
    if kind == "size":
        result = _covered_sum(ev, 0) + (" + s__tagged_fields" if ev.flexible else "")
    else:
        items = [f'"{f.name}": {f.size if f.size is not None else "s_" + f.name}' for f in ev.fields]
        if ev.flexible:
            items.append('"_tagged_fields": s__tagged_fields')
        result = "{" + ", ".join(items) + "}"
    return SizeFunction(f"{kind}_{ev.suffix}", doc.format(e=ev.name, v=ev.version), lines, result)


def _covered_function(ev: EntityVersion, length_field: str) -> SizeFunction:
    start = ev.index(ev.field(length_field).covers)
    return SizeFunction(
        f"_covered_{ev.suffix}_{length_field}",
        f"Bytes that {length_field} counts.",
        _size_lines(ev, start),
        _covered_sum(ev, start),
    )


def raw_helpers(ev: EntityVersion) -> list[tuple[str, str]]:
    """Constructs that build a compressed array's plain bytes (for its size)."""
    out = []
    for f in ev.fields:
        if f.field.compressed and isinstance(f.type, ArrayType):
            out.append((f"_{ev.symbol}_{f.name.upper()}_RAW", f"UntilEnd({_type(ev, f.type.element)})"))
    return out


# ---------------------------------------------------------------------------- layout


def _row(name, offset, size, type_, versions, doc, note, bits) -> str:
    return f"FieldLayout({name!r}, {offset!r}, {size!r}, {type_!r}, {versions!r}, {doc!r}, {note!r}, {bits!r})"
