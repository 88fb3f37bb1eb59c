"""A test-only schema set that uses every feature of the schema language (tests/codegen/kitchen_sink/),
generated into a throwaway package: every backend the generator prints for it must round-trip values
drawn from the schema, agree with each other, and keep the facts the schema states (offsets, masks,
version ranges, enum ranges)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from kcodec.codegen import load_schemas
from kcodec.codegen.schema import ArrayType, EntityRef, resolve, resolve_all
from kcodec.errors import CompressionError, CorruptError, CrcMismatchError, KcodecError
from kcodec.fuzz.strategies import entity_strategy
from tests.helpers.roundtrip import added_by_parse, check_roundtrip, generated_package

SINK = Path(__file__).parent / "kitchen_sink"
SCHEMAS = load_schemas(SINK)
ADDED = added_by_parse(SCHEMAS)
ENTITY_VERSIONS = [(ev.name, ev.version) for ev in resolve_all(SCHEMAS)]
PACKAGE = "kcodec_kitchen_sink_generated"


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory):
    with generated_package(tmp_path_factory.mktemp("kitchen_sink"), SINK, PACKAGE) as package:
        yield package


def test_every_entity_version_is_generated(gen) -> None:
    assert sorted(gen.CODECS) == sorted(ENTITY_VERSIONS)
    every = (0, 1, 2)
    assert gen.ENTITY_VERSIONS == {
        **{"envelope": every, "frame": every, "part": every, "sink": every, "flex": every},
        **{"flex__endpoint": every, "flex__partition": every, "flex__config": every},  # structs of flex.yaml
    }
    assert gen.schema_set() == SCHEMAS  # the schema as data rebuilds the IR the YAML gave


def test_offsets_masks_and_version_ranges(gen) -> None:
    sink = gen.sink
    # length(4) crc(4) version(1) marker(2) flags(2): fixed offsets up to the first varint
    assert (sink.SINK_V0_OFFSET_CRC, sink.SINK_V0_OFFSET_VERSION, sink.SINK_V0_OFFSET_FLAGS) == (4, 8, 11)
    assert sink.SINK_V1_FLAGS_LEVEL_MASK == 0b1111 << 6 and sink.SINK_V1_FLAGS_LEVEL_SHIFT == 6
    assert sink.SINK_V2_FLAGS_URGENT_MASK == 1 << 5 and sink.SINK_V0_FLAGS_COLOR_MASK == 0b11 << 3
    assert not hasattr(sink, "SINK_V0_FLAGS_UNUSED_MASK")  # reserved bits are not a fact to import
    assert "note" not in [f.name for f in gen.layout("sink", 0).fields]
    assert "note" in [f.name for f in gen.layout("sink", 1).fields]
    assert "extra" in [f.name for f in gen.layout("part", 2).fields]
    assert "extra" not in [f.name for f in gen.layout("part", 1).fields]


@pytest.mark.parametrize("entity,version", ENTITY_VERSIONS, ids=[f"{e}-v{v}" for e, v in ENTITY_VERSIONS])
def test_round_trip_and_backends_agree(gen, entity: str, version: int) -> None:
    c = gen.codec(entity, version)
    decode, _ = gen.fast.DECODERS[(entity, version)]

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(entity_strategy(SCHEMAS, entity, version))
    def check(value):
        data = check_roundtrip(c, value, ADDED)
        values, used = decode(data, 0, len(data))
        assert used == len(data)
        assert _named(gen, entity, version, values) == _plain(c.parse(data))

    check()


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _named(gen, entity: str, version: int, values):
    """The fast decoders' tuples as the construct codecs' dicts, walking the IR for nested entities."""
    ev = resolve(SCHEMAS, SCHEMAS.entities[entity], version)
    out = {}
    for f, v in zip((*ev.fields, *ev.tagged, *ev.absent), values):
        t = f.type
        if f.field.compressed and f.field.compressed.contents is not None and isinstance(v, list):
            t = f.field.compressed.contents
        if isinstance(t, EntityRef) and v is not None:
            v = _named(gen, t.name, version, v)
        elif isinstance(t, ArrayType) and isinstance(t.element, EntityRef) and isinstance(v, list):
            v = [_named(gen, t.element.name, version, x) for x in v]
        out[f.name] = v
    return out


def _sink(version: int, **changes):
    value = {
        "marker": 7,
        "flags": {"compression": "none", "color": "red", "urgent": True, "level": 9, "unused": 0},
        "small": -1,
        "medium": 2,
        "large": -(1 << 40),
        "unsigned": 0xFFFFFFFF,
        "zig": -5,
        "count_hint": 300,
        "title": "kitchen",
        "blob": None,
        "tag": b"\x01",
        "head": {"id": 1, "kind": "plain", "data": None},
        "parts": [],
        "items": [{"id": 2, "kind": 9, "data": b"xy"}],
    }
    if version >= 1:
        value["note"] = None
    if version >= 2:
        for part in [value["head"], *value["items"]]:
            part["extra"] = 3
    value.update(changes)
    return value


def test_version_ranges_of_enum_values_are_enforced(gen) -> None:
    zstd = {"compression": "zstd", "color": "red", "urgent": False, "level": 0, "unused": 0}
    with pytest.raises(KcodecError):
        gen.codec("sink", 1).build(_sink(1, flags=zstd))  # zstd exists from version 2
    data = gen.codec("sink", 2).build(_sink(2, flags=zstd))
    assert gen.codec("sink", 2).parse(data)["flags"]["compression"] == "zstd"
    forged = bytearray(gen.codec("sink", 1).build(_sink(1)))
    forged[gen.sink.SINK_V1_OFFSET_VERSION] = 1
    forged[gen.sink.SINK_V1_OFFSET_FLAGS + 1] |= 4  # codec id 4 at version 1
    with pytest.raises((CompressionError, CrcMismatchError)):
        gen.codec("sink", 1).parse(bytes(forged))
    with pytest.raises(CompressionError):
        gen.codec("sink", 1).parse(bytes(forged), verify_crc=False)


def test_open_and_closed_enums(gen) -> None:
    data = gen.codec("sink", 0).build(_sink(0))
    assert gen.codec("sink", 0).parse(data)["items"][0]["kind"] == 9  # open: unknown values stay integers
    blue = {"compression": "none", "color": "blue", "urgent": False, "level": 0, "unused": 0}
    with pytest.raises(KcodecError):
        gen.codec("sink", 0).build(_sink(0, flags=blue))  # blue exists from version 1
    assert gen.codec("sink", 1).parse(gen.codec("sink", 1).build(_sink(1, flags=blue)))["flags"]["color"] == "blue"


def test_compressed_regions(gen) -> None:
    for codec_name in ("gzip", "snappy", "lz4"):
        flags = {"compression": codec_name, "color": "green", "urgent": False, "level": 1, "unused": 0}
        value = _sink(0, flags=flags, items=[{"id": i, "kind": "fancy", "data": b"z" * 50} for i in range(20)])
        check_roundtrip(gen.codec("sink", 0), value, ADDED)
        parts = [{"id": i, "kind": "plain", "data": b"p" * 30} for i in range(10)]
        envelope = {"attributes": {"compression": codec_name, "unused": 0}, "payload": parts}
        check_roundtrip(gen.codec("envelope", 1), envelope, ADDED)


def test_damage_is_a_typed_error_with_a_position(gen) -> None:
    data = bytearray(gen.codec("sink", 2).build(_sink(2)))
    data[-1] ^= 0xFF
    with pytest.raises(CrcMismatchError) as caught:
        gen.codec("sink", 2).parse(bytes(data))
    assert caught.value.position == gen.sink.SINK_V2_OFFSET_CRC and caught.value.field == "crc"
    data = bytearray(gen.codec("sink", 2).build(_sink(2)))
    data[gen.sink.SINK_V2_OFFSET_FLAGS] |= 0x04  # reserved bit 10: kept as read, never lost
    parsed = gen.codec("sink", 2).parse(bytes(data), verify_crc=False)
    assert parsed["flags"]["unused"] == 1 and gen.codec("sink", 2).build(parsed)[8:] == bytes(data[8:])
    data[gen.sink.SINK_V2_OFFSET_VERSION] = 1  # the version constant
    with pytest.raises(KcodecError) as caught:
        gen.codec("sink", 2).parse(bytes(data), verify_crc=False)
    assert caught.value.kind == "magic" and caught.value.position == gen.sink.SINK_V2_OFFSET_VERSION
    data[gen.sink.SINK_V2_OFFSET_VERSION] = 2
    data[gen.sink.SINK_V2_OFFSET_MARKER + 1] = 8  # the other constant: corrupt (its default error kind)
    with pytest.raises(CorruptError):
        gen.codec("sink", 2).parse(bytes(data), verify_crc=False)
