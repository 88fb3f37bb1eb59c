"""The broker's housekeeping as views of the ``kafka-segments`` source, over a whole log directory with one
task per partition: ``view=producers`` and ``view=partitionTransactions`` (what ``kcodec txn`` finds:
:func:`kcodec.tools.txn.walk_partition`) and ``view=compaction`` (``kcodec compact``'s dry run:
:func:`kcodec.tools.compact.plan_partition` and one :func:`~kcodec.tools.compact.clean_partition` round,
nothing written).

Column names are the JSON names of ``kcodec txn --json`` / ``kcodec compact --json``, so a row is that
output's object for its partition (producer, transaction). ``view=transactions`` stays the
``__transaction_state`` view; the per-partition transactions are ``partitionTransactions``.

These views read local partition directories (the tools read files, not object stores). The Spark topic
filters (``subscribe``, ``subscribePattern``, ``assign``, ``topic``, ``partition``) choose the partitions;
offset bounds do not apply (a partition's producer state and cleaning round need its whole log)."""

from __future__ import annotations

from collections.abc import Iterator

from pyspark.sql.datasource import InputPartition

from kcodec.log.fs import resolve
from kcodec.log.partition import Partition
from kcodec.spark.housekeeping_columns import HOUSEKEEPING_VIEWS
from kcodec.spark.options import OptionError, ReadOptions
from kcodec.spark.planning import discover, select

__all__ = [
    "HOUSEKEEPING_VIEWS",
    "PartitionTask",
    "is_housekeeping_view",
    "housekeeping_partitions",
    "read_housekeeping",
]


class PartitionTask(InputPartition):
    """One task of a housekeeping view: one local partition directory."""

    def __init__(self, index: int, path: str, topic: str | None, partition: int | None):
        super().__init__(index)
        self.path, self.topic, self.partition = path, topic, partition


def is_housekeeping_view(view: str) -> bool:
    return view in HOUSEKEEPING_VIEWS


#: the topics each view leaves out of a log directory, as its command does (kcodec txn: the coordinator's
#: and KRaft's own; kcodec compact: KRaft's, whose log the cleaner never touches)
_EXCLUDED = {
    "producers": ("__transaction_state", "__cluster_metadata"),
    "partitionTransactions": ("__transaction_state", "__cluster_metadata"),
    "compaction": ("__cluster_metadata",),
}


def housekeeping_partitions(opts: ReadOptions) -> list[PartitionTask]:
    fs, _ = resolve(opts.path, opts.storage)
    if not fs.local:
        raise OptionError(f"kafka-segments: view={opts.view} reads local log directories, not {opts.path}")
    bounds = (opts.starting_offset, opts.ending_offset, opts.starting_timestamp, opts.max_records_per_partition)
    if opts.spark_ranges or any(b is not None for b in bounds):
        raise OptionError(
            f"kafka-segments: view={opts.view} reads whole partitions (producer state and a cleaning round "
            "need the whole log); offset and timestamp bounds do not apply"
        )
    found = select(discover(opts.path, topic=opts.topic, partition=opts.partition, storage=opts.storage), opts)
    parts = [p for p in found if p.topic not in _EXCLUDED[opts.view] and p.segments]
    if not parts:  # nothing to read; Spark still wants a partition
        return [PartitionTask(0, "", None, None)]
    return [PartitionTask(i, p.path, p.topic, p.partition) for i, p in enumerate(parts)]


def _txn_rows(task: PartitionTask, view: str) -> list[dict]:
    from kcodec.tools.txn import walk_partition

    where = {"topic": task.topic, "partition": task.partition}
    completed: list = []
    found = walk_partition(Partition(task.path), on_transaction=completed.append)
    if view == "producers":
        return [{**where, **p.as_dict()} for p in sorted(found.producers.values(), key=lambda p: p.producer_id)]
    lso = {"lastStableOffset": found.last_stable_offset}
    rows = [{**where, **t.as_dict(), **lso} for t in completed]
    opened = {"outcome": "open", "empty": False, **lso}
    return rows + [{**where, **t.as_dict(task.topic, task.partition), **opened} for t in found.open]


def _compaction_rows(task: PartitionTask, opts: ReadOptions) -> list[dict]:
    from kcodec.tools.compact import clean_partition, plan_partition

    assert opts.cleaner is not None  # ReadOptions.from_options sets it for view=compaction
    plan = plan_partition(Partition(task.path), opts.cleaner, first_dirty_offset=opts.first_dirty_offset)
    return [clean_partition(plan).as_dict()]


def read_housekeeping(task: PartitionTask, opts: ReadOptions, columns) -> Iterator:
    """The Arrow record batch of one task (one partition), holding only ``columns`` ((column, nullable) pairs)."""
    from kcodec.internal_topics.views import rows_to_batch

    if not task.path:
        return
    rows = _compaction_rows(task, opts) if opts.view == "compaction" else _txn_rows(task, opts.view)
    if rows:
        yield rows_to_batch(rows, columns)
