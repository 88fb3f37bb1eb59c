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

import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from kcodec.log.fs import resolve
from kcodec.log.partition import Partition
from kcodec.spark.arrow import Column
from kcodec.spark.options import OptionError, ReadOptions
from kcodec.spark.planning import discover, select

__all__ = [
    "HOUSEKEEPING_VIEWS",
    "PartitionTask",
    "is_housekeeping_view",
    "housekeeping_partitions",
    "read_housekeeping",
]

_TS = pa.timestamp("us", tz="UTC")
_REMOVED = pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", pa.int64(), nullable=True))


def _c(name: str, spark: str, doc: str) -> Column:
    arrow = {"string": pa.string(), "int": pa.int32(), "bigint": pa.int64(), "boolean": pa.bool_(),
             "double": pa.float64(), "map<string,bigint>": _REMOVED}[spark]  # fmt: skip
    return Column(name, spark, arrow, doc)


_PARTITION = (
    _c("topic", "string", "the partition's topic (from its directory name)"),
    _c("partition", "int", "the partition number"),
)

#: The columns of each housekeeping view, declared once (docs/spark.md lists them from here).
HOUSEKEEPING_VIEWS: dict[str, tuple[Column, ...]] = {
    "producers": (
        *_PARTITION,
        _c("producerId", "bigint", "the producer id"),
        _c("producerEpoch", "int", "its epoch in its last batch"),
        _c("coordinatorEpoch", "int", "the coordinator epoch of its last marker (null: no marker)"),
        _c("committed", "bigint", "transactions it committed in this partition"),
        _c("aborted", "bigint", "transactions it aborted"),
        _c("empty", "bigint", "markers with no data of theirs here (empty transactions)"),
        _c("longestMs", "bigint", "the longest transaction, first data timestamp to marker (null: none)"),
    ),
    "partitionTransactions": (
        *_PARTITION,
        _c("producerId", "bigint", "the producer id"),
        _c("producerEpoch", "int", "its epoch"),
        _c("outcome", "string", "commit, abort, or open (data and no marker yet)"),
        _c("empty", "boolean", "a marker with no data of the transaction in this partition"),
        _c("firstOffset", "bigint", "the transaction's first data offset (null when empty)"),
        _c("lastOffset", "bigint", "its last data offset (null when empty)"),
        _c("markerOffset", "bigint", "the COMMIT/ABORT marker's offset (null when open)"),
        _c("coordinatorEpoch", "int", "the marker's coordinator epoch (open: the producer's last known)"),
        _c("records", "bigint", "the transaction's data records"),
        _c("durationMs", "bigint", "first data timestamp to marker timestamp (null when empty or open)"),
        _c("lastStableOffset", "bigint", "the partition's LSO: where a read_committed consumer stops"),
    ),
    "compaction": (
        *_PARTITION,
        _c("logStartOffset", "bigint", "the log's first offset"),
        _c("logEndOffset", "bigint", "the log end offset"),
        _c("lastStableOffset", "bigint", "the LSO (the earliest open transaction, bounded by the HW)"),
        _c("firstDirtyOffset", "bigint", "where the dirty range starts (cleaner-offset-checkpoint, else log start)"),
        _c("firstUncleanableOffset", "bigint", "where the cleanable range ends"),
        _c("uncleanableBecause", "string", "what ends it: the active segment, min.compaction.lag.ms or the LSO"),
        _c("cleanBytes", "bigint", "bytes of the segments below the first dirty offset"),
        _c("cleanableBytes", "bigint", "bytes of the cleanable segments"),
        _c("dirtyRatio", "double", "cleanable / (clean + cleanable) bytes, as Kafka's cleanableRatio"),
        _c("wouldClean", "boolean", "dirtyRatio >= min.cleanable.dirty.ratio: a broker would pick it"),
        _c("endOffset", "bigint", "where this round's offset map ends (the next round starts there)"),
        _c("removed", "map<string,bigint>", "records the round would remove, by reason (superseded, null_key ...)"),
        _c("recordsRemoved", "bigint", "their total"),
        _c("bytesBefore", "bigint", "bytes of the segments the round rewrites"),
        _c("bytesAfter", "bigint", "their bytes once cleaned"),
        _c("segmentsBefore", "int", "segments the round rewrites"),
        _c("segmentsAfter", "int", "segments they become"),
        _c("tombstoneCount", "bigint", "tombstones the round keeps"),
    ),
}


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
    if getattr(fs, "protocol", "file") not in ("file", "local", ("file", "local")):
        raise OptionError(f"kafka-segments: view={opts.view} reads local log directories, not {opts.path}")
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
