"""What a table's commits tell a run, whichever the format: the next offsets its last kcodec commit stored,
the runs whose data files it holds, and the failure of a commit that lost a race."""

from __future__ import annotations

from dataclasses import dataclass, field

from kcodec.errors import KcodecError, needs_extra
from kcodec.spark.lakehouse.offsets import TopicPartition

__all__ = [
    "OFFSETS_KEY",
    "RUN_KEY",
    "MODE_KEY",
    "STREAM_KEY",
    "RUN_PREFIX",
    "TableState",
    "ConcurrentCommitError",
    "MissingTableLibraryError",
]

#: the keys kcodec stores in an Iceberg snapshot's summary and a Delta commit's info
OFFSETS_KEY = "kcodec.offsets"
RUN_KEY = "kcodec.run-id"
MODE_KEY = "kcodec.mode"
#: a stream's commit: ``{"stream": <Spark query id>, "batch": <batch id>}``
STREAM_KEY = "kcodec.stream-batch"
#: a run's data folder under the table's data folder: ``run-<id>``
RUN_PREFIX = "run-"


@dataclass
class TableState:
    exists: bool
    offsets: dict[TopicPartition, int] = field(default_factory=dict)
    run_ids: set[str] = field(default_factory=set)  # runs some commit took files from (all whose folders are there)
    version: str | None = None  # the snapshot id / table version the run started from
    mode: str | None = None  # the mode the table was written in (append or upsert)
    stream_batch: str | None = None  # STREAM_KEY of the newest kcodec commit, when a stream made it


class ConcurrentCommitError(KcodecError):
    """Another run committed to the table after this one read it: this run commits nothing."""

    kind = "concurrent_commit"


class MissingTableLibraryError(KcodecError, ImportError):
    """pyiceberg or deltalake is not installed: kcodec's one line with the pip command."""

    kind = "missing_dependency"

    def __init__(self, module: str, extra: str):
        super().__init__(needs_extra(module, extra))
