"""Walking an entity version's fields over bytes, down into nested entities, arrays and compressed
streams, into a span tree.

``end`` bounds the bytes a walk may use (the innermost enclosing length, or the buffer); every step
returns the span it made, the position after it and whether it completed. Damage is marked where it
is: a CRC mismatch marks the CRC and the walk goes on; a truncated field ends its entity; a length that
disagrees with what its fields cover marks the length, and the walk resumes where the length says.
"""

from __future__ import annotations

from typing import Any

from kcodec.runtime import compression as compressions
from kcodec.tools.inspect.checks import check_crc, declare_length, settle_length
from kcodec.tools.inspect.compressed import decompressed
from kcodec.tools.inspect.flexible import presence, read_length, scalar_field, tagged_section
from kcodec.tools.inspect.internal import Framed, read_framing
from kcodec.tools.inspect.kafka import element_hints, relative
from kcodec.tools.inspect.numbers import int_field
from kcodec.tools.inspect.schema import SchemaModel, compression_path, plain_element, type_kind, type_text
from kcodec.tools.inspect.spans import BAD, WARN, Span, plural
from kcodec.tools.inspect.summary import summary
from kcodec.tools.inspect.values import FramedPart

#: An array walks at most this many elements: a legal batch can hold millions of tiny records (a
#: record-count bomb), and a span tree for each would take gigabytes. The rest is one span, not inspected.
MAX_ELEMENTS = 10_000


class EntityWalker:
    """Walks entities over bytes. ``expand``: keep every array element's fields visible (otherwise
    elements that are entities are ``collapsed`` to one summary line; still fully decoded, so damage
    inside them is found). An array shows its first :data:`MAX_ELEMENTS` elements."""

    def __init__(
        self,
        schema: SchemaModel,
        *,
        expand: bool = False,
        max_decompressed_size: int = compressions.DEFAULT_MAX_DECOMPRESSED_SIZE,
        registry: str | None = None,
        codecs=None,
        framed: list[FramedPart] | None = None,
    ):
        self.schema = schema
        self.framed = framed or []  # Schema Registry framed keys and values (inspect --value-decoder confluent)
        self.expand = expand
        self.max_decompressed_size = max_decompressed_size
        self.registry = registry  # an internal topic's registry: its records' keys and values are read by it
        self.codecs = codecs  # the CodecSource holding the registries (None: kcodec's own)

    def version_for(self, name: str, buf, pos: int, end: int, default: int) -> int:
        """An entity that carries its own version (a legacy message's magic) is read at that version;
        others share their parent's."""
        versions = self.schema.versions(name)
        probe = self.schema.version_probe(name)
        if probe:
            off, width, signed, _ = probe
            if pos + off + width <= end:
                found = int.from_bytes(bytes(buf[pos + off : pos + off + width]), "big", signed=signed)
                if found in versions:
                    return found
        return default if default in versions else versions[-1]

    # ------------------------------------------------------------------ entities

    def entity(self, ev, buf, pos: int, end: int, path: str, space: str, hints: dict) -> tuple[Span, int, bool, dict]:
        """Walk ``ev``'s fields from ``pos``. Returns the span, the position after it, whether the walk
        completed, and the decoded values by field name."""
        span = Span(pos, pos, path, kind="entity", type=f"{ev.name} v{ev.version}", space=space)
        values: dict[str, Any] = {}
        spans: dict[str, Span] = {}
        region_end = end
        declared = None
        pend_len: dict[str, Span] = {}
        pend_crc: dict[str, tuple[Span, str]] = {}
        ok = True
        for rf in ev.fields:
            fpath = f"{path}.{rf.name}" if path else rf.name
            if rf.name in pend_len:
                declared = declare_length(pend_len.pop(rf.name), pos, region_end)
                if declared is None:
                    ok = False
                    break
                region_end = min(region_end, declared.end)
            if rf.name in pend_crc:
                cspan, algorithm = pend_crc.pop(rf.name)
                truncated = declared is not None and declared.end > region_end
                check_crc(cspan, algorithm, buf, pos, region_end, truncated)
            # Dispatched here rather than in a helper: every frame counts against Python's recursion limit
            # for compressed messages nested inside each other.
            kind = type_kind(rf.type)
            if kind in ("int", "bits"):
                child, pos, fok = int_field(self.schema, rf, ev.version, buf, pos, region_end, fpath, space, values)
            elif kind == "bytes":
                hint = _hint(hints, rf.name, values)
                child, pos, fok = self.bytes_field(rf, ev, buf, pos, region_end, fpath, space, values, hint)
            elif kind == "scalar":
                child, values[rf.name], pos, fok = scalar_field(rf.type, buf, pos, region_end, fpath, space)
            elif kind == "entity":
                child, pos, fok = self.entity_field(rf, ev, buf, pos, region_end, fpath, space, values)
            else:
                child, pos, fok = self.array_field(rf, ev, buf, pos, region_end, fpath, space, values, spans)
            span.children.append(child)
            spans[rf.name] = child
            _derive(rf, child, fok, pend_len, pend_crc)
            if not fok:
                ok = False
                break
        if ok and ev.flexible:
            child, pos, ok = tagged_section(self, ev, buf, pos, region_end, path, space, values)
            span.children.append(child)
        if declared is not None and ok:
            gap, pos = settle_length(declared, buf, pos, path, space)
            if gap is not None:
                span.children.append(gap)
        span.end = pos
        return span, pos, ok, values

    def entity_field(self, rf, ev, buf, pos, end, path, space, values) -> tuple[Span, int, bool]:
        """A nested entity (or struct); a nullable one behind its int8 presence marker."""
        name = rf.type.name
        marker = None
        if rf.type.nullable:
            marker, present, pos = presence(buf, pos, end, f"{path}.present", space)
            if not present:
                span = Span(marker.start, pos, path, type=f"{name} (nullable)", space=space, children=[marker])
                values[rf.name] = None
                if present is None:
                    return span, pos, False
                span.display = "null"
                return span, pos, True
        sub = self.schema.entity(name, self.version_for(name, buf, pos, end, ev.version))
        child, pos, ok, values[rf.name] = self.entity(sub, buf, pos, end, path, space, {})
        child.kind = "field"
        if marker is not None:
            child.children.insert(0, marker)
            child.start = marker.start
        return child, pos, ok

    # ------------------------------------------------------------------ bytes

    def bytes_field(self, rf, ev, buf, pos, end, path, space, values, hint) -> tuple[Span, int, bool]:
        """A length-prefixed bytes or string field. ``hint`` (entity, version) reads its bytes as that
        entity; compressed bytes are inflated and walked."""
        t = rf.type
        span = Span(pos, pos, path, type=type_text(t), space=space)
        if t.prefix is None:  # no length of its own: to the end of the covering length (a 0.7 payload)
            n = end - pos
        else:
            psp, n, pos, ok = read_length(t, buf, pos, end, f"{path}.length", space)
            psp.kind = "prefix"
            span.children.append(psp)
            span.end = pos
            if not ok or n is None:
                return span, pos, False
        if n < 0:
            if t.nullable:
                values[rf.name] = None
                span.display = psp.display = "null"
                psp.notes.append(f"length {n}: null")
                return span, pos, True
            psp.mark(BAD, f"negative length {n} for a non-nullable {t.name}")
            return span, pos, False
        if pos + n > end:
            data = Span(pos, end, f"{path}.data", kind="data", raw=bytes(buf[pos:end]), space=space)
            data.mark(BAD, f"truncated: length says {n}, {end - pos} bytes left")
            span.children.append(data)
            span.end = end
            return span, end, False
        raw = bytes(buf[pos : pos + n])
        data = Span(pos, pos + n, f"{path}.data", kind="data", raw=raw, space=space, display=bytes_text(raw))
        if n:  # an empty value has no bytes of its own: its length prefix says it all
            span.children.append(data)
        at_data = len(span.children) - 1
        value: Any = raw
        compression = _compression(rf, values)
        if compression is not None:
            data.kind = "stream"
            data.display = f"{n} bytes of {compression}"
            value = None
            contents = rf.field.compressed.contents
            if contents is not None:
                dspan = decompressed(self, data, compression, raw, ev, contents, path, values, None, None, {})
                if dspan is not None:
                    span.children.append(dspan)
        elif t.text:
            try:
                value = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                data.mark(BAD, f"invalid UTF-8 at byte {exc.start} of the string")
        if hint is not None and n:
            span.children[at_data] = self._read_as(hint, buf, pos, pos + n, path, space, data, values, rf.name)
        values[rf.name] = value
        span.value, span.display = value, data.display
        span.end = pos + n
        return span, pos + n, True

    def _read_as(self, hint, buf, pos, end, path, space, data: Span, values: dict, field: str) -> Span:
        """The bytes ``pos``..``end`` of a bytes field read as the entity ``hint`` names."""
        start = pos
        framing: list[Span] = []
        framed = None
        if isinstance(hint, FramedPart):  # a Schema Registry framed key or value: the header, then the payload
            framed, hint = hint, hint.header(bytes(buf[pos:end]))
            if not isinstance(hint, tuple):
                return framed.unframed(data, hint)
        if isinstance(hint, Framed):  # an internal topic's record type or version first (its registry's framing)
            hint, framing, pos = read_framing(hint, buf, pos, end, f"{path}.data", space, values, field)
            if hint is None:
                return Span(
                    start, end, f"{path}.data", kind="data", display=data.display, space=space, children=framing
                )
        name, version = hint
        sub, _, _, sub_values = self.entity(self.schema.entity(name, version), buf, pos, end, f"{path}.data", space, {})
        sub.children[0:0] = framing
        sub.start = start
        sub.kind, sub.display = "data", data.display
        sub.notes.append(f"read as {name} v{version}")
        if framed is not None and sub.end < end:
            sub.children.append(framed.payload(bytes(buf[start:end]), sub.end, end, f"{path}.data", space))
            sub.end = end
        if sub.end < end:
            sub.children.append(
                Span(
                    sub.end,
                    end,
                    f"{path}.data.(unread)",
                    kind="unread",
                    raw=bytes(buf[sub.end : end]),
                    space=space,
                    notes=["bytes after the fields this version defines"],
                )
            )
            sub.end = end
        values[f"{field}:{name}"] = sub_values
        return sub

    # ------------------------------------------------------------------ arrays

    def array_field(self, rf, ev, buf, pos, end, path, space, values, spans) -> tuple[Span, int, bool]:
        """An array: its count (a prefix or another field), then its elements, or one compressed stream
        holding them."""
        t = rf.type
        span = Span(pos, pos, path, kind="array", type=type_text(t), space=space)
        count = None
        count_span = None
        if t.prefix is not None:
            psp, count, pos, ok = read_length(t, buf, pos, end, f"{path}.count", space)
            psp.kind = "prefix"
            span.children.append(psp)
            if not ok or count is None:
                span.end = pos
                return span, pos, False
            if count == -1 and t.nullable:
                values[rf.name] = None
                span.display = psp.display = "null"
                span.end = pos
                return span, pos, True
            if count < 0:
                psp.mark(BAD, f"negative count {count}")
                span.end = pos
                return span, pos, False
        elif t.count_field is not None:
            count = values.get(t.count_field)
            count_span = spans.get(t.count_field)
            if isinstance(count, int) and count < 0:
                count_span.mark(BAD, f"negative count {count}")
                span.end = pos
                return span, pos, False
        hints = element_hints(rf.name, values, self.registry, self.codecs, self.framed)
        compression = _compression(rf, values)
        if compression is not None:
            raw = bytes(buf[pos:end])
            stream = Span(
                pos,
                end,
                f"{path}.data",
                kind="stream",
                raw=raw,
                space=space,
                display=f"{len(raw)} bytes of {compression}",
            )
            span.children.append(stream)
            span.end = end
            dspan = decompressed(self, stream, compression, raw, ev, t, path, values, count, count_span, hints)
            if dspan is not None:
                span.children.append(dspan)
                span.value = dspan.value
            n = span.value
            span.display = f"{'?' if n is None else n} element{plural(n)}, one {compression}-compressed stream"
            return span, end, True
        els, pos, ok, n = self.elements(t, ev, buf, pos, end, path, space, count, values, hints)
        span.children.extend(els)
        span.value = n
        span.display = f"{n} element{plural(n)}"
        if count is not None and n != count and ok:
            span.mark(BAD, f"{count} elements expected, {n} fit")
        span.end = pos
        return span, pos, ok

    def elements(self, t, ev, buf, pos, end, path, space, count, values, hints=None):
        """The elements of array type ``t`` from ``pos``: ``count`` of them, or as many as fit before
        ``end``. Returns their spans, the position after them, whether all were whole, and how many."""
        out: list[Span] = []
        i = 0
        ok = True
        el = t.element
        while (pos < end) if count is None else (i < count):
            epath = f"{path}[{i}]"
            if i == MAX_ELEMENTS and pos < end:  # count elements claim the region's rest; so do elements to the end
                rest = Span(pos, end, f"{path}[{i}:]", kind="unread", space=space)
                more = f"{count - i} more elements" if count is not None else f"the other {end - pos} bytes of elements"
                rest.mark(WARN, f"{more}, not inspected (inspect walks the first {i})")
                out.append(rest)
                return out, end, ok, count if count is not None else i
            if count is not None and pos >= end:
                miss = Span(pos, pos, epath, kind="unread", space=space)
                miss.mark(BAD, f"truncated: {count} elements expected, the region ends after {i}")
                out.append(miss)
                ok = False
                break
            if type_kind(el) == "entity":
                version = self.version_for(el.name, buf, pos, end, ev.version)
                sp, pos, eok, evals = self.entity(
                    self.schema.entity(el.name, version), buf, pos, end, epath, space, hints or {}
                )
                self._present_element(sp, el.name, version, ev, evals, values)
            elif type_kind(el) == "bytes":
                sp, pos, eok = self.bytes_field(plain_element(epath, el), ev, buf, pos, end, epath, space, {}, None)
            elif type_kind(el) == "scalar":
                sp, _, pos, eok = scalar_field(el, buf, pos, end, epath, space)
            else:
                sp, pos, eok = int_field(
                    self.schema, plain_element(epath, el), ev.version, buf, pos, end, epath, space, {}
                )
            out.append(sp)
            i += 1
            if not eok:
                ok = False
                break
        return out, pos, ok, i

    def _present_element(self, sp: Span, name: str, version: int, ev, evals: dict, values: dict) -> None:
        """An element that is an entity: warn when its version differs from its parent's, and give it the
        one-line summary it shows when collapsed."""
        if version != ev.version and self.schema.has_version(name, ev.version):
            sp.mark(WARN, f"version {version} inside a version {ev.version} {ev.name}")
        if not self.expand:
            sp.collapsed = True
        sp.display = summary(sp, *relative(evals, values))


def _derive(rf, child: Span, complete: bool, pend_len: dict, pend_crc: dict) -> None:
    """Note what a derived or constant field is; a length or CRC is checked once the walk reaches the
    field it covers."""
    d = rf.field.derived
    if d is not None:
        child.role = d.kind
    elif rf.field.const is not None:
        child.role = "const"
    if not complete or d is None:
        return
    if d.kind == "length":
        pend_len[d.covers] = child
        child.notes.append(f"length of {d.covers}..end")
    elif d.kind == "crc":
        pend_crc[d.covers] = (child, d.algorithm)
    elif d.kind == "count":
        child.notes.append(f"count of {d.of}")


def _hint(hints: dict, field: str, values: dict):
    """What a bytes field holds beyond its schema type, as (entity, version), or None."""
    hint = hints.get(field)
    return hint(values) if callable(hint) else hint


def _compression(rf, values: dict) -> str | None:
    """The compression codec of a field's bytes when they are compressed (another field names it)."""
    path = compression_path(rf)
    if path is None:
        return None
    v: Any = values
    for p in path:
        if not isinstance(v, dict) or p not in v:
            return None
        v = v[p]
    return v if isinstance(v, str) and v != "none" else None


def bytes_text(raw: bytes, limit: int = 40) -> str:
    """A short human form of a bytes value: quoted text when it is printable UTF-8, else hex."""
    try:
        text = raw.decode("utf-8")
        printable = all(ch.isprintable() for ch in text)
    except UnicodeDecodeError:
        printable = False
    if printable:
        shown = text if len(text) <= limit else text[:limit] + "…"
        return '"' + shown.replace('"', '\\"') + '"'
    hx = raw.hex()
    return "0x" + (hx if len(hx) <= limit else hx[:limit] + "…")
