"""The fast encoders (generated from the IR) give the construct reference's
bytes exactly, for every entity and version, over values drawn from the schemas."""

from __future__ import annotations

import importlib

import pytest
from hypothesis import HealthCheck, given, settings

from kcodec.fuzz.strategies import entity_strategy
from kcodec.generated import codec
from tests.helpers.roundtrip import examples
from tests.helpers.schemas import ENTITY_VERSIONS, SCHEMAS, as_tuple


@pytest.mark.parametrize("entity,version", ENTITY_VERSIONS, ids=[f"{e}-v{v}" for e, v in ENTITY_VERSIONS])
def test_fast_encoder_equals_construct(entity, version):
    encode = getattr(importlib.import_module(f"kcodec.generated.fast.{entity}"), f"encode_{entity}_v{version}")

    @settings(max_examples=examples(SCHEMAS, entity, 80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(entity_strategy(SCHEMAS, entity, version))
    def check(value):
        assert encode(as_tuple(entity, version, value)) == codec(entity, version).build(value)

    check()
