"""Kafka's log cleaner, offline (``kcodec compact``): what a broker of a given release would keep, drop and
why in a compacted partition (:mod:`~kcodec.tools.compact.plan`: the cleanable range;
:mod:`~kcodec.tools.compact.clean`: one cleaning round; :mod:`~kcodec.tools.compact.output`: the cleaned
partition written elsewhere or swapped in).

The names below load with their module on first use: the Spark source's options read
:class:`~kcodec.tools.compact.config.CleanerConfig` in every worker, which needs none of the cleaner."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kcodec.tools.compact.clean import REASONS as REASONS
    from kcodec.tools.compact.clean import CleanResult as CleanResult
    from kcodec.tools.compact.clean import clean_partition as clean_partition
    from kcodec.tools.compact.config import CleanerConfig as CleanerConfig
    from kcodec.tools.compact.output import compact_in_place as compact_in_place
    from kcodec.tools.compact.output import compact_rounds as compact_rounds
    from kcodec.tools.compact.output import compact_to as compact_to
    from kcodec.tools.compact.plan import CleanPlan as CleanPlan
    from kcodec.tools.compact.plan import plan_partition as plan_partition

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

_MODULES = ("config", "plan", "clean", "output")  # where the names of __all__ are defined, lightest first


def __getattr__(name: str) -> Any:
    if name in __all__:
        for module in _MODULES:
            found = importlib.import_module(f"{__name__}.{module}")
            if name in vars(found):
                value = globals()[name] = vars(found)[name]
                return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
