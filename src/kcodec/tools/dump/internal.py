"""kafka-dump-log's decoders of Kafka's internal topics (``--offsets-decoder``, ``--transaction-log-decoder``,
``--share-group-state-decoder``, ``--cluster-metadata-decoder``, ``--remote-log-metadata-decoder``) and of KRaft
control records, printing what current Kafka prints:

- coordinator records: ``key: {"type":"0","data":{...}} payload: {"version":"3","data":{...}}``, ``<DELETE>``
  for a tombstone, ``Unknown record type N at offset O, skipping.`` or ``Error at offset O, skipping. ...``;
  a consumer group's member subscription and assignment decoded in place (Kafka's DumpLogSegments);
- metadata records: ``payload: {"type":"TOPIC_RECORD","version":0,"data":{...}}`` and no key;
- remote log metadata: the Java ``toString()`` of the object Kafka builds
  (:mod:`kcodec.internal_topics.remote_log`);
- KRaft control records: ``SnapshotHeader {...}``, ``SnapshotFooter {...}``, ``KRaftVersion {...}``,
  ``KRaftVoters {...}``, ``LeaderChange: {...}``.
"""

from __future__ import annotations

import struct

from kcodec.errors import KcodecError
from kcodec.internal_topics.json_converter import compact_json, kafka_json
from kcodec.internal_topics.registry import (
    PACKAGED,
    CodecSource,
    Decoded,
    InternalRecord,
    UnknownRecordTypeError,
    decode_control,
    decode_internal,
)
from kcodec.internal_topics.remote_log import remote_log_metadata_text
from kcodec.records.model import Record
from kcodec.tools.dump.decoders import DataDecoders

__all__ = ["InternalDecoders", "control_text", "record_json_fields"]

# registries kafka-dump-log prints as Java objects' toString() rather than JSON
_OBJECT_TEXTS = {"remote_log_metadata": remote_log_metadata_text}

# control record type -> how DumpLogSegments names it before its JSON
_CONTROL_LABELS = {
    "leader_change": "LeaderChange:",
    "snapshot_header": "SnapshotHeader",
    "snapshot_footer": "SnapshotFooter",
    "kraft_version": "KRaftVersion",
    "kraft_voters": "KRaftVoters",
}
_CONSUMER_PROTOCOL = {"subscription": "consumer_protocol_subscription", "assignment": "consumer_protocol_assignment"}


def _group_members(data: dict, members: list, source: CodecSource) -> None:
    """A consumer group's member subscriptions and assignments decoded in place (int16 version, then the
    message), as DumpLogSegments does; bytes that do not decode stay base64."""
    if data.get("protocolType") != "consumer":
        return
    for member, raw in zip(data.get("members") or [], members):
        for field, entity in _CONSUMER_PROTOCOL.items():
            blob = raw.get(field)
            try:
                version = struct.unpack_from(">h", blob)[0]
                if version not in source.versions.get(entity, ()):
                    continue
                parsed = source.codec(entity, version).parse(blob[2:])
                member[field] = kafka_json(entity, version, parsed, source.schema_set())
            except (KcodecError, struct.error):  # Kafka keeps the bytes of what does not decode
                continue


def _data(d: Decoded, source: CodecSource) -> dict:
    data = kafka_json(d.entity, d.version, d.value, source.schema_set())
    if d.entity == "group_metadata_value":
        _group_members(data, d.value["members"], source)
    return data


def _coordinator_texts(r: InternalRecord, offset: int, source: CodecSource) -> tuple[str | None, str | None]:
    if r.error is not None:
        if isinstance(r.error, UnknownRecordTypeError):
            return f"Unknown record type {r.type} at offset {offset}, skipping.", None
        return f"Error at offset {offset}, skipping. {r.error}", None
    assert r.key is not None
    key = compact_json({"type": str(r.type), "data": _data(r.key, source)})
    if r.value is None:
        return key, "<DELETE>"
    return key, compact_json({"version": str(r.value.version), "data": _data(r.value, source)})


def _metadata_text(r: InternalRecord, offset: int, source: CodecSource) -> str:
    if r.error is not None or r.value is None or r.name is None:
        return f"Error at {offset}, skipping. {r.error}"
    return compact_json({"type": r.name.upper(), "version": r.value.version, "data": _data(r.value, source)})


def control_text(control_type: int, value: bytes | None, source: CodecSource = PACKAGED) -> str | None:
    """What DumpLogSegments prints for a KRaft control record; None for other control types. A KRaft control
    record whose value does not decode raises its :class:`~kcodec.errors.DecodeError` (Kafka throws there)."""
    r = decode_control(control_type, value, source)
    if r is not None and r.error is not None:
        raise r.error
    if r is None or r.value is None or r.name is None or r.name not in _CONTROL_LABELS:
        return None
    return f"{_CONTROL_LABELS[r.name]} {compact_json(_data(r.value, source))}"


class InternalDecoders(DataDecoders):
    """Keys and values of one internal topic's records, decoded by its registry (from ``source``: kcodec's
    schemas, or a package generated from the user's Kafka version)."""

    def __init__(self, registry: str, source: CodecSource = PACKAGED):
        super().__init__()
        self.registry = registry
        self.source = source

    def parse(self, record: Record) -> tuple[str | None, str | None]:
        r = decode_internal(self.registry, record.key, record.value, self.source)
        if self.registry in _OBJECT_TEXTS:
            return None, _OBJECT_TEXTS[self.registry](r, record.offset)  # no key, as for metadata records
        if self.source.registries[self.registry]["framing"] == "metadata":
            return None, _metadata_text(r, record.offset, self.source)  # metadata records have no key
        return _coordinator_texts(r, record.offset, self.source)


def record_json_fields(registry: str, record: Record, source: CodecSource = PACKAGED) -> dict:
    """The typed key and value of a record for ``--json``: ``{"key": {...}, "value": {...}}``, each with the
    record type or version and the data; ``decodeError`` when it could not be decoded."""
    r = decode_internal(registry, record.key, record.value, source)
    out: dict = {"recordType": r.type, "recordName": r.name}
    if r.error is not None:
        out["decodeError"] = str(r.error)
        return out
    if r.key is not None:
        out["key"] = {"type": r.type, "version": r.key.version, "data": _data(r.key, source)}
    out["value"] = None if r.value is None else {"version": r.value.version, "data": _data(r.value, source)}
    return out
