"""A ``__cluster_metadata-0`` directory written with kcodec's encoders, for the metadata image tests and the
pipeline's: a log that registers and fences brokers, creates, alters and deletes topics, sets and removes
configs, commits and aborts KRaft transactions (offsets 0 to LAST), with a ``.checkpoint`` snapshot of the
first SNAPSHOT_END records."""

from __future__ import annotations

import uuid
from pathlib import Path

from kcodec.generated import codec
from kcodec.generated.registries import REGISTRIES
from kcodec.records.encode import NewRecord, encode_batch, encode_control_batch

API_KEYS = {r["name"]: r["type"] for r in REGISTRIES["cluster_metadata"]["records"]}
ORDERS, TMP, COMMITTED, ABORTED = (uuid.UUID(int=n) for n in (1, 2, 3, 4))
INCARNATION = uuid.UUID(int=99)


def metadata_value(name: str, value: dict, version: int = 0) -> bytes:
    """A metadata record's value as Kafka's MetadataRecordSerde frames it (frame version 1, api key, version)."""
    return bytes([1, API_KEYS[name], version]) + codec(name, version).build(value)


def broker(broker_id: int, epoch: int) -> tuple[str, dict, int]:
    return (
        "register_broker_record",
        {
            "broker_id": broker_id,
            "incarnation_id": INCARNATION,
            "broker_epoch": epoch,
            "end_points": [{"name": "PLAINTEXT", "host": f"b{broker_id}", "port": 9092, "security_protocol": 0}],
            "features": [{"name": "metadata.version", "min_supported_version": 1, "max_supported_version": 20}],
            "rack": "r1",
            "fenced": True,
            "in_controlled_shutdown": False,
        },
        1,
    )


def partition(topic_id: uuid.UUID, pid: int, replicas: list[int]) -> tuple[str, dict, int]:
    value = {
        "partition_id": pid,
        "topic_id": topic_id,
        "replicas": replicas,
        "isr": replicas,
        "removing_replicas": [],
        "adding_replicas": [],
        "leader": replicas[0],
        "leader_recovery_state": 0,
        "leader_epoch": 0,
        "partition_epoch": 0,
    }
    return "partition_record", value, 0


def config(name: str, value: str | None) -> tuple[str, dict, int]:
    return "config_record", {"resource_type": 2, "resource_name": "orders", "name": name, "value": value}, 0


# offsets 0-8: the state the snapshot holds
BEFORE_SNAPSHOT = [
    ("feature_level_record", {"name": "metadata.version", "feature_level": 20}, 0),
    broker(1, 10),
    broker(2, 11),
    ("unfence_broker_record", {"id": 1, "epoch": 10}, 0),
    ("unfence_broker_record", {"id": 2, "epoch": 11}, 0),
    ("topic_record", {"name": "orders", "topic_id": ORDERS}, 0),
    partition(ORDERS, 0, [1, 2]),
    partition(ORDERS, 1, [2, 1]),
    config("retention.ms", "1000"),
]
CHANGE = {
    "partition_id": 0,
    "topic_id": ORDERS,
    "isr": [2],
    "leader": 2,
    "replicas": None,
    "removing_replicas": None,
    "adding_replicas": None,
    "leader_recovery_state": -1,
}
# offsets 9-25
AFTER_SNAPSHOT = [
    ("partition_change_record", CHANGE, 0),
    config("retention.ms", None),
    ("fence_broker_record", {"id": 1, "epoch": 10}, 0),
    ("topic_record", {"name": "tmp", "topic_id": TMP}, 0),
    partition(TMP, 0, [2]),
    ("remove_topic_record", {"topic_id": TMP}, 0),
    ("begin_transaction_record", {"name": "create"}, 0),
    ("topic_record", {"name": "committed", "topic_id": COMMITTED}, 0),
    ("end_transaction_record", {}, 0),
    ("begin_transaction_record", {"name": "abandoned"}, 0),
    ("topic_record", {"name": "aborted", "topic_id": ABORTED}, 0),
    ("abort_transaction_record", {"reason": "test"}, 0),
    (
        "client_quota_record",
        {
            "entity": [{"entity_type": "user", "entity_name": "alice"}],
            "key": "producer_byte_rate",
            "value": 1024.0,
            "remove": False,
        },
        0,
    ),
    ("producer_ids_record", {"broker_id": 2, "broker_epoch": 11, "next_producer_id": 5000}, 0),
    (
        "register_controller_record",
        {
            "controller_id": 3000,
            "incarnation_id": INCARNATION,
            "zk_migration_ready": False,
            "end_points": [{"name": "CONTROLLER", "host": "c", "port": 9093, "security_protocol": 0}],
            "features": [],
        },
        0,
    ),
    ("begin_transaction_record", {"name": "open"}, 0),
    ("topic_record", {"name": "open", "topic_id": uuid.UUID(int=5)}, 0),
]
SNAPSHOT_END = len(BEFORE_SNAPSHOT)
LAST = SNAPSHOT_END + len(AFTER_SNAPSHOT) - 1


def _segment(records: list[tuple[str, dict, int]], first: int) -> bytes:
    return b"".join(
        encode_batch([NewRecord(value=metadata_value(n, v, ver), timestamp=1000)], base_offset=first + i)
        for i, (n, v, ver) in enumerate(records)
    )


def _snapshot(records: list[tuple[str, dict, int]]) -> bytes:
    header = codec("snapshot_header_record", 0).build({"version": 0, "last_contained_log_timestamp": 1000})
    footer = codec("snapshot_footer_record", 0).build({"version": 0})
    values = [NewRecord(value=metadata_value(n, v, ver)) for n, v, ver in records]
    return (
        encode_control_batch("snapshot_header", value=header, offset=0)
        + encode_batch(values, base_offset=1)
        + encode_control_batch("snapshot_footer", value=footer, offset=len(records) + 1)
    )


def write_metadata_dir(root: Path) -> Path:
    """``root/__cluster_metadata-0``: the log in two segments and the snapshot."""
    d = root / "__cluster_metadata-0"
    d.mkdir(parents=True)
    (d / "00000000000000000000.log").write_bytes(_segment(BEFORE_SNAPSHOT, 0))
    (d / f"{SNAPSHOT_END:020d}.log").write_bytes(_segment(AFTER_SNAPSHOT, SNAPSHOT_END))
    (d / f"{SNAPSHOT_END:020d}-{1:010d}.checkpoint").write_bytes(_snapshot(BEFORE_SNAPSHOT))
    return d
