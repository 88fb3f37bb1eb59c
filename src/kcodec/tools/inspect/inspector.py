"""Annotated views of real bytes, driven by the schemas.

A small interpreter walks an entity version's fields (the IR of
:mod:`kcodec.codegen`, resolved by :func:`kcodec.codegen.layout.resolve`) over
the bytes and produces a tree of :class:`Span` objects: every field's byte
range, its raw bytes, its schema path and decoded value, and notes (lengths and
what they cover, CRCs stored and computed, compressed streams and what they
inflate to). Nothing here knows a format by heart: what a field is comes from
the schema, so a schema change shows up here without code changes.

Damage is marked where it is and inspection goes on as far as the bytes allow:
a CRC mismatch marks the CRC and the walk continues; a truncated field marks
that field and ends its entry; a length that disagrees with what its fields
cover marks the length, and the next entry starts where the length says.

Positions are absolute byte positions in the input (``space == "file"``),
except inside decompressed streams, whose spans count from the start of the
decompressed bytes (``space`` names the stream).
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from kcodec.errors import CompressionError, KcodecError, TruncatedError, VarintTooLongError
from kcodec.runtime import compression
from kcodec.runtime.crc import CRC_FUNCTIONS
from kcodec.runtime.varint import decode_uvarint, decode_varint, decode_varlong

__all__ = ["Span", "Inspector", "inspect_bytes", "render_text", "OK", "WARN", "BAD", "TOP_LEVEL_ENTITIES"]

OK, WARN, BAD = "ok", "warn", "bad"
_RANK = {OK: 0, WARN: 1, BAD: 2}

#: Entities a log (segment, Produce/Fetch records) is a sequence of; each entry picks one by the constant
#: (magic) field its schema puts at a fixed offset, as Kafka's readers do with byte 16.
TOP_LEVEL_ENTITIES = ("record_batch", "legacy_log_entry")

# The framing shared by every magic (spec §1): offset(8) size(4) ... magic at 16. Used only to skip an
# entry whose magic no schema knows.
_LOG_OVERHEAD = 12
_HEADER_UP_TO_MAGIC = 17

# Kafka semantics the schema language does not express (spec §2): a record's offset and timestamp are the
# batch's base plus the record's delta. Used for the one-line record summaries only.
_RELATIVE = (("offset_delta", "base_offset", "offset"), ("timestamp_delta", "base_timestamp", "timestamp"))


@dataclass
class Span:
    """One annotated byte range: a field, a length prefix, an entity, a compressed stream..."""

    start: int
    end: int  # exclusive
    path: str  # schema path inside the entry: "crc", "records[0].key.length", "attributes.compression"
    kind: str = "field"  # entry, entity, field, prefix, data, bits, array, stream, decompressed, unread, tail
    type: str = ""  # schema type, e.g. "int32", "varint", "record_batch v2"
    raw: bytes | None = None  # the bytes, for leaves (every byte of an entry is in exactly one leaf per space)
    value: Any = None
    display: str = ""
    notes: list[str] = field(default_factory=list)
    status: str = OK
    bits: str | None = None  # "0-2" for a bit group
    space: str = "file"  # "file", or the decompressed stream the positions count in
    collapsed: bool = False  # shown as one summary line unless records are expanded
    raw_bits: str | None = None  # a bit group's bits, most significant first
    role: str = ""  # "length", "crc", "count" (derived fields) or "const"
    children: list[Span] = field(default_factory=list)

    def mark(self, status: str, note: str | None = None) -> Span:
        if _RANK[status] > _RANK[self.status]:
            self.status = status
        if note:
            self.notes.append(note)
        return self

    def walk(self) -> Iterator[Span]:
        yield self
        for c in self.children:
            yield from c.walk()

    def find(self, path: str) -> Span | None:
        return next((s for s in self.walk() if s.path == path), None)

    def leaves(self) -> list[Span]:
        return [s for s in self.walk() if s.raw is not None]

    def _finish(self) -> str:
        for c in self.children:
            self.mark(c._finish())
        return self.status

    def as_dict(self, full: bool = True) -> dict:
        d: dict[str, Any] = {"path": self.path, "kind": self.kind, "start": self.start, "end": self.end,
                             "space": self.space}
        if self.type:
            d["type"] = self.type
        if self.bits is not None:
            d["bits"] = self.bits
            d["binary"] = self.raw_bits
        if self.raw is not None:
            d["hex"] = self.raw.hex()
        d["value"] = _jsonable(self.value)
        d["display"] = self.display
        d["notes"] = list(self.notes)
        d["status"] = self.status
        if self.role:
            d["role"] = self.role
        if self.collapsed:
            d["collapsed"] = True
        if self.children and (full or not self.collapsed):
            d["children"] = [c.as_dict(full) for c in self.children]
        return d


def _jsonable(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


@lru_cache(maxsize=1)
def packaged_schemas():
    """The IR of the schemas shipped inside kcodec (the ones generated/ was made from)."""
    import kcodec.schemas
    from kcodec.codegen import load_schemas

    return load_schemas(Path(kcodec.schemas.__path__[0]))


def _bytes_text(raw: bytes, limit: int = 40) -> str:
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


def _range(a: int, b: int) -> str:
    return f"{a}..{b - 1}" if b > a else f"{a} (empty)"


class Inspector:
    """Walks log entries (or any entity) over bytes and returns span trees.

    ``expand``: keep every record's fields visible (otherwise array elements of
    entities are marked ``collapsed`` and summarised in one line; they are
    still fully decoded, so damage inside them is found)."""

    def __init__(self, schemas=None, *, expand: bool = False,
                 max_decompressed_size: int = compression.DEFAULT_MAX_DECOMPRESSED_SIZE):
        self.schemas = schemas if schemas is not None else packaged_schemas()
        self.expand = expand
        self.limit = max_decompressed_size
        self._evs: dict[tuple[str, int], Any] = {}
        self._probes: dict[tuple, Any] = {}
        self._dispatch = self._magic_table()

    # ------------------------------------------------------------------ schema access

    def ev(self, name: str, version: int):
        key = (name, version)
        if key not in self._evs:
            from kcodec.codegen.layout import resolve

            self._evs[key] = resolve(self.schemas, self.schemas.entities[name], version)
        return self._evs[key]

    def _const_probe(self, name: str, version: int, base: int = 0, versioned_only: bool = False):
        """(offset, width, signed, expected) of the first constant field at a fixed offset, nested
        entities included; ``versioned_only`` wants a ``const: version`` field."""
        key = (name, version, base, versioned_only)
        if key not in self._probes:
            self._probes[key] = self._find_const(name, version, base, versioned_only)
        return self._probes[key]

    def _find_const(self, name: str, version: int, base: int, versioned_only: bool):
        from kcodec.codegen.ir import EntityRef, IntType

        for rf in self.ev(name, version).fields:
            if rf.offset is None:
                return None
            t = rf.type
            c = rf.field.const
            if c is not None and isinstance(t, IntType) and t.fixed and (c == "version" or not versioned_only):
                return base + rf.offset, t.width, t.signed, version if c == "version" else c
            if isinstance(t, EntityRef):
                found = self._const_probe(t.name, version, base + rf.offset, versioned_only)
                if found:
                    return found
        return None

    def _magic_table(self) -> list[tuple[int, int, bool, int, str, int]]:
        table = []
        for name in TOP_LEVEL_ENTITIES:
            if name not in self.schemas.entities:
                continue
            for v in self.schemas.entities[name].versions:
                probe = self._const_probe(name, v)
                if probe:
                    table.append((*probe, name, v))
        return table

    def _version_for(self, name: str, buf, pos: int, end: int, default: int) -> int:
        """An entity that carries its own version (a ``const: version`` field at a fixed offset, as a
        legacy message's magic) is read at that version; others share their parent's."""
        versions = self.schemas.entities[name].versions
        for v in versions:
            probe = self._const_probe(name, v, versioned_only=True)
            if probe:
                off, width, signed, _ = probe
                if pos + off + width <= end:
                    found = int.from_bytes(bytes(buf[pos + off:pos + off + width]), "big", signed=signed)
                    if found in versions:
                        return found
                break
        return default if default in versions else versions[-1]

    def entry_kinds(self) -> list[str]:
        return [f"magic {value}: {name} v{v}" for _, _, _, value, name, v in self._dispatch]

    # ------------------------------------------------------------------ entries

    def entries(self, data, start: int = 0, count: int | None = None) -> Iterator[Span]:
        """Span trees of the log entries from byte ``start`` (at most ``count``)."""
        buf = memoryview(data)
        pos, n = start, 0
        while pos < len(buf) and (count is None or n < count):
            span, nxt = self.entry(buf, pos)
            yield span
            n += 1
            if nxt is None or nxt <= pos:
                return
            pos = nxt

    def entry(self, buf, pos: int) -> tuple[Span, int | None]:
        """One log entry at ``pos``: its span tree and where the next entry starts (None: stop)."""
        buf = memoryview(buf)
        avail = len(buf) - pos
        if avail < _HEADER_UP_TO_MAGIC:
            tail = Span(pos, len(buf), "", kind="tail", raw=bytes(buf[pos:]),
                        display=f"{avail} bytes")
            tail.mark(BAD, f"truncated: {avail} bytes at the end do not hold an entry header "
                           f"({_HEADER_UP_TO_MAGIC} bytes); Kafka's readers stop here")
            return tail, None
        for off, width, signed, expected, name, version in self._dispatch:
            if int.from_bytes(bytes(buf[pos + off:pos + off + width]), "big", signed=signed) == expected:
                ev = self.ev(name, version)
                span, end, ok, _ = self._entity(ev, buf, pos, len(buf), "", "file", {})
                span.kind = "entry"
                offsets = self.offsets(buf, pos)
                if offsets is not None:
                    first, last, known = offsets
                    span.display = (f"offsets {first}..{last}" if known and first != last else
                                    f"offset {last}" if known else f"last offset {last}")
                span._finish()
                return span, (end if ok else None)
        return self._unknown_entry(buf, pos)

    def offsets(self, buf, pos: int) -> tuple[int, int, bool] | None:
        """(first, last, first_known) offsets of the entry at ``pos``, from its header alone. Every
        top-level entity starts with an int64 offset; a v2 batch adds last_offset_delta; a legacy
        entry's offset is its last one (a compressed wrapper's first is known only inside, spec §5.1)."""
        if len(buf) - pos < _HEADER_UP_TO_MAGIC:
            return None
        for off, width, signed, expected, name, version in self._dispatch:
            if int.from_bytes(bytes(buf[pos + off:pos + off + width]), "big", signed=signed) != expected:
                continue
            ev = self.ev(name, version)
            first = int.from_bytes(bytes(buf[pos:pos + 8]), "big", signed=True)
            if any(f.name == "last_offset_delta" for f in ev.fields):
                f = ev.field("last_offset_delta")
                if len(buf) - pos < f.offset + f.size:
                    return first, first, True
                delta = int.from_bytes(bytes(buf[pos + f.offset:pos + f.offset + f.size]), "big", signed=True)
                return first, first + delta, True
            probe = self._codec_probe(name, version)
            compressed = False
            if probe is not None:
                off, width, low, bits = probe
                if pos + off + width <= len(buf):
                    raw = int.from_bytes(bytes(buf[pos + off:pos + off + width]), "big")
                    compressed = (raw >> low) & ((1 << bits) - 1) != 0
            return first, first, not compressed
        return None

    def _codec_probe(self, name: str, version: int, base: int = 0):
        """(offset, width, low bit, bit count) of the codec that compresses a region of the entity
        (nested entities included), when it sits at a fixed offset; a non-zero codec means compressed."""
        from kcodec.codegen.ir import BitsType, EntityRef

        ev = self.ev(name, version)
        for rf in ev.fields:
            comp = rf.field.compressed
            if comp is not None:
                holder = next((f for f in ev.fields if f.name == comp.codec_path[0]), None)
                if holder is None or holder.offset is None:
                    return None
                t = holder.type
                if isinstance(t, BitsType) and len(comp.codec_path) == 2:
                    bit = next((b for b in t.bits if b.name == comp.codec_path[1]), None)
                    if bit is not None:
                        return base + holder.offset, t.base.width, bit.low, bit.width
                elif len(comp.codec_path) == 1 and t.fixed:
                    return base + holder.offset, t.width, 0, 8 * t.width
                return None
            if isinstance(rf.type, EntityRef) and rf.offset is not None:
                found = self._codec_probe(rf.type.name, version, base + rf.offset)
                if found:
                    return found
        return None

    def _unknown_entry(self, buf, pos: int) -> tuple[Span, int | None]:
        magic = int.from_bytes(bytes(buf[pos + 16:pos + 17]), "big", signed=True)
        size = int.from_bytes(bytes(buf[pos + 8:pos + 12]), "big", signed=True)
        span = Span(pos, pos + _HEADER_UP_TO_MAGIC, "", kind="entry", type=f"unknown (magic {magic})")
        span.children = [
            Span(pos, pos + 8, "offset", type="int64", raw=bytes(buf[pos:pos + 8]),
                 value=int.from_bytes(bytes(buf[pos:pos + 8]), "big", signed=True)),
            Span(pos + 8, pos + 12, "size", type="int32", raw=bytes(buf[pos + 8:pos + 12]), value=size),
            Span(pos + 12, pos + 16, "(unread)", kind="unread", raw=bytes(buf[pos + 12:pos + 16])),
            Span(pos + 16, pos + 17, "magic", type="int8", raw=bytes(buf[pos + 16:pos + 17]), value=magic),
        ]
        for c in span.children:
            c.display = "" if c.value is None else str(c.value)
        span.children[-1].mark(BAD, f"unknown magic {magic}: no schema has it ({'; '.join(self.entry_kinds())})")
        end = pos + _LOG_OVERHEAD + size
        nxt = None
        if size >= 14 and end <= len(buf):
            span.children.append(Span(pos + 17, end, "(unread)", kind="unread", raw=bytes(buf[pos + 17:end]),
                                      notes=[f"skipped: the size field says the entry ends at byte {end - 1}"]))
            span.end, nxt = end, end
        span._finish()
        return span, nxt

    # ------------------------------------------------------------------ entities

    def inspect_entity(self, name: str, version: int, data, path: str = "") -> Span:
        """One entity at the start of ``data`` (for entities that are not log entries)."""
        buf = memoryview(data)
        span, _, _, _ = self._entity(self.ev(name, version), buf, 0, len(buf), path, "file", {})
        span._finish()
        return span

    def _entity(self, ev, buf, pos: int, end: int, path: str, space: str,
                hints: dict) -> tuple[Span, int, bool, dict]:
        """Walk ``ev``'s fields from ``pos``; ``end`` bounds the region it may use (the innermost
        enclosing length, or the buffer). Returns the span, the position after it, whether the walk
        completed, and the decoded values by field name."""
        from kcodec.codegen.ir import ArrayType, BitsType, BytesType, EntityRef, IntType

        span = Span(pos, pos, path, kind="entity", type=f"{ev.name} v{ev.version}", space=space)
        values: dict[str, Any] = {}
        spans: dict[str, Span] = {}
        region_end = end
        declared = None  # (length span, covered start, declared end, value)
        pend_len: dict[str, Span] = {}
        pend_crc: dict[str, tuple[Span, str]] = {}
        ok = True
        for rf in ev.fields:
            fpath = f"{path}.{rf.name}" if path else rf.name
            if rf.name in pend_len:
                lspan = pend_len.pop(rf.name)
                length = lspan.value
                dend = pos + length
                if length < 0:
                    lspan.mark(BAD, f"negative length {length}")
                    ok = False
                    break
                if dend > region_end:
                    lspan.mark(BAD, f"truncated: length says {length} (bytes {_range(pos, dend)}), only "
                                    f"{region_end - pos} bytes left")
                else:
                    region_end = dend
                declared = (lspan, pos, dend, length)
            if rf.name in pend_crc:
                cspan, algorithm = pend_crc.pop(rf.name)
                self._check_crc(cspan, algorithm, buf, pos, region_end, declared)
            t = rf.type
            if isinstance(t, (IntType, BitsType)):
                child, pos, fok = self._int_field(rf, ev, buf, pos, region_end, fpath, space, values)
            elif isinstance(t, BytesType):
                hint = hints.get(rf.name)
                if callable(hint):
                    hint = hint(values)
                child, pos, fok = self._bytes_field(rf, ev, buf, pos, region_end, fpath, space, values, hint)
            elif isinstance(t, EntityRef):
                sub = self.ev(t.name, self._version_for(t.name, buf, pos, region_end, ev.version))
                child, pos, fok, values[rf.name] = self._entity(sub, buf, pos, region_end, fpath, space,
                                                                {})
                child.kind = "field"
            elif isinstance(t, ArrayType):
                child, pos, fok = self._array_field(rf, ev, buf, pos, region_end, fpath, space, values, spans)
            else:  # pragma: no cover - the loader allows nothing else
                raise TypeError(t)
            span.children.append(child)
            spans[rf.name] = child
            d = rf.field.derived
            if d is not None:
                child.role = d.kind
            elif rf.field.const is not None:
                child.role = "const"
            if fok and d is not None and d.kind == "length":
                pend_len[d.covers] = child
                child.notes.append(f"length of {d.covers}..end")
            elif fok and d is not None and d.kind == "crc":
                pend_crc[d.covers] = (child, d.algorithm)
            elif fok and d is not None and d.kind == "count":
                child.notes.append(f"count of {d.of}")
            if not fok:
                ok = False
                break
        if declared is not None:
            lspan, cstart, dend, length = declared
            if ok and pos < dend:
                lspan.mark(BAD, f"length says {length}, the fields cover {pos - cstart}")
                gap = Span(pos, dend, f"{path}.(unread)" if path else "(unread)", kind="unread",
                           raw=bytes(buf[pos:dend]), space=space)
                gap.mark(BAD, f"{dend - pos} bytes the fields do not account for")
                span.children.append(gap)
                pos = dend
            elif ok:
                lspan.notes[-1] += f": bytes {_range(cstart, dend)} ({length} bytes) OK"
        span.end = pos
        return span, pos, ok, values

    def _check_crc(self, cspan: Span, algorithm: str, buf, start: int, end: int, declared) -> None:
        stored = cspan.value
        computed = CRC_FUNCTIONS[algorithm](buf[start:end])
        what = f"{algorithm} of bytes {_range(start, end)}: stored {stored:#010x}, computed {computed:#010x}"
        truncated = declared is not None and declared[2] > end
        if truncated:
            cspan.mark(BAD, f"{what}: cannot check, the covered bytes are truncated")
        elif computed == stored:
            cspan.notes.append(f"{what} OK")
        else:
            cspan.mark(BAD, f"BAD crc: {what}")

    # ------------------------------------------------------------------ integers

    def _read_int(self, t, buf, pos: int, end: int, path: str, space: str) -> tuple[Span, int | None, int, bool]:
        if t.fixed:
            w = t.width
            if pos + w > end:
                leaf = Span(pos, end, path, type=t.name, raw=bytes(buf[pos:end]), space=space)
                leaf.mark(BAD, f"truncated: needs {w} bytes, {end - pos} left")
                return leaf, None, end, False
            raw = bytes(buf[pos:pos + w])
            v = int.from_bytes(raw, "big", signed=t.signed)
            leaf = Span(pos, pos + w, path, type=t.name, raw=raw, value=v, display=str(v), space=space)
            return leaf, v, pos + w, True
        decode = {"varint": decode_varint, "varlong": decode_varlong, "uvarint": decode_uvarint}[t.name]
        try:
            v, nxt = decode(buf[:end], pos)
        except VarintTooLongError as exc:
            stop = min(end, pos + t.max_width)
            leaf = Span(pos, stop, path, type=t.name, raw=bytes(buf[pos:stop]), space=space)
            leaf.mark(BAD, exc.message)
            return leaf, None, stop, False
        except TruncatedError:
            leaf = Span(pos, end, path, type=t.name, raw=bytes(buf[pos:end]), space=space)
            leaf.mark(BAD, f"truncated: {t.name} needs more than the {end - pos} bytes left")
            return leaf, None, end, False
        return Span(pos, nxt, path, type=t.name, raw=bytes(buf[pos:nxt]), value=v, display=str(v),
                    space=space), v, nxt, True

    def _enum_name(self, span: Span, enum: str, value: int, version: int) -> Any:
        e = self.schemas.enums[enum]
        valid = {v.value: v.name for v in e.values_at(version)}
        if value in valid:
            span.display = f"{valid[value]} ({value})"
            return valid[value]
        every = {v.value: v for v in e.values}
        if value in every:
            span.mark(BAD, f"{every[value].name} ({value}) is not valid at version {version} "
                           f"(versions {every[value].versions})")
            return every[value].name
        if e.open:
            span.display = f"{value} (unknown {enum}, kept as a number)"
            return value
        span.mark(BAD, f"unknown {enum} {value}")
        return value

    def _int_field(self, rf, ev, buf, pos, end, path, space, values) -> tuple[Span, int, bool]:
        from kcodec.codegen.ir import BitsType
        from kcodec.codegen.layout import bit_type_text, type_text

        t = rf.type
        base = t.base if isinstance(t, BitsType) else t
        span, v, pos, ok = self._read_int(base, buf, pos, end, path, space)
        span.type = type_text(t)
        if not ok:
            return span, pos, False
        f = rf.field
        values[rf.name] = v
        if f.enum:
            values[rf.name] = self._enum_name(span, f.enum, v, ev.version)
        if f.const is not None:
            expected = ev.version if f.const == "version" else f.const
            if v != expected:
                span.mark(BAD, f"BAD {f.error}: expected {expected}")
            else:
                span.notes.append(f"always {expected}")
        if f.derived is not None and f.derived.kind == "crc":
            span.display = f"{v:#010x} ({v})"
        if isinstance(t, BitsType):
            u = v & ((1 << (8 * base.width)) - 1)
            span.display = f"{u:#0{2 + 2 * base.width}x}"
            groups: dict[str, Any] = {}
            for b in sorted(t.bits, key=lambda b: b.low):
                g = (u >> b.low) & ((1 << b.width) - 1)
                child = Span(span.start, span.end, f"{path}.{b.name}", kind="bits", type=bit_type_text(b),
                             bits=b.span, value=g, display=str(g), space=space)
                child.raw = None
                if b.kind == "enum":
                    groups[b.name] = self._enum_name(child, b.enum, g, ev.version)
                elif b.kind == "flag":
                    groups[b.name] = child.value = bool(g)
                    child.display = "true" if g else "false"
                else:
                    groups[b.name] = g
                    if b.reserved and g:
                        child.mark(WARN, f"reserved bits set ({g:#x})")
                child.raw_bits = f"{g:0{b.width}b}"
                span.children.append(child)
            values[rf.name] = groups
        return span, pos, True

    # ------------------------------------------------------------------ bytes

    def _bytes_field(self, rf, ev, buf, pos, end, path, space, values, hint) -> tuple[Span, int, bool]:
        from kcodec.codegen.layout import type_text

        t = rf.type
        span = Span(pos, pos, path, type=type_text(t), space=space)
        psp, n, pos, ok = self._read_int(t.prefix, buf, pos, end, f"{path}.length", space)
        psp.kind = "prefix"
        span.children.append(psp)
        span.end = pos
        if not ok:
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
        raw = bytes(buf[pos:pos + n])
        data = Span(pos, pos + n, f"{path}.data", kind="data", raw=raw, space=space, display=_bytes_text(raw))
        if n:  # an empty value has no bytes of its own: its length prefix says it all
            span.children.append(data)
        value: Any = raw
        comp = rf.field.compressed
        codec = _lookup(values, comp.codec_path) if comp else None
        if isinstance(codec, str) and codec != "none":
            data.kind = "stream"
            data.display = f"{n} bytes of {codec}"
            value = None
            if comp.contents is not None:
                dspan = self._decompress(data, codec, raw, ev, comp.contents, path, values, None, None, {})
                if dspan is not None:
                    span.children.append(dspan)
        elif t.text:
            try:
                value = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                data.mark(BAD, f"invalid UTF-8 at byte {exc.start} of the string")
        if hint is not None and n:
            name, version = hint
            sub, _, _, sub_values = self._entity(self.ev(name, version), buf, pos, pos + n, f"{path}.data", space,
                                                 {})
            sub.kind, sub.display = "data", data.display
            sub.notes.append(f"read as {name} v{version}")
            if sub.end < pos + n:
                sub.children.append(Span(sub.end, pos + n, f"{path}.data.(unread)", kind="unread",
                                         raw=bytes(buf[sub.end:pos + n]), space=space,
                                         notes=["bytes after the fields this version defines"]))
                sub.end = pos + n
            span.children[1] = sub
            values[f"{rf.name}:{name}"] = sub_values
        values[rf.name] = value
        span.value, span.display = value, data.display
        span.end = pos + n
        return span, pos + n, True

    def _decompress(self, stream: Span, codec: str, raw: bytes, ev, contents, path: str, values: dict,
                    count: int | None, count_span: Span | None, hints: dict) -> Span | None:
        """The decompressed contents of a stream, as a span of their own position space."""
        try:
            out = compression.decompress(codec, raw, magic=ev.version, max_size=self.limit)
        except CompressionError as exc:
            # A codec this version does not allow (zstd before v2) is already marked on its field;
            # show the contents anyway, decoded as the first version that allows the codec.
            since = self._codec_since(codec)
            try:
                if since is None or since <= ev.version:
                    raise
                out = compression.decompress(codec, raw, magic=since, max_size=self.limit)
            except KcodecError:
                stream.mark(BAD, f"cannot decompress the {codec} stream ({len(raw)} bytes): {exc.message}")
                return None
            stream.mark(BAD, f"{exc.message}; decompressed anyway as version {since} would")
        except KcodecError as exc:
            stream.mark(BAD, f"cannot decompress the {codec} stream ({len(raw)} bytes): {exc.message}")
            return None
        stream.notes.append(f"compressed {codec} stream, {len(raw)} bytes → {len(out)} bytes decompressed")
        space = f"{path} ({codec}, decompressed)"
        dspan = Span(0, len(out), path, kind="decompressed", type=f"{codec} decompressed", space=space)
        dbuf = memoryview(out)
        els, pos, ok, n = self._elements(contents, ev, dbuf, 0, len(out), path, space, count, values, hints)
        dspan.children.extend(els)
        dspan.value = n
        dspan.display = (f"{len(out)} bytes decompressed from {len(raw)} bytes of {codec}, "
                         f"{n} element{'s' if n != 1 else ''}")
        if ok and pos < len(out):
            gap = Span(pos, len(out), f"{path}.(unread)", kind="unread", raw=bytes(dbuf[pos:]), space=space)
            what = f"after the {n} elements the count says" if count is not None else "that hold no whole element"
            gap.mark(BAD, f"{len(out) - pos} bytes {what}")
            dspan.children.append(gap)
            if count_span is not None:
                count_span.mark(BAD, f"count says {count}, the decompressed stream holds more")
        if count is not None and n != count and ok:
            dspan.mark(BAD, f"{count} elements expected, {n} fit")
        return dspan

    # ------------------------------------------------------------------ arrays

    def _array_field(self, rf, ev, buf, pos, end, path, space, values, spans) -> tuple[Span, int, bool]:
        from kcodec.codegen.layout import type_text

        t = rf.type
        span = Span(pos, pos, path, kind="array", type=type_text(t), space=space)
        count = None
        count_span = None
        if t.prefix is not None:
            psp, count, pos, ok = self._read_int(t.prefix, buf, pos, end, f"{path}.count", space)
            psp.kind = "prefix"
            span.children.append(psp)
            if not ok:
                span.end = pos
                return span, pos, False
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
        comp = rf.field.compressed
        codec = _lookup(values, comp.codec_path) if comp else None
        hints = _element_hints(rf.name, values)
        if isinstance(codec, str) and codec != "none":
            raw = bytes(buf[pos:end])
            stream = Span(pos, end, f"{path}.data", kind="stream", raw=raw, space=space,
                          display=f"{len(raw)} bytes of {codec}")
            span.children.append(stream)
            span.end = end
            dspan = self._decompress(stream, codec, raw, ev, t, path, values, count, count_span, hints)
            if dspan is not None:
                span.children.append(dspan)
                span.value = dspan.value
            n = span.value
            span.display = (f"{'?' if n is None else n} element{'' if n == 1 else 's'}, one {codec}-compressed "
                            "stream")
            return span, end, True
        els, pos, ok, n = self._elements(t, ev, buf, pos, end, path, space, count, values, hints)
        span.children.extend(els)
        span.value = n
        span.display = f"{n} element{'s' if n != 1 else ''}"
        if count is not None and n != count and ok:
            span.mark(BAD, f"{count} elements expected, {n} fit")
        span.end = pos
        return span, pos, ok

    def _elements(self, t, ev, buf, pos, end, path, space, count, values, hints=None):
        from kcodec.codegen.ir import BytesType, EntityRef, Field
        from kcodec.codegen.layout import ResolvedField

        out: list[Span] = []
        i = 0
        ok = True
        while (pos < end) if count is None else (i < count):
            epath = f"{path}[{i}]"
            if count is not None and pos >= end:
                miss = Span(pos, pos, epath, kind="unread", space=space)
                miss.mark(BAD, f"truncated: {count} elements expected, the region ends after {i}")
                out.append(miss)
                ok = False
                break
            el = t.element
            if isinstance(el, EntityRef):
                version = self._version_for(el.name, buf, pos, end, ev.version)
                sp, pos, eok, evals = self._entity(self.ev(el.name, version), buf, pos, end, epath, space,
                                                   hints or {})
                if version != ev.version and el.name in self.schemas.entities and \
                        ev.version in self.schemas.entities[el.name].versions:
                    sp.mark(WARN, f"version {version} inside a version {ev.version} {ev.name}")
                if not self.expand:
                    sp.collapsed = True
                sp.display = _summary(sp, *self._relative(evals, values))
            else:
                # Arrays of plain values (none in Kafka's formats, allowed by the schema language).
                rf = ResolvedField(Field(f"{path}[{i}]", "", el, None), el, None, None)
                holder: dict = {}
                if isinstance(el, BytesType):
                    sp, pos, eok = self._bytes_field(rf, ev, buf, pos, end, epath, space, holder, None)
                else:
                    sp, pos, eok = self._int_field(rf, ev, buf, pos, end, epath, space, holder)
            out.append(sp)
            i += 1
            if not eok:
                ok = False
                break
        return out, pos, ok, i

    def _codec_since(self, codec: str) -> int | None:
        for e in self.schemas.enums.values():
            for v in e.values:
                if v.name == codec and e.name == "compression_type":
                    return v.versions.low
        return None

    @staticmethod
    def _relative(evals: dict, parent: dict | None) -> tuple[list[str], set[str]]:
        """Absolute values of a record's deltas against its batch (spec §2)."""
        lead: list[str] = []
        used: set[str] = set()
        for delta, base, name in _RELATIVE:
            if parent and isinstance(evals.get(delta), int) and isinstance(parent.get(base), int):
                absolute = parent[base] + evals[delta]
                if name == "timestamp" and (parent.get("attributes") or {}).get("timestamp_type") == "log_append_time":
                    absolute = parent.get("max_timestamp", absolute)
                    name = "timestamp (log append time)"
                lead.append(f"{name} {absolute}")
                used.add(delta)
        return lead, used


def _lookup(values: dict, path: tuple[str, ...]) -> Any:
    v: Any = values
    for p in path:
        if not isinstance(v, dict) or p not in v:
            return None
        v = v[p]
    return v


def _element_hints(array: str, values: dict) -> dict:
    """Contents a schema cannot name (spec §4): the key of a control batch's record is a
    control_record_key, the value of a COMMIT/ABORT marker an end_txn_marker."""
    attributes = values.get("attributes")
    if array == "records" and isinstance(attributes, dict) and attributes.get("control") is True:
        def marker(record: dict):
            key = record.get("key:control_record_key") or {}
            return ("end_txn_marker", 0) if key.get("type") in ("abort", "commit") else None

        return {"key": ("control_record_key", 0), "value": marker}
    return {}


def _summary(sp: Span, lead: list[str], skip: set[str]) -> str:
    """One line for an element (a record, an inner message): ``lead`` (absolute offset and
    timestamp), then its fields that are not derived or constant."""
    parts = list(lead)
    for c in sp.children:
        _summarise(c, parts, skip)
    return ", ".join(parts)


_ENTITY_TYPE = re.compile(r"\w+ v\d+")


def _summarise(c: Span, parts: list[str], skip: set[str]) -> None:
    name = c.path.rsplit(".", 1)[-1]
    if c.role or c.kind == "unread" or name in skip:
        return
    if c.status == BAD and c.value is None:
        parts.append(f"{name} ?")
        return
    if _ENTITY_TYPE.fullmatch(c.type):  # a nested entity: its fields, flattened
        for g in c.children:
            _summarise(g, parts, skip)
        return
    if any(ch.kind == "bits" for ch in c.children):  # only the bit groups that are set
        parts += [f"{g.path.rsplit('.', 1)[-1]} {g.display}" for g in c.children
                  if g.kind == "bits" and g.raw_bits and "1" in g.raw_bits]
        return
    if c.kind == "array":
        parts.append(f"{name} {'?' if c.value is None else c.value}")
        return
    if c.type.startswith(("bytes", "string")):
        sub = next((g for g in c.children if _ENTITY_TYPE.fullmatch(g.type)), None)
        if sub is not None:
            inner: list[str] = []
            for g in sub.children:
                _summarise(g, inner, set())
            parts.append(f"{name} {sub.type.split()[0]}({', '.join(inner)})")
        elif c.display == "null" or not isinstance(c.value, (bytes, str)):
            parts.append(f"{name} {c.display}")
        else:
            parts.append(f"{name} {c.display} ({len(c.value)} B)")
        return
    if name == "attributes" and c.value == 0:
        return
    parts.append(f"{name} {c.display}")


def inspect_bytes(data, *, start: int = 0, count: int | None = None, expand: bool = True,
                  max_decompressed_size: int = compression.DEFAULT_MAX_DECOMPRESSED_SIZE) -> list[Span]:
    """Span trees of every log entry in ``data`` (bytes, or a path to read)."""
    if isinstance(data, (str, os.PathLike)):
        data = Path(data).read_bytes()
    return list(Inspector(expand=expand, max_decompressed_size=max_decompressed_size)
                .entries(data, start, count))


# ---------------------------------------------------------------------------- text

_COLOURS = {"range": "2", "hex": "36", "name": "1", "value": "32", "note": "33", "bad": "1;31", "warn": "35",
            "title": "1;4", "dspace": "34"}
_HEX_PER_LINE = 8
_RANGE_W = 11


class _Style:
    def __init__(self, colour: bool):
        self.colour = colour

    def __call__(self, what: str, text: str) -> str:
        if not self.colour or not text:
            return text
        return f"\x1b[{_COLOURS[what]}m{text}\x1b[0m"


def _range_text(s: Span, start: int | None = None, end: int | None = None) -> str:
    a = s.start if start is None else start
    b = s.end if end is None else end
    plus = "" if s.space == "file" else "+"
    if b - a == 1:
        return f"{plus}{a}"
    if b <= a:
        return f"{plus}{a} (0 bytes)"
    return f"{plus}{a}..{b - 1}"


def render_text(span: Span, *, colour: bool = False, max_bytes: int = 32) -> str:
    """A span tree as annotated hex: one line per field (more for long raw bytes)."""
    st = _Style(colour)
    out: list[str] = []
    if span.kind == "tail":
        out.append(st("title", f"tail at byte {span.start}: {span.display}"))
        _lines(span, 1, st, out, max_bytes, label="(tail)")
        return "\n".join(out)
    title = f"entry at byte {span.start}: {span.type}, {span.end - span.start} bytes"
    if span.display:
        title += f", {span.display}"
    if span.status != OK:
        title += f" [{span.status.upper()}]"
    out.append(st("title", title))
    for c in span.children:
        _render(c, 1, st, out, max_bytes)
    return "\n".join(out)


def _render(s: Span, depth: int, st: _Style, out: list[str], max_bytes: int) -> None:
    if s.kind == "decompressed":
        head = f"{'':>{_RANGE_W}}  {'':<{3 * _HEX_PER_LINE - 1}}  {'  ' * depth}{s.path} (decompressed): {s.display}"
        out.append(st("dspace", head.rstrip() + "; positions below count from its first byte (+)"))
        for c in s.children:
            _render(c, depth + 1, st, out, max_bytes)
        if s.status == BAD and s.notes:
            out.append(_line(" ", "", "", depth + 1, st, "", "", s.notes, s.status))
        return
    if s.collapsed:
        _lines(s, depth, st, out, max_bytes, summary=True)
        for leaf in s.walk():
            if leaf is not s and leaf.status == BAD and (leaf.raw is not None or not leaf.children):
                _lines(leaf, depth + 1, st, out, max_bytes)
        return
    _lines(s, depth, st, out, max_bytes)
    if s.kind == "bits":
        return
    for c in s.children:
        _render(c, depth + 1, st, out, max_bytes)


def _marker(status: str) -> str:
    return {OK: " ", WARN: "?", BAD: "!"}[status]


def _line(mark: str, rng: str, hx: str, depth: int, st: _Style, name: str, value: str, notes: list[str],
          status: str) -> str:
    rng_cell = " " * (_RANGE_W - len(rng)) + st("dspace" if rng.startswith("+") else "range", rng)
    hex_cell = st("hex", hx) + " " * (3 * _HEX_PER_LINE - 1 - len(hx))
    text = f"{mark}{rng_cell}  {hex_cell}  {'  ' * (depth - 1)}"
    if name:
        text += st("name", name)
    if value:
        text += " = " + st("value", value)
    if notes:
        colour = "bad" if status == BAD else "warn" if status == WARN else "note"
        text += "  " + st(colour, "[" + "; ".join(notes) + "]")
    return text.rstrip()


def _lines(s: Span, depth: int, st: _Style, out: list[str], max_bytes: int, summary: bool = False,
           label: str | None = None) -> None:
    name = label or s.path or "(entry)"
    if s.type and not summary:
        name += f" <{s.type}>"
    value = s.display
    notes = [] if summary else list(s.notes)
    if summary:
        value = s.display
        bad = [n for n in s.notes if s.status != OK and n not in value]
        notes = bad
    mark = _marker(s.status)
    if s.kind == "bits":
        out.append(_line(mark, "", f"bits {s.bits}: {s.raw_bits}", depth, st, name, value, notes, s.status))
        return
    if s.raw is None or summary:
        out.append(_line(mark, _range_text(s), "", depth, st, name, value, notes, s.status))
        return
    raw = s.raw
    shown = raw if max_bytes <= 0 else raw[:max_bytes]
    chunks = [shown[i:i + _HEX_PER_LINE] for i in range(0, len(shown), _HEX_PER_LINE)] or [b""]
    for i, chunk in enumerate(chunks):
        a = s.start + i * _HEX_PER_LINE
        rng = _range_text(s, a, a + len(chunk)) if len(chunks) > 1 else _range_text(s)
        hx = " ".join(f"{b:02x}" for b in chunk)
        if i == 0:
            out.append(_line(mark, rng, hx, depth, st, name, value, notes, s.status))
        else:
            out.append(_line(" ", rng, hx, depth, st, "", "", [], OK))
    if len(raw) > len(shown):
        out.append(_line(" ", "", f"… {len(raw) - len(shown)} more bytes", depth, st, "", "", [], OK))


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)
