"""The Spark job of a table run: Spark's executors read the new offsets through the ``kafka-segments``
source and write them as Parquet data files (Spark's own writer) into the run's folder; the driver then
commits them (:mod:`kcodec.spark.lakehouse.run`)."""

from __future__ import annotations

import json

from kcodec.errors import KcodecError
from kcodec.spark.lakehouse import MODES
from kcodec.spark.lakehouse.offsets import TopicPartition, tp_text
from kcodec.spark.lakehouse.run import RunResult, TableRun, open_table
from kcodec.spark.options import RANGE_OPTIONS

__all__ = [
    "run_table_pipeline",
    "write_files",
    "render_result",
    "READ_OPTIONS_CHOSEN",
    "REJECTED_TABLE",
    "NULL_KEY_REASON",
]

#: read options a table run sets itself, from the offsets the table stores
READ_OPTIONS_CHOSEN = ("assign", "subscribePattern", *RANGE_OPTIONS, "topic", "partition")

#: the side table of rows ``--mode upsert`` cannot place, and why
REJECTED_TABLE = "records_rejected"
NULL_KEY_REASON = "null key in upsert mode"

# Iceberg's add_files reads a file's partition from its statistics: each file holds one topic and one UTC
# day, written into folders by copies of those two (Spark leaves partition columns out of the files)
_DAY_MICROS = 86_400_000_000
_ICEBERG_FOLDERS = ("kcodec_topic", "kcodec_day")


def log_ends(source: str, options: dict[str, str]) -> dict[TopicPartition, int]:
    """Each topic-partition under ``source`` and the offset its log ends at now (``subscribe``: those topics)."""
    from kcodec.log.fs import storage_options
    from kcodec.log.partition import next_offset
    from kcodec.spark.planning import discover

    subscribed = {t.strip() for t in options.get("subscribe", "").split(",") if t.strip()}
    ends: dict[TopicPartition, int] = {}
    for part in discover(source, storage=storage_options(options)):
        if part.topic is None or part.partition is None:
            raise KcodecError(
                f"{part.path}: a table run needs <topic>-<n> partition directories (offsets are stored per "
                "topic-partition)"
            )
        if not subscribed or part.topic in subscribed:
            ends[(part.topic, part.partition)] = next_offset(part.segments)
    return ends


def _offset_options(ranges: dict[TopicPartition, tuple[int | None, int]]) -> dict[str, str]:
    assign: dict[str, list[int]] = {}
    starting: dict[str, dict[str, int]] = {}
    ending: dict[str, dict[str, int]] = {}
    for (topic, partition), (start, end) in sorted(ranges.items()):
        assign.setdefault(topic, []).append(partition)
        starting.setdefault(topic, {})[str(partition)] = -2 if start is None else start
        ending.setdefault(topic, {})[str(partition)] = end
    return {
        "assign": json.dumps(assign),
        "startingOffsets": json.dumps(starting),
        "endingOffsets": json.dumps(ending),
    }


def write_files(df, table_format: str, path: str) -> None:
    """``df``'s rows as Parquet data files under ``path`` (Spark's own writer), laid out for
    ``table_format``'s commit; timestamps as microseconds (not INT96: Iceberg and Delta read microseconds)."""
    spark = df.sparkSession
    key = "spark.sql.parquet.outputTimestampType"
    before = spark.conf.get(key, None)
    spark.conf.set(key, "TIMESTAMP_MICROS")
    try:
        _write_laid_out(df, table_format, path)
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def _write_laid_out(df, table_format: str, path: str) -> None:
    from pyspark.sql import functions as F

    if table_format == "iceberg":
        topic, day = _ICEBERG_FOLDERS
        df = df.withColumn(topic, F.col("topic")).withColumn(
            day, F.floor(F.unix_micros(F.col("timestamp")) / F.lit(_DAY_MICROS))
        )
        folders = list(_ICEBERG_FOLDERS)
    else:
        from kcodec.spark.lakehouse.delta import PARTITION_COLUMNS

        folders = list(PARTITION_COLUMNS)
    df.sortWithinPartitions(*folders, "partition", "offset").write.partitionBy(*folders).parquet(path)


def _upsert_rows(df):
    """Per (topic, partition, key), the newest record of the run's offsets (Kafka compacts per partition,
    where offsets order records), as Arrow on the driver; and the rows with no key, with the reason."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    newest = Window.partitionBy("topic", "partition", "key").orderBy(F.col("offset").desc())
    latest = (
        df.where(F.col("key").isNotNull())
        .withColumn("kcodec_rank", F.row_number().over(newest))
        .where(F.col("kcodec_rank") == 1)
        .drop("kcodec_rank")
    )
    rejected = df.where(F.col("key").isNull()).withColumn("reason", F.lit(NULL_KEY_REASON))
    return latest.toArrow(), rejected.toArrow()


def run_table_pipeline(
    source: str,
    dest: str,
    *,
    table_format: str,
    mode: str = "append",
    catalog: str | None = None,
    allow_backwards: bool = False,
    spark=None,
    master: str = "local[*]",
    conf: dict | None = None,
    options: dict | None = None,
    log_level: str = "error",
) -> RunResult:
    """Append what is new under ``source`` to the ``records`` table of ``dest`` in ``table_format``
    (``iceberg`` or ``delta``), exactly once: see :mod:`kcodec.spark.lakehouse`. ``mode="upsert"``: the
    table keeps the newest record per (topic, partition, key), a tombstone deleting the key; records with
    no key go to the ``records_rejected`` table with the reason."""
    if mode not in MODES:
        raise KcodecError(f"--mode must be one of {', '.join(MODES)}, not {mode!r}")
    options = {str(k): str(v) for k, v in (options or {}).items()}
    chosen = sorted(set(options) & set(READ_OPTIONS_CHOSEN))
    if chosen:
        raise KcodecError(
            f"a table run reads from the offsets its table stores: {', '.join(chosen)} cannot be given (subscribe can)"
        )
    table = open_table(table_format, dest, catalog=catalog)
    side = open_table(table_format, dest, REJECTED_TABLE, catalog=catalog) if mode == "upsert" else None
    ends = log_ends(source, options)
    sessions = [spark]

    def session():
        """Spark, started when there is something to read (a run with nothing new needs none)."""
        if sessions[0] is None:
            from kcodec.spark.session import local_session

            sessions[0] = local_session(master, "kcodec pipeline", conf=conf, log_level=log_level)
        elif len(sessions) == 1:
            from kcodec.spark.source import register

            register(sessions[0])
        sessions.append(True)  # registered
        options.setdefault("minPartitions", str(sessions[0].sparkContext.defaultParallelism))
        return sessions[0]

    def schema():
        from pyspark.sql.pandas.types import to_arrow_schema

        df = session().read.format("kafka-segments").options(**options).load(source)
        return to_arrow_schema(df.schema, timezone="UTC")

    def new_rows():
        return session().read.format("kafka-segments").options(**options, **_offset_options(plan.ranges)).load(source)

    with TableRun(table, dest, mode=mode, allow_backwards=allow_backwards, side_table=side) as run:
        plan = run.begin(ends, schema)
        if mode == "upsert":
            if plan.nothing_new:
                return run.commit_upsert(None)
            if not plan.ranges:  # offsets went backwards, accepted: nothing to read, the offsets move on
                return run.commit_upsert(schema().empty_table())
            latest, rejected = _upsert_rows(new_rows())
            return run.commit_upsert(latest, rejected)
        if plan.ranges:
            write_files(new_rows(), table_format, run.data_dir)
        return run.commit()


def render_result(r: RunResult, source: str, dest: str) -> str:
    """What ``kcodec pipeline --table-format`` prints."""
    lines = [f"kcodec pipeline: {source} -> {dest}: {r.table} ({r.format}, --mode {r.mode})"]
    for path in r.orphans_removed:
        lines.append(f"  removed the data files of a run that did not commit: {path}")
    if not r.committed:
        version = (
            "it is empty" if r.version is None else f"{'snapshot' if r.format == 'iceberg' else 'version'} {r.version}"
        )
        lines.append(f"  nothing new since the last commit: committed nothing (the table stays at {version})")
        return "\n".join(lines)
    what = "snapshot" if r.format == "iceberg" else "version"
    rows = f"{r.rows:,} row{'' if r.rows == 1 else 's'}"
    if r.mode == "upsert":
        lines.append(f"  committed {what} {r.version}: {rows} upserted (the newest per key; tombstones delete)")
    else:
        lines.append(f"  committed {what} {r.version}: {rows} in {r.files:,} file{'' if r.files == 1 else 's'}")
    if r.rejected:
        lines.append(f"  {r.rejected:,} row{'' if r.rejected == 1 else 's'} with no key put in {r.rejected_table}")
    head = ("topic-partition", "from", "to (next offset)")
    table = [head] + [
        (tp_text(tp), "earliest" if start is None else f"{start:,}", f"{end:,}")
        for tp, (start, end) in sorted(r.ranges.items())
    ]
    widths = [max(len(row[i]) for row in table) for i in range(3)]
    for row in table:
        lines.append(
            "  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
        )
    for tp in r.reset:
        lines.append(f"  {tp_text(tp)}: offsets went backwards; continuing from its log end {r.next_offsets[tp]:,}")
    return "\n".join(lines)
