"""Kafka's log cleaner, offline (``kcodec compact``): what a broker of a given release would keep, drop and
why in a compacted partition (:mod:`~kcodec.tools.compact.plan`: the cleanable range;
:mod:`~kcodec.tools.compact.clean`: one cleaning round; :mod:`~kcodec.tools.compact.output`: the cleaned
partition written elsewhere or swapped in)."""

from kcodec.tools.compact.clean import REASONS, CleanResult, clean_partition
from kcodec.tools.compact.config import CleanerConfig
from kcodec.tools.compact.output import compact_in_place, compact_rounds, compact_to
from kcodec.tools.compact.plan import CleanPlan, plan_partition

__all__ = [
    "REASONS",
    "CleanerConfig",
    "CleanPlan",
    "CleanResult",
    "plan_partition",
    "clean_partition",
    "compact_to",
    "compact_in_place",
    "compact_rounds",
]
