"""Integer fields over bytes: fixed-width and varint reads, enum names, constants, bit groups."""

from __future__ import annotations

from typing import Any

from kcodec.errors import TruncatedError, VarintTooLongError
from kcodec.runtime.varint import decode_uvarint, decode_varint, decode_varlong
from kcodec.tools.inspect.schema import SchemaModel, bit_type_text, type_kind, type_text
from kcodec.tools.inspect.spans import BAD, WARN, Span

_VARINTS = {"varint": decode_varint, "varlong": decode_varlong, "uvarint": decode_uvarint}


def truncated_leaf(t, buf, pos: int, end: int, path: str, space: str) -> Span:
    """The leaf of a fixed-width value of type ``t`` cut short at ``end``, marked as damage."""
    leaf = Span(pos, end, path, type=t.name, raw=bytes(buf[pos:end]), space=space)
    leaf.mark(BAD, f"truncated: needs {t.width} bytes, {end - pos} left")
    return leaf


def read_int(t, buf, pos: int, end: int, path: str, space: str) -> tuple[Span, int | None, int, bool]:
    """One integer of type ``t`` at ``pos``, not past ``end``: its leaf span, value (None when damaged),
    the position after it and whether it was whole."""
    if t.fixed:
        w = t.width
        if pos + w > end:
            return truncated_leaf(t, buf, pos, end, path, space), None, end, False
        raw = bytes(buf[pos : pos + w])
        v = int.from_bytes(raw, "big", signed=t.signed)
        leaf = Span(pos, pos + w, path, type=t.name, raw=raw, value=v, display=str(v), space=space)
        return leaf, v, pos + w, True
    try:
        v, nxt = _VARINTS[t.name](buf[:end], pos)
    except VarintTooLongError as exc:
        stop = min(end, pos + t.max_width)
        leaf = Span(pos, stop, path, type=t.name, raw=bytes(buf[pos:stop]), space=space)
        leaf.mark(BAD, exc.message)
        return leaf, None, stop, False
    except TruncatedError:
        leaf = Span(pos, end, path, type=t.name, raw=bytes(buf[pos:end]), space=space)
        leaf.mark(BAD, f"truncated: {t.name} needs more than the {end - pos} bytes left")
        return leaf, None, end, False
    return (
        Span(pos, nxt, path, type=t.name, raw=bytes(buf[pos:nxt]), value=v, display=str(v), space=space),
        v,
        nxt,
        True,
    )


def enum_name(schema: SchemaModel, span: Span, enum: str, value: int, version: int) -> Any:
    """The name of an enum value (marking the span when the value is not valid at ``version``)."""
    e = schema.enum(enum)
    valid = {v.value: v.name for v in e.values_at(version)}
    if value in valid:
        span.display = f"{valid[value]} ({value})"
        return valid[value]
    every = {v.value: v for v in e.values}
    if value in every:
        span.mark(
            BAD, f"{every[value].name} ({value}) is not valid at version {version} (versions {every[value].versions})"
        )
        return every[value].name
    if e.open:
        span.display = f"{value} (unknown {enum}, kept as a number)"
        return value
    span.mark(BAD, f"unknown {enum} {value}")
    return value


def int_field(
    schema: SchemaModel, rf, version: int, buf, pos: int, end: int, path: str, space: str, values: dict
) -> tuple[Span, int, bool]:
    """An integer or bit-group field: its span (with one child per bit group), the position after it
    and whether it was whole. Its decoded value goes into ``values``."""
    t = rf.type
    bits = type_kind(t) == "bits"
    base = t.base if bits else t
    span, v, pos, ok = read_int(base, buf, pos, end, path, space)
    span.type = type_text(t)
    if not ok:
        return span, pos, False
    assert v is not None  # read_int gives a value whenever the integer is whole
    f = rf.field
    values[rf.name] = v
    if f.enum:
        values[rf.name] = enum_name(schema, span, f.enum, v, version)
    if f.const is not None:
        expected = version if f.const == "version" else f.const
        if v != expected:
            span.mark(BAD, f"BAD {f.error}: expected {expected}")
        else:
            span.notes.append(f"always {expected}")
    if f.derived is not None and f.derived.kind == "crc":
        span.display = f"{v:#010x} ({v})"
    if bits:
        values[rf.name] = _bit_groups(schema, span, t, v, version, path, space)
    return span, pos, True


def _bit_groups(schema: SchemaModel, span: Span, t, v: int, version: int, path: str, space: str) -> dict:
    """One child span per bit group of ``v``; returns the groups' values by name."""
    width = t.base.width
    u = v & ((1 << (8 * width)) - 1)
    span.display = f"{u:#0{2 + 2 * width}x}"
    groups: dict[str, Any] = {}
    for b in sorted(t.bits, key=lambda b: b.low):
        g = (u >> b.low) & ((1 << b.width) - 1)
        child = Span(
            span.start,
            span.end,
            f"{path}.{b.name}",
            kind="bits",
            type=bit_type_text(b),
            bits=b.span,
            value=g,
            display=str(g),
            space=space,
        )
        if b.kind == "enum":
            groups[b.name] = enum_name(schema, child, b.enum, g, version)
        elif b.kind == "flag":
            groups[b.name] = child.value = bool(g)
            child.display = "true" if g else "false"
        else:
            groups[b.name] = g
            if b.reserved and g:
                child.mark(WARN, f"reserved bits set ({g:#x})")
        child.raw_bits = f"{g:0{b.width}b}"
        span.children.append(child)
    return groups
