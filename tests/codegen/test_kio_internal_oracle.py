"""kio (a PyPI library generated from Kafka's own message definitions) as an oracle for the shipped schemas
of Kafka's internal messages it also encodes: the consumer protocol's Subscription and Assignment (every
version), the KRaft control records (LeaderChange, SnapshotHeader, SnapshotFooter, KRaftVersion, Voters) and
the control record key and transaction marker. Both ways: kcodec builds the bytes kio writes, parses kio's
bytes back to the same fields (and rebuilds them byte for byte), and kio reads kcodec's bytes to the
message it was given."""

from __future__ import annotations

import importlib
import io
import uuid

import pytest

from kcodec.generated import codec

kio_serial = pytest.importorskip("kio.serial")
from kio.static.primitive import i16, i32, i64, u16  # noqa: E402

DIRECTORY = uuid.UUID("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")


def _kio(module: str, version: int):
    return importlib.import_module(f"kio.schema.{module}.v{version}.data")


def _kio_bytes(message) -> bytes:
    buffer = io.BytesIO()
    kio_serial.entity_writer(type(message))(buffer, message)
    return buffer.getvalue()


def _only(parsed, like):
    """kcodec's parsed value narrowed to the fields kio's message has (kcodec adds the defaults of fields
    absent at the version and ``_unknown_tags``)."""
    if isinstance(like, dict):
        return {k: _only(parsed[k], v) for k, v in like.items()}
    if isinstance(like, list):
        return [_only(p, v) for p, v in zip(parsed, like)]
    return parsed


def _subscription(version: int):
    k = _kio("consumer_protocol_subscription", version)
    fields: dict = {"topics": ("orders", "payments"), "user_data": b"\x01\x02"}
    value: dict = {"topics": ["orders", "payments"], "user_data": b"\x01\x02"}
    if version >= 1:
        fields["owned_partitions"] = (k.TopicPartition(topic="orders", partitions=(i32(0), i32(3))),)
        value["owned_partitions"] = [{"topic": "orders", "partitions": [0, 3]}]
    if version >= 2:
        fields["generation_id"] = i32(7)
        value["generation_id"] = 7
    if version >= 3:
        fields["rack_id"] = "rack-a"
        value["rack_id"] = "rack-a"
    return k.ConsumerProtocolSubscription(**fields), value


def _assignment(version: int):
    k = _kio("consumer_protocol_assignment", version)
    message = k.ConsumerProtocolAssignment(
        assigned_partitions=(k.TopicPartition(topic="orders", partitions=(i32(1), i32(2))),), user_data=None
    )
    return message, {"assigned_partitions": [{"topic": "orders", "partitions": [1, 2]}], "user_data": None}


def _leader_change(version: int):
    k = _kio("leader_change_message", version)
    extra = {"voter_directory_id": DIRECTORY} if version >= 1 else {}
    voters = (k.Voter(voter_id=i32(1), **extra), k.Voter(voter_id=i32(2), **extra))
    message = k.LeaderChangeMessage(version=i16(version), leader_id=i32(1), voters=voters, granting_voters=voters[:1])
    voter_values = [{"voter_id": v, **extra} for v in (1, 2)]
    return message, {"version": version, "leader_id": 1, "voters": voter_values, "granting_voters": voter_values[:1]}


def _snapshot_header(_: int):
    k = _kio("snapshot_header_record", 0)
    message = k.SnapshotHeaderRecord(version=i16(0), last_contained_log_timestamp=i64(1700000000000))
    return message, {"version": 0, "last_contained_log_timestamp": 1700000000000}


def _snapshot_footer(_: int):
    return _kio("snapshot_footer_record", 0).SnapshotFooterRecord(version=i16(0)), {"version": 0}


def _kraft_version(_: int):
    message = _kio("k_raft_version_record", 0).KRaftVersionRecord(version=i16(0), k_raft_version=i16(1))
    return message, {"version": 0, "k_raft_version": 1}


def _voters(_: int):
    k = _kio("voters_record", 0)
    message = k.VotersRecord(
        version=i16(0),
        voters=(
            k.Voter(
                voter_id=i32(3),
                voter_directory_id=DIRECTORY,
                endpoints=(k.Endpoint(name="CONTROLLER", host="kraft-3", port=u16(9093)),),
                k_raft_version_feature=k.KRaftVersionFeature(
                    min_supported_version=i16(0), max_supported_version=i16(1)
                ),
            ),
        ),
    )
    value = {
        "version": 0,
        "voters": [
            {
                "voter_id": 3,
                "voter_directory_id": DIRECTORY,
                "endpoints": [{"name": "CONTROLLER", "host": "kraft-3", "port": 9093}],
                "k_raft_version_feature": {"min_supported_version": 0, "max_supported_version": 1},
            }
        ],
    }
    return message, value


CASES = [
    *[("consumer_protocol_subscription", v, _subscription) for v in range(4)],
    *[("consumer_protocol_assignment", v, _assignment) for v in range(4)],
    ("leader_change_message", 0, _leader_change),
    ("leader_change_message", 1, _leader_change),
    ("snapshot_header_record", 0, _snapshot_header),
    ("snapshot_footer_record", 0, _snapshot_footer),
    ("k_raft_version_record", 0, _kraft_version),
    ("voters_record", 0, _voters),
]


@pytest.mark.parametrize("entity,version,make", CASES, ids=[f"{e}-v{v}" for e, v, _ in CASES])
def test_kcodec_and_kio_agree_both_ways(entity: str, version: int, make) -> None:
    message, value = make(version)
    c = codec(entity, version)
    kio_bytes = _kio_bytes(message)
    ours = c.build(value)
    assert ours == kio_bytes  # kcodec writes what Kafka's definitions write
    assert c.size(value) == len(kio_bytes)
    parsed = c.parse(kio_bytes)
    assert _only(parsed, value) == value and c.build(parsed) == kio_bytes
    read, used = kio_serial.entity_reader(type(message))(ours, 0)
    assert read == message and used == len(ours)


def test_control_record_key_and_transaction_marker() -> None:
    # kio leaves the leading version to its caller (Kafka's ControlRecordType and EndTransactionMarker
    # write it themselves); kcodec's schemas hold it as their first field.
    key_kio = _kio("control_record_type_schema", 0).ControlRecordTypeSchema(type_=i16(1))
    key = codec("control_record_key", 0).build({"version": 0, "type": "commit"})
    assert key == b"\x00\x00" + _kio_bytes(key_kio)
    assert kio_serial.entity_reader(type(key_kio))(key[2:], 0)[0] == key_kio
    marker_kio = _kio("end_txn_marker", 0).EndTxnMarker(coordinator_epoch=i32(17))
    marker = codec("end_txn_marker", 0).build({"version": 0, "coordinator_epoch": 17})
    assert marker == b"\x00\x00" + _kio_bytes(marker_kio)
    assert codec("end_txn_marker", 0).parse(b"\x00\x00" + _kio_bytes(marker_kio))["coordinator_epoch"] == 17
