"""What Kafka's readers know that the schema language does not say: how log entries are framed and
told apart, how records' deltas resolve against their batch, what control records hold."""

from __future__ import annotations

#: Entities a log (segment, Produce/Fetch records) is a sequence of; each entry picks one by the constant
#: (magic) field its schema puts at a fixed offset, as Kafka's readers do with byte 16.
TOP_LEVEL_ENTITIES = ("record_batch", "legacy_log_entry")
# A Kafka 0.7 segment's entries (in .kafka files only): size, then magic.
KAFKA07_ENTITY = "kafka07_message"

# The framing every magic shares (Kafka's `Records`): offset int64 at 0, size int32 at 8, magic int8 at 16.
# Used only to step over an entry whose magic no schema knows, and to scan entry headers.
OFFSET_OFFSET, SIZE_OFFSET, MAGIC_OFFSET = 0, 8, 16
LOG_OVERHEAD = 12  # Records.LOG_OVERHEAD: offset and size, before the bytes the size counts
HEADER_UP_TO_MAGIC = 17  # Records.HEADER_SIZE_UP_TO_MAGIC
# LegacyRecord.RECORD_OVERHEAD_V0: ByteBufferLogInputStream refuses an entry whose size is smaller.
MIN_ENTRY_SIZE = 14

# A record's offset and timestamp are its batch's base plus the record's delta (DefaultRecord, KIP-98).
# Used for the one-line record summaries only.
_RELATIVE = (("offset_delta", "base_offset", "offset"), ("timestamp_delta", "base_timestamp", "timestamp"))


def header_int(buf, pos: int, offset: int, width: int) -> int:
    """A signed big-endian field of the entry header at ``pos``."""
    return int.from_bytes(bytes(buf[pos + offset : pos + offset + width]), "big", signed=True)


def relative(evals: dict, parent: dict | None) -> tuple[list[str], set[str]]:
    """Absolute values of a record's deltas against its batch, and the delta fields they replace.
    A LOG_APPEND_TIME batch stamps every record with its max_timestamp (DefaultRecordBatch)."""
    lead: list[str] = []
    used: set[str] = set()
    for delta, base, name in _RELATIVE:
        if parent and isinstance(evals.get(delta), int) and isinstance(parent.get(base), int):
            absolute = parent[base] + evals[delta]
            if name == "timestamp" and (parent.get("attributes") or {}).get("timestamp_type") == "log_append_time":
                absolute = parent.get("max_timestamp", absolute)
                name = "timestamp (log append time)"
            lead.append(f"{name} {absolute}")
            used.add(delta)
    return lead, used


def element_hints(array: str, values: dict, registry: str | None = None, source=None, framed=()) -> dict:
    """Contents a schema cannot name: the key of a control batch's record is a control_record_key
    (ControlRecordType), the value of a COMMIT/ABORT marker an end_txn_marker (EndTransactionMarker, KIP-98),
    that of a KRaft control record its LeaderChange, SnapshotHeader ... record; the records of an internal
    topic hold the keys and values its registry frames (``source``: the CodecSource holding the registries,
    kcodec's own when None); ``framed``: the Schema Registry framed keys or values of other records
    (:mod:`kcodec.tools.inspect.values`)."""
    from kcodec.internal_topics.registry import PACKAGED
    from kcodec.tools.inspect.internal import control_value_hint, record_hints

    source = source or PACKAGED

    attributes = values.get("attributes")
    if array != "records" or not isinstance(attributes, dict):
        return {}
    if attributes.get("control") is True:

        def marker(record: dict):
            key = record.get("key:control_record_key") or {}
            if key.get("type") in ("abort", "commit"):
                return ("end_txn_marker", 0)
            return control_value_hint(key.get("type"), source)

        return {"key": ("control_record_key", 0), "value": marker}
    if framed:
        from kcodec.tools.inspect.values import framed_hints

        return framed_hints(list(framed))
    return record_hints(registry, source) if registry else {}
