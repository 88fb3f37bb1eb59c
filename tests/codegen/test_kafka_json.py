"""Kafka's JSON message definitions as a second front-end: the files in tests/codegen/kafka_json/ were
written for these tests in the shape of Kafka's (none is Kafka's own). The loader maps every construct of
the kitchen-sink message, reports each unsupported one with its file and field, gives the same IR as
kcodec's YAML schemas of the same records, and the package generated from it round-trips bytes."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest

from kcodec.codegen.schema import (
    ArrayType,
    BytesType,
    EntityRef,
    ResolvedField,
    ScalarType,
    default_value,
    load_schemas,
    resolve,
    type_text,
)
from kcodec.codegen.schema.kafka_json import (
    KafkaJsonError,
    load_kafka_json,
    snake_case,
    strip_comments,
)
from kcodec.generated import codec as packaged_codec
from kcodec.generated.registries import REGISTRIES

HERE = Path(__file__).resolve().parent
KAFKA_JSON = HERE / "kafka_json"
UNSUPPORTED = HERE / "kafka_json_unsupported"
SCHEMAS = HERE.parents[1] / "schemas"


@pytest.fixture(scope="module")
def loaded():
    return load_kafka_json(KAFKA_JSON, registries=REGISTRIES)


def _fields(schemas, entity: str) -> dict:
    return {f.name: f for f in schemas.entities[entity].fields}


def test_names_map_to_snake_case_and_back() -> None:
    from kcodec.internal_topics.json_converter import camel

    for kafka, ours in [
        ("PartitionIndex", "partition_index"),
        ("KRaftVersion", "k_raft_version"),
        ("protocolType", "protocol_type"),
        ("ZkMigrationState", "zk_migration_state"),
        ("group", "group"),
    ]:
        assert snake_case(kafka) == ours
        assert camel(ours) == kafka[0].lower() + kafka[1:]  # Kafka's JSON output name comes back


def test_comments_are_stripped_but_not_inside_strings() -> None:
    text = '// head\n{"a": "x // y /* z */", /* gone\n */ "b": 1} // tail'
    assert strip_comments(text) == '\n{"a": "x // y /* z */", \n "b": 1} '


def test_kitchen_sink_maps_every_construct(loaded) -> None:
    schemas = loaded.schemas
    message = loaded.messages["kitchen_sink_request"]
    assert (message.name, message.type, message.api_key, message.file) == (
        "KitchenSinkRequest",
        "request",
        9000,
        "KitchenSinkRequest.json",
    )
    entity = schemas.entities["kitchen_sink_request"]
    assert str(entity.valid_versions) == "0-3" and str(entity.flexible_versions) == "2+"
    f = _fields(schemas, "kitchen_sink_request")
    assert list(f)[:3] == ["client_tag", "group_id", "timeout_ms"] and "lower_camel_count" in f
    # about is the doc; a field flexibleVersions "none" keeps its int16 length
    assert f["client_tag"].doc == "A string that keeps its int16 length in flexible versions."
    assert f["client_tag"].flexible is False and f["group_id"].flexible is True
    assert isinstance(f["client_tag"].type, BytesType) and f["client_tag"].type.prefix.name == "int16"
    # defaults as Kafka spells them: hex, a capitalised bool, a double, null, a JSON number
    assert f["timeout_ms"].default.value == 0x7FFFFFFF
    assert f["enabled"].default.value is True
    assert f["weight"].default.value == 0.5 and isinstance(f["weight"].type, ScalarType)
    assert f["names"].default.value is None and str(f["names"].nullable_versions) == "1+"
    assert f["lower_camel_count"].default.value == 3
    assert str(f["epoch"].versions) == "1+" and f["epoch"].default.value == -1
    assert f["port"].type.name == "uint16" and f["id"].type.name == "uuid"
    # records: nullable bytes with an int32 length (compact when flexible)
    batches = f["batches"].type
    assert isinstance(batches, BytesType) and not batches.text and batches.prefix.name == "int32"
    assert str(f["batches"].nullable_versions) == "0+"
    # arrays of primitives and of structs; inline structs and commonStructs become OWNER__STRUCT entities
    assert isinstance(f["counts"].type, ArrayType) and f["counts"].type.prefix.name == "int32"
    topics = f["topics"].type
    assert isinstance(topics, ArrayType) and topics.element == EntityRef("kitchen_sink_request__topic_entry")
    inner = _fields(schemas, "kitchen_sink_request__topic_entry")
    assert inner["partitions"].type.element == EntityRef("kitchen_sink_request__partition_entry")
    assert (inner["hint"].tag, str(inner["hint"].tagged_versions), inner["hint"].default.value) == (0, "3+", -1)
    assert f["leader"].type == EntityRef("kitchen_sink_request__endpoint")
    assert f["backup"].type == EntityRef("kitchen_sink_request__endpoint", nullable=True)
    assert str(f["backup"].nullable_versions) == "1+"
    # a tagged field without versions takes them from taggedVersions; its tag was the string "1"
    note = f["note"]
    assert (note.tag, str(note.versions), str(note.tagged_versions), note.default.value) == (1, "2+", "2+", None)
    assert schemas.entities["kitchen_sink_request__endpoint"].doc == "Kafka's common struct Endpoint."


def test_registries_follow_api_keys_and_names(loaded) -> None:
    regs = loaded.schemas.registries
    assert [(r["type"], r["value"]) for r in regs["cluster_metadata"]["records"]] == [
        (2, "topic_record"),
        (3, "partition_record"),
    ]
    assert [(r["type"], r["key"]) for r in regs["consumer_offsets"]["records"]] == [
        (0, "offset_commit_key"),
        (1, "offset_commit_key"),
    ]
    assert regs["consumer_offsets"]["topics"] == ["__consumer_offsets"]
    assert "transaction_state" not in regs  # no TransactionLogKey in these files
    assert any("transaction_state" in n for n in loaded.notes)


def test_coordinator_key_value_pairs_join_their_registry(tmp_path: Path) -> None:
    for name in ("OffsetCommitKey.json", "OffsetCommitValue.json"):
        shutil.copy(KAFKA_JSON / name, tmp_path / name)
    (tmp_path / "AuditTrailKey.json").write_text(
        '{"type": "coordinator-key", "apiKey": 40, "name": "AuditTrailKey", "validVersions": "0", '
        '"flexibleVersions": "none", "fields": [{"name": "GroupId", "type": "string", "versions": "0"}]}'
    )
    (tmp_path / "AuditTrailValue.json").write_text(
        '{"type": "coordinator-value", "apiKey": 40, "name": "AuditTrailValue", "validVersions": "0", '
        '"flexibleVersions": "0+", "fields": [{"name": "Note", "type": "string", "versions": "0+"}]}'
    )
    records = load_kafka_json(tmp_path, registries=REGISTRIES).schemas.registries["consumer_offsets"]["records"]
    assert records[-1] == {"type": 40, "name": "audit_trail", "key": "audit_trail_key", "value": "audit_trail_value"}


EXPECTED_PROBLEMS = {
    ("BadDefault.json", "Retries"),  # "many" is not an int32
    ("BadDefault.json", "Label"),  # a field flexibleVersions other than "none"
    ("BadVersions.json", "Count"),  # "2-1"
    ("BadVersions.json", "Item.Flag"),  # "latest", inside a struct
    ("Broken.json", None),  # not JSON
    ("TaggedNotFlexible.json", "Extra"),  # the IR's rule, said with Kafka's field name
    ("UnknownType.json", None),  # key 'colour'
    ("UnknownType.json", "Stamp"),  # int128
    ("UnknownStruct.json", "GroupEntry.Owner"),  # a struct type defined nowhere, inside a struct
}


def test_every_unsupported_construct_is_reported_with_file_and_field() -> None:
    with pytest.raises(KafkaJsonError) as info:
        load_kafka_json(UNSUPPORTED)
    found = {(p.file, p.field) for p in info.value.problems}
    assert found == EXPECTED_PROBLEMS
    text = str(info.value)
    assert "9 unsupported construct(s) in 6 Kafka JSON file(s)" in text
    assert "UnknownType.json field Stamp: unknown type 'int128'" in text
    assert "BadVersions.json field Item.Flag: versions" in text


def test_skip_unsupported_loads_the_rest(tmp_path: Path) -> None:
    shutil.copytree(UNSUPPORTED, tmp_path / "in")
    shutil.copy(KAFKA_JSON / "TopicRecord.json", tmp_path / "in" / "TopicRecord.json")
    result = load_kafka_json(tmp_path / "in", skip_unsupported=True)
    assert sorted(result.messages) == ["topic_record"]
    assert {(p.file, p.field) for p in result.skipped} == EXPECTED_PROBLEMS
    assert set(result.schemas.sources) == {"TopicRecord.json"}  # skipped files leave nothing behind
    assert set(result.schemas.entities) == {"topic_record"}


# ---------------------------------------------------------------------------- the same IR as the YAML schemas


def _shape(schemas, t, version: int):
    if isinstance(t, EntityRef):
        child = schemas.entities[t.name]
        return ("struct", t.nullable, _rows(schemas, child.name, version))
    if isinstance(t, ArrayType):
        return ("array", t.prefix.name, t.compact, t.nullable, _shape(schemas, t.element, version))
    return type_text(t)


def _rows(schemas, entity: str, version: int) -> list:
    """What the bytes are at one version: every field's name, type (structs expanded, so struct names
    may differ), versions, tag and effective default, and the fields absent there with their defaults."""
    ev = resolve(schemas, schemas.entities[entity], version)
    rows = [
        (
            f.name,
            _shape(schemas, f.type, version),
            f.field.versions.versions(ev.entity.valid_versions),  # "0+" and "0-4" are the same in 0-4
            f.field.tag,
            f.field.tagged_versions.versions(ev.entity.valid_versions) if f.field.tagged_versions else None,
            f.field.flexible,
            default_value(ev, f),  # declared, else Kafka's implicit one
        )
        for f in (*ev.fields, *ev.tagged)
    ]
    # a field a version lacks holds its declared default, else Kafka's implicit one (as the Java classes do:
    # kcodec's PartitionRecord says "default: []" for Directories where Kafka's file leaves it implicit)
    absent = [ResolvedField(f, f.type, None, 0) for f in ev.entity.fields if version not in f.versions]
    return rows + [(f.name, "absent", default_value(ev, f)) for f in absent]


@pytest.mark.parametrize(
    "entity", ["offset_commit_key", "offset_commit_value", "transaction_log_value", "partition_record", "topic_record"]
)
def test_ir_equals_the_yaml_schemas(loaded, entity: str) -> None:
    ours = load_schemas(SCHEMAS)
    a, b = ours.entities[entity], loaded.schemas.entities[entity]
    assert (a.valid_versions, a.flexible_versions) == (b.valid_versions, b.flexible_versions)
    for version in a.versions:
        assert _rows(loaded.schemas, entity, version) == _rows(ours, entity, version), f"{entity} v{version}"


# ---------------------------------------------------------------------------- a generated package


@pytest.fixture(scope="module")
def package(tmp_path_factory, loaded):
    from kcodec.codegen.render import write_package
    from kcodec.tools.schema_package import load_package

    out = tmp_path_factory.mktemp("pkg") / "kafka_json_pkg"
    write_package(loaded.schemas, out)
    return load_package(out)


def _sink(version: int) -> dict:
    endpoint = {"host": "h", "port": 9092}
    value = {
        "client_tag": None,
        "group_id": "g",
        "timeout_ms": 30000,
        "weight": 1.25,
        "port": 65535,
        "enabled": False,
        "id": uuid.UUID(int=7),
        "counts": [1, -2],
        "payload": b"\x00\x01",
        "batches": None,
        "topics": [{"name": "t", "partitions": [{"index": 0, "replicas": [1, 2]}]}],
        "leader": endpoint,
        "lower_camel_count": 3,
    }
    if version >= 1:
        value |= {"epoch": 5, "names": ["a", "b"], "backup": None}
    if version >= 2:
        value["note"] = "tagged"
    value["topics"][0]["hint"] = 4 if version >= 3 else -1  # absent before v3: its default
    return value


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_generated_package_round_trips(package, version: int) -> None:
    codec = package.module.codec("kitchen_sink_request", version)
    value = _sink(version)
    data = codec.build(value)
    assert codec.size(value) == len(data)
    parsed = codec.parse(data)
    for name, expected in value.items():
        got = parsed[name]
        if name == "topics":
            got = [{k: v for k, v in t.items() if not k.startswith("_")} for t in got]
            for t in got:
                t["partitions"] = [{k: v for k, v in p.items() if not k.startswith("_")} for p in t["partitions"]]
        elif name == "leader":
            got = {k: v for k, v in got.items() if not k.startswith("_")}
        assert got == expected, name
    assert codec.build(parsed) == data
    if version == 0:  # absent at v0: the declared default
        assert parsed["epoch"] == -1
    decode, names = package.fast_decoders[("kitchen_sink_request", version)]
    values, end = decode(data, 0, len(data))  # the fast backend reads the same bytes to their end
    assert end == len(data)
    assert dict(zip(names, values))["group_id"] == "g"


def test_generated_bytes_equal_kcodecs_own(package) -> None:
    """The same record from Kafka-format JSON and from kcodec's YAML encodes to the same bytes."""
    value = {
        "partition_id": 3,
        "topic_id": uuid.UUID(int=99),
        "replicas": [1, 2, 3],
        "isr": [1, 2],
        "removing_replicas": [],
        "adding_replicas": [],
        "leader": 1,
        "leader_recovery_state": 1,
        "leader_epoch": 4,
        "partition_epoch": 5,
        "directories": [uuid.UUID(int=1)] * 3,
        "eligible_leader_replicas": [2],
        "last_known_elr": None,
    }
    for version in (0, 1, 2):
        theirs = package.module.codec("partition_record", version).build(value)
        assert theirs == packaged_codec("partition_record", version).build(value)


def test_package_lookup_takes_kafka_names(package) -> None:
    assert package.entity("KitchenSinkRequest") == "kitchen_sink_request"
    assert package.entity("kitchen_sink_request") == "kitchen_sink_request"
    assert package.versions["kitchen_sink_request"] == (0, 1, 2, 3)


# ---------------------------------------------------------------------------- Kafka's own files, when given

KAFKA_SOURCE = os.environ.get("KCODEC_KAFKA_SOURCE")
MESSAGE_DIRS = [
    "clients/src/main/resources/common/message",
    "metadata/src/main/resources/common/metadata",
    "group-coordinator/src/main/resources/common/message",
    "transaction-coordinator/src/main/resources/common/message",
    "share-coordinator/src/main/resources/common/message",
    "storage/src/main/resources/message",
    "raft/src/main/resources/common/message",
    "streams/src/main/resources/common/message",
]


@pytest.mark.skipif(not KAFKA_SOURCE, reason="set KCODEC_KAFKA_SOURCE to a Kafka source tree")
def test_every_kafka_definition_loads() -> None:
    assert KAFKA_SOURCE is not None
    dirs = [Path(KAFKA_SOURCE) / d for d in MESSAGE_DIRS if (Path(KAFKA_SOURCE) / d).is_dir()]
    result = load_kafka_json(dirs, skip_unsupported=True, registries=REGISTRIES)
    files = sum(len(list(d.rglob("*.json"))) for d in dirs)
    assert len(result.messages) + len({p.file for p in result.skipped}) == files
    assert not result.skipped, "\n".join(map(str, result.skipped))
    assert {"fetch_request", "fetch_response", "topic_record", "offset_commit_value"} <= set(result.messages)
