"""Kafka's flexible versions (KIP-482) and the types that came with them, over bytes: compact lengths and
counts (an unsigned varint holding N + 1, 0 for null), the fixed-width scalars (bool, float64, uuid), the
int8 presence marker of a nullable struct, and the tagged section that ends every struct of a flexible
version (a count, then per field its tag, size and payload, tags ascending)."""

from __future__ import annotations

import math
import struct
import uuid
from typing import Any

from kcodec.runtime.uuids import uuid_to_text
from kcodec.tools.inspect.numbers import int_field, read_int, truncated_leaf
from kcodec.tools.inspect.schema import int_type, type_kind
from kcodec.tools.inspect.spans import BAD, WARN, Span, byte_range

__all__ = ["read_length", "scalar_field", "presence", "tagged_section"]

_UVARINT = int_type("uvarint")
_INT8 = int_type("int8")


def read_length(t, buf, pos: int, end: int, path: str, space: str) -> tuple[Span, int | None, int, bool]:
    """A length or count prefix of bytes, a string or an array: its own integer type, or in flexible
    versions the compact form. Returns the prefix's span, the length (-1 for null), the position after it
    and whether it was whole."""
    if not t.compact:
        return read_int(t.prefix, buf, pos, end, path, space)
    span, v, pos, ok = read_int(_UVARINT, buf, pos, end, path, space)
    if not ok or v is None:
        return span, None, pos, False
    span.type = "compact uvarint"
    span.notes.append("compact: N + 1, 0 for null")
    return span, v - 1, pos, True


def scalar_field(t, buf, pos: int, end: int, path: str, space: str) -> tuple[Span, Any, int, bool]:
    """A bool, float64 or uuid: its leaf span, value, the position after it and whether it was whole."""
    w = t.width
    if pos + w > end:
        return truncated_leaf(t, buf, pos, end, path, space), None, end, False
    raw = bytes(buf[pos : pos + w])
    value: Any
    shown: Any  # the value as --json shows it
    if t.name == "bool":
        value = shown = raw != b"\x00"  # Kafka reads any non-zero byte as true
        display = "true" if value else "false"
    elif t.name == "float64":
        value = struct.unpack(">d", raw)[0]
        display = repr(value)
        shown = value if math.isfinite(value) else display  # JSON has no NaN or infinities
    else:
        value = uuid.UUID(bytes=raw)
        shown = uuid_to_text(value)  # Kafka's text form, as --json shows it
        display = f"{shown} ({value})"
    span = Span(pos, pos + w, path, type=t.name, raw=raw, value=shown, display=display, space=space)
    return span, value, pos + w, True


def presence(buf, pos: int, end: int, path: str, space: str) -> tuple[Span, bool | None, int]:
    """The int8 marker before a nullable struct, tagged or not: negative is null (Kafka reads any
    negative marker as null). Returns the span, whether the struct follows (None when truncated) and the
    position after the marker."""
    span, v, pos, ok = read_int(_INT8, buf, pos, end, path, space)
    span.kind = "prefix"
    if not ok or v is None:
        return span, None, pos
    span.notes.append("null" if v < 0 else "present")
    return span, v >= 0, pos


def tagged_section(walker, ev, buf, pos: int, end: int, path: str, space: str, values: dict) -> tuple[Span, int, bool]:
    """The tagged section ending a flexible struct: its count, then each field's tag and size, and the
    payload walked as the field it is (raw bytes for a tag this version does not know)."""
    spath = f"{path}._tagged_fields" if path else "_tagged_fields"
    section = Span(pos, pos, spath, kind="field", type="tagged fields", space=space)
    csp, count, pos, ok = read_int(_UVARINT, buf, pos, end, f"{spath}.count", space)
    csp.kind = "prefix"
    section.children.append(csp)
    if not ok or count is None:
        section.end = pos
        return section, pos, False
    known = {rf.field.tag: rf for rf in ev.tagged}
    previous = -1
    for i in range(count):
        tsp, tag, pos, ok = read_int(_UVARINT, buf, pos, end, f"{spath}[{i}].tag", space)
        section.children.append(tsp)
        if not ok or tag is None:
            section.end = pos
            return section, pos, False
        if tag <= previous:
            tsp.mark(BAD, f"tag {tag} after tag {previous}: tags must ascend")
        previous = tag
        ssp, size, pos, ok = read_int(_UVARINT, buf, pos, end, f"{spath}[{i}].size", space)
        ssp.kind = "prefix"
        section.children.append(ssp)
        if not ok or size is None:
            section.end = pos
            return section, pos, False
        if pos + size > end:
            ssp.mark(BAD, f"truncated: the payload needs {size} bytes, {end - pos} left")
            section.end = pos
            return section, pos, False
        stop = pos + size
        rf = known.get(tag)
        if rf is None:
            raw = bytes(buf[pos:stop])
            unknown = Span(pos, stop, f"{spath}[{i}].data", kind="data", raw=raw, space=space, value=raw)
            unknown.display = f"unknown tag {tag}, {size} bytes kept as they are"
            unknown.mark(WARN)
            tsp.notes.append(f"tag {tag}: not defined at {ev.name} v{ev.version}")
            if size:
                section.children.append(unknown)
        else:
            tsp.notes.append(f"tag {tag}: {rf.name}")
            child, after, fok = _tagged_field(
                walker, rf, ev, buf, pos, stop, f"{path}.{rf.name}" if path else rf.name, space, values
            )
            section.children.append(child)
            if fok and after < stop:
                section.children.append(
                    Span(
                        after, stop, f"{spath}[{i}].(unread)", kind="unread", raw=bytes(buf[after:stop]), space=space
                    ).mark(WARN, f"bytes {byte_range(after, stop)} of the payload that {rf.name} does not use")
                )
        pos = stop
    section.end = pos
    section.display = f"{count} tagged field{'' if count == 1 else 's'}"
    return section, pos, True


def _tagged_field(walker, rf, ev, buf, pos: int, stop: int, fpath: str, space: str, values: dict):
    """One known tagged field's payload, walked as its type within its size (a nullable struct behind its
    presence marker, as untagged: Kafka writes it for both)."""
    kind = type_kind(rf.type)
    if kind in ("int", "bits"):
        return int_field(walker.schema, rf, ev.version, buf, pos, stop, fpath, space, values)
    if kind == "scalar":
        span, values[rf.name], after, ok = scalar_field(rf.type, buf, pos, stop, fpath, space)
        return span, after, ok
    if kind == "bytes":
        return walker.bytes_field(rf, ev, buf, pos, stop, fpath, space, values, None)
    if kind == "entity":
        return walker.entity_field(rf, ev, buf, pos, stop, fpath, space, values)
    return walker.array_field(rf, ev, buf, pos, stop, fpath, space, values, {})
