"""Differential tests: the fast pure-Python decoders agree exactly with the
construct reference codecs, on values drawn from the schemas and on every
shared vector, including damaged bytes (same error kind)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcodec.errors import BadLengthError, KcodecError
from kcodec.fuzz.strategies import entity_strategy
from kcodec.generated import codec
from kcodec.generated.fast import DECODERS
from tests.helpers.roundtrip import examples
from tests.helpers.schemas import ENTITY_VERSIONS, SCHEMAS

VECTORS = Path(__file__).parents[1] / "vectors" / "public"


def as_plain(value):
    """construct Containers and fast tuples as the same plain structure."""
    if isinstance(value, dict):
        return {k: as_plain(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [as_plain(v) for v in value]
    return value


def fast_plain(entity, version, data, **options):
    decode, fields = DECODERS[(entity, version)]
    values, pos = decode(data, 0, len(data), **options) if options else decode(data, 0, len(data))
    return _named(entity, version, values), pos


def _named(entity, version, values):
    """Fast tuples as dicts, walking the IR for nested entities."""
    from kcodec.codegen.schema import ArrayType, EntityRef, resolve

    _, fields = DECODERS[(entity, version)]
    ev = resolve(SCHEMAS, SCHEMAS.entities[entity], version)
    out = {}
    resolved = {f.name: f for f in (*ev.fields, *ev.tagged, *ev.absent)}  # values hold all three, in order
    for name, v in zip(ev.value_names, values):
        f = resolved.get(name)
        if f is None:  # the unknown tags of a flexible version: as_plain leaves them out too
            continue
        t = f.type
        if f.field.compressed and f.field.compressed.contents is not None and isinstance(v, list):
            t = f.field.compressed.contents
        if isinstance(t, EntityRef) and v is not None:  # a nullable struct reads as None
            v = _named(t.name, version, v)
        elif isinstance(t, ArrayType) and isinstance(t.element, EntityRef) and isinstance(v, list):
            v = [_named(t.element.name, version, x) for x in v]
        out[name] = v
    return out


def whole(entity, version, data):
    """Like construct's parse(): the bytes must hold exactly one entity."""
    value, used = fast_plain(entity, version, data)
    if used != len(data):
        raise BadLengthError(f"{len(data) - used} bytes left")
    return value


def outcome(fn):
    try:
        return ("ok", fn())
    except KcodecError as exc:
        return ("error", exc.kind)


@pytest.mark.parametrize("entity,version", ENTITY_VERSIONS, ids=[f"{e}-v{v}" for e, v in ENTITY_VERSIONS])
def test_fast_equals_construct_on_schema_values(entity, version):
    c = codec(entity, version)

    @settings(max_examples=examples(SCHEMAS, entity, 80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(entity_strategy(SCHEMAS, entity, version), st.data())
    def check(value, data):
        raw = c.build(value)
        fast, used = fast_plain(entity, version, raw)
        assert used == len(raw)
        assert fast == as_plain(c.parse(raw))
        # damaged copies: both backends agree on success or failure
        if raw:
            i = data.draw(st.integers(0, len(raw) - 1))
            cut = raw[:i]
            flipped = raw[:i] + bytes([raw[i] ^ data.draw(st.integers(1, 255))]) + raw[i + 1 :]
            for bad in (cut, flipped):
                ref = outcome(lambda: as_plain(c.parse(bad)))
                got = outcome(lambda: whole(entity, version, bad))
                expected, decoded = (
                    (ref[0], ref[1] if ref[0] == "ok" else None),
                    (got[0], got[1] if got[0] == "ok" else None),
                )
                # repr as well: a flipped byte can make a float64 NaN, which equals nothing, itself included
                assert expected == decoded or repr(expected) == repr(decoded)

    check()


def entries(data):
    pos = 0
    while pos + 17 <= len(data):
        size = struct.unpack_from(">i", data, pos + 8)[0]
        if size < 0 or pos + 12 + size > len(data):
            return
        yield data[pos : pos + 12 + size]
        pos += 12 + size


@pytest.mark.parametrize("name", sorted(p.stem for p in VECTORS.glob("*.bin")))
def test_fast_equals_construct_on_vectors(name):
    data = (VECTORS / f"{name}.bin").read_bytes()
    for entry in entries(data):
        magic = entry[16]
        entity = "record_batch" if magic == 2 else "legacy_log_entry"
        if magic > 2:
            continue
        ref = outcome(lambda: as_plain(codec(entity, magic).parse(entry)))
        got = outcome(lambda: whole(entity, magic, entry))
        assert ref == got


def test_every_fast_decoder_has_its_field_positions_by_name() -> None:
    """``AT_<ENTITY>_V<N>`` names the place of each field in the values ``decode_<entity>_v<n>`` returns."""
    import importlib

    from kcodec.generated.fast import DECODERS

    for (entity, version), (_decode, fields) in DECODERS.items():
        module = importlib.import_module(f"kcodec.generated.fast.{entity}")
        at = getattr(module, f"AT_{entity.upper()}_V{version}")
        assert tuple(at) == tuple(range(len(fields))), (entity, version)
        for name, position in zip(fields, at):
            assert getattr(at, name.lstrip("_")) == position, (entity, version, name)
