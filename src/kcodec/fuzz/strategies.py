"""Hypothesis strategies for valid values of every entity version, drawn
from the IR. The values are what the generated builders take: dicts with
every field that is neither derived nor const.

Used by the round-trip tests and by fuzzing; importing this module needs
hypothesis (the ``test`` or ``fuzz`` extra).
"""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import strategies as st

from kcodec.codegen.schema import (
    ArrayType,
    BitsType,
    BytesType,
    EntityRef,
    EntityVersion,
    IntType,
    ScalarType,
    SchemaSet,
    Type,
    resolve,
)


class Limits:
    """Keep drawn values small: the construct backend is the slow oracle."""

    bytes = 24
    items = 3


def user_fields(ev: EntityVersion) -> list[str]:
    return [f.name for f in ev.fields if f.field.derived is None and f.field.const is None]


def entity_strategy(schemas: SchemaSet, entity: str, version: int, *, plain: bool = False) -> st.SearchStrategy:
    """Values of ``entity`` at ``version``. ``plain`` forces every codec field
    to none (Kafka forbids compressed messages inside a compressed wrapper)."""
    ev = resolve(schemas, schemas.entities[entity], version)
    codec_paths = {f.field.compressed.codec_path for f in ev.fields if f.field.compressed}

    known_tags = {f.field.tag for f in ev.tagged}

    @st.composite
    def draw_entity(draw):
        value: dict = {}
        for f in (*ev.fields, *ev.tagged):
            fld = f.field
            if fld.derived is not None or fld.const is not None:
                continue
            if fld.compressed and fld.compressed.contents is not None:
                codec = value
                for part in fld.compressed.codec_path:
                    codec = codec[part]
                if codec != "none":
                    value[f.name] = draw(_type(schemas, fld.compressed.contents, version, plain=True, min_items=1))
                    continue
            forced = {p[1:] for p in codec_paths if p[0] == f.name} if plain else set()
            value[f.name] = draw(_field(schemas, ev, f.type, fld.enum, forced, plain))
        if ev.flexible and draw(st.booleans()):  # tags this version does not know: kept and written back
            tags = draw(st.lists(st.integers(0, 40).filter(lambda t: t not in known_tags), unique=True, max_size=2))
            value["_unknown_tags"] = [(t, draw(st.binary(max_size=4))) for t in sorted(tags)]
        return value

    return draw_entity()


def _field(schemas, ev, t: Type, enum: str | None, forced: set, plain: bool) -> st.SearchStrategy:
    if () in forced:
        return st.just("none")  # this field itself names a codec
    if enum is not None:
        e = schemas.enums[enum]
        names = st.sampled_from([v.name for v in e.values_at(ev.version)])
        if not e.open:
            return names
        known = {v.value for v in e.values}
        return names | st.integers(t.min, t.max).filter(lambda x: x not in known)
    if isinstance(t, BitsType):
        parts: dict[str, st.SearchStrategy[Any]] = {}
        for b in t.bits:
            if (b.name,) in forced:
                parts[b.name] = st.just("none")
            elif b.kind == "enum":
                parts[b.name] = st.sampled_from([v.name for v in schemas.enums[b.enum].values_at(ev.version)])
            elif b.kind == "flag":
                parts[b.name] = st.booleans()
            else:
                parts[b.name] = st.integers(0, (1 << b.width) - 1)
        return st.fixed_dictionaries(parts)
    return _type(schemas, t, ev.version, plain=plain)


def _type(schemas, t: Type, version: int, *, plain: bool, min_items: int = 0) -> st.SearchStrategy:
    if isinstance(t, IntType):
        return st.integers(t.min, t.max)
    if isinstance(t, ScalarType):
        if t.name == "bool":
            return st.booleans()
        if t.name == "float64":
            return st.floats(allow_nan=False)  # NaN never equals itself: a round trip could not compare it
        return st.builds(lambda b: uuid.UUID(bytes=b), st.binary(min_size=16, max_size=16))
    if isinstance(t, BytesType):
        data = st.text(max_size=Limits.bytes) if t.text else st.binary(max_size=Limits.bytes)
        return st.none() | data if t.nullable else data
    if isinstance(t, EntityRef):
        value = entity_strategy(schemas, t.name, version, plain=plain)
        return st.none() | value if t.nullable else value
    if isinstance(t, ArrayType):
        items = st.lists(_type(schemas, t.element, version, plain=plain), min_size=min_items, max_size=Limits.items)
        return st.none() | items if t.nullable else items
    raise TypeError(f"no strategy for {t!r}")
