"""The heart of the suite (after Kafka's MessageTest): for every entity and
version, over values drawn from the schema,
size(value) == len(build(value)) == bytes consumed by parse, and
parse(build(value)) gives value back."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from kcodec.codegen.schema import resolve_all
from kcodec.fuzz.strategies import entity_strategy
from kcodec.generated import CODECS, codec


def _entity_versions():
    from pathlib import Path

    import kcodec.schemas
    from kcodec.codegen import load_schemas

    schemas = load_schemas(Path(kcodec.schemas.__path__[0]))
    return schemas, [(ev.name, ev.version) for ev in resolve_all(schemas)]


SCHEMAS, ENTITY_VERSIONS = _entity_versions()
# Names that parsing adds but building does not take: derived and const fields.
ADDED_BY_PARSE = {
    f.name for e in SCHEMAS.entities.values() for f in e.fields if f.derived is not None or f.const is not None
}


def assert_matches(parsed, value, path="value"):
    """parsed equals value, except for fields the parser adds (derived, const)."""
    if isinstance(value, dict):
        assert isinstance(parsed, dict), path
        for k, v in value.items():
            assert k in parsed, f"{path}.{k} missing after parse"
            assert_matches(parsed[k], v, f"{path}.{k}")
        extra = {k for k in parsed if not k.startswith("_")} - set(value)
        assert extra <= ADDED_BY_PARSE, f"{path}: parse added {extra - ADDED_BY_PARSE}"
    elif isinstance(value, list):
        assert isinstance(parsed, list) and len(parsed) == len(value), path
        for i, (p, v) in enumerate(zip(parsed, value)):
            assert_matches(p, v, f"{path}[{i}]")
    else:
        assert parsed == value and type(parsed) is type(value), f"{path}: {parsed!r} != {value!r}"


def test_every_schema_entity_version_has_a_codec():
    assert sorted(CODECS) == sorted(ENTITY_VERSIONS)


@pytest.mark.parametrize("entity,version", ENTITY_VERSIONS, ids=[f"{e}-v{v}" for e, v in ENTITY_VERSIONS])
def test_size_equals_built_equals_parsed(entity, version):
    c = codec(entity, version)

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(entity_strategy(SCHEMAS, entity, version))
    def check(value):
        data = c.build(value)
        assert c.size(value) == len(data)
        assert sum(c.field_sizes(value).values()) == len(data)
        parsed, consumed = c.parse_prefix(data + b"\xff\x00trailing")
        assert consumed == len(data)
        assert_matches(parsed, value)
        assert c.build(parsed) == data  # a parsed value rebuilds byte-exact

    check()
