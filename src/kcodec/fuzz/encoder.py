"""A schema-driven encoder that knows where every field is.

:func:`encode_tree` turns a value (what ``codec(entity, version).build`` takes,
e.g. drawn from :func:`kcodec.fuzz.strategies.entity_strategy`) into a tree
of nodes, one per field, read from the IR; :func:`serialize` prints the tree
as bytes, computing lengths, counts, CRCs and compressed streams, and records
the byte span of every field. The bytes equal the generated builder's exactly
(the tests check it), so the tree is a faithful map of valid input.

Mutators do not edit bytes blindly: they give :func:`serialize` *overrides*
(a node's uid -> what to print instead) and say whether CRCs are recomputed
over the damage (so the structure checks behind them are reached) or kept as
the valid input had them. Fields inside a compressed stream are nodes too:
their damage is compressed again, so the decoder sees a valid stream holding
damaged contents.
"""

from __future__ import annotations

import itertools
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

from kcodec.codegen.schema import (
    ArrayType,
    BitsType,
    BytesType,
    EntityRef,
    EntityVersion,
    IntType,
    ScalarType,
    SchemaSet,
    default_value,
    resolve,
)
from kcodec.runtime import compression
from kcodec.runtime.crc import crc32c
from kcodec.runtime.tagged import check_unknown_tags, is_default
from kcodec.runtime.varint import encode_uvarint, encode_varint, encode_varlong

__all__ = [
    "Node",
    "Int",
    "Derived",
    "Bytes",
    "Array",
    "Compressed",
    "Entity",
    "Scalar",
    "Optional",
    "Tagged",
    "Span",
    "Encoding",
    "encode_tree",
    "serialize",
    "encode_int",
    "overlong_varint",
]

_uid = itertools.count(1)
_FMT = {"int8": "b", "int16": "h", "uint16": "H", "int32": "i", "int64": "q", "uint32": "I"}
_STRUCTS = {name: struct.Struct(">" + f) for name, f in _FMT.items()}
_VARINT = {"varint": encode_varint, "varlong": encode_varlong, "uvarint": encode_uvarint}


def encode_int(t: IntType, value: int) -> bytes:
    """``value`` as ``t``; values out of range wrap (a mutator's lie must still print)."""
    if t.fixed:
        bits = t.width * 8
        value &= (1 << bits) - 1
        if t.signed and value >= 1 << (bits - 1):
            value -= 1 << bits
        return _STRUCTS[t.name].pack(value)
    bits = t.bits
    value &= (1 << bits) - 1
    if t.signed and value >= 1 << (bits - 1):
        value -= 1 << bits
    return _VARINT[t.name](value)


def overlong_varint(encoded: bytes, total: int) -> bytes:
    """The same varint padded to ``total`` bytes with continuation groups of zero bits: Kafka accepts
    these up to 5 (10) bytes and must refuse longer ones."""
    if total <= len(encoded):
        return encoded
    body = bytearray(b | 0x80 for b in encoded)
    body += b"\x80" * (total - len(encoded) - 1)
    body.append(0)
    return bytes(body)


class Node:
    """One field (or element) of an encoding; ``uid`` identifies it in overrides."""

    __slots__ = ("uid", "path")

    def __init__(self, path: str):
        self.uid = next(_uid)
        self.path = path


class Int(Node):
    """An integer field (fixed, varint, enum, bit field, const); ``value`` as stored (bits composed)."""

    __slots__ = ("itype", "value", "bits")

    def __init__(self, path: str, itype: IntType, value: int, bits: BitsType | None = None):
        super().__init__(path)
        self.itype, self.value, self.bits = itype, value, bits


class Derived(Node):
    """A length, count or CRC field, computed when printed. ``covers`` indexes the parent's fields."""

    __slots__ = ("itype", "kind", "covers", "of", "algorithm")

    def __init__(
        self,
        path: str,
        itype: IntType,
        kind: str,
        covers: int | None = None,
        of: int | None = None,
        algorithm: str | None = None,
    ):
        super().__init__(path)
        self.itype, self.kind, self.covers, self.of, self.algorithm = itype, kind, covers, of, algorithm


class Bytes(Node):
    """Length-prefixed bytes or text; ``data`` None is null; a :class:`Compressed` holds a compressed value.
    A ``compact`` prefix (flexible versions) is an unsigned varint of the length + 1, 0 for null."""

    __slots__ = ("prefix", "data", "prefix_uid", "compact")

    def __init__(self, path: str, prefix: IntType | None, data: bytes | None | Compressed, compact: bool = False):
        super().__init__(path)
        self.prefix, self.data, self.compact = (_COMPACT if compact else prefix), data, compact
        self.prefix_uid = next(_uid)  # overrides of the length prefix alone


class Array(Node):
    """Elements, with an inline count prefix (``prefix``, maybe compact; ``items`` None is a null
    array) or counted elsewhere / running to the end."""

    __slots__ = ("prefix", "items", "prefix_uid", "compact")

    def __init__(self, path: str, prefix: IntType | None, items: list | None, compact: bool = False):
        super().__init__(path)
        self.prefix, self.items, self.compact = (_COMPACT if compact else prefix), items, compact
        self.prefix_uid = next(_uid)


class Scalar(Node):
    """A bool, float64 or uuid, printed as Kafka writes it."""

    __slots__ = ("stype", "value")

    def __init__(self, path: str, stype: ScalarType, value: Any):
        super().__init__(path)
        self.stype, self.value = stype, value


class Optional(Node):
    """A nullable struct: an int8 presence marker (-1 null, 1 present), then ``inner`` unless null."""

    __slots__ = ("inner",)

    def __init__(self, path: str, inner: Entity | None):
        super().__init__(path)
        self.inner = inner


class Tagged(Node):
    """The tagged section ending a struct of a flexible version: (tag, node or raw bytes) by tag."""

    __slots__ = ("entries",)

    def __init__(self, path: str, entries: list):
        super().__init__(path)
        self.entries = entries


class Compressed(Node):
    """A compressed region: ``inner`` (an Array) printed, then compressed with ``codec``."""

    __slots__ = ("codec", "magic", "inner")

    def __init__(self, path: str, codec: str, magic: int, inner: Array):
        super().__init__(path)
        self.codec, self.magic, self.inner = codec, magic, inner


class Entity(Node):
    """An entity at one version: one child per field, in wire order."""

    __slots__ = ("ev", "children")

    def __init__(self, path: str, ev: EntityVersion, children: list):
        super().__init__(path)
        self.ev, self.children = ev, children


@dataclass
class Span:
    """Bytes ``[start, end)`` of one node (``part``: "prefix" / "data" of a Bytes or Array, "stored"
    of a Compressed region, else "value"). ``stream`` is the Compressed node whose decompressed bytes
    the span is in (None: the input itself)."""

    start: int
    end: int
    node: Node
    part: str = "value"
    stream: Compressed | None = None


@dataclass
class Encoding:
    """The printed bytes, every node's span, the decompressed bytes of each compressed region, and the
    derived values printed (uid -> value), which stale-CRC mutations reuse."""

    data: bytes
    spans: list[Span] = field(default_factory=list)
    plain: dict[int, bytes] = field(default_factory=dict)  # Compressed uid -> decompressed bytes
    derived: dict[int, int] = field(default_factory=dict)


# ---------------------------------------------------------------------------- values -> tree


def encode_tree(schemas: SchemaSet, entity: str, version: int, value: dict, path: str = "") -> Entity:
    """The node tree of ``value`` (a builder value: derived and const fields absent)."""
    ev = resolve(schemas, schemas.entities[entity], version)
    index = {f.name: i for i, f in enumerate(ev.fields)}
    children: list[Node] = []
    for f in ev.fields:
        fld, t = f.field, f.type
        p = f"{path}.{f.name}" if path else f.name
        d = fld.derived
        if d is not None:
            if d.kind == "count":
                children.append(Derived(p, t, "count", of=index[d.of]))
            else:
                children.append(Derived(p, t, d.kind, covers=index[d.covers], algorithm=d.algorithm))
            continue
        if fld.const is not None:
            children.append(Int(p, t, version if fld.const == "version" else fld.const))
            continue
        v = value[f.name]
        if fld.compressed is not None:
            codec_value: Any = value
            for part in fld.compressed.codec_path:
                codec_value = codec_value[part]
            contents = fld.compressed.contents
            if isinstance(t, ArrayType):
                items = _array(schemas, t, v, version, p)
                node = Array(p, None, items)
                children.append(node if codec_value == "none" else Compressed(p, codec_value, version, node))
            elif codec_value == "none":
                children.append(Bytes(p, t.prefix, _raw(t, v)))
            else:
                inner = Array(p, None, _array(schemas, contents, v, version, p))
                children.append(Bytes(p, t.prefix, Compressed(p, codec_value, version, inner)))
            continue
        if fld.enum is not None:
            v = ev.enum_values(fld.enum).get(v, v) if isinstance(v, str) else v
            children.append(Int(p, t, v))
        else:
            children.append(_plain_node(ev, t, v, p))
    if ev.flexible:
        children.append(_tagged(schemas, ev, value, path))
    return Entity(path, ev, children)


def _plain_node(ev: EntityVersion, t, v, p: str) -> Node:
    """The node of a value that is neither derived, const, an enum field nor compressed."""
    schemas, version = ev.schemas, ev.version
    if isinstance(t, BitsType):
        raw = 0
        for b in t.bits:
            bv = v.get(b.name, 0)
            if b.kind == "enum" and isinstance(bv, str):
                bv = ev.enum_values(b.enum)[bv]
            raw |= int(bv) << b.low
        return Int(p, t.base, raw, t)
    if isinstance(t, IntType):
        return Int(p, t, v)
    if isinstance(t, ScalarType):
        return Scalar(p, t, v)
    if isinstance(t, BytesType):
        return Bytes(p, t.prefix, _raw(t, v), t.compact)
    if isinstance(t, EntityRef):
        if t.nullable:
            return Optional(p, None if v is None else encode_tree(schemas, t.name, version, v, p))
        return encode_tree(schemas, t.name, version, v, p)
    if isinstance(t, ArrayType):
        items = None if v is None else _array(schemas, t, v, version, p)
        return Array(p, t.prefix, items, t.compact)
    raise TypeError(f"cannot encode {t!r}")  # pragma: no cover - the IR has no other types


def _tagged(schemas: SchemaSet, ev: EntityVersion, value: dict, path: str) -> Tagged:
    """The tagged fields that differ from their defaults, and the unknown tags the value carries."""
    known = frozenset(f.field.tag for f in ev.tagged)
    entries: list = list(check_unknown_tags(value.get("_unknown_tags"), known))
    for f in ev.tagged:
        default = default_value(ev, f)
        v = value.get(f.name, default)
        if is_default(v, default):
            continue
        # a nullable struct keeps its presence marker here too, as Kafka writes it
        entries.append((f.field.tag, _plain_node(ev, f.type, v, f"{path}.{f.name}" if path else f.name)))
    entries.sort(key=lambda e: e[0])
    return Tagged(f"{path}._tagged_fields" if path else "_tagged_fields", entries)


def _raw(t: BytesType, v) -> bytes | None:
    if v is None:
        return None
    return v.encode("utf-8") if t.text else bytes(v)


def _array(schemas: SchemaSet, t: ArrayType, values: list, version: int, path: str) -> list:
    el = t.element
    if isinstance(el, IntType):
        return [Int(f"{path}[{i}]", el, v) for i, v in enumerate(values)]
    if isinstance(el, ScalarType):
        return [Scalar(f"{path}[{i}]", el, v) for i, v in enumerate(values)]
    if isinstance(el, BytesType):
        return [Bytes(f"{path}[{i}]", el.prefix, _raw(el, v), el.compact) for i, v in enumerate(values)]
    if not isinstance(el, EntityRef):  # pragma: no cover - the IR has no other element types
        raise TypeError(f"arrays of {el!r}")
    return [encode_tree(schemas, el.name, version, v, f"{path}[{i}]") for i, v in enumerate(values)]


# ---------------------------------------------------------------------------- tree -> bytes


class _Printer:
    def __init__(self, overrides: dict | None, crc: str, stale: dict[int, int] | None, spans: bool):
        self.overrides = overrides or {}
        self.crc, self.stale = crc, stale or {}
        self.enc = Encoding(b"")
        self.want_spans = spans
        self.stream: Compressed | None = None

    def span(self, start: int, end: int, node: Node, part: str = "value") -> None:
        if self.want_spans:
            self.enc.spans.append(Span(start, end, node, part, self.stream))

    def node(self, n: Node, out: bytearray) -> None:
        o = self.overrides.get(n.uid)
        start = len(out)
        if isinstance(o, (bytes, bytearray)):  # the node's bytes, replaced whole
            out += o
            self.span(start, len(out), n)
            return
        if isinstance(n, Int):
            out += encode_int(n.itype, n.value if o is None else o)
            self.span(start, len(out), n)
        elif isinstance(n, Entity):
            self.entity(n, out)
        elif isinstance(n, Bytes):
            self.bytes_(n, out)
        elif isinstance(n, Array):
            self.array(n, out)
        elif isinstance(n, Compressed):
            out += self.compressed(n)
            self.span(start, len(out), n, "stored")
        elif isinstance(n, Scalar):
            out += _scalar_bytes(n)
            self.span(start, len(out), n)
        elif isinstance(n, Optional):
            out += b"\xff" if n.inner is None else b"\x01"
            if n.inner is not None:
                self.node(n.inner, out)
            self.span(start, len(out), n)
        elif isinstance(n, Tagged):
            self.tagged(n, out)
            self.span(start, len(out), n)
        else:  # pragma: no cover
            raise TypeError(f"cannot print {n!r} here")

    def prefix(self, uid: int, t: IntType, honest: int, out: bytearray, n: Node) -> None:
        o = self.overrides.get(uid)
        start = len(out)
        if isinstance(o, (bytes, bytearray)):
            out += o
        else:
            value = honest if o is None else o
            out += encode_int(t, value + 1 if getattr(n, "compact", False) else value)  # compact: n + 1
        self.span(start, len(out), n, "prefix")

    def tagged(self, n: Tagged, out: bytearray) -> None:
        out += encode_uvarint(len(n.entries))
        for tag, payload in n.entries:
            out += encode_uvarint(tag)
            if isinstance(payload, (bytes, bytearray)):
                out += encode_uvarint(len(payload)) + payload
                continue
            mark = len(self.enc.spans)
            part = bytearray()
            self.node(payload, part)
            out += encode_uvarint(len(part))
            for s in self.enc.spans[mark:]:  # recorded relative to the payload: place them
                if s.stream is self.stream:
                    s.start += len(out)
                    s.end += len(out)
            out += part

    def bytes_(self, n: Bytes, out: bytearray) -> None:
        data = n.data
        if isinstance(data, Compressed):
            stored = self.compressed(data)
            if n.prefix is not None:  # None: to the end of the covering length (a 0.7 payload)
                self.prefix(n.prefix_uid, n.prefix, len(stored), out, n)
            start = len(out)
            out += stored
            self.span(start, len(out), data, "stored")
            return
        o = self.overrides.get(("data", n.uid))
        if o is not None:
            data = o
        if n.prefix is not None:
            self.prefix(n.prefix_uid, n.prefix, -1 if data is None else len(data), out, n)
        if data is not None:
            start = len(out)
            out += data
            self.span(start, len(out), n, "data")

    def array(self, n: Array, out: bytearray) -> None:
        items = self.overrides.get(("items", n.uid), n.items)
        if n.prefix is not None:
            self.prefix(n.prefix_uid, n.prefix, -1 if items is None else len(items), out, n)
        if items is None:
            return
        for item in items:
            self.node(item, out)

    def compressed(self, n: Compressed) -> bytes:
        o = self.overrides.get(n.uid)
        if isinstance(o, (bytes, bytearray)):
            return bytes(o)  # stored bytes replaced (damaged payload)
        saved, self.stream = self.stream, n
        buf = bytearray()
        self.array(n.inner, buf)
        self.stream = saved
        cut = self.overrides.get(("cut", n.uid))
        if cut is not None:
            del buf[cut:]
        plain = bytes(self.overrides.get(("plain", n.uid), buf))
        self.enc.plain[n.uid] = plain
        codec = self.overrides.get(("codec", n.uid), n.codec)
        return _compress(codec, plain, n.magic)

    def entity(self, n: Entity, out: bytearray) -> None:
        # children printed separately so that derived fields can be computed from what they cover
        parts: list[bytearray] = []
        marks: list[int] = []  # span count before each child, to shift spans afterwards
        for child in n.children:
            marks.append(len(self.enc.spans))
            part = bytearray()
            if isinstance(child, Derived):
                if child.itype.fixed:  # the right size already: a length may cover it
                    part += bytes(child.itype.width)
                parts.append(part)  # filled in below
            else:
                self.node(child, part)
                parts.append(part)
        marks.append(len(self.enc.spans))
        derived = [(i, c) for i, c in enumerate(n.children) if isinstance(c, Derived)]
        order = (
            [x for x in derived if x[1].kind == "count"]
            + sorted((x for x in derived if x[1].kind == "length"), key=lambda x: -x[0])
            + sorted((x for x in derived if x[1].kind == "crc"), key=lambda x: -x[0])
        )
        derived_spans = {}
        for i, d in order:
            honest = self.derived_value(n, d, parts)
            self.enc.derived[d.uid] = honest
            o = self.overrides.get(d.uid)
            if isinstance(o, (bytes, bytearray)):
                parts[i] = bytearray(o)
            else:
                if o is None and d.kind == "crc" and self.crc == "stale" and d.uid in self.stale:
                    o = self.stale[d.uid]
                parts[i] = bytearray(encode_int(d.itype, honest if o is None else o))
            derived_spans[i] = d
        # place the children's spans (recorded relative to their own part) at their final offsets
        base = len(out)
        offsets = []
        for part in parts:
            offsets.append(base)
            base += len(part)
        if self.want_spans:
            spans = self.enc.spans
            for k in range(len(parts)):
                for s in spans[marks[k] : marks[k + 1]]:
                    if s.stream is self.stream:  # spans inside a nested stream keep their own coordinates
                        s.start += offsets[k]
                        s.end += offsets[k]
            for i, d in derived_spans.items():
                spans.append(Span(offsets[i], offsets[i] + len(parts[i]), d, "value", self.stream))
        for part in parts:
            out += part
        self.span(offsets[0] if offsets else len(out), len(out), n, "entity")

    def derived_value(self, n: Entity, d: Derived, parts: list[bytearray]) -> int:
        if d.kind == "count":
            assert d.of is not None  # a count names its array
            target = n.children[d.of]
            arr = target.inner if isinstance(target, Compressed) else target
            assert arr.items is not None  # an array a count field counts has no null (only a prefix says null)
            return len(self.overrides.get(("items", arr.uid), arr.items))
        covered = parts[d.covers :]
        if d.kind == "length":
            return sum(len(p) for p in covered)
        data = b"".join(covered)
        return crc32c(data) if d.algorithm == "crc32c" else zlib.crc32(data)


_COMPACT = IntType("uvarint", None, False, 32)  # a compact prefix is printed as an unsigned varint of n + 1
_DOUBLE = struct.Struct(">d")


def _scalar_bytes(n: Scalar) -> bytes:
    if n.stype.name == "bool":
        return b"\x01" if n.value else b"\x00"
    if n.stype.name == "float64":
        return _DOUBLE.pack(n.value)
    return n.value.bytes


_compress_cache: dict[tuple, bytes] = {}


def _compress(codec: str, plain: bytes, magic: int) -> bytes:
    if codec == "none":
        return plain
    key = (codec, magic, plain)
    out = _compress_cache.get(key)
    if out is None:
        out = compression.compress(codec, plain, magic=magic if codec != "zstd" else 2)
        if len(_compress_cache) > 4096:
            _compress_cache.clear()
        _compress_cache[key] = out
    return out


def serialize(
    root: Node,
    overrides: dict | None = None,
    *,
    crc: str = "fix",
    stale: dict[int, int] | None = None,
    spans: bool = False,
) -> Encoding:
    """Print ``root``. ``overrides`` map a node's uid to bytes (printed instead of the node), or to an
    int (the value printed for an Int or Derived node); ``prefix_uid`` keys override length/count prefixes;
    ``("items", uid)`` a list of elements for an Array; ``("data", uid)`` a Bytes node's payload;
    ``("cut", uid)`` / ``("plain", uid)`` / ``("codec", uid)`` a Compressed region's decompressed bytes
    cut short / replaced, or the codec it is compressed with. ``crc="stale"`` prints every CRC as the
    valid encoding had it (from ``stale``, a previous Encoding's ``derived``)."""
    p = _Printer(overrides, crc, stale, spans)
    out = bytearray()
    p.node(root, out)
    p.enc.data = bytes(out)
    return p.enc
