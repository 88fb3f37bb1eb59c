"""Kafka's internal records as typed table rows: the views ``consumerOffsets``, ``groups``, ``transactions``
and ``metadata`` that :func:`kcodec.read_internal_view` and the ``kafka-segments`` Spark source give.

Each view takes the records of one internal topic (decoded by :mod:`kcodec.internal_topics.registry`) and keeps
those of its record types: ``consumerOffsets`` the OffsetCommit records of ``__consumer_offsets``,
``groups`` its GroupMetadata records (classic groups; a consumer group's member subscription and
assignment decoded from the nested consumer protocol, as Kafka's ConsumerProtocol reads them),
``transactions`` the TransactionLog records of ``__transaction_state``, ``metadata`` every KRaft record of
``__cluster_metadata`` (log or ``.checkpoint`` snapshot) with its Kafka JSON. Records of types a view does
not hold (and of types newer than the schemas) are passed over; a record of the view's types that does not
decode raises :class:`ViewRecordError`, which the readers handle as ``onCorrupt`` says.

``latest=True`` (not for ``metadata``) keeps one row per key, the last, and drops keys whose last record is
a tombstone: what compaction leaves, and what the coordinator loads (GroupMetadataManager,
TransactionStateManager). Keys never cross partitions of an internal topic, so a reader compacts each
partition in offset order on its own.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from kcodec.errors import DecodeError, KcodecError
from kcodec.generated import ENTITY_VERSIONS, codec
from kcodec.generated.enums import TRANSACTION_STATE_BY_VALUE
from kcodec.internal_topics.groups import ConsumerGroupMembers
from kcodec.internal_topics.json_converter import compact_json, kafka_json
from kcodec.internal_topics.registry import InternalRecord, UnknownRecordTypeError, decode_control, decode_internal
from kcodec.records.model import Record
from kcodec.records.view_columns import Column
from kcodec.runtime.varint import INT64_MAX

__all__ = [
    "ViewRecordError",
    "VIEWS",
    "VIEW_TOPICS",
    "view_columns",
    "view_column",
    "ViewRows",
    "rows_to_batch",
]


class ViewRecordError(DecodeError):
    """A record of a view's types whose key or value does not decode (or holds a value no column can)."""

    kind = "internal_record"


_TS = pa.timestamp("us", tz="UTC")
_TP = pa.struct([("topic", pa.string()), ("partitions", pa.list_(pa.field("element", pa.int32())))])
_TPS = pa.list_(pa.field("element", _TP))
_TPS_SPARK = "array<struct<topic:string,partitions:array<int>>>"
# a member's partitions: by name (classic groups' consumer protocol), or by topic id (consumer groups, named
# when the read saw the group's partition metadata record)
_MTP = pa.struct(
    [("topic", pa.string()), ("topicId", pa.string()), ("partitions", pa.list_(pa.field("element", pa.int32())))]
)
_MTPS = pa.list_(pa.field("element", _MTP))
_MTPS_SPARK = "array<struct<topic:string,topicId:string,partitions:array<int>>>"
_MEMBER = pa.struct(
    [
        ("memberId", pa.string()),
        ("groupInstanceId", pa.string()),
        ("clientId", pa.string()),
        ("clientHost", pa.string()),
        ("rebalanceTimeoutMs", pa.int32()),
        ("sessionTimeoutMs", pa.int32()),
        ("subscribedTopics", pa.list_(pa.field("element", pa.string()))),
        ("ownedPartitions", _MTPS),
        ("generationId", pa.int32()),
        ("rackId", pa.string()),
        ("subscriptionUserData", pa.binary()),
        ("assignedPartitions", _MTPS),
        ("assignmentUserData", pa.binary()),
        ("subscription", pa.binary()),
        ("assignment", pa.binary()),
        ("memberEpoch", pa.int32()),
        ("subscribedTopicRegex", pa.string()),
        ("serverAssignor", pa.string()),
        ("partitionsPendingRevocation", _MTPS),
    ]
)
_MEMBER_SPARK = (
    "array<struct<memberId:string,groupInstanceId:string,clientId:string,clientHost:string,"
    "rebalanceTimeoutMs:int,sessionTimeoutMs:int,subscribedTopics:array<string>,"
    f"ownedPartitions:{_MTPS_SPARK},generationId:int,rackId:string,subscriptionUserData:binary,"
    f"assignedPartitions:{_MTPS_SPARK},assignmentUserData:binary,subscription:binary,assignment:binary,"
    f"memberEpoch:int,subscribedTopicRegex:string,serverAssignor:string,"
    f"partitionsPendingRevocation:{_MTPS_SPARK}>>"
)


_COUNTS = pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", pa.int64(), nullable=True))
_COUNTS_SPARK = "map<string,bigint>"


def _c(name: str, spark: str, doc: str) -> Column:
    arrow = {
        "string": pa.string(),
        "int": pa.int32(),
        "bigint": pa.int64(),
        "boolean": pa.bool_(),
        "timestamp": _TS,
        "binary": pa.binary(),
        _TPS_SPARK: _TPS,
        _MEMBER_SPARK: pa.list_(pa.field("element", _MEMBER)),
        "double": pa.float64(),
        _COUNTS_SPARK: _COUNTS,
    }[spark]
    return Column(name, spark, arrow, doc)


def view_column(name: str, spark: str, doc: str) -> Column:
    """A view's column by its Spark type name (``bigint``, ``map<string,bigint>`` ...): the one mapping of
    these names to Arrow types, shared by the housekeeping views (:mod:`kcodec.spark.housekeeping_columns`)."""
    return _c(name, spark, doc)


_RECORD = (
    _c("isTombstone", "boolean", "the record has a null value: it deletes its key"),
    _c("version", "int", "the value's schema version (null for a tombstone)"),
    _c("offset", "bigint", "the record's offset in the internal topic"),
    _c("timestamp", "timestamp", "the record's timestamp"),
    _c("sourcePartition", "int", "the partition of the internal topic the record is in"),
)

VIEWS: dict[str, tuple[Column, ...]] = {
    "consumerOffsets": (
        _c("group", "string", "consumer group id"),
        _c("topic", "string", "committed topic"),
        _c("partition", "int", "committed partition"),
        _c("committedOffset", "bigint", "the committed offset"),
        _c("leaderEpoch", "int", "leader epoch of the committed offset; null when unknown (-1, or before v3)"),
        _c("metadata", "string", "the metadata the client committed with the offset"),
        _c("commitTimestamp", "timestamp", "when the offset was committed"),
        _c("expireTimestamp", "timestamp", "when it expires (v1 values only; else null)"),
        *_RECORD,
    ),
    "groups": (
        _c("group", "string", "group id"),
        _c("groupType", "string", "classic (GroupMetadata records) or consumer (KIP-848 ConsumerGroupMetadata)"),
        _c("protocolType", "string", "consumer, connect ... (empty for a group with no member yet)"),
        _c("generation", "int", "the group generation (a consumer group's epoch)"),
        _c("protocol", "string", "the chosen assignor, null when none"),
        _c("leader", "string", "the leader's member id, null when none"),
        _c("stateTimestamp", "timestamp", "when the group last changed state (v2+; null when unknown)"),
        _c("members", _MEMBER_SPARK, "the members, subscription and assignment decoded (see below)"),
        *_RECORD,
    ),
    "transactions": (
        _c("transactionalId", "string", "the transactional id"),
        _c("producerId", "bigint", "producer id in use"),
        _c("producerEpoch", "int", "its epoch"),
        _c("previousProducerId", "bigint", "producer id of the last committed transaction (v1+; null when none)"),
        _c("nextProducerId", "bigint", "latest producer id sent to the producer (v1+; null when none)"),
        _c("timeoutMs", "int", "transaction timeout"),
        _c("state", "string", "Kafka's TransactionState name: Empty, Ongoing, PrepareCommit ... (a number if newer)"),
        _c("partitions", _TPS_SPARK, "the topic-partitions in the transaction (null when none)"),
        _c("lastUpdateTimestamp", "timestamp", "when the transaction was last updated"),
        _c("startTimestamp", "timestamp", "when the transaction started (null when none: -1)"),
        _c("clientTransactionVersion", "int", "the transaction version the client uses (v1+; 0 before)"),
        *_RECORD,
    ),
    "metadata": (
        _c("offset", "bigint", "offset in the log; in a snapshot, the record's position (snapshots count from 0)"),
        _c("timestamp", "timestamp", "the record's timestamp"),
        _c("type", "string", "MetadataRecordType name (TOPIC_RECORD ...), or the control type (SNAPSHOT_HEADER ...)"),
        _c("typeId", "int", "the api key (control type for control records)"),
        _c("version", "int", "the record's version"),
        _c("record", "string", "the record as Kafka's JSON (its *JsonConverter)"),
        _c("isControl", "boolean", "a KRaft control record (only with includeControlRecords)"),
        _c("snapshotEndOffset", "bigint", "for snapshot rows, the snapshot's end offset (from its name); else null"),
        _c("snapshotEpoch", "int", "for snapshot rows, the snapshot's epoch; else null"),
        _c("sourcePartition", "int", "the partition of __cluster_metadata"),
        _c("segment", "string", "the segment or snapshot file"),
    ),
}

#: the internal topic each view reads (its registry is kcodec.internal_topics.registry.registry_for_topic's)
VIEW_TOPICS = {
    "consumerOffsets": "__consumer_offsets",
    "groups": "__consumer_offsets",
    "transactions": "__transaction_state",
    "metadata": "__cluster_metadata",
}
_REGISTRY = {
    "consumerOffsets": "consumer_offsets",
    "groups": "consumer_offsets",
    "transactions": "transaction_state",
    "metadata": "cluster_metadata",
}
# the record types whose rows (or, for a consumer group's member records, whose state) each view takes
_RECORD_NAMES = {
    "consumerOffsets": {"offset_commit"},
    "groups": {"group_metadata", "consumer_group_metadata", *ConsumerGroupMembers.RECORDS},
    "transactions": {"transaction_log"},
}


def view_columns(view: str) -> tuple[Column, ...]:
    return VIEWS[view]


# ----------------------------------------------------------------------------- values


def _none_if(value: int | None, absent: int) -> int | None:
    return None if value is None or value == absent else value


def _ts(ms: int | None, field: str) -> int | None:
    """Milliseconds as the microseconds of a timestamp column; -1 (Kafka's "none") is null."""
    if ms is None or ms == -1:
        return None
    if not -(INT64_MAX // 1000) <= ms <= INT64_MAX // 1000:
        raise ViewRecordError(f"{field} {ms} ms is past what a timestamp column holds", field=field)
    return ms * 1000


def _topic_partitions(items, ids: str) -> list[dict] | None:
    if items is None:
        return None
    return [{"topic": t["topic"], "partitions": list(t[ids])} for t in items]


def _consumer_protocol(entity: str, blob: bytes | None) -> dict | None:
    """A member's subscription or assignment as Kafka's ConsumerProtocol reads it (int16 version, then the
    message); None when it does not decode, and the member keeps the bytes."""
    if blob is None or len(blob) < 2:
        return None
    version = struct.unpack_from(">h", blob)[0]
    versions = ENTITY_VERSIONS[entity]
    try:  # ConsumerProtocol reads a newer version as its newest one (forward compatible)
        return codec(entity, min(version, versions[-1])).parse(blob[2:]) if version >= 0 else None
    except KcodecError:
        return None


def _member(m: dict, consumer: bool) -> dict:
    sub = _consumer_protocol("consumer_protocol_subscription", m["subscription"]) if consumer else None
    asg = _consumer_protocol("consumer_protocol_assignment", m["assignment"]) if consumer else None
    return {
        "memberId": m["member_id"],
        "groupInstanceId": m.get("group_instance_id"),
        "clientId": m["client_id"],
        "clientHost": m["client_host"],
        "rebalanceTimeoutMs": _none_if(m.get("rebalance_timeout"), -1),
        "sessionTimeoutMs": m["session_timeout"],
        "subscribedTopics": None if sub is None else list(sub["topics"]),
        "ownedPartitions": None if sub is None else _topic_partitions(sub.get("owned_partitions", []), "partitions"),
        "generationId": None if sub is None else _none_if(sub.get("generation_id"), -1),
        "rackId": None if sub is None else sub.get("rack_id"),
        "subscriptionUserData": None if sub is None else sub["user_data"],
        "assignedPartitions": None if asg is None else _topic_partitions(asg["assigned_partitions"], "partitions"),
        "assignmentUserData": None if asg is None else asg["user_data"],
        "subscription": None if sub is not None else bytes(m["subscription"]),
        "assignment": None if asg is not None else bytes(m["assignment"]),
    }


def _offset_commit(key: dict, value: dict | None) -> dict:
    row: dict[str, Any] = {"group": key["group"], "topic": key["topic"], "partition": key["partition"]}
    if value is not None:
        row |= {
            "committedOffset": value["offset"],
            "leaderEpoch": _none_if(value.get("leader_epoch"), -1),
            "metadata": value["metadata"],
            "commitTimestamp": _ts(value["commit_timestamp"], "commitTimestamp"),
            "expireTimestamp": _ts(value.get("expire_timestamp"), "expireTimestamp"),
        }
    return row


def _group(key: dict, value: dict | None) -> dict:
    row: dict[str, Any] = {"group": key["group"], "groupType": "classic"}
    if value is not None:
        consumer = value["protocol_type"] == "consumer"
        row |= {
            "protocolType": value["protocol_type"],
            "generation": value["generation"],
            "protocol": value["protocol"],
            "leader": value["leader"],
            "stateTimestamp": _ts(value.get("current_state_timestamp"), "stateTimestamp"),
            "members": [_member(m, consumer) for m in value["members"]],
        }
    return row


def _transaction(key: dict, value: dict | None) -> dict:
    row: dict[str, Any] = {"transactionalId": key["transactional_id"]}
    if value is not None:
        status = value["transaction_status"]
        name = TRANSACTION_STATE_BY_VALUE.get(status)
        row |= {
            "producerId": value["producer_id"],
            "producerEpoch": value["producer_epoch"],
            "previousProducerId": _none_if(value.get("previous_producer_id"), -1),
            "nextProducerId": _none_if(value.get("next_producer_id"), -1),
            "timeoutMs": value["transaction_timeout_ms"],
            # TransactionState's names are the enum's in PascalCase (prepare_commit -> PrepareCommit)
            "state": str(status) if name is None else "".join(p.capitalize() for p in name.split("_")),
            "partitions": _topic_partitions(value["transaction_partitions"], "partition_ids"),
            "lastUpdateTimestamp": _ts(value["transaction_last_update_timestamp_ms"], "lastUpdateTimestamp"),
            "startTimestamp": _ts(value["transaction_start_timestamp_ms"], "startTimestamp"),
            "clientTransactionVersion": value.get("client_transaction_version", 0),
        }
    return row


def _consumer_group(key: dict, value: dict | None) -> dict:
    """A KIP-848 consumer group's epoch record; its members come from its member records (added later)."""
    row: dict[str, Any] = {"group": key["group_id"], "groupType": "consumer"}
    if value is not None:
        row |= {"protocolType": "consumer", "generation": value["epoch"], "members": []}
    return row


_COORDINATOR_ROWS = {
    "offset_commit": _offset_commit,
    "group_metadata": _group,
    "consumer_group_metadata": _consumer_group,
    "transaction_log": _transaction,
}


def _key_of(view: str, partition: int | None, row: dict) -> tuple:
    if view == "consumerOffsets":
        return partition, row["group"], row["topic"], row["partition"]
    if view == "groups":  # a classic and a consumer group record of one id are two keys, as in compaction
        return partition, row["groupType"], row["group"]
    return partition, row["transactionalId"]


# ----------------------------------------------------------------------------- rows


class ViewRows:
    """Rows of one view, fed the records of one internal topic in offset order (a partition's log, or a
    snapshot): :meth:`add` each record, :meth:`take` the rows so far (``latest``: only at the end, once the
    whole partition is read)."""

    def __init__(self, view: str, *, latest: bool = False, include_control: bool = False):
        if view not in VIEWS:
            raise ValueError(f"unknown view {view!r}: one of {', '.join(VIEWS)}")
        if latest and view == "metadata":
            raise ValueError("latest applies to the compacted topics' views, not to metadata (a log of changes)")
        self.view, self.latest, self.include_control = view, latest, include_control
        self.registry = _REGISTRY[view]
        self.rows: list[dict] = []
        self._latest: dict[tuple, dict] = {}
        self._members = ConsumerGroupMembers()

    def __len__(self) -> int:
        return len(self.rows)

    def add(
        self,
        record: Record,
        *,
        partition: int | None,
        segment: str | None = None,
        snapshot: tuple[int, int] | None = None,
    ) -> None:
        """Add ``record`` (of ``partition`` of the view's topic; ``snapshot``: (end offset, epoch) when it
        comes from a ``.checkpoint``); raises :class:`ViewRecordError` when a record of the view's types
        does not decode, naming its offset and whether the key or the value is at fault."""
        if self.view == "metadata":
            row = self._metadata(record)
            if row is not None:
                end, epoch = snapshot if snapshot is not None else (None, None)
                row |= {"snapshotEndOffset": end, "snapshotEpoch": epoch, "sourcePartition": partition}
                row |= {"segment": segment}
                self.rows.append(self._common(row, record))
            return
        if record.control is not None:
            return  # transaction markers in a coordinator topic: not records of a view
        names = _RECORD_NAMES[self.view]
        r = decode_internal(self.registry, record.key, record.value)
        if r.error is not None:
            if isinstance(r.error, UnknownRecordTypeError) or (r.name is not None and r.name not in names):
                return  # another view's record type, or one newer than the schemas: not this view's
            raise self._error(r, record)
        if r.name not in names:
            return
        assert r.key is not None
        value = None if r.value is None else r.value.value
        if r.name in ConsumerGroupMembers.RECORDS:
            self._members.add(r.name, partition, r.key.value, value)
            return
        try:
            row = _COORDINATOR_ROWS[r.name](r.key.value, value)
        except ViewRecordError as exc:
            raise ViewRecordError(f"record at offset {record.offset}: {exc.message}", field=exc.field) from None
        row |= {"isTombstone": value is None, "version": None if r.value is None else r.value.version}
        row |= {"sourcePartition": partition}
        row = self._common(row, record)
        if not self.latest:
            self._fill_members(row)  # as the read has them so far
            self.rows.append(row)
            return
        key = _key_of(self.view, partition, row)
        self._latest.pop(key, None)  # re-inserted: the survivors stay in the order of their last write
        if value is not None:
            self._latest[key] = row

    def _fill_members(self, row: dict) -> None:
        if row.get("groupType") == "consumer" and not row["isTombstone"]:
            row["members"] = self._members.members(row["sourcePartition"], row["group"])

    def _common(self, row: dict, record: Record) -> dict:
        row["offset"] = record.offset
        row["timestamp"] = _ts(record.timestamp, "timestamp")
        return row

    def _error(self, r: InternalRecord, record: Record) -> ViewRecordError:
        exc = r.error
        assert exc is not None
        # the key alone decodes (as a tombstone's would): the value is at fault
        key_ok = record.key is not None and decode_internal(self.registry, record.key, None).error is None
        where = "value" if key_ok else "key"
        return ViewRecordError(
            f"{r.name or 'record'} at offset {record.offset} does not decode ({where}): {exc.message}",
            field=where,
        )

    def _metadata(self, record: Record) -> dict | None:

        if record.control is not None:
            if not self.include_control:
                return None
            control = decode_control(record.control.type, record.value)
            if control is None:
                return None  # a transaction marker
            r, is_control = control, True
        else:
            r, is_control = decode_internal(self.registry, record.key, record.value), False
        if r.error is not None or r.value is None or r.name is None:
            what = r.name or (f"type {r.type}" if r.type is not None else "record")
            message = r.error.message if r.error is not None else "no value"
            raise ViewRecordError(f"{what} at offset {record.offset} does not decode: {message}", field="value")
        return {
            "type": r.name.upper(),
            "typeId": r.type,
            "version": r.value.version,
            "record": compact_json(kafka_json(r.value.entity, r.value.version, r.value.value)),
            "isControl": is_control,
        }

    def take(self) -> list[dict]:
        """The rows so far, and forget them; with ``latest`` the survivors, once all is added."""
        if self.latest:
            out, self._latest = list(self._latest.values()), {}
            for row in out:
                self._fill_members(row)
            return out
        out, self.rows = self.rows, []
        return out


def rows_to_batch(rows: Iterable[dict], columns: Iterable[tuple[Column, bool]]) -> pa.RecordBatch:
    """Rows as an Arrow record batch of ``columns`` ((column, nullable) pairs): a missing value is null."""
    rows = list(rows)
    cols = list(columns)
    schema = pa.schema([pa.field(c.name, c.arrow, nullable=nullable) for c, nullable in cols])
    arrays = [pa.array([row.get(c.name) for row in rows], c.arrow) for c, _ in cols]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
