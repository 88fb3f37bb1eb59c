"""The internal topics' views (``view=consumerOffsets | groups | transactions | metadata``) on the
``kafka-segments`` source: the rows of :mod:`kcodec.internal_topics.views`, read through the same discovery,
topic-partition filters, offset bounds, splits, isolation level and ``onCorrupt`` handling as records.

- Only partitions of the view's topic are read; a path (after ``subscribe`` / ``assign`` ...) that holds
  none fails on the driver when the read is planned (:class:`NoInternalTopicError`), naming what it holds.
- ``latest=true``: each task reads all the splits of one partition, in offset order, and keeps the last
  row per key. Compaction and the coordinators work per partition, and a key is only ever written to one
  partition, so no row needs to meet another partition's: the result is exact with any number of
  segments, with no shuffle. A DataFrame-level ``dropDuplicates`` would not be: it keeps an arbitrary row
  per key, and could not drop keys whose last record is a tombstone. The price is one task per
  partition (``__consumer_offsets`` has 50).
- ``view=groups`` always reads a partition in one task, in offset order: a KIP-848 consumer group's row
  gathers its members from the member and assignment records before it (with ``latest``, from all of them),
  so the rows do not depend on where the splits fall.
- ``view=metadata`` also reads each ``__cluster_metadata`` partition's ``.checkpoint`` snapshots (one
  split each, whole: the offset options bound the log only; snapshot records count from 0).
- A record of the view's types that does not decode fails the read under ``onCorrupt=fail`` (naming
  the segment, byte position, batch offset and key or value); under ``skip`` it is left out and reported
  like a skipped batch (kind ``internal_record``).
"""

from __future__ import annotations

from collections.abc import Iterator

from pyspark.sql.datasource import InputPartition

from kcodec.internal_topics.tables import no_topic_error
from kcodec.internal_topics.views import VIEW_TOPICS, VIEWS, ViewRecordError, ViewRows, rows_to_batch
from kcodec.log.fs import resolve
from kcodec.log.kraft_snapshots import list_snapshots, parse_kraft_snapshot_name
from kcodec.spark.options import ReadOptions
from kcodec.spark.planning import Split, discover, plan, select
from kcodec.spark.read import CorruptSegmentError, Reporter, aborted_spans, split_batches

__all__ = ["ViewSplits", "is_internal_view", "view_partitions", "read_view"]


class ViewSplits(InputPartition):
    """One task of a view: a split, or (``latest``) every split of one partition in offset order."""

    def __init__(self, index: int, splits: tuple[Split, ...]):
        super().__init__(index)
        self.splits = splits


def is_internal_view(view: str) -> bool:
    return view in VIEWS


def _snapshot_splits(parts, opts: ReadOptions, first: int) -> list[Split]:
    out: list[Split] = []
    for part in parts:
        fs, directory = resolve(part.path, opts.storage)
        for snap in list_snapshots(fs, directory):
            out.append(Split(first + len(out), snap.path, part.topic, part.partition, None, 0, None))
    return out


def view_partitions(opts: ReadOptions) -> list[ViewSplits]:
    found = discover(opts.path, topic=opts.topic, partition=opts.partition, storage=opts.storage)
    selected = select(found, opts)
    topic = VIEW_TOPICS[opts.view]
    parts = [p for p in selected if p.topic == topic]
    if not parts:
        names = [f"{p.topic}-{p.partition}" if p.topic is not None else p.path for p in selected]
        raise no_topic_error(opts.view, opts.path, names)
    splits = plan(parts, opts)
    if opts.view == "metadata":
        snapshots = _snapshot_splits(parts, opts, len(splits))
        splits = snapshots + splits  # each partition's snapshots before its log
    if not splits:  # nothing to read; Spark still wants a partition
        return [ViewSplits(0, ())]
    if not opts.latest and opts.view != "groups":
        return [ViewSplits(i, (s,)) for i, s in enumerate(splits)]
    by_partition: dict[tuple, list[Split]] = {}
    for s in splits:
        by_partition.setdefault((s.topic, s.partition), []).append(s)
    return [ViewSplits(i, tuple(group)) for i, group in enumerate(by_partition.values())]


def _records(batch, split: Split, aborted, snapshot) -> list:
    records = batch.records
    start, end = (None, None) if snapshot is not None else (split.start_offset, split.end_offset)
    if (start is not None and batch.base_offset < start) or (end is not None and batch.last_offset >= end):
        records = [r for r in records if (start is None or r.offset >= start) and (end is None or r.offset < end)]
    hit = aborted(batch) if aborted is not None else None
    if hit:  # records of aborted transactions (read_committed)
        records = [r for r in records if not any(f <= r.offset <= last for f, last in hit)]
    return records


def read_view(task: ViewSplits, opts: ReadOptions, columns) -> Iterator:
    """The Arrow record batches of one task of a view, holding only ``columns`` ((column, nullable) pairs)."""
    rows = ViewRows(opts.view, latest=opts.latest, include_control=opts.include_control)
    for split in task.splits:
        if split.empty:
            continue
        snapshot = parse_kraft_snapshot_name(split.log.rstrip("/").rpartition("/")[2])
        aborted = aborted_spans(split) if opts.read_committed else None
        reporter = Reporter(split, opts)
        try:
            for batch in split_batches(split, opts, reporter):
                if snapshot is None and split.end_offset is not None and batch.base_offset >= split.end_offset:
                    break
                if snapshot is None and split.start_offset is not None and batch.last_offset < split.start_offset:
                    continue
                for record in _records(batch, split, aborted, snapshot):
                    try:
                        rows.add(record, partition=split.partition, segment=split.log, snapshot=snapshot)
                    except ViewRecordError as exc:
                        if opts.on_corrupt == "fail":
                            raise CorruptSegmentError(
                                f"{split.log}: {exc.message}",
                                position=batch.position,
                                base_offset=batch.base_offset,
                                field=exc.field,
                            ) from None
                        reporter.skip_records(batch, 1, f"offset {record.offset}: {exc.message}", exc.kind)
                if not opts.latest and len(rows) >= opts.max_rows:
                    yield rows_to_batch(rows.take(), columns)
        finally:
            reporter.close()
    out = rows.take()
    if out:
        yield rows_to_batch(out, columns)
