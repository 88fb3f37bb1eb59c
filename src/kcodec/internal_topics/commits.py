"""Offset commits as the group coordinator stores them in ``__consumer_offsets``: the record a commit
becomes, and the partition of the topic a group's records go to.

A commit is record type 1 (OffsetCommitKey v1: group, topic, partition) with an OffsetCommitValue; version
3 (offset, leader epoch, metadata, commit timestamp) is what Kafka 2.1 to 3.x write and every later
coordinator reads. A group's records all go to partition ``abs(groupId.hashCode()) % partitions``
(GroupCoordinator.partitionFor; ``offsets.topic.num.partitions`` defaults to 50).
"""

from __future__ import annotations

from kcodec.records.encode import NewRecord

from .registry import encode_coordinator

__all__ = [
    "OFFSET_COMMIT_TYPE",
    "OFFSET_COMMIT_VALUE_VERSION",
    "DEFAULT_OFFSETS_PARTITIONS",
    "offset_commit_record",
    "offsets_partition_for",
    "java_string_hash",
]

OFFSET_COMMIT_TYPE = 1  # OffsetCommitKey at version 1 (type 0 is the same key at version 0)
OFFSET_COMMIT_VALUE_VERSION = 3
DEFAULT_OFFSETS_PARTITIONS = 50  # offsets.topic.num.partitions


def offset_commit_record(
    group: str, topic: str, partition: int, offset: int, commit_timestamp: int, metadata: str = ""
) -> NewRecord:
    """The ``__consumer_offsets`` record of one committed offset (leader epoch unknown: -1)."""
    key, value = encode_coordinator(
        "consumer_offsets",
        OFFSET_COMMIT_TYPE,
        {"group": group, "topic": topic, "partition": partition},
        {"offset": offset, "leader_epoch": -1, "metadata": metadata, "commit_timestamp": commit_timestamp},
        OFFSET_COMMIT_VALUE_VERSION,
    )
    return NewRecord(key=key, value=value, timestamp=commit_timestamp)


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode()``: over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def offsets_partition_for(group: str, partitions: int = DEFAULT_OFFSETS_PARTITIONS) -> int:
    """The ``__consumer_offsets`` partition holding ``group``'s records (Kafka's Utils.abs is ``& 0x7fffffff``)."""
    return (java_string_hash(group) & 0x7FFFFFFF) % partitions
