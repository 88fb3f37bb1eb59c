"""The columns of the housekeeping views (:mod:`kcodec.spark.housekeeping`), declared once: their names are
the JSON names of ``kcodec txn --json`` and ``kcodec compact --json``. Apart from the reader, so the option
and schema code can name the views without importing it."""

from __future__ import annotations

from kcodec.internal_topics.views import view_column
from kcodec.records.view_columns import Column

__all__ = ["HOUSEKEEPING_VIEWS"]

_c = view_column


_PARTITION = (
    _c("topic", "string", "the partition's topic (from its directory name)"),
    _c("partition", "int", "the partition number"),
)

#: The columns of each housekeeping view, declared once (the table in docs/spark.md names them).
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
