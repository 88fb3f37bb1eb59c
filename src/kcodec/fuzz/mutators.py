"""Mutators that know field boundaries.

A :class:`Sample` is one valid value of an entity version, its node tree and
its printed :class:`~kcodec.fuzz.encoder.Encoding` (bytes plus every field's
span). Mutators come in two kinds:

* tree mutators return *overrides* for :func:`~kcodec.fuzz.encoder.serialize`:
  a lie in a length or count, a bit flipped inside one field, an over-long
  varint, another codec id, damaged or oversized (bomb) compressed streams,
  elements dropped or repeated. The bytes are printed again with every other
  derived field honest and the CRCs either recomputed over the damage (so the
  structure checks behind the CRC are reached) or kept as the valid input had
  them. Fields inside a compressed stream are damaged before compression.
* byte mutators edit printed bytes using the spans: truncation at each field
  boundary, bit flips inside one field, splices of two entries (of different
  magics) at field boundaries, and random havoc.

:func:`mutate` picks one or two tree mutators and maybe a byte mutator, and
returns the bytes with a note naming what was done (kept with reproducers).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from kcodec.codegen.schema import BitsType, IntType
from kcodec.fuzz.encoder import (
    Array,
    Bytes,
    Compressed,
    Derived,
    Encoding,
    Entity,
    Int,
    Node,
    Optional,
    Span,
    Tagged,
    encode_int,
    overlong_varint,
    serialize,
)

__all__ = ["Sample", "Context", "mutate", "TREE_MUTATORS", "BYTE_MUTATORS"]

INT32_MAX, INT32_MIN = 2**31 - 1, -(2**31)


@dataclass
class Sample:
    """A valid value of one entity version, as a tree and as printed bytes with spans."""

    entity: str
    version: int
    tree: Entity
    enc: Encoding
    nodes: list[Node] = field(default_factory=list)  # every node of the tree
    codec_fields: list[tuple[Int, int, int, Node]] = field(default_factory=list)  # (attributes, low, width, region)

    @classmethod
    def of(cls, entity: str, version: int, tree: Entity) -> Sample:
        s = cls(entity, version, tree, serialize(tree, spans=True))
        _walk(tree, s)
        return s


def _walk(n: Node, s: Sample) -> None:
    s.nodes.append(n)
    if isinstance(n, Entity):
        for f, child in zip(n.ev.fields, n.children):
            comp = f.field.compressed
            if comp is not None:
                head, *rest = comp.codec_path
                attr = n.children[n.ev.index(head)]
                t = n.ev.field(head).type
                if isinstance(attr, Int) and isinstance(t, BitsType) and rest:
                    bit = next(b for b in t.bits if b.name == rest[0])
                    s.codec_fields.append((attr, bit.low, bit.width, child))
            _walk(child, s)
        if len(n.children) > len(n.ev.fields):  # a flexible version's tagged section
            _walk(n.children[-1], s)
    elif isinstance(n, Array):
        for item in n.items or ():  # None: a null array
            _walk(item, s)
    elif isinstance(n, Compressed):
        _walk(n.inner, s)
    elif isinstance(n, Bytes) and isinstance(n.data, Compressed):
        _walk(n.data, s)
    elif isinstance(n, Optional) and n.inner is not None:
        _walk(n.inner, s)
    elif isinstance(n, Tagged):
        for _tag, payload in n.entries:
            if isinstance(payload, Node):
                _walk(payload, s)


@dataclass
class Context:
    """What mutators share across iterations: the decompression cap (bombs are sized from it) and
    recent top-level entries of every magic (for splices)."""

    limit: int = 1 << 20
    pool: deque = field(default_factory=lambda: deque(maxlen=64))  # (name, bytes, boundaries)


# ---------------------------------------------------------------------------- helpers


def _interesting(honest: int, room: int, rng: random.Random) -> int:
    return rng.choice(
        [
            honest + 1,
            honest - 1,
            honest + rng.randint(2, 16),
            honest - rng.randint(2, 16),
            0,
            -1,
            -2,
            1,
            INT32_MAX,
            INT32_MIN,
            INT32_MAX - rng.randint(0, 64),
            honest * 2,
            honest // 2,
            room,
            room + 1,
            room - 1,
            2**31 - 2,
            1 << 30,
            rng.randint(INT32_MIN, INT32_MAX),
            -rng.randint(1, 1 << 20),
        ]
    )


def _is_varint(t: IntType | None) -> bool:
    return t is not None and not t.fixed


def _spans(s: Sample, stream_ok: bool = True) -> list[Span]:
    return [sp for sp in s.enc.spans if sp.part != "entity" and (stream_ok or sp.stream is None)]


def _derived(s: Sample, kind: str) -> list[Derived]:
    return [n for n in s.nodes if isinstance(n, Derived) and n.kind == kind]


# ---------------------------------------------------------------------------- tree mutators
# each returns (overrides, note) or None when the sample has nothing to mutate that way


def length_lie(rng, s: Sample, ctx: Context):
    """A length (a derived length or a bytes prefix) that says something else."""
    choices: list[tuple[int, Node, int]] = [(n.uid, n, s.enc.derived.get(n.uid, 0)) for n in _derived(s, "length")]
    choices += [
        (n.prefix_uid, n, -1 if n.data is None else _data_len(s, n))
        for n in s.nodes
        if isinstance(n, Bytes) and n.prefix is not None
    ]
    if not choices:
        return None
    uid, node, honest = rng.choice(choices)
    lie = _interesting(honest, len(s.enc.data), rng)
    return {uid: lie}, f"length {node.path}: {honest} -> {lie}"


def _data_len(s: Sample, n: Bytes) -> int:
    if isinstance(n.data, Compressed):
        sp = next((sp for sp in s.enc.spans if sp.node is n.data and sp.part == "stored"), None)
        return 0 if sp is None else sp.end - sp.start
    assert n.data is not None  # callers measure non-null data only
    return len(n.data)


def count_lie(rng, s: Sample, ctx: Context):
    """A count (derived, or an array's prefix) that says something else."""
    choices: list[tuple[int, Node, int]] = [(n.uid, n, s.enc.derived.get(n.uid, 0)) for n in _derived(s, "count")]
    choices += [
        (n.prefix_uid, n, len(n.items))
        for n in s.nodes
        if isinstance(n, Array) and n.prefix is not None and n.items is not None
    ]
    if not choices:
        return None
    uid, node, honest = rng.choice(choices)
    lie = _interesting(honest, len(s.enc.data), rng)
    return {uid: lie}, f"count {node.path}: {honest} -> {lie}"


def crc_lie(rng, s: Sample, ctx: Context):
    crcs = _derived(s, "crc")
    if not crcs:
        return None
    n = rng.choice(crcs)
    honest = s.enc.derived.get(n.uid, 0)
    lie = honest ^ (1 << rng.randrange(32))
    return {n.uid: lie}, f"crc {n.path} flipped"


def flip_field(rng, s: Sample, ctx: Context):
    """Bits flipped inside one field (any depth, inside compressed streams too), then printed again."""
    ints = [n for n in s.nodes if isinstance(n, Int)]
    datas = [n for n in s.nodes if isinstance(n, Bytes) and isinstance(n.data, bytes) and n.data]
    if not ints and not datas:
        return None
    if datas and (not ints or rng.random() < 0.3):
        n = rng.choice(datas)
        b = bytearray(n.data)
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        return {("data", n.uid): bytes(b)}, f"bits flipped in {n.path} data"
    n = rng.choice(ints)
    bits = n.itype.width * 8 if n.itype.fixed else n.itype.bits
    v = n.value
    for _ in range(rng.randint(1, 2)):
        v ^= 1 << rng.randrange(bits)
    return {n.uid: v}, f"bits flipped in {n.path}: {n.value} -> {v}"


def extreme_value(rng, s: Sample, ctx: Context):
    ints = [n for n in s.nodes if isinstance(n, Int)]
    if not ints:
        return None
    n = rng.choice(ints)
    t = n.itype
    v = rng.choice([t.min, t.max, 0, -1, 1, t.max - 1, t.min + 1])
    return {n.uid: v}, f"{n.path}: {n.value} -> {v}"


def overlong(rng, s: Sample, ctx: Context):
    """A varint printed with more bytes than it needs: up to 5 (10) bytes Kafka accepts it; longer, or
    with the continuation bit on the last allowed byte, it must be refused."""
    cands = []
    for n in s.nodes:
        if isinstance(n, Int) and _is_varint(n.itype):
            cands.append((n.uid, n.itype, n.value, n.path))
        elif isinstance(n, Derived) and _is_varint(n.itype):
            cands.append((n.uid, n.itype, s.enc.derived.get(n.uid, 0), n.path))
        elif isinstance(n, Bytes) and _is_varint(n.prefix):
            length = -1 if n.data is None else _data_len(s, n)
            cands.append((n.prefix_uid, n.prefix, length + n.compact, n.path + " length"))  # compact: n + 1
        elif isinstance(n, Array) and _is_varint(n.prefix):
            count = -1 if n.items is None else len(n.items)
            cands.append((n.prefix_uid, n.prefix, count + n.compact, n.path + " count"))
    if not cands:
        return None
    uid, t, value, path = rng.choice(cands)
    enc = encode_int(t, value)
    most = t.max_width
    r = rng.random()
    if r < 0.45:
        total = rng.randint(len(enc), most)  # still valid
        raw = overlong_varint(enc, total)
    elif r < 0.8:
        raw = overlong_varint(enc, most + rng.randint(1, 4))
    else:
        raw = bytes([0xFF] * most) + (b"\x01" if rng.random() < 0.5 else b"")
    return {uid: raw}, f"varint {path} as {len(raw)} bytes {raw.hex()}"


def codec_swap(rng, s: Sample, ctx: Context):
    """Another codec id in the attributes (0-7, the stored bytes unchanged), or the region compressed
    with another codec than the attributes say."""
    if not s.codec_fields:
        return None
    attr, low, width, region = rng.choice(s.codec_fields)
    comp = region if isinstance(region, Compressed) else region.data if isinstance(region, Bytes) else None
    if isinstance(comp, Compressed) and rng.random() < 0.35:
        other = rng.choice([c for c in ("gzip", "snappy", "lz4", "zstd") if c != comp.codec])
        return {("codec", comp.uid): other}, f"{comp.path} compressed with {other}, attributes say {comp.codec}"
    mask = ((1 << width) - 1) << low
    current = (attr.value & mask) >> low
    new = rng.choice([i for i in range(1 << width) if i != current])
    return {attr.uid: (attr.value & ~mask) | (new << low)}, f"codec id {current} -> {new} in {attr.path}"


def damage_stream(rng, s: Sample, ctx: Context):
    """The stored bytes of a compressed region damaged (lengths and CRC honest: the codec sees it)."""
    comps = [n for n in s.nodes if isinstance(n, Compressed)]
    if not comps:
        return None
    n = rng.choice(comps)
    sp = next((sp for sp in s.enc.spans if sp.node is n and sp.part == "stored"), None)
    if sp is None:
        return None
    b = bytearray(s.enc.data[sp.start : sp.end])
    op = rng.randrange(6)
    if op == 0 and b:
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        what = "bits flipped"
    elif op == 1 and b:
        del b[rng.randrange(len(b)) :]
        what = "cut short"
    elif op == 2:
        b += rng.randbytes(rng.randint(1, 16))
        what = "junk appended"
    elif op == 3 and b:
        i = rng.randrange(len(b))
        b[i : i + rng.randint(1, 8)] = bytes(rng.randint(1, 8))
        what = "zeroed"
    elif op == 4:
        b = bytearray(rng.randbytes(rng.randint(0, 64)))
        what = "random bytes"
    else:
        b = b + b
        what = "doubled"
    return {n.uid: bytes(b)}, f"{n.codec} stream of {n.path} {what}"


_BOMBS: dict[int, bytes] = {}


def bomb(rng, s: Sample, ctx: Context):
    """A compressed region that inflates past the cap (or to just under it)."""
    comps = [n for n in s.nodes if isinstance(n, Compressed)]
    if not comps:
        return None
    n = rng.choice(comps)
    size = rng.choice([ctx.limit + 1, ctx.limit + rng.randint(2, 1 << 16), ctx.limit * 4, ctx.limit])
    plain = _BOMBS.get(size)
    if plain is None:
        if len(_BOMBS) > 8:
            _BOMBS.clear()
        plain = _BOMBS[size] = bytes(size)
    return {("plain", n.uid): plain}, f"{n.codec} bomb of {size} bytes in {n.path} (cap {ctx.limit})"


def cut_stream(rng, s: Sample, ctx: Context):
    """The decompressed contents cut at one of their field boundaries, then compressed again."""
    comps = [n for n in s.nodes if isinstance(n, Compressed)]
    if not comps:
        return None
    n = rng.choice(comps)
    cuts = sorted({sp.start for sp in s.enc.spans if sp.stream is n} | {sp.end for sp in s.enc.spans if sp.stream is n})
    if not cuts:
        return None
    cut = rng.choice(cuts) + rng.choice([0, 0, 0, -1, 1])
    return {("cut", n.uid): max(cut, 0)}, f"decompressed {n.path} cut at byte {cut}"


def elements(rng, s: Sample, ctx: Context):
    """Array elements dropped, repeated or swapped; the count follows, or (half the time) stays."""
    arrays = [n for n in s.nodes if isinstance(n, Array) and n.items]
    if not arrays:
        return None
    n = rng.choice(arrays)
    items = list(n.items)
    op = rng.randrange(3)
    if op == 0:
        del items[rng.randrange(len(items))]
    elif op == 1:
        i = rng.randrange(len(items))
        items[i:i] = [items[i]] * rng.randint(1, 3)
    else:
        rng.shuffle(items)
    out: dict = {("items", n.uid): items}  # overrides: keyed by uid or (kind, uid)
    note = f"{n.path}: {len(n.items)} -> {len(items)} elements"
    if rng.random() < 0.5:
        if n.prefix is not None:
            out[n.prefix_uid] = len(n.items)
        else:
            for c in _derived(s, "count"):
                out[c.uid] = len(n.items)
        note += ", count unchanged"
    return out, note


def magic_swap(rng, s: Sample, ctx: Context):
    consts = [n for n in s.nodes if isinstance(n, Int) and n.path.endswith("magic")]
    if not consts:
        return None
    n = rng.choice(consts)
    v = rng.choice([x for x in (0, 1, 2, 3, -1, 127) if x != n.value])
    return {n.uid: v}, f"{n.path}: {n.value} -> {v}"


TREE_MUTATORS: dict[str, Callable] = {
    "length_lie": length_lie,
    "count_lie": count_lie,
    "crc_lie": crc_lie,
    "flip_field": flip_field,
    "extreme_value": extreme_value,
    "overlong_varint": overlong,
    "codec_swap": codec_swap,
    "damage_stream": damage_stream,
    "bomb": bomb,
    "cut_stream": cut_stream,
    "elements": elements,
    "magic_swap": magic_swap,
}
TREE_WEIGHTS = {
    "length_lie": 4,
    "count_lie": 3,
    "crc_lie": 1,
    "flip_field": 4,
    "extreme_value": 2,
    "overlong_varint": 3,
    "codec_swap": 2,
    "damage_stream": 3,
    "bomb": 1,
    "cut_stream": 2,
    "elements": 2,
    "magic_swap": 1,
}


# ---------------------------------------------------------------------------- byte mutators


def _boundaries(enc: Encoding) -> list[int]:
    return sorted(
        {sp.start for sp in enc.spans if sp.stream is None} | {sp.end for sp in enc.spans if sp.stream is None}
    )


def truncate(rng, data: bytes, enc: Encoding, ctx: Context, s: Sample):
    cuts = [c for c in _boundaries(enc) if c < len(data)] or [0]
    cut = max(0, min(len(data), rng.choice(cuts) + rng.choice([0, 0, 0, -1, 1])))
    return data[:cut], f"cut at byte {cut} of {len(data)}"


def flip_in_field(rng, data: bytes, enc: Encoding, ctx: Context, s: Sample):
    spans = [
        sp
        for sp in enc.spans
        if sp.stream is None and sp.end > sp.start and sp.part != "entity" and sp.end <= len(data)
    ]
    if not spans:
        return None
    sp = rng.choice(spans)
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        b[rng.randrange(sp.start, sp.end)] ^= 1 << rng.randrange(8)
    return bytes(b), f"bits flipped in {sp.node.path} ({sp.part}), CRC not recomputed"


def splice(rng, data: bytes, enc: Encoding, ctx: Context, s: Sample):
    """This entry's bytes up to a field boundary, then another entry's (of another magic, when there is
    one) from one of its boundaries."""
    if not ctx.pool:
        return None
    others = [p for p in ctx.pool if p[0] != f"{s.entity} v{s.version}"] or list(ctx.pool)
    name, other, bounds = rng.choice(others)
    i = rng.choice(_boundaries(enc) or [0])
    j = rng.choice(bounds or [0])
    return data[:i] + other[j:], f"bytes 0..{i} then {name} from byte {j}"


def havoc(rng, data: bytes, enc: Encoding, ctx: Context, s: Sample):
    b = bytearray(data)
    notes = []
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(6)
        if op == 0 and b:
            b[rng.randrange(len(b))] = rng.choice([0, 0xFF, 0x7F, 0x80, 0x01, rng.randrange(256)])
            notes.append("byte")
        elif op == 1:
            i = rng.randint(0, len(b))
            b[i:i] = rng.randbytes(rng.randint(1, 16))
            notes.append("insert")
        elif op == 2 and b:
            i = rng.randrange(len(b))
            del b[i : i + rng.randint(1, 16)]
            notes.append("delete")
        elif op == 3 and b:
            i = rng.randrange(len(b))
            j = rng.randint(i, min(len(b), i + 64))
            b[j:j] = b[i:j]
            notes.append("repeat")
        elif op == 4 and len(b) >= 4:
            i = rng.randrange(len(b) - 3)
            b[i : i + 4] = rng.choice([0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0, 14, 49, 61]).to_bytes(4, "big")
            notes.append("int32")
        elif b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            notes.append("bit")
    return bytes(b), "havoc: " + ",".join(notes)


BYTE_MUTATORS: dict[str, Callable] = {
    "truncate": truncate,
    "flip_in_field": flip_in_field,
    "splice": splice,
    "havoc": havoc,
}
BYTE_WEIGHTS = {"truncate": 3, "flip_in_field": 3, "splice": 2, "havoc": 2}


def _pick(rng: random.Random, weights: dict[str, int]) -> str:
    names = list(weights)
    return rng.choices(names, weights=[weights[n] for n in names])[0]


def mutate(rng: random.Random, s: Sample, ctx: Context) -> tuple[bytes, str, str]:
    """Damage ``s``: returns (bytes, mutator names, note)."""
    overrides: dict = {}
    names, notes = [], []
    r = rng.random()
    n_tree = 0 if r < 0.2 else 1 if r < 0.85 else 2
    for _ in range(n_tree):
        for _attempt in range(4):
            name = _pick(rng, TREE_WEIGHTS)
            got = TREE_MUTATORS[name](rng, s, ctx)
            if got is not None:
                overrides.update(got[0])
                names.append(name)
                notes.append(got[1])
                break
    crc = "stale" if rng.random() < 0.3 else "fix"
    use_bytes = not names or rng.random() < 0.25
    if names:
        enc = serialize(s.tree, overrides, crc=crc, stale=s.enc.derived, spans=use_bytes)
        if crc == "stale":
            notes.append("CRCs as before")
    else:
        enc = s.enc
    data = enc.data
    if use_bytes:
        for _attempt in range(4):
            name = _pick(rng, BYTE_WEIGHTS)
            got = BYTE_MUTATORS[name](rng, data, enc, ctx, s)
            if got is not None:
                data = got[0]
                names.append(name)
                notes.append(got[1])
                break
    return data, "+".join(names) or "none", "; ".join(notes)


def remember(ctx: Context, s: Sample) -> None:
    """Keep a top-level entry for later splices."""
    ctx.pool.append((f"{s.entity} v{s.version}", s.enc.data, _boundaries(s.enc)))
