"""Log directories of Kafka's internal topics written with kcodec's own encoders (the generated codecs for
keys and values, encode_batch / encode_control_batch, SegmentWriter), for the views' library and Spark
tests: what each holds is listed here, and the tests check the rows against it."""

from __future__ import annotations

import struct
import uuid
from pathlib import Path

from kcodec.generated import codec
from kcodec.log.writer import SegmentWriter
from kcodec.records.encode import encode_batch, encode_control_batch
from kcodec.runtime.varint import encode_uvarint

T0 = 1_700_000_000_000  # record timestamps start here (ms)
TOPIC_ID = uuid.UUID(int=0x1234)


def key(rtype: int, entity: str, version: int, value: dict) -> bytes:
    return struct.pack(">h", rtype) + codec(entity, version).build(value)


def value(entity: str, version: int, data: dict) -> bytes:
    return struct.pack(">h", version) + codec(entity, version).build(data)


def offset_key(group: str, topic: str, partition: int) -> bytes:
    return key(1, "offset_commit_key", 1, {"group": group, "topic": topic, "partition": partition})


def offset_value(version: int, offset: int, **extra) -> bytes:
    data = {"offset": offset, "leader_epoch": 4, "metadata": "m", "commit_timestamp": T0, "expire_timestamp": -1}
    return value("offset_commit_value", version, data | extra)


def _protocol(entity: str, version: int, data: dict) -> bytes:
    return struct.pack(">h", version) + codec(entity, version).build(data)


SUBSCRIPTION = _protocol(
    "consumer_protocol_subscription",
    1,
    {"topics": ["orders", "payments"], "user_data": None, "owned_partitions": [{"topic": "orders", "partitions": [0]}]},
)
ASSIGNMENT = _protocol(
    "consumer_protocol_assignment",
    1,
    {"assigned_partitions": [{"topic": "orders", "partitions": [0, 1]}], "user_data": b"ud"},
)


def group_value(members: list[dict], protocol_type: str = "consumer") -> bytes:
    return value(
        "group_metadata_value",
        3,
        {
            "protocol_type": protocol_type,
            "generation": 7,
            "protocol": "range",
            "leader": members[0]["member_id"] if members else None,
            "current_state_timestamp": T0 + 5,
            "members": members,
        },
    )


def member(member_id: str, subscription: bytes = SUBSCRIPTION, assignment: bytes = ASSIGNMENT) -> dict:
    return {
        "member_id": member_id,
        "group_instance_id": None,
        "client_id": "client-" + member_id,
        "client_host": "/127.0.0.1",
        "rebalance_timeout": 300000,
        "session_timeout": 45000,
        "subscription": subscription,
        "assignment": assignment,
    }


def consumer_group_records(group: str, epoch: int, members: dict[str, list[int]], pending=()) -> list[dict]:
    """A KIP-848 consumer group's records as GroupMetadataManager writes a rebalance: each member's metadata
    (type 5), the group epoch (type 3), a target assignment member record (type 7, not a view's), then each
    member's current assignment (type 8) of ``orders`` partitions (``pending``: the last member's to revoke)."""
    out = []
    for m in members:
        meta = {
            "instance_id": None,
            "rack_id": "rack-a",
            "client_id": "client-" + m,
            "client_host": "/127.0.0.1",
            "subscribed_topic_names": ["orders"],
            "subscribed_topic_regex": None,
            "rebalance_timeout_ms": 300000,
            "server_assignor": "uniform",
            "classic_member_metadata": None,
        }
        out.append({"key": member_key(5, group, m), "value": value("consumer_group_member_metadata_value", 0, meta)})
    out.append({"key": group_key(group), "value": value("consumer_group_metadata_value", 0, {"epoch": epoch})})
    first = next(iter(members))
    target = {"topic_partitions": [{"topic_id": TOPIC_ID, "partitions": members[first]}]}
    out.append(
        {"key": member_key(7, group, first), "value": value("consumer_group_target_assignment_member_value", 0, target)}
    )
    for m, partitions in members.items():
        assignment = {
            "member_epoch": epoch,
            "previous_member_epoch": epoch - 1,
            "state": 0,
            "assigned_partitions": [{"topic_id": TOPIC_ID, "partitions": partitions}],
            "partitions_pending_revocation": [{"topic_id": TOPIC_ID, "partitions": list(pending)}]
            if pending and m == list(members)[-1]
            else [],
        }
        out.append(
            {
                "key": member_key(8, group, m),
                "value": value("consumer_group_current_member_assignment_value", 0, assignment),
            }
        )
    return out


def group_key(group: str) -> bytes:
    return key(3, "consumer_group_metadata_key", 0, {"group_id": group})


def member_key(rtype: int, group: str, member_id: str) -> bytes:
    entity = {5: "consumer_group_member_metadata_key", 7: "consumer_group_target_assignment_member_key"}.get(
        rtype, "consumer_group_current_member_assignment_key"
    )
    return key(rtype, entity, 0, {"group_id": group, "member_id": member_id})


def partition_metadata(group: str) -> dict:
    """The group's topic-name record (type 4): ``orders`` is TOPIC_ID."""
    topics = [{"topic_id": TOPIC_ID, "topic_name": "orders", "num_partitions": 4, "partition_metadata": []}]
    return {
        "key": key(4, "consumer_group_partition_metadata_key", 0, {"group_id": group}),
        "value": value("consumer_group_partition_metadata_value", 0, {"topics": topics}),
    }


def _write(directory: Path, batches: list[list[dict]]) -> None:
    """One segment per batch (segment_bytes=1 rolls after each entry): the tests read across segments."""
    offset = 0
    with SegmentWriter(directory, segment_bytes=1) as w:
        for records in batches:
            for i, r in enumerate(records):
                r.setdefault("timestamp", T0 + offset + i)
            w.append(encode_batch(records, base_offset=offset))
            offset += len(records)


def write_consumer_offsets(root: Path, damaged: bool = False) -> Path:
    """``__consumer_offsets-0``: segment 1 commits g1/orders-0 (v3) and g1/orders-1 (v1, with an expire
    time), g2/orders-0, and g1's group metadata (two consumer members, one whose subscription is not the
    consumer protocol); segment 2 re-commits g1/orders-0 (v4), deletes g2/orders-0 (tombstone), holds a
    record of a type the schemas do not know, and (``damaged``) an offset commit whose value is cut short.
    ``__consumer_offsets-1``: a commit of g3/payments-2 and a connect group's metadata (offsets 0-1); then
    (offsets 2-9) KIP-848 consumer group cg's partition metadata, members c1 (orders 0, 1) and c2
    (orders 2, pending revocation of 3) at epoch 5 (its epoch record at 5); then (offsets 10-14) c2 leaves
    (tombstones of its member and assignment records) and cg goes to epoch 6, and group cg-gone is created
    and deleted."""
    p0 = root / "__consumer_offsets-0"
    second = [
        {"key": offset_key("g1", "orders", 0), "value": offset_value(4, 10)},
        {"key": offset_key("g2", "orders", 0), "value": None},
        {"key": struct.pack(">h", 99) + b"future", "value": b"\x00\x00?"},
    ]
    if damaged:
        second.append({"key": offset_key("g9", "orders", 0), "value": b"\x00\x03\x00\x00"})
    _write(
        p0,
        [
            [
                {"key": offset_key("g1", "orders", 0), "value": offset_value(3, 5)},
                {"key": offset_key("g1", "orders", 1), "value": offset_value(1, 7, expire_timestamp=T0 + 1000)},
                {"key": offset_key("g2", "orders", 0), "value": offset_value(3, 3, leader_epoch=-1)},
                {
                    "key": key(2, "group_metadata_key", 2, {"group": "g1"}),
                    "value": group_value([member("m1"), member("m2", subscription=b"\x00")]),
                },
            ],
            second,
        ],
    )
    _write(
        root / "__consumer_offsets-1",
        [
            [
                {"key": offset_key("g3", "payments", 2), "value": offset_value(3, 42)},
                {
                    "key": key(2, "group_metadata_key", 2, {"group": "connect-1"}),
                    "value": group_value([member("w1", b"\x00\x01raw", b"\x00\x01raw")], "connect"),
                },
            ],
            [partition_metadata("cg"), *consumer_group_records("cg", 5, {"c1": [0, 1], "c2": [2]}, pending=[3])],
            [
                {"key": member_key(5, "cg", "c2"), "value": None},
                {"key": member_key(8, "cg", "c2"), "value": None},
                {"key": group_key("cg"), "value": value("consumer_group_metadata_value", 0, {"epoch": 6})},
                {"key": group_key("cg-gone"), "value": value("consumer_group_metadata_value", 0, {"epoch": 1})},
                {"key": group_key("cg-gone"), "value": None},
            ],
        ],
    )
    return p0


def txn_value(state: int, version: int = 1, **extra) -> bytes:
    data = {
        "producer_id": 1000,
        "previous_producer_id": -1,
        "next_producer_id": -1,
        "producer_epoch": 2,
        "transaction_timeout_ms": 60000,
        "transaction_status": state,
        "transaction_partitions": [{"topic": "orders", "partition_ids": [0, 1]}],
        "transaction_last_update_timestamp_ms": T0 + 10,
        "transaction_start_timestamp_ms": T0,
        "client_transaction_version": 2,
    }
    return value("transaction_log_value", version, data | extra)


def txn_key(tid: str) -> bytes:
    return key(0, "transaction_log_key", 0, {"transactional_id": tid})


def write_transaction_state(root: Path) -> Path:
    """``__transaction_state-0``: tx1 Ongoing (v0), then CompleteCommit (v1, previous producer id 999, no
    partitions); tx2 Empty, then deleted (tombstone)."""
    p = root / "__transaction_state-0"
    _write(
        p,
        [
            [{"key": txn_key("tx1"), "value": txn_value(1, version=0)}, {"key": txn_key("tx2"), "value": txn_value(0)}],
            [
                {"key": txn_key("tx1"), "value": txn_value(4, previous_producer_id=999, transaction_partitions=None)},
                {"key": txn_key("tx2"), "value": None},
            ],
        ],
    )
    return p


def metadata_value(api_key: int, entity: str, version: int, data: dict) -> bytes:
    return encode_uvarint(1) + encode_uvarint(api_key) + encode_uvarint(version) + codec(entity, version).build(data)


def write_cluster_metadata(root: Path) -> Path:
    """``__cluster_metadata-0``: a snapshot ``00000000000000000002-0000000001.checkpoint`` (header, a
    FEATURE_LEVEL_RECORD and a TOPIC_RECORD, footer) and a log of a TOPIC_RECORD, a PARTITION_RECORD, a
    leader change control batch and a REMOVE_TOPIC_RECORD."""
    p = root / "__cluster_metadata-0"
    feature = metadata_value(12, "feature_level_record", 0, {"name": "metadata.version", "feature_level": 20})
    topic = metadata_value(2, "topic_record", 0, {"name": "orders", "topic_id": TOPIC_ID})
    partition = metadata_value(
        3,
        "partition_record",
        0,
        {
            "partition_id": 0,
            "topic_id": TOPIC_ID,
            "replicas": [1],
            "isr": [1],
            "removing_replicas": [],
            "adding_replicas": [],
            "leader": 1,
            "leader_epoch": 0,
            "partition_epoch": 0,
        },
    )
    remove = metadata_value(9, "remove_topic_record", 0, {"topic_id": TOPIC_ID})
    header = codec("snapshot_header_record", 0).build({"version": 0, "last_contained_log_timestamp": T0})
    footer = codec("snapshot_footer_record", 0).build({"version": 0})
    leader = codec("leader_change_message", 0).build(
        {"version": 0, "leader_id": 1, "voters": [{"voter_id": 1}], "granting_voters": [{"voter_id": 1}]}
    )
    p.mkdir(parents=True)
    snapshot = (
        encode_control_batch("snapshot_header", offset=0, timestamp=T0, value=header)
        + encode_batch([{"value": feature, "timestamp": T0}, {"value": topic, "timestamp": T0}], base_offset=1)
        + encode_control_batch("snapshot_footer", offset=3, timestamp=T0, value=footer)
    )
    (p / "00000000000000000002-0000000001.checkpoint").write_bytes(snapshot)
    with SegmentWriter(p) as w:
        log = [{"value": topic, "timestamp": T0}, {"value": partition, "timestamp": T0}]
        w.append(encode_batch(log, base_offset=0))
        w.append(encode_control_batch("leader_change", offset=2, timestamp=T0 + 1, value=leader))
        w.append(encode_batch([{"value": remove, "timestamp": T0 + 2}], base_offset=3))
    return p


def write_internal_topics(root: Path) -> Path:
    """All three under ``root``, a log directory."""
    write_consumer_offsets(root)
    write_transaction_state(root)
    write_cluster_metadata(root)
    return root


def write_transactional_commits(root: Path) -> Path:
    """``__consumer_offsets-0`` as the group coordinator writes TxnOffsetCommit (KIP-98): producer 7 commits
    gt/orders-0 = 100 in a transactional batch (offset 0) then aborts (ABORT marker, offset 1: the writer
    adds the .txnindex entry); producer 8 commits gt/orders-1 = 200 (offset 2) and commits (offset 3)."""
    p = root / "__consumer_offsets-0"
    with SegmentWriter(p) as w:
        for base, (pid, partition, committed, marker) in enumerate([(7, 0, 100, "abort"), (8, 1, 200, "commit")]):
            commit = [{"key": offset_key("gt", "orders", partition), "value": offset_value(3, committed)}]
            w.append(
                encode_batch(
                    commit, base_offset=2 * base, producer_id=pid, producer_epoch=0, base_sequence=0, transactional=True
                )
            )
            w.append(encode_control_batch(marker, producer_id=pid, producer_epoch=0, offset=2 * base + 1, timestamp=T0))
    return p
