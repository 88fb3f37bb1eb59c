"""The group coordinator's newer records (consumer, share and streams groups, record types 3-23) in a
__consumer_offsets segment, written with kcodec's own encoders."""

from __future__ import annotations

import struct
import uuid
from pathlib import Path

from kcodec.generated import codec
from kcodec.records.encode import NewRecord, encode_batch

TS = 1700000000000
TOPIC = uuid.UUID(bytes=bytes(15) + b"\x01")  # Kafka prints it as AAAAAAAAAAAAAAAAAAAAAQ


def _key(record_type: int, entity: str, value: dict) -> bytes:
    return struct.pack(">h", record_type) + codec(entity, 0).build(value)


def _value(entity: str, value: dict, version: int = 0) -> bytes:
    return struct.pack(">h", version) + codec(entity, version).build(value)


def _member_metadata() -> dict:
    return {
        "instance_id": None,
        "rack_id": "r1",
        "client_id": "c",
        "client_host": "/127.0.0.1",
        "subscribed_topic_names": ["orders"],
        "subscribed_topic_regex": None,
        "rebalance_timeout_ms": 30000,
        "server_assignor": "uniform",
        "classic_member_metadata": {
            "session_timeout_ms": 45000,
            "supported_protocols": [{"name": "range", "metadata": b"\x00\x01"}],
        },
    }


def streams_member() -> dict:
    return {
        "instance_id": None,
        "rack_id": None,
        "client_id": "s",
        "client_host": "/127.0.0.1",
        "rebalance_timeout_ms": -1,
        "topology_epoch": 2,
        "process_id": "p1",
        "user_endpoint": {"host": "h", "port": 8080},
        "client_tags": [{"key": "zone", "value": "a"}],
    }


def _topology() -> dict:
    changelog = {"name": "app-store-changelog", "partitions": 0, "replication_factor": 0, "topic_configs": []}
    return {
        "epoch": 2,
        "subtopologies": [
            {
                "subtopology_id": "0",
                "source_topics": ["orders"],
                "source_topic_regex": [],
                "state_changelog_topics": [changelog],
                "repartition_sink_topics": [],
                "repartition_source_topics": [],
                "copartition_groups": [
                    {"source_topics": [0], "source_topic_regex": [], "repartition_source_topics": []}
                ],
            }
        ],
    }


def coordinator_segment(directory: Path) -> Path:
    """A __consumer_offsets segment of the group coordinator's newer records (types 3-23), a tombstone, a
    record type Kafka does not define and a value cut short, written with kcodec's own encoders."""
    g = {"group_id": "g1"}
    gm = {"group_id": "g1", "member_id": "m1"}
    records = [
        (
            _key(3, "consumer_group_metadata_key", g),
            _value("consumer_group_metadata_value", {"epoch": 4, "metadata_hash": 77}),
        ),
        (
            _key(5, "consumer_group_member_metadata_key", gm),
            _value("consumer_group_member_metadata_value", _member_metadata()),
        ),
        (
            _key(8, "consumer_group_current_member_assignment_key", gm),
            _value(
                "consumer_group_current_member_assignment_value",
                {
                    "member_epoch": 4,
                    "previous_member_epoch": 3,
                    "state": 0,
                    "assigned_partitions": [{"topic_id": TOPIC, "partitions": [0, 1]}],
                    "partitions_pending_revocation": [],
                },
            ),
        ),
        (
            _key(16, "consumer_group_regular_expression_key", {"group_id": "g1", "regular_expression": "ord.*"}),
            _value("consumer_group_regular_expression_value", {"topics": ["orders"], "version": 12, "timestamp": TS}),
        ),
        (
            _key(11, "share_group_metadata_key", g),
            _value("share_group_metadata_value", {"epoch": 1, "metadata_hash": -5}),
        ),
        (
            _key(15, "share_group_state_partition_metadata_key", g),
            _value(
                "share_group_state_partition_metadata_value",
                {
                    "initializing_topics": [],
                    "initialized_topics": [{"topic_id": TOPIC, "topic_name": "orders", "partitions": [0]}],
                    "deleting_topics": [],
                },
            ),
        ),
        (_key(23, "streams_group_topology_key", g), _value("streams_group_topology_value", _topology())),
        (
            _key(19, "streams_group_member_metadata_key", gm),
            _value("streams_group_member_metadata_value", streams_member()),
        ),
        (_key(19, "streams_group_member_metadata_key", gm), None),  # a tombstone
        (struct.pack(">h", 99) + b"\x00\x02g1", b"\x00\x00"),  # a record type Kafka 4.1 does not define
        (_key(17, "streams_group_metadata_key", g), b"\x00\x00\x00\x00"),  # a value cut short
        (
            _key(20, "streams_group_target_assignment_metadata_key", g),
            _value("streams_group_target_assignment_metadata_value", {"assignment_epoch": 9}),
        ),
    ]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "00000000000000000000.log"
    path.write_bytes(encode_batch([NewRecord(key=k, value=v, timestamp=TS) for k, v in records]))
    return path
