"""The fast encoders (generated from the IR) give the construct reference's
bytes exactly, for every entity and version, over values drawn from the schemas."""

from __future__ import annotations

import importlib

import pytest
from hypothesis import HealthCheck, given, settings

from kcodec.codegen.schema import resolve
from kcodec.fuzz.strategies import entity_strategy
from kcodec.generated import codec
from tests.codegen.test_roundtrip import ENTITY_VERSIONS, SCHEMAS
from tests.roundtrip import examples


def as_tuple(entity, version, value):
    """A value dict as the fast encoder's tuple (nested entities too)."""
    from kcodec.codegen.schema import ArrayType, EntityRef, default_value

    ev = resolve(SCHEMAS, SCHEMAS.entities[entity], version)
    out = []
    for f in (*ev.fields, *ev.tagged, *ev.absent):  # the fast values' order (EntityVersion.value_names)
        if f.name not in value and f.field.default is not None or f in ev.tagged and f.name not in value:
            out.append(default_value(ev, f, tuples=True))
            continue
        v = value.get(f.name)
        t = f.type
        if f.field.compressed and f.field.compressed.contents is not None and isinstance(v, list):
            t = f.field.compressed.contents
        if isinstance(t, EntityRef) and v is not None:
            v = as_tuple(t.name, version, v)
        elif isinstance(t, ArrayType) and isinstance(t.element, EntityRef) and v is not None:
            v = [as_tuple(t.element.name, version, x) for x in v]
        out.append(v)
    if ev.flexible:
        out.append(value.get("_unknown_tags", []))
    return tuple(out)


@pytest.mark.parametrize("entity,version", ENTITY_VERSIONS, ids=[f"{e}-v{v}" for e, v in ENTITY_VERSIONS])
def test_fast_encoder_equals_construct(entity, version):
    encode = getattr(importlib.import_module(f"kcodec.generated.fast.{entity}"), f"encode_{entity}_v{version}")

    @settings(max_examples=examples(SCHEMAS, entity, 80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(entity_strategy(SCHEMAS, entity, version))
    def check(value):
        assert encode(as_tuple(entity, version, value)) == codec(entity, version).build(value)

    check()
