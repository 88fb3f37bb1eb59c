"""The views of Kafka's internal topics (:mod:`kcodec.internal_topics.views`) read from a directory into one
``pyarrow.Table``: :func:`kcodec.read_internal_view`. The Spark source reads the same rows through its own
planning (:mod:`kcodec.spark.views`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

import pyarrow as pa

from kcodec.errors import KcodecError
from kcodec.internal_topics.views import VIEW_TOPICS, VIEWS, ViewRecordError, ViewRows, rows_to_batch
from kcodec.log.files import Segment
from kcodec.log.fs import resolve
from kcodec.log.kraft_snapshots import list_snapshots
from kcodec.log.names import parse_partition_dir
from kcodec.log.partition import (
    Partition,
    aborted_transactions,
    list_partitions,
)
from kcodec.records.model import Batch
from kcodec.records.reader import read_batches
from kcodec.records.transactions import check_isolation_level, committed_records

__all__ = ["NoInternalTopicError", "read_internal_view", "view_partitions"]


class NoInternalTopicError(KcodecError):
    """A view was asked of a path that holds no partition of the view's internal topic."""

    kind = "no_internal_topic"


def no_topic_error(view: str, path: str, found: list[str]) -> NoInternalTopicError:
    topic = VIEW_TOPICS[view]
    listed = ", ".join(sorted(found)[:10]) or "none"
    return NoInternalTopicError(
        f"view {view} reads {topic}, but {path} holds no partition of it (partitions found: {listed}); "
        f"a segment outside a {topic}-<n> directory needs the topic named"
    )


def view_partitions(path: str, view: str) -> list[Partition]:
    """The partitions of the view's topic that ``path`` names: a partition directory, or a log directory of
    them; :class:`NoInternalTopicError` when there is none."""
    topic = VIEW_TOPICS[view]
    fs, p = resolve(os.fspath(path))
    if not fs.exists(p):
        raise FileNotFoundError(f"no such file or directory: {path}")
    try:
        found = [Partition(p, fs)] if parse_partition_dir(p)[0] == topic else []
    except ValueError:
        found = []
    if not found:
        found = list_partitions(p, fs)
    parts = [part for part in found if part.topic == topic]
    if not parts:
        raise no_topic_error(view, os.fspath(path), [f"{x.topic}-{x.partition}" for x in found])
    return parts


def _batches(source, where: str, on_corrupt: str, on_skip, verify_crc: bool) -> Iterable[Batch]:
    if on_corrupt == "fail":
        return read_batches(source, strict=True, verify_crc=verify_crc)
    return read_batches(
        source,
        verify_crc=verify_crc,
        skip_corrupt=True,
        resync=False,
        on_skip=lambda r: on_skip(
            {"file": where, "position": r.start, "bytes": r.size, "kind": r.kind, "error": r.reason}
        ),
    )


def _feed(rows: ViewRows, batches, *, partition, segment: str, snapshot, aborted, on_corrupt: str, on_skip) -> None:
    for batch in batches:
        records = list(committed_records([batch], aborted)) if aborted is not None else batch.records
        for record in records:
            try:
                rows.add(record, partition=partition, segment=segment, snapshot=snapshot)
            except ViewRecordError as exc:
                err = ViewRecordError(
                    f"{segment}: {exc.message}", position=batch.position, base_offset=batch.base_offset, field=exc.field
                )
                if on_corrupt == "fail":
                    raise err from None
                on_skip(
                    {
                        "file": segment,
                        "position": batch.position,
                        "offset": record.offset,
                        "kind": err.kind,
                        "error": str(err),
                    }
                )


def read_internal_view(
    path,
    view: str,
    *,
    latest: bool = False,
    isolation_level: str = "read_uncommitted",
    include_control: bool = False,
    on_corrupt: str = "fail",
    on_skip: Callable[[dict], None] | None = None,
    verify_crc: bool = True,
) -> pa.Table:
    """The rows of ``view`` (consumerOffsets, groups, transactions, metadata) over the partitions of its
    internal topic under ``path`` (a partition directory or a log directory), partition by partition in
    offset order; for ``metadata`` each partition's ``.checkpoint`` snapshots first, then its log.

    ``latest``: the last row per key, none for a key whose last record is a tombstone (not for metadata).
    ``isolation_level="read_committed"`` leaves out the records of aborted transactions (transactional
    offset commits). ``include_control`` (metadata): KRaft control records as rows too.
    ``on_corrupt="skip"`` goes on past a batch or record that does not decode, calling ``on_skip`` with a
    dict saying what was skipped and where; ``"fail"`` raises the error (a :class:`~kcodec.errors.DecodeError`
    naming the file, byte position, batch offset and key or value)."""
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}: one of {', '.join(VIEWS)}")
    if on_corrupt not in ("fail", "skip"):
        raise ValueError(f"on_corrupt must be fail or skip, not {on_corrupt!r}")
    committed = check_isolation_level(isolation_level)
    report = on_skip or (lambda item: None)
    out: list[dict] = []
    for part in view_partitions(path, view):
        rows = ViewRows(view, latest=latest, include_control=include_control)
        if view == "metadata":
            for snap in list_snapshots(part.fs, str(part.path)):
                batches = _batches(snap.path, snap.path, on_corrupt, report, verify_crc)
                _feed(
                    rows,
                    batches,
                    segment=snap.path,
                    snapshot=(snap.end_offset, snap.epoch),
                    aborted=None,
                    partition=part.partition,
                    on_corrupt=on_corrupt,
                    on_skip=report,
                )
                out += rows.take()
        segs: list[Segment] = part.segments
        aborted = aborted_transactions(segs, skip_corrupt=on_corrupt == "skip") if committed and segs else None
        for seg in segs:
            source = seg.log if seg.fs.local else seg.fs.read_range(str(seg.log), 0, None)
            batches = _batches(source, str(seg.log), on_corrupt, report, verify_crc)
            _feed(
                rows,
                batches,
                segment=str(seg.log),
                snapshot=None,
                aborted=aborted,
                partition=part.partition,
                on_corrupt=on_corrupt,
                on_skip=report,
            )
            if not latest:
                out += rows.take()
        out += rows.take()
    columns = [(c, True) for c in VIEWS[view]]
    return pa.Table.from_batches([rows_to_batch(out, columns)])
