"""What an incremental table run reads: the next offset per topic-partition that the table's last
commit stored, against where each partition's log ends now.

Plain data, no Spark and no table library: the stored form is JSON text (``{"topic": {"0": 42}}``),
as it sits in an Iceberg snapshot summary or a Delta commit's info.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from kcodec.errors import KcodecError

__all__ = ["TopicPartition", "OffsetsWentBackwardsError", "ReadPlan", "encode", "decode", "plan_read", "tp_text"]

TopicPartition = tuple[str, int]


class OffsetsWentBackwardsError(KcodecError):
    """A partition's log ends before the offset the table already holds (a log directory restored from an
    older backup, a recreated topic): reading on would mix two histories."""

    kind = "offsets_backwards"


def tp_text(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def encode(offsets: dict[TopicPartition, int]) -> str:
    """The stored form: topics and partitions in order, so equal maps are equal text."""
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = offset
    return json.dumps(out, separators=(",", ":"))


def decode(text: str | None) -> dict[TopicPartition, int]:
    if not text:
        return {}
    try:
        raw = json.loads(text)
        return {(topic, int(p)): int(o) for topic, parts in raw.items() for p, o in parts.items()}
    except (ValueError, AttributeError, TypeError) as exc:
        raise KcodecError(f"the table's stored offsets are not kcodec's JSON: {text[:80]!r} ({exc})") from None


@dataclass
class ReadPlan:
    """The offsets to read, ``[start, end)`` per topic-partition with something new, and the next offsets
    the commit stores (the committed ones carried over for partitions not read)."""

    committed: dict[TopicPartition, int]
    ranges: dict[TopicPartition, tuple[int | None, int]] = field(default_factory=dict)  # start None: earliest
    next_offsets: dict[TopicPartition, int] = field(default_factory=dict)
    reset: list[TopicPartition] = field(default_factory=list)  # went backwards, accepted: continue at the log's end

    @property
    def nothing_new(self) -> bool:
        return not self.ranges and self.next_offsets == self.committed


def plan_read(
    committed: dict[TopicPartition, int],
    log_ends: dict[TopicPartition, int],
    *,
    allow_backwards: bool = False,
) -> ReadPlan:
    """``log_ends``: each partition's next offset now (its log end offset). A partition the table has not
    seen is read from its earliest offset; one whose log ends before the stored offset is refused, or with
    ``allow_backwards`` taken as it is now: nothing of it is read and the run stores its log end, so the
    next run continues from there."""
    plan = ReadPlan(dict(committed), next_offsets=dict(committed))
    backwards = sorted(tp for tp, end in log_ends.items() if tp in committed and end < committed[tp])
    if backwards and not allow_backwards:
        listed = ", ".join(
            f"{tp_text(tp)} ends at {log_ends[tp]}, the table holds up to {committed[tp]}" for tp in backwards
        )
        raise OffsetsWentBackwardsError(
            f"offsets went backwards: {listed} (a log restored from an older backup?); "
            "--allow-offsets-backwards continues from the log's end"
        )
    for tp, end in sorted(log_ends.items()):
        start = committed.get(tp)
        if tp in backwards:
            plan.reset.append(tp)
            plan.next_offsets[tp] = end
        elif start is None or end > start:
            plan.ranges[tp] = (start, end)
            plan.next_offsets[tp] = end
    return plan
