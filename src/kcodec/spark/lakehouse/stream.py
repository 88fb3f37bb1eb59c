"""Structured Streaming into kcodec's Iceberg and Delta tables, exactly once.

Each micro-batch is a table run (:class:`~kcodec.spark.lakehouse.run.TableRun`, the same commit as
``kcodec pipeline --table-format``): Spark writes the batch's rows as Parquet data files into a run folder,
then one table commit adds them with the next offset of every topic-partition (the batch's end offsets,
which Spark wrote to the checkpoint's offset log before running the batch) and the batch id.

A batch Spark runs again after a restart commits nothing: its id is the one the table's last commit
stored, and its end offsets are the ones the table holds. Rows the table already holds (a new checkpoint
over a table a batch run or an earlier stream filled) are filtered out by the stored offsets.
"""

from __future__ import annotations

import json
import os

from kcodec.errors import KcodecError
from kcodec.spark.lakehouse.job import READ_OPTIONS_CHOSEN, write_files
from kcodec.spark.lakehouse.offsets import TopicPartition, decode
from kcodec.spark.lakehouse.run import RunResult, TableRun, open_table, run_lock
from kcodec.spark.lakehouse.state import STREAM_KEY

__all__ = ["BatchCommitter", "foreach_batch_committer", "stream_to_table", "batch_end_offsets"]


def batch_end_offsets(checkpoint: str, batch_id: int) -> dict[TopicPartition, int]:
    """The offsets micro-batch ``batch_id`` reads up to, from the checkpoint's offset log (Spark writes it
    before running the batch): a version line, the batch's metadata, then one line per source."""
    path = os.path.join(checkpoint, "offsets", str(batch_id))
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise KcodecError(f"{path}: cannot read batch {batch_id}'s offsets from the checkpoint ({exc})") from None
    if len(lines) != 3:
        raise KcodecError(f"{path}: a stream into a table reads one kafka-segments source, not {len(lines) - 2}")
    return decode(lines[2])


def _stream_id(checkpoint: str) -> str:
    """The query's id, kept in the checkpoint across restarts."""
    path = os.path.join(checkpoint, "metadata")
    try:
        with open(path, encoding="utf-8") as f:
            return str(json.loads(f.readline())["id"])
    except (OSError, ValueError, KeyError) as exc:
        raise KcodecError(f"{path}: not a Structured Streaming checkpoint ({exc})") from None


def _replayed(stored: str | None, stream: str, batch_id: int) -> bool:
    if not stored:
        return False
    try:
        last = json.loads(stored)
        return last["stream"] == stream and int(last["batch"]) >= batch_id
    except (ValueError, KeyError, TypeError):
        raise KcodecError(f"the table's {STREAM_KEY} is not kcodec's JSON: {stored[:80]!r}") from None


def _within(df, ranges: dict[TopicPartition, tuple[int | None, int]]):
    """``df``'s rows inside the planned offset ranges."""
    from pyspark.sql import functions as F

    keep = None
    for (topic, partition), (start, end) in sorted(ranges.items()):
        cond = (F.col("topic") == topic) & (F.col("partition") == partition) & (F.col("offset") < end)
        if start is not None:
            cond = cond & (F.col("offset") >= start)
        keep = cond if keep is None else keep | cond
    return df.where(keep)


class BatchCommitter:
    """``writeStream.foreachBatch(committer)``: each micro-batch appended to DEST's ``records`` table in one
    commit keyed by the batch id. ``results`` holds what each call did; ``error`` kcodec's error, if any
    (Spark wraps it in its own)."""

    def __init__(
        self,
        dest: str,
        *,
        table_format: str,
        checkpoint: str,
        catalog: str | None = None,
        locked: bool = False,
    ):
        self.dest = str(dest)
        self.table_format = table_format
        self.checkpoint = str(checkpoint)
        self.catalog = catalog
        self.locked = locked  # the caller holds DEST's run lock for the stream's life
        self.results: list[RunResult] = []
        self.error: KcodecError | None = None

    def __call__(self, df, batch_id: int) -> RunResult:
        try:
            result = self._commit(df, batch_id)
        except KcodecError as exc:
            self.error = exc
            raise
        self.results.append(result)
        return result

    def _commit(self, df, batch_id: int) -> RunResult:
        ends = batch_end_offsets(self.checkpoint, batch_id)
        stream = _stream_id(self.checkpoint)
        table = open_table(self.table_format, self.dest, catalog=self.catalog)

        def schema():
            from pyspark.sql.pandas.types import to_arrow_schema

            return to_arrow_schema(df.schema, timezone="UTC")

        with TableRun(table, self.dest, locked=self.locked, skip_behind=True) as run:
            plan = run.begin(ends, schema)
            assert run.state is not None
            if _replayed(run.state.stream_batch, stream, batch_id):
                return RunResult(table.name, table.format, run.mode, False, run.state.version)
            if plan.ranges:
                write_files(_within(df, plan.ranges), self.table_format, run.data_dir)
            return run.commit({STREAM_KEY: json.dumps({"stream": stream, "batch": batch_id}, separators=(",", ":"))})


def foreach_batch_committer(
    dest: str, *, table_format: str, checkpoint: str, catalog: str | None = None
) -> BatchCommitter:
    """The callable for ``writeStream.foreachBatch`` of a ``kafka-segments`` stream whose
    ``checkpointLocation`` is ``checkpoint``: each micro-batch committed once to DEST's ``records`` table
    (``table_format`` iceberg or delta). Each batch takes DEST's run lock while it commits."""
    return BatchCommitter(dest, table_format=table_format, checkpoint=checkpoint, catalog=catalog)


def stream_to_table(
    source: str,
    dest: str,
    *,
    table_format: str,
    checkpoint: str,
    catalog: str | None = None,
    spark=None,
    options: dict | None = None,
    trigger: str = "availableNow",
    timeout: float | None = None,
    master: str = "local[*]",
    log_level: str = "error",
) -> list[RunResult]:
    """Stream what is under ``source`` into DEST's ``records`` table (``table_format`` iceberg or delta),
    exactly once, holding DEST's run lock for the stream's life (a second stream or run into DEST fails
    with one line). ``trigger``: ``availableNow`` (read what is there when the query starts, then stop) or
    a processing-time interval such as ``"10 seconds"`` (run until ``timeout`` seconds have passed).
    Returns what each micro-batch did."""
    options = {str(k): str(v) for k, v in (options or {}).items()}
    chosen = sorted(set(options) & (set(READ_OPTIONS_CHOSEN) - {"startingOffsets"}))
    if chosen:
        raise KcodecError(f"a stream into a table reads every partition under SRC: {', '.join(chosen)} cannot be given")
    options.setdefault("startingOffsets", "earliest")
    if trigger != "availableNow" and timeout is None:
        raise KcodecError("a stream with a processing-time trigger needs a timeout (seconds)")
    if spark is None:
        from kcodec.spark.session import local_session

        spark = local_session(master, "kcodec pipeline --stream", log_level=log_level)
    else:
        from kcodec.spark.source import register

        register(spark)
    lock = run_lock(str(dest)).acquire()  # OutputLockedError: one line naming the other process
    try:
        committer = BatchCommitter(
            str(dest), table_format=table_format, checkpoint=str(checkpoint), catalog=catalog, locked=True
        )
        writer = (
            spark.readStream.format("kafka-segments")
            .options(**options)
            .load(str(source))
            .writeStream.foreachBatch(committer)
            .option("checkpointLocation", str(checkpoint))
        )
        if trigger == "availableNow":
            writer = writer.trigger(availableNow=True)
        else:
            writer = writer.trigger(processingTime=trigger)
        query = writer.start()
        try:
            _await(query, timeout, committer)
        finally:
            query.stop()
        return committer.results
    finally:
        lock.release()


def _await(query, timeout: float | None, committer: BatchCommitter) -> None:
    """Until the query ends (or ``timeout``); kcodec's error first when a batch failed."""
    try:
        query.awaitTermination(timeout)
    except Exception as exc:
        if committer.error is not None:
            raise committer.error from exc
        raise
