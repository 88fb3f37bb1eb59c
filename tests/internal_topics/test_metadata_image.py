"""``kcodec metadata image`` / ``diff``: the KRaft segments of the shared vectors replay to their topics, and a
__cluster_metadata directory written here with kcodec's encoders (a log that registers and fences brokers,
creates, alters and deletes topics, sets and removes configs, commits and aborts KRaft transactions, with a
.checkpoint snapshot in the middle) replays to the image Kafka's MetadataDelta rules give."""

from __future__ import annotations

import ast
import json
import shutil
import uuid
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.errors import CrcMismatchError
from kcodec.generated import ENTITY_VERSIONS, kafka_enums
from kcodec.internal_topics.metadata import image as image_module
from kcodec.internal_topics.metadata.diff import diff_images
from kcodec.internal_topics.metadata.image import HANDLERS, MetadataImage
from kcodec.internal_topics.metadata.replay import NotMetadataDirectoryError, OffsetOutOfLogError, replay_metadata
from kcodec.internal_topics.metadata.text import image_lines
from kcodec.records.encode import NewRecord, encode_batch
from tests.helpers.metadata_logs import (
    API_KEYS,
    LAST,
    ORDERS,
    SNAPSHOT_END,
    metadata_value,
    partition,
    write_metadata_dir,
)

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "public"


def run(capsys, *argv) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's own refusals
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def metadata_dir(tmp_path: Path) -> Path:
    return write_metadata_dir(tmp_path)


def test_shared_kraft_segments_replay_to_their_topics(tmp_path: Path) -> None:
    for name in ("jamestjw", "thanhliemtu"):
        vector = json.loads((VECTORS / f"pub_segment_cluster_metadata_{name}.json").read_text())
        d = tmp_path / name / "__cluster_metadata-0"
        d.mkdir(parents=True)
        shutil.copy(VECTORS / vector["file"], d / "00000000000000000000.log")
        image = replay_metadata(d)
        assert image.features == {"metadata.version": 20} and not image.problems
        assert image.offset == vector["batches"][-1]["baseOffset"] + vector["batches"][-1]["lastOffsetDelta"]
        assert image.topics and all(t.partitions for t in image.topics.values())
        for topic in image.topics.values():
            for p in topic.partitions.values():
                assert p.leader in p.replicas and set(p.isr) <= set(p.replicas)


def test_thanhliemtu_image_as_the_command_prints_it(tmp_path: Path, capsys) -> None:
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    shutil.copy(VECTORS / "pub_segment_cluster_metadata_thanhliemtu.bin", d / "00000000000000000000.log")
    code, out, err = run(capsys, "metadata", "image", d)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"Cluster metadata image of {d} at offset 3, replayed from the start of the log"
    assert "  metadata.version: 20" in lines
    assert "  pear (id caWaUYloT4uTfkgwxx7Hmg): 1 partition(s)" in lines
    assert any(line.startswith("    0: leader 1 (epoch 0), replicas [1], isr [1]") for line in lines)


def test_the_image_starts_from_the_snapshot(metadata_dir: Path) -> None:
    image = replay_metadata(metadata_dir)
    assert image.snapshot == {"file": f"{SNAPSHOT_END:020d}-{1:010d}.checkpoint", "endOffset": 9, "epoch": 1}
    assert image.offset == LAST
    # without the older segment, the snapshot alone gives the same image
    (metadata_dir / "00000000000000000000.log").unlink()
    assert replay_metadata(metadata_dir).as_dict() == image.as_dict()


def test_the_final_image(metadata_dir: Path) -> None:
    image = replay_metadata(metadata_dir)
    assert sorted(t.name for t in image.topics.values()) == ["committed", "orders"]  # tmp deleted, aborted dropped
    orders = image.topics[_text(ORDERS)]
    p0 = orders.partitions[0]
    assert (p0.leader, p0.leader_epoch, p0.partition_epoch, p0.isr, p0.replicas) == (2, 1, 1, [2], [1, 2])
    assert orders.partitions[1].leader == 2 and orders.partitions[1].partition_epoch == 0
    assert image.configs == {}  # retention.ms set, then removed
    assert image.brokers[1].fenced and not image.brokers[2].fenced
    assert image.brokers[1].endpoints[0].host == "b1" and image.brokers[1].rack == "r1"
    assert image.brokers[1].features == {"metadata.version": [1, 20]}
    assert image.client_quotas == {"user=alice": {"producer_byte_rate": 1024.0}}
    assert image.producer_ids is not None and image.producer_ids.next_producer_id == 5000
    assert image.controllers[3000].endpoints[0].name == "CONTROLLER"
    # the transaction still open at the end is not applied, and said
    assert [(p.offset, p.record) for p in image.problems] == [(LAST - 1, "begin_transaction_record")]


def _text(u: uuid.UUID) -> str:
    from kcodec.runtime.uuids import uuid_to_text

    return uuid_to_text(u)


def test_image_at_an_offset_before_the_snapshot_replays_the_log(metadata_dir: Path) -> None:
    image = replay_metadata(metadata_dir, at_offset=4)
    assert image.snapshot is None and image.offset == 4
    assert not image.topics and not image.brokers[1].fenced and not image.brokers[2].fenced
    at8 = replay_metadata(metadata_dir, at_offset=8)
    assert at8.configs == {"TOPIC": {"orders": {"retention.ms": "1000"}}}
    assert at8.snapshot is not None  # the snapshot ends at 9: it holds offsets 0-8, the image at 8
    assert at8.as_dict() | {"snapshot": None} == replay_metadata(metadata_dir, at_offset=7).as_dict() | {
        "snapshot": None,
        "offset": 8,
        "configs": at8.configs,
    }
    assert replay_metadata(metadata_dir, at_offset=7).snapshot is None


def test_a_transaction_applies_when_it_ends(metadata_dir: Path) -> None:
    begin = SNAPSHOT_END + 6
    inside = replay_metadata(metadata_dir, at_offset=begin + 1)
    assert "committed" not in {t.name for t in inside.topics.values()}
    assert [p.record for p in inside.problems] == ["begin_transaction_record"]
    ended = replay_metadata(metadata_dir, at_offset=begin + 2)
    assert "committed" in {t.name for t in ended.topics.values()} and not ended.problems


def test_diff_between_two_offsets(metadata_dir: Path) -> None:
    changes = diff_images(replay_metadata(metadata_dir, at_offset=8), replay_metadata(metadata_dir))
    kinds = [(c["change"], c["subject"], c["field"]) for c in changes]
    assert ("partition_changed", "orders-0", "leader") in kinds
    assert ("partition_changed", "orders-0", "isr") in kinds
    assert ("config_removed", "TOPIC orders", "retention.ms") in kinds
    assert ("broker_fenced", "1", None) in kinds
    assert ("topic_created", "committed", None) in kinds
    assert not any(c["subject"] in ("tmp", "aborted") for c in changes)
    assert ("controller_registered", "3000", None) in kinds
    assert ("client_quota_created", "user=alice", None) in kinds
    assert ("producer_ids_changed", "producer ids", None) in kinds


def test_diff_command_text_and_json(metadata_dir: Path, capsys) -> None:
    code, out, err = run(capsys, "metadata", "diff", metadata_dir, "--from", 8, "--to", 11)
    assert code == 0, err
    assert out.splitlines() == [
        f"Changes in {metadata_dir} from offset 8 to offset 11:",
        "  partition orders-0: isr [1, 2] -> [2]",
        "  partition orders-0: leader 1 -> 2",
        "  partition orders-0: leaderEpoch 0 -> 1",
        "  partition orders-0: partitionEpoch 0 -> 1",
        "  config TOPIC orders: retention.ms removed (was 1000)",
        "  broker 1 fenced",
    ]
    code, out, _ = run(capsys, "metadata", "diff", metadata_dir, "--from", 4, "--to", 5, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["from"] == 4 and doc["to"] == 5
    assert doc["changes"][0]["change"] == "topic_created" and doc["changes"][0]["subject"] == "orders"


def test_image_command_json_is_one_document(metadata_dir: Path, capsys) -> None:
    code, out, _ = run(capsys, "metadata", "image", metadata_dir, "--at-offset", 8, "--json")
    assert code == 0 and len(out.splitlines()) == 1
    doc = json.loads(out)
    assert doc["offset"] == 8 and doc["features"] == {"metadata.version": 20}
    assert doc["brokers"]["1"]["endpoints"][0] == {
        "name": "PLAINTEXT",
        "host": "b1",
        "port": 9092,
        "securityProtocol": "PLAINTEXT",
    }
    assert doc["topics"][_text(ORDERS)]["partitions"]["1"]["replicas"] == [2, 1]
    assert doc["configs"] == {"TOPIC": {"orders": {"retention.ms": "1000"}}}


def test_image_text_has_a_section_per_kind(metadata_dir: Path) -> None:
    lines = image_lines(replay_metadata(metadata_dir), "D")
    titles = [line for line in lines if not line.startswith(" ")][1:]
    assert titles == [
        "Features:",
        "Brokers:",
        "Controllers:",
        "Topics:",
        "Configs:",
        "Client quotas:",
        "Producer ids:",
        "ACLs:",
        "SCRAM credentials:",
        "Delegation tokens:",
        "Not applied:",
    ]
    assert (
        "  broker 1: epoch 10, incarnation AAAAAAAAAAAAAAAAAAAAYw, rack r1, fenced: yes, in controlled shutdown: no"
        in (lines)
    )


@pytest.mark.parametrize(
    "args,status,message",
    [
        pytest.param(["image", "{tmp}/missing"], 2, "no such directory", id="missing"),
        pytest.param(["image", "{dir}/00000000000000000000.log"], 2, "not a directory", id="file"),
        pytest.param(["image", "{tmp}"], 3, "is not a __cluster_metadata partition directory", id="not-metadata"),
        pytest.param(["image", "{dir}", "--at-offset", "999"], 3, "offset 999 is beyond the end of the log", id="end"),
        pytest.param(["diff", "{dir}", "--from", "1"], 2, "needs --from N and --to M", id="diff-needs-both"),
        pytest.param(["diff", "{dir}", "--from", "5", "--to", "1"], 2, "is after --to", id="diff-backwards"),
        pytest.param(["image", "{dir}", "--from", "1"], 2, "are for metadata diff", id="image-from"),
        pytest.param(["diff", "{dir}", "--at-offset", "1"], 2, "is for metadata image", id="diff-at"),
        pytest.param(["image", "{dir}", "--at-offset", "-1"], 2, "below the least allowed value", id="negative"),
    ],
)
def test_errors_are_one_line(metadata_dir: Path, capsys, args: list[str], status: int, message: str) -> None:
    argv = [a.format(tmp=metadata_dir.parent, dir=metadata_dir) for a in args]
    code, out, err = run(capsys, "metadata", *argv)
    assert code == status and out == "" and len(err.splitlines()) == 1 and message in err, err


def test_a_log_without_its_start_and_no_snapshot_is_refused(metadata_dir: Path) -> None:
    (metadata_dir / "00000000000000000000.log").unlink()
    with pytest.raises(OffsetOutOfLogError, match="the log starts at offset 9"):
        replay_metadata(metadata_dir, at_offset=4)
    with pytest.raises(NotMetadataDirectoryError):
        replay_metadata(metadata_dir.parent)


def test_a_damaged_batch_is_a_typed_error_naming_the_file(metadata_dir: Path, capsys) -> None:
    seg = metadata_dir / f"{SNAPSHOT_END:020d}.log"
    data = bytearray(seg.read_bytes())
    data[70] ^= 0xFF  # inside the first batch's records, under its CRC
    seg.write_bytes(bytes(data))
    with pytest.raises(CrcMismatchError, match=str(seg)):
        replay_metadata(metadata_dir)
    code, _, err = run(capsys, "metadata", "image", metadata_dir)
    assert code == 3 and len(err.splitlines()) == 1 and str(seg) in err and "crc" in err


def test_an_unknown_record_type_is_reported_and_the_replay_goes_on(tmp_path: Path) -> None:
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    unknown = bytes([1, 120, 0, 0])  # api key 120: no schema
    topic = metadata_value("topic_record", {"name": "t", "topic_id": ORDERS})
    (d / "00000000000000000000.log").write_bytes(
        encode_batch([NewRecord(value=unknown), NewRecord(value=topic)], base_offset=0)
    )
    image = replay_metadata(d)
    assert [t.name for t in image.topics.values()] == ["t"]
    assert len(image.problems) == 1 and image.problems[0].offset == 0 and "120" in image.problems[0].reason


# ---------------------------------------------------------------------------- records whose schemas land later

ACL = {
    "id": uuid.UUID(int=7),
    "resource_type": 2,
    "resource_name": "orders",
    "pattern_type": 3,
    "principal": "User:alice",
    "host": "*",
    "operation": 3,
    "permission_type": 3,
}
SCRAM = {
    "name": "alice",
    "mechanism": 1,
    "salt": b"salt-secret",
    "stored_key": b"stored-secret",
    "server_key": b"server-secret",
    "iterations": 4096,
}
TOKEN = {
    "owner": "User:alice",
    "requester": "User:admin",
    "renewers": ["User:bob"],
    "issue_timestamp": 1,
    "max_timestamp": 3,
    "expiration_timestamp": 2,
    "token_id": "tok1",
}


def test_acl_scram_and_token_handlers() -> None:
    image = MetadataImage()
    HANDLERS["access_control_entry_record"](image, ACL, 0)
    HANDLERS["user_scram_credential_record"](image, SCRAM, 1)
    HANDLERS["delegation_token_record"](image, TOKEN, 2)
    acl = image.acls["AAAAAAAAAAAAAAAAAAAABw"]
    assert (acl.resource_type, acl.pattern_type, acl.operation, acl.permission_type) == (
        "TOPIC",
        "LITERAL",
        "READ",
        "ALLOW",
    )
    assert image.scram_credentials["alice SCRAM-SHA-256"].iterations == 4096
    assert image.delegation_tokens["tok1"].owner == "User:alice"
    text = json.dumps(image.as_dict()) + "\n".join(image_lines(image, "D"))
    assert "secret" not in text and "c2FsdC1zZWNyZXQ" not in text  # never the salt or keys, in any encoding
    HANDLERS["remove_access_control_entry_record"](image, {"id": ACL["id"]}, 3)
    HANDLERS["remove_user_scram_credential_record"](image, {"name": "alice", "mechanism": 1}, 4)
    HANDLERS["remove_delegation_token_record"](image, {"token_id": "tok1"}, 5)
    assert not image.acls and not image.scram_credentials and not image.delegation_tokens and not image.problems
    HANDLERS["remove_delegation_token_record"](image, {"token_id": "tok1"}, 6)
    assert [p.offset for p in image.problems] == [6]


def test_clear_elr_handler() -> None:
    image = MetadataImage()
    HANDLERS["topic_record"](image, {"name": "orders", "topic_id": ORDERS}, 0)
    value = partition(ORDERS, 0, [1, 2])[1] | {"eligible_leader_replicas": [1], "last_known_elr": [2]}
    HANDLERS["partition_record"](image, value, 1)
    HANDLERS["clear_elr_record"](image, {"topic_name": "other"}, 2)
    assert image.topics[_text(ORDERS)].partitions[0].eligible_leader_replicas == [1]
    assert len(image.problems) == 1
    HANDLERS["clear_elr_record"](image, {"topic_name": ""}, 3)  # every topic
    p = image.topics[_text(ORDERS)].partitions[0]
    assert p.eligible_leader_replicas == [] and p.last_known_elr == []


LATER = [
    ("access_control_entry_record", ACL),
    ("user_scram_credential_record", SCRAM),
    ("delegation_token_record", TOKEN),
]


@pytest.mark.parametrize("name,value", LATER, ids=[n for n, _ in LATER])
def test_later_records_replay_from_a_log(tmp_path: Path, name: str, value: dict) -> None:
    if name not in ENTITY_VERSIONS or name not in API_KEYS:
        pytest.skip(f"the {name} schema is not in schemas/internal yet (another change adds it)")
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(encode_batch([NewRecord(value=metadata_value(name, value))]))
    image = replay_metadata(d)
    assert not image.problems
    assert image.acls or image.scram_credentials or image.delegation_tokens
    assert "secret" not in json.dumps(image.as_dict())


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completion_knows_the_metadata_command(capsys) -> None:
    from tests.helpers.shell import bash_complete

    code, script, _ = run(capsys, "completion", "bash")
    assert code == 0
    assert "metadata" in bash_complete(script, "kcodec", "met")
    assert bash_complete(script, "kcodec", "metadata", "di") == ["diff"]
    assert set(bash_complete(script, "kcodec", "metadata", "--")) >= {"--at-offset", "--from", "--to", "--json"}


def test_json_keeps_the_map_keys_as_they_are() -> None:
    """Config resources and names, quota keys and feature names are data: never turned to lowerCamel."""
    image = MetadataImage()
    HANDLERS["config_record"](image, {"resource_type": 2, "resource_name": "my_topic", "name": "x_y", "value": "1"}, 0)
    quota = {"entity": [{"entity_type": "user", "entity_name": "a_b"}], "key": "producer_byte_rate", "value": 1.0}
    HANDLERS["client_quota_record"](image, quota | {"remove": False}, 1)
    data = image.as_dict()
    assert data["configs"] == {"TOPIC": {"my_topic": {"x_y": "1"}}}
    assert data["clientQuotas"] == {"user=a_b": {"producer_byte_rate": 1.0}}


# ---------------------------------------------------------------------------- Kafka's enums

# (generated enum, value name) -> Kafka's id and printed name, typed from its Java classes (SecurityProtocol,
# ConfigResource.Type, ResourceType, PatternType, AclOperation, AclPermissionType, admin.ScramMechanism)
JAVA_ENUMS = {
    ("SECURITY_PROTOCOL", "plaintext"): (0, "PLAINTEXT"),
    ("SECURITY_PROTOCOL", "sasl_plaintext"): (2, "SASL_PLAINTEXT"),
    ("CONFIG_RESOURCE_TYPE", "topic"): (2, "TOPIC"),
    ("CONFIG_RESOURCE_TYPE", "broker"): (4, "BROKER"),
    ("CONFIG_RESOURCE_TYPE", "broker_logger"): (8, "BROKER_LOGGER"),
    ("CONFIG_RESOURCE_TYPE", "group"): (32, "GROUP"),
    ("RESOURCE_TYPE", "topic"): (2, "TOPIC"),
    ("RESOURCE_TYPE", "transactional_id"): (5, "TRANSACTIONAL_ID"),
    ("RESOURCE_TYPE", "user"): (7, "USER"),
    ("PATTERN_TYPE", "prefixed"): (4, "PREFIXED"),
    ("ACL_OPERATION", "unknown"): (0, "UNKNOWN"),
    ("ACL_OPERATION", "describe_configs"): (10, "DESCRIBE_CONFIGS"),
    ("ACL_OPERATION", "alter_configs"): (11, "ALTER_CONFIGS"),
    ("ACL_OPERATION", "two_phase_commit"): (15, "TWO_PHASE_COMMIT"),
    ("ACL_PERMISSION_TYPE", "deny"): (2, "DENY"),
    ("SCRAM_MECHANISM", "unknown"): (0, "UNKNOWN"),
    ("SCRAM_MECHANISM", "scram_sha_256"): (1, "SCRAM-SHA-256"),
    ("SCRAM_MECHANISM", "scram_sha_512"): (2, "SCRAM-SHA-512"),
}
JAVA_SIZES = {
    "SECURITY_PROTOCOL": 4,
    "CONFIG_RESOURCE_TYPE": 6,
    "RESOURCE_TYPE": 8,
    "PATTERN_TYPE": 5,
    "ACL_OPERATION": 16,
    "ACL_PERMISSION_TYPE": 4,
    "SCRAM_MECHANISM": 3,
}
PRINTED_BY = {  # the image's value -> name table of each enum
    "SECURITY_PROTOCOL": image_module.SECURITY_PROTOCOLS,
    "CONFIG_RESOURCE_TYPE": image_module.CONFIG_RESOURCE_TYPES,
    "RESOURCE_TYPE": image_module.ACL_RESOURCE_TYPES,
    "PATTERN_TYPE": image_module.PATTERN_TYPES,
    "ACL_OPERATION": image_module.ACL_OPERATIONS,
    "ACL_PERMISSION_TYPE": image_module.PERMISSION_TYPES,
    "SCRAM_MECHANISM": image_module.SCRAM_MECHANISMS,
}


def test_kafka_enums_have_the_java_ids_and_print_as_kafka() -> None:
    for (enum, name), (value, printed) in JAVA_ENUMS.items():
        assert getattr(kafka_enums, enum)[name] == value, (enum, name)
        assert PRINTED_BY[enum][value] == printed, (enum, name)
    for enum, size in JAVA_SIZES.items():
        assert len(getattr(kafka_enums, enum)) == len(PRINTED_BY[enum]) == size, enum


def test_the_image_types_no_enum_table_of_its_own() -> None:
    """Kafka's enums come from schemas/internal/kafka_enums.yaml: image.py holds no value -> name literal."""
    tree = ast.parse(Path(image_module.__file__).read_text(encoding="utf-8"))
    literals = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        and node.keys
        and all(isinstance(k, ast.Constant) and isinstance(k.value, int) for k in node.keys)
        and all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in node.values)
    ]
    assert not literals, f"image.py types an enum table at line(s) {literals}; add it to kafka_enums.yaml"
