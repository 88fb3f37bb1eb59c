"""The heart of the suite (after Kafka's MessageTest): for every entity and
version, over values drawn from the schema,
size(value) == len(build(value)) == bytes consumed by parse, and
parse(build(value)) gives value back."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from kcodec.fuzz.strategies import entity_strategy
from kcodec.generated import CODECS, codec
from tests.helpers.roundtrip import added_by_parse, check_roundtrip, examples
from tests.helpers.schemas import ENTITY_VERSIONS, SCHEMAS

ADDED_BY_PARSE = added_by_parse(SCHEMAS)


def test_every_schema_entity_version_has_a_codec():
    assert sorted(CODECS) == sorted(ENTITY_VERSIONS)


@pytest.mark.parametrize("entity,version", ENTITY_VERSIONS, ids=[f"{e}-v{v}" for e, v in ENTITY_VERSIONS])
def test_size_equals_built_equals_parsed(entity, version):
    c = codec(entity, version)

    @settings(max_examples=examples(SCHEMAS, entity, 60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(entity_strategy(SCHEMAS, entity, version))
    def check(value):
        check_roundtrip(c, value, ADDED_BY_PARSE)

    check()
