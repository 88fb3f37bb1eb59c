"""What kafka-dump-log's ``--remote-log-metadata-decoder`` prints for a ``__remote_log_metadata`` record.

Kafka's RemoteMetadataLogMessageParser hands the value to RemoteLogMetadataSerde, which builds a Java object
(RemoteLogSegmentMetadata, RemoteLogSegmentMetadataUpdate, RemotePartitionDeleteMetadata or
RemoteLogSegmentMetadataSnapshot) and prints its ``toString()``. The same text is rebuilt here from the
schema-decoded record: Uuids in Kafka's base64 form, a TopicIdPartition as ``id:topic-partition``, the leader
epochs as a sorted ``{epoch=offset, ...}`` map, ``Optional[CustomMetadata{N bytes}]`` or ``Optional.empty``,
states by their enum names. The checks those Java constructors make (a negative start offset, no leader
epochs, an unknown state id) print as the exceptions they throw, ``Error at offset O, skipping. <message>``.

Approximated: a value that does not decode prints kcodec's own reason where Kafka's wording depends on the
Java exception (a null value, a truncated frame header).
"""

from __future__ import annotations

from typing import Any

from kcodec.internal_topics.registry import FrameVersionError, InternalRecord, UnknownRecordTypeError
from kcodec.runtime.uuids import uuid_to_text

__all__ = ["remote_log_metadata_text", "SEGMENT_STATES", "PARTITION_DELETE_STATES"]

# Kafka's RemoteLogSegmentState and RemotePartitionDeleteState, by id
SEGMENT_STATES = {
    0: "COPY_SEGMENT_STARTED",
    1: "COPY_SEGMENT_FINISHED",
    2: "DELETE_SEGMENT_STARTED",
    3: "DELETE_SEGMENT_FINISHED",
}
PARTITION_DELETE_STATES = {0: "DELETE_PARTITION_MARKED", 1: "DELETE_PARTITION_STARTED", 2: "DELETE_PARTITION_FINISHED"}


class _Refused(Exception):
    """What a Java constructor of RemoteLogMetadata would throw, with its message."""


def _topic_id_partition(tip: Any) -> str:
    return f"{uuid_to_text(tip['id'])}:{tip['name']}-{tip['partition']}"


def _segment_id(sid: Any) -> str:
    partition = _topic_id_partition(sid["topic_id_partition"])
    return f"RemoteLogSegmentId{{topicIdPartition={partition}, id={uuid_to_text(sid['id'])}}}"


def _custom_metadata(raw: bytes | None) -> str:
    return "Optional.empty" if raw is None else f"Optional[CustomMetadata{{{len(raw)} bytes}}]"


def _segment_state(value: Any) -> str:
    state = SEGMENT_STATES.get(value["remote_log_segment_state"])
    if state is None:
        raise _Refused("state can not be null")
    return state


def _leader_epochs(entries: list) -> str:
    # Kafka fills a HashMap (a repeated epoch keeps its last offset), then prints it as a TreeMap
    epochs = {e["leader_epoch"]: e["offset"] for e in entries}
    if not epochs:
        raise _Refused("segmentLeaderEpochs can not be null or empty")
    return "{" + ", ".join(f"{k}={epochs[k]}" for k in sorted(epochs)) + "}"


def _segment(v: Any) -> str:
    start, end = v["start_offset"], v["end_offset"]
    if start < 0:
        raise _Refused(f"Unexpected start offset = {start}. StartOffset for a remote segment cannot be negative")
    if end < start:
        raise _Refused(
            f"Unexpected end offset = {end}. EndOffset for a remote segment cannot be less than startOffset = {start}"
        )
    epochs = _leader_epochs(v["segment_leader_epochs"])
    return (
        f"RemoteLogSegmentMetadata{{remoteLogSegmentId={_segment_id(v['remote_log_segment_id'])}, "
        f"startOffset={start}, endOffset={end}, brokerId={v['broker_id']}, maxTimestampMs={v['max_timestamp_ms']}, "
        f"eventTimestampMs={v['event_timestamp_ms']}, segmentLeaderEpochs={epochs}, "
        f"segmentSizeInBytes={v['segment_size_in_bytes']}, customMetadata={_custom_metadata(v['custom_metadata'])}, "
        f"state={_segment_state(v)}}}"
    )


def _segment_update(v: Any) -> str:
    return (
        f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={_segment_id(v['remote_log_segment_id'])}, "
        f"customMetadata={_custom_metadata(v['custom_metadata'])}, state={_segment_state(v)}, "
        f"eventTimestampMs={v['event_timestamp_ms']}, brokerId={v['broker_id']}}}"
    )


def _partition_delete(v: Any) -> str:
    state = PARTITION_DELETE_STATES.get(v["remote_partition_delete_state"])
    if state is None:
        raise _Refused("null")  # Objects.requireNonNull(state) without a message
    return (
        f"RemotePartitionDeleteMetadata{{topicPartition={_topic_id_partition(v['topic_id_partition'])}, "
        f"state={state}, eventTimestampMs={v['event_timestamp_ms']}, brokerId={v['broker_id']}}}"
    )


def _segment_snapshot(v: Any) -> str:
    state = _segment_state(v)
    epochs = _leader_epochs(v["segment_leader_epochs"])
    return (
        f"RemoteLogSegmentMetadataSnapshot{{segmentId={uuid_to_text(v['segment_id'])}, "
        f"startOffset={v['start_offset']}, endOffset={v['end_offset']}, maxTimestampMs={v['max_timestamp_ms']}, "
        f"segmentLeaderEpochs={epochs}, segmentSizeInBytes={v['segment_size_in_bytes']}, "
        f"customMetadata={_custom_metadata(v['custom_metadata'])}, state={state}}}"
    )


_TEXTS = {
    "remote_segment_metadata": _segment,
    "remote_segment_update": _segment_update,
    "remote_partition_delete": _partition_delete,
    "remote_segment_snapshot": _segment_snapshot,
}


def _error_text(r: InternalRecord) -> str:
    """Kafka's message for a value its serde refuses (AbstractApiMessageSerde), where it is knowable."""
    error = r.error
    if isinstance(error, FrameVersionError):
        if error.frame_version == 0:
            return (
                "Could not deserialize metadata record with frame version 0. Note that upgrades from the preview "
                "release of KRaft in 2.8 to newer versions are not supported."
            )
        return (
            f"Could not deserialize metadata record due to unknown frame version {error.frame_version}"
            "(only frame version 1 is supported)"
        )
    if isinstance(error, UnknownRecordTypeError):
        return f"org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {r.type}"
    if r.type is not None:  # an unknown version or a damaged record body
        return f"Failed to deserialize record with type {r.type}"
    return str(error)


def remote_log_metadata_text(r: InternalRecord, offset: int) -> str:
    """The payload text kafka-dump-log prints for one decoded ``__remote_log_metadata`` record."""
    if r.error is not None or r.value is None:
        return f"Error at offset {offset}, skipping. {_error_text(r)}"
    try:
        return _TEXTS[r.value.entity](r.value.value)
    except _Refused as refused:
        return f"Error at offset {offset}, skipping. {refused}"
