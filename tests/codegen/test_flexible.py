"""Kafka's flexible versions (KIP-482) in the schema language, checked byte by byte: the kitchen-sink
entity ``flex`` (tests/codegen/kitchen_sink/flex.yaml) against encodings built by hand here, unknown tags
kept through parse and build, typed errors for damaged tagged sections, the fast backend against the
construct one, and two of Kafka's own messages against kio (a library generated from Kafka's message
definitions) as an oracle."""

from __future__ import annotations

import random
import struct
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from kcodec.codegen import load_schemas
from kcodec.codegen.schema import resolve
from kcodec.errors import CorruptError, KcodecError, RecordCountError, SchemaError, TruncatedError
from kcodec.fuzz.strategies import entity_strategy
from kcodec.runtime.uuids import ZERO_UUID, uuid_from_text, uuid_to_text
from tests.helpers.roundtrip import generated_package

HERE = Path(__file__).parent
SINK = HERE / "kitchen_sink"
ORACLE = HERE / "flexible_oracle"
SCHEMAS = load_schemas(SINK)


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory):
    with generated_package(tmp_path_factory.mktemp("flex"), SINK, "kcodec_flex_generated") as package:
        yield package


def _fast_roundtrip(gen, entity: str, version: int, data: bytes) -> tuple:
    """Fast decode of data, which the fast encoder must print back byte for byte."""
    decode, _ = gen.fast.DECODERS[(entity, version)]
    values, used = decode(data, 0, len(data))
    assert used == len(data)
    encode = getattr(getattr(gen.fast, entity), f"encode_{entity}_v{version}")
    assert encode(values) == data
    return values


# ---------------------------------------------------------------------------- known encodings

ENDPOINT = "flex__endpoint"


def test_compact_string_and_empty_tagged_section(gen) -> None:
    c1, c0 = gen.codec(ENDPOINT, 1), gen.codec(ENDPOINT, 0)
    value = {"host": "abc", "port": 0x1234}
    assert c1.build(value) == b"\x04abc" + b"\x12\x34" + b"\x00"  # compact "abc", uint16, empty tagged section
    assert c0.build(value) == b"\x00\x03abc" + b"\x12\x34"  # version 0 is not flexible: int16 length
    assert c1.size(value) == 7 and c0.size(value) == 7
    assert c1.parse(b"\x04abc\x12\x34\x00")["_unknown_tags"] == []
    _fast_roundtrip(gen, ENDPOINT, 1, b"\x04abc\xff\xff\x00")
    assert c1.parse(b"\x04abc\xff\xff\x00")["port"] == 0xFFFF  # unsigned


def test_unknown_tag_zero_with_one_byte_payload(gen) -> None:
    c = gen.codec(ENDPOINT, 1)
    data = b"\x02a\x00\x01" + b"\x01\x00\x01\x07"  # one tagged field: tag 0, size 1, payload 0x07
    parsed = c.parse(data)
    assert parsed["_unknown_tags"] == [(0, b"\x07")]
    assert c.build(parsed) == data and c.size(parsed) == len(data)
    assert _fast_roundtrip(gen, ENDPOINT, 1, data)[-1] == [(0, b"\x07")]


def _flex_v1_bytes(tagged: bytes) -> bytes:
    return b"".join(
        [
            bytes(15) + b"\x01",  # id: the uuid 0...01
            b"\x01",  # enabled
            struct.pack(">d", 1.5),  # ratio
            b"\x00\x02cl",  # client_id: flexible: false keeps the int16 length
            b"\x04abc",  # name: compact
            b"\x02\x07",  # data: compact bytes
            b"\x02\x00\x00\x00\x09",  # replica_ids: compact count 1 + 1, one int32
            b"\x01",  # offsets: compact count of an empty array
            b"\x03\x02t\x01",  # topics: compact count, then compact strings "t" and ""
            b"\x02" + bytes(16),  # topic_ids: one zero uuid
            b"\x02h\x00\x01\x00",  # leader: compact host, port, empty tagged section
            b"\xff",  # backup: null struct marker
            b"\x00",  # partitions: compact null array
            b"\x00\x00\x00\x05",  # epoch
            tagged,
        ]
    )


def _flex_v1_value(**changes) -> dict:
    value = {
        "id": uuid.UUID(int=1),
        "enabled": True,
        "ratio": 1.5,
        "client_id": "cl",
        "name": "abc",
        "data": b"\x07",
        "replica_ids": [9],
        "offsets": [],
        "topics": ["t", ""],
        "topic_ids": [ZERO_UUID],
        "leader": {"host": "h", "port": 1},
        "backup": None,
        "partitions": None,
        "epoch": 5,
        "note": None,
        "weight": 7,
    }
    value.update(changes)
    return value


def test_flexible_entity_by_hand(gen) -> None:
    c = gen.codec("flex", 1)
    assert c.build(_flex_v1_value()) == _flex_v1_bytes(b"\x00")  # every tagged field at its default
    # weight 9 differs from its default 7: tag 1, size 1, payload 9
    assert c.build(_flex_v1_value(weight=9)) == _flex_v1_bytes(b"\x01\x01\x01\x09")
    assert c.build(_flex_v1_value(note="n")) == _flex_v1_bytes(b"\x01\x00\x02\x02n")  # compact "n" as tag 0
    data = _flex_v1_bytes(b"\x02\x00\x01\x01\x01\x01\x09")  # note "" and weight 9, ascending tags
    parsed = c.parse(data)
    assert (parsed["note"], parsed["weight"]) == ("", 9)
    assert c.build(parsed) == data and c.size(parsed) == len(data)
    assert parsed["id"] == uuid.UUID(int=1) and parsed["ratio"] == 1.5 and parsed["enabled"] is True
    _fast_roundtrip(gen, "flex", 1, data)
    built = c.build(_flex_v1_value(backup={"host": "b", "port": 2}, partitions=[]))
    assert b"\x01\x02b\x00\x02\x00" + b"\x01" in built  # backup: marker 1 then the struct; [] is compact 1


def test_tagged_structs_and_defaults(gen) -> None:
    c = gen.codec("flex", 2)
    base = _flex_v1_value(data=None)
    assert c.build(base).endswith(b"\x00\x00\x00\x05\x00")  # data null (nullable from 2); nothing tagged
    default_config = {"level": 3, "label": "x", "key": uuid_from_text("AAAAAAAAAAAAAAAAAAAAAQ")}
    assert c.build({**base, "config": default_config}) == c.build(base)  # a struct of defaults is not written
    origin = c.build({**base, "origin": {"host": "o", "port": 2}})
    # tag 3, size 6: the presence marker 1, then the struct (Kafka writes the marker of a nullable struct
    # "for both regular and tagged struct fields")
    assert origin.endswith(b"\x01" + b"\x03\x06" + b"\x01" + b"\x02o\x00\x02\x00")
    config = c.build({**base, "config": {**default_config, "level": 4}})
    payload = b"\x00\x04" + b"\x02x" + bytes(15) + b"\x01" + b"\x00"
    assert config.endswith(b"\x01\x02" + bytes([len(payload)]) + payload)
    parsed = c.parse(c.build(base))
    assert parsed["origin"] is None and parsed["config"]["level"] == 3 and parsed["weight"] == 7


def test_absent_fields_take_their_defaults(gen) -> None:
    value = _flex_v1_value(partitions=[{"index": 3, "replicas": []}])
    for k in ("note", "weight", "epoch"):
        del value[k]
    data = gen.codec("flex", 0).build(value)
    parsed = gen.codec("flex", 0).parse(data)
    assert parsed["epoch"] == -1 and parsed["partitions"][0]["leader_epoch"] == -1
    assert "_unknown_tags" not in parsed  # version 0 is not flexible
    values = _fast_roundtrip(gen, "flex", 0, data)
    assert values[gen.fast.DECODERS[("flex", 0)][1].index("epoch")] == -1


def test_unknown_tags_survive_parse_and_build(gen) -> None:
    c = gen.codec("flex", 2)
    head = _flex_v1_bytes(b"")[:-4]  # up to the epoch (v1 and v2 share it while data is not null)
    data = head + b"\x00\x00\x00\x05" + b"\x03" + b"\x01\x01\x09" + b"\x05\x02\xaa\xbb" + b"\x09\x00"
    parsed = c.parse(data)
    assert parsed["weight"] == 9 and parsed["_unknown_tags"] == [(5, b"\xaa\xbb"), (9, b"")]
    assert c.build(parsed) == data and c.size(parsed) == len(data)
    values = _fast_roundtrip(gen, "flex", 2, data)
    assert values[-1] == [(5, b"\xaa\xbb"), (9, b"")]
    with pytest.raises(KcodecError):
        c.build({**parsed, "_unknown_tags": [(1, b"\x00")]})  # tag 1 is weight's: not unknown here


DAMAGED = [
    (b"\x02\x05\x00\x01\x00", CorruptError),  # tag 1 after tag 5: tags ascend
    (b"\x01\x05\x09\xaa", TruncatedError),  # a 9-byte payload with 1 byte left
    (b"\x05\x01", TruncatedError),  # 5 entries cannot fit in one byte
    (b"\x01\x01\x02\x09\x09", KcodecError),  # weight's payload has a byte too many
]


@pytest.mark.parametrize("tagged,error", DAMAGED)
def test_damaged_tagged_sections_are_typed_errors(gen, tagged: bytes, error) -> None:
    data = _flex_v1_bytes(tagged)
    with pytest.raises(error):
        gen.codec("flex", 1).parse(data)
    decode, _ = gen.fast.DECODERS[("flex", 1)]
    with pytest.raises(error):
        decode(data, 0, len(data))


def test_compact_count_larger_than_the_input_is_refused(gen) -> None:
    data = bytearray(_flex_v1_bytes(b"\x00"))
    at = len(data) - 6  # the partitions count
    data[at : at + 1] = b"\xff\xff\xff\xff\x0f"  # 2**32 - 2 elements
    for parse in (gen.codec("flex", 1).parse, lambda d: gen.fast.DECODERS[("flex", 1)][0](d, 0, len(d))):
        with pytest.raises(RecordCountError):
            parse(bytes(data))


@pytest.mark.parametrize("version", [0, 1, 2])
def test_fast_encoder_prints_what_construct_builds(gen, version: int) -> None:
    c = gen.codec("flex", version)

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(entity_strategy(SCHEMAS, "flex", version))
    def check(value):
        data = c.build(value)
        assert c.size(value) == len(data) == sum(c.field_sizes(value).values())
        _fast_roundtrip(gen, "flex", version, data)

    check()


def test_layout_shows_tagged_fields(gen) -> None:
    layout = gen.layout("flex", 2)
    rows = {f.name: f for f in layout.fields}
    assert "tag 1" in rows["weight"].note and rows["_tagged_fields"].type == "tagged fields"
    assert rows["name"].type == "string (compact length)" and rows["client_id"].type.startswith("string (int16")
    assert gen.flex.FLEX_V2_OFFSET_CLIENT_ID == 25  # uuid 16 + bool 1 + float64 8
    assert gen.layout("flex", 0).fixed_size is None and resolve(SCHEMAS, SCHEMAS.entities["flex"], 0).absent


def test_arrays_of_primitives_are_not_compact_before_flexible_versions(gen) -> None:
    c = gen.codec("flex", 0)
    value = _flex_v1_value(partitions=[])
    fields = c.field_sizes(value)
    data = c.build(value)
    start = 16 + 1 + 8 + 4 + 5 + 5  # id, enabled, ratio, client_id "cl", name "abc" (int16 lengths), data (int32)
    assert (fields["replica_ids"], fields["topics"], fields["topic_ids"]) == (8, 4 + 3 + 2, 4 + 16)
    assert data[start : start + 8] == b"\x00\x00\x00\x01\x00\x00\x00\x09"  # int32 count, one int32
    assert data[start + 8 : start + 17] == b"\x00\x00\x00\x02\x00\x01t\x00\x00"  # int16 string lengths
    assert c.parse(data)["topics"] == ["t", ""]
    _fast_roundtrip(gen, "flex", 0, data)
    with pytest.raises(KcodecError):
        c.build({**value, "topics": [None]})  # array elements are not nullable
    encode = gen.fast.flex.encode_flex_v0
    with pytest.raises(KcodecError):
        encode(tuple(None if n == "topics" else value.get(n) for n in gen.fast.DECODERS[("flex", 0)][1]))


def test_uuid_text_is_kafkas() -> None:
    assert uuid_to_text(ZERO_UUID) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert uuid_from_text("AAAAAAAAAAAAAAAAAAAAAQ") == uuid.UUID(int=1)
    u = uuid.UUID("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")
    assert uuid_from_text(uuid_to_text(u)) == u and "=" not in uuid_to_text(u)
    for bad in ("AAAA", "A" * 21 + "!", None):
        with pytest.raises(ValueError):
            uuid_from_text(bad)


# ---------------------------------------------------------------------------- schema errors

FLEX_HEAD = 'entity: bad\ndoc: A bad schema.\nvalid_versions: "0-1"\nflexible_versions: "1+"\nfields:\n'
BAD_FIELDS = {
    "tagged at a version that is not flexible": (
        '  - {name: a, type: int8, tag: 0, tagged_versions: "0+", doc: A.}\n',
        "not flexible",
    ),
    "a tag used twice": (
        '  - {name: a, type: int8, tag: 0, tagged_versions: "1+", doc: A.}\n'
        '  - {name: b, type: int8, tag: 0, tagged_versions: "1+", doc: B.}\n',
        "tag 0",
    ),
    "flexible: false on an integer": ("  - {name: a, type: int8, flexible: false, doc: A.}\n", "'flexible'"),
    "a null default on a non-nullable field": (
        "  - {name: a, type: string, prefix: int16, default: null, doc: A.}\n",
        "null default",
    ),
    "a default that does not fit": ("  - {name: a, type: int8, default: 300, doc: A.}\n", "does not fit"),
    "a bad uuid default": ("  - {name: a, type: uuid, default: nope, doc: A.}\n", "uuid"),
    "nullable and nullable_versions": (
        '  - {name: a, type: bytes, prefix: int32, nullable: true, nullable_versions: "1+", doc: A.}\n',
        "exclude",
    ),
    "a length in a flexible entity": (
        "  - {name: n, type: int32, derived: {kind: length, covers: a..end}, doc: N.}\n"
        "  - {name: a, type: int8, doc: A.}\n",
        "flexible_versions",
    ),
    "an inline struct of another type": (
        "  - {name: a, type: int8, fields: [{name: b, type: int8, doc: B.}], doc: A.}\n",
        "struct",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FIELDS))
def test_schema_errors_name_the_field(tmp_path: Path, case: str) -> None:
    fields, words = BAD_FIELDS[case]
    (tmp_path / "bad.yaml").write_text(FLEX_HEAD + fields)
    with pytest.raises(SchemaError) as caught:
        load_schemas(tmp_path)
    assert words in str(caught.value) and "bad.yaml" in str(caught.value)


# ---------------------------------------------------------------------------- kio as an oracle


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory):
    with generated_package(tmp_path_factory.mktemp("oracle"), ORACLE, "kcodec_flex_oracle_generated") as package:
        yield package


def _kio_bytes(message) -> bytes:
    import io

    from kio.serial import entity_writer

    buffer = io.BytesIO()
    entity_writer(type(message))(buffer, message)
    return buffer.getvalue()


def test_kio_api_versions_response_with_tagged_fields(oracle) -> None:
    pytest.importorskip("kio")
    import datetime

    from kio.schema.api_versions.v3 import response as kio_api
    from kio.schema.errors import ErrorCode
    from kio.static.primitive import i16, i32Timedelta, i64

    message = kio_api.ApiVersionsResponse(
        error_code=ErrorCode.none,
        api_keys=(kio_api.ApiVersion(api_key=i16(18), min_version=i16(0), max_version=i16(3)),),
        throttle_time=i32Timedelta.parse(datetime.timedelta(milliseconds=7)),
        supported_features=(
            kio_api.SupportedFeatureKey(name="metadata.version", min_version=i16(1), max_version=i16(20)),
        ),
        finalized_features_epoch=i64(42),
        zk_migration_ready=True,
    )
    data = _kio_bytes(message)
    c = oracle.codec("api_versions_response", 3)
    parsed = c.parse(data)
    assert parsed["api_keys"][0]["max_version"] == 3 and parsed["throttle_time_ms"] == 7
    assert parsed["supported_features"][0]["name"] == "metadata.version"
    assert parsed["finalized_features_epoch"] == 42 and parsed["zk_migration_ready"] is True
    assert parsed["finalized_features"] == [] and parsed["_unknown_tags"] == []  # tag 2 left at its default
    assert c.build(parsed) == data
    plain = _kio_bytes(
        kio_api.ApiVersionsResponse(
            error_code=ErrorCode.none, api_keys=(), throttle_time=i32Timedelta.parse(datetime.timedelta(0))
        )
    )
    assert c.parse(plain)["finalized_features_epoch"] == -1 and plain.endswith(b"\x00")


def test_kio_voters_record(oracle) -> None:
    pytest.importorskip("kio")
    from kio.schema.voters_record.v0 import data as kio_voters
    from kio.static.primitive import i16, i32, u16

    directory = uuid.UUID("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")
    message = kio_voters.VotersRecord(
        version=i16(0),
        voters=(
            kio_voters.Voter(
                voter_id=i32(3),
                voter_directory_id=directory,
                endpoints=(kio_voters.Endpoint(name="CONTROLLER", host="kraft-3", port=u16(9093)),),
                k_raft_version_feature=kio_voters.KRaftVersionFeature(
                    min_supported_version=i16(0), max_supported_version=i16(1)
                ),
            ),
        ),
    )
    data = _kio_bytes(message)
    c = oracle.codec("voters_record", 0)
    parsed = c.parse(data)
    voter = parsed["voters"][0]
    assert voter["voter_directory_id"] == directory and voter["endpoints"][0]["port"] == 9093
    assert voter["kraft_version_feature"]["max_supported_version"] == 1
    assert c.build(parsed) == data and c.size(parsed) == len(data)
    values, used = oracle.fast.DECODERS[("voters_record", 0)][0](data, 0, len(data))
    assert used == len(data) and oracle.fast.voters_record.encode_voters_record_v0(values) == data


# ---------------------------------------------------------------------------- the fuzz encoder


@pytest.mark.parametrize("entity,version", [("flex", 0), ("flex", 1), ("flex", 2), ("flex__partition", 2)])
def test_fuzz_encoder_prints_what_the_builder_prints(gen, entity: str, version: int) -> None:
    from kcodec.fuzz import mutators as M
    from kcodec.fuzz.encoder import Bytes, Int, Scalar, encode_int, encode_tree, serialize

    c = gen.codec(entity, version)
    rng = random.Random(version)

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(entity_strategy(SCHEMAS, entity, version))
    def check(value):
        tree = encode_tree(SCHEMAS, entity, version, value)
        enc = serialize(tree, spans=True)
        assert enc.data == c.build(value)
        for sp in enc.spans:  # every field's span holds what the field says, tagged payloads included
            assert 0 <= sp.start <= sp.end <= len(enc.data)
            if isinstance(sp.node, Int):
                assert enc.data[sp.start : sp.end] == encode_int(sp.node.itype, sp.node.value)
            elif isinstance(sp.node, Bytes) and sp.part == "data":
                assert enc.data[sp.start : sp.end] == sp.node.data
            elif isinstance(sp.node, Scalar) and sp.node.stype.name == "uuid":
                assert enc.data[sp.start : sp.end] == sp.node.value.bytes
        sample = M.Sample.of(entity, version, tree)
        for fn in M.TREE_MUTATORS.values():  # every lie prints, and parsing it gives a typed error or a value
            got = fn(rng, sample, M.Context(limit=1 << 16))
            if got is not None:
                damaged = serialize(tree, got[0]).data
                try:
                    c.parse(damaged)
                except KcodecError:
                    pass

    check()


def test_the_c_kernel_claims_no_flexible_entity() -> None:
    from kcodec.codegen.schema import resolve_all

    oracle = load_schemas(ORACLE)  # plain integers, strings and arrays of structs: only flexibility excludes them
    flexible = [
        ev for ev in resolve_all(SCHEMAS) + resolve_all(oracle) if ev.entity.name.startswith(("flex", "api", "vot"))
    ]
    assert flexible and not [(ev.name, ev.version) for ev in flexible if ev.compiled]
