"""The members of KIP-848 consumer groups, gathered from their records in ``__consumer_offsets`` for the
``groups`` view: a member's metadata (record type 5: identity, subscription), its current assignment
(type 8: epoch, owned and pending partitions) and the group's partition metadata (type 4: topic ids to
names; Kafka 4.1 no longer writes it). Kafka's GroupMetadataManager replays the same records into a
ConsumerGroup; a tombstone removes what its key names, as compaction would.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ConsumerGroupMembers"]

_MEMBER = "consumer_group_member_metadata"
_ASSIGNMENT = "consumer_group_current_member_assignment"
_PARTITIONS = "consumer_group_partition_metadata"


class _Group:
    def __init__(self) -> None:
        # member id -> {record name: value}; members stay in the order they first appeared
        self.members: dict[str, dict[str, dict]] = {}
        self.topic_names: dict[str, str] = {}


class ConsumerGroupMembers:
    """The member state of the consumer groups of one read, per (partition, group id)."""

    RECORDS = frozenset({_MEMBER, _ASSIGNMENT, _PARTITIONS})

    def __init__(self) -> None:
        self._groups: dict[tuple[int | None, str], _Group] = {}

    def add(self, name: str, partition: int | None, key: dict, value: dict | None) -> None:
        """A record of one of :attr:`RECORDS` (``value`` None: a tombstone)."""
        group = self._groups.setdefault((partition, key["group_id"]), _Group())
        if name == _PARTITIONS:
            topics = [] if value is None else value["topics"]
            group.topic_names = {str(t["topic_id"]): t["topic_name"] for t in topics}
            return
        records = group.members.setdefault(key["member_id"], {})
        if value is None:
            records.pop(name, None)
            if not records:
                del group.members[key["member_id"]]
        else:
            records[name] = value

    def members(self, partition: int | None, group_id: str) -> list[dict]:
        """The group's members now, as rows of the ``groups`` view's ``members`` column."""
        group = self._groups.get((partition, group_id))
        if group is None:
            return []
        return [self._member(member_id, records, group.topic_names) for member_id, records in group.members.items()]

    @staticmethod
    def _member(member_id: str, records: dict[str, dict], names: dict[str, str]) -> dict:
        def partitions(items) -> list[dict]:
            ids = [str(t["topic_id"]) for t in items]
            return [
                {"topic": names.get(i), "topicId": i, "partitions": list(t["partitions"])} for i, t in zip(ids, items)
            ]

        row: dict[str, Any] = {"memberId": member_id}
        meta = records.get(_MEMBER)
        if meta is not None:
            classic = meta.get("classic_member_metadata")  # a member still on the classic protocol
            rebalance = meta["rebalance_timeout_ms"]
            row |= {
                "groupInstanceId": meta["instance_id"],
                "clientId": meta["client_id"],
                "clientHost": meta["client_host"],
                "rebalanceTimeoutMs": None if rebalance == -1 else rebalance,
                "sessionTimeoutMs": None if classic is None else classic["session_timeout_ms"],
                "subscribedTopics": list(meta["subscribed_topic_names"]),
                "rackId": meta["rack_id"],
                "subscribedTopicRegex": meta["subscribed_topic_regex"],
                "serverAssignor": meta["server_assignor"],
            }
        assignment = records.get(_ASSIGNMENT)
        if assignment is not None:
            row |= {
                "memberEpoch": assignment["member_epoch"],
                "assignedPartitions": partitions(assignment["assigned_partitions"]),
                "partitionsPendingRevocation": partitions(assignment["partitions_pending_revocation"]),
            }
        return row
