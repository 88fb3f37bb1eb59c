"""The ``kafka-segments`` PySpark data source (Python Data Source API, PySpark 4).

Reading::

    from kcodec.spark import register
    register(spark)   # or a session from kcodec.spark.local_session()
    df = spark.read.format("kafka-segments").load("/var/kafka-logs")   # or a partition dir, a .log, a glob, s3://...

Streaming (see :mod:`kcodec.spark.stream`)::

    spark.readStream.format("kafka-segments").option("startingOffsets", "earliest").load("/var/kafka-logs")

Writing::

    df.write.format("kafka-segments").mode("append").option("magic", 2).option("compression", "zstd").save(PATH)

The classes live at module level in the installed package because Spark
pickles them by reference into its Python workers. See :mod:`kcodec.spark`
for the options.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)

from kcodec.spark.options import ReadOptions
from kcodec.spark.planning import SegmentSplit, Split, discover, kafka07_dirs, plan, select

if TYPE_CHECKING:  # the writer's machinery loads in a writing job only: every reading worker imports this module
    from kcodec.spark.write import Chunk

__all__ = [
    "register",
    "KafkaSegmentsDataSource",
    "KafkaSegmentsReader",
    "KafkaSegmentsWriter",
    "SegmentsCommitMessage",
    "FORMAT",
]

FORMAT = "kafka-segments"


def register(spark) -> None:
    """Register the ``kafka-segments`` data source with ``spark`` and install, once per process, the
    driver's hooks: ``DataFrameWriter.save`` with the ErrorIfExists and Ignore save modes
    (:mod:`kcodec.spark.savemode`), and the readers' ``load`` checking options before Spark asks a
    worker (:mod:`kcodec.spark.loadcheck`): :mod:`kcodec.spark.hooks`."""
    from kcodec.spark import hooks

    spark.dataSource.register(KafkaSegmentsDataSource)
    hooks.install()


class KafkaSegmentsDataSource(DataSource):
    """Kafka segment files as a table: one row per record (``view=records``,
    the default), per batch (``view=batches``), or per internal record of Kafka's
    internal topics (``view=consumerOffsets | groups | transactions | metadata``), or per partition,
    producer or transaction of the broker's housekeeping (``view=compaction | producers |
    partitionTransactions``: :mod:`kcodec.spark.housekeeping`)."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> str:
        from kcodec.spark.arrow import ddl, read_columns
        from kcodec.spark.stream import checked_read_options

        # Spark asks for the schema at load(), in a worker; kcodec.spark.loadcheck runs the same check
        # in the driver first, so a refusal arrives as one line
        return ddl(read_columns(checked_read_options(self.options)))

    def reader(self, schema) -> KafkaSegmentsReader:
        return KafkaSegmentsReader(dict(self.options), schema)

    def streamReader(self, schema) -> DataSourceStreamReader:
        from kcodec.spark.stream import KafkaSegmentsStreamReader

        return KafkaSegmentsStreamReader(dict(self.options), schema)

    def writer(self, schema, overwrite: bool) -> KafkaSegmentsWriter:
        return KafkaSegmentsWriter(dict(self.options), schema, overwrite)


class KafkaSegmentsReader(DataSourceReader):
    def __init__(self, options: dict, schema):
        from kcodec.spark.arrow import requested_columns

        self.opts = ReadOptions.from_options(options)
        self.columns = requested_columns(self.opts, schema)

    def partitions(self):
        from kcodec.spark.housekeeping import housekeeping_partitions, is_housekeeping_view
        from kcodec.spark.views import is_internal_view, view_partitions

        if is_internal_view(self.opts.view):
            return view_partitions(self.opts)
        if is_housekeeping_view(self.opts.view):
            return housekeeping_partitions(self.opts)
        from kcodec.spark.kafka07 import Kafka07Split

        old = kafka07_dirs(self.opts.path, self.opts.storage)
        if old is not None:  # Kafka 0.7 partitions: one split each (logical offsets count from the start)
            return [Kafka07Split(i, d) for i, d in enumerate(old)]
        parts = select(
            discover(self.opts.path, topic=self.opts.topic, partition=self.opts.partition, storage=self.opts.storage),
            self.opts,
        )
        splits = plan(parts, self.opts)
        if not splits:  # nothing to read; Spark still wants a partition
            return [SegmentSplit(Split(0, "", None, None, None, 0, 0, empty=True))]
        return [SegmentSplit(s) for s in splits]

    def read(self, partition: InputPartition):
        from kcodec.spark.housekeeping import PartitionTask, read_housekeeping
        from kcodec.spark.read import read_split
        from kcodec.spark.views import ViewSplits, read_view

        if isinstance(partition, ViewSplits):
            return read_view(partition, self.opts, self.columns)
        if isinstance(partition, PartitionTask):
            return read_housekeeping(partition, self.opts, self.columns)
        from kcodec.spark.kafka07 import Kafka07Split, read_kafka07_split

        if isinstance(partition, Kafka07Split):
            return read_kafka07_split(partition, self.opts, self.columns)
        assert isinstance(partition, SegmentSplit)  # the only other kind partitions() hands out
        return read_split(partition.split, self.opts, self.columns)


@dataclass
class SegmentsCommitMessage(WriterCommitMessage):
    chunks: list[Chunk] = field(default_factory=list)


class KafkaSegmentsWriter(DataSourceArrowWriter):
    """Stages each task's batches, then builds the partition directories on commit
    (see :mod:`kcodec.spark.write`). Modes: ``append`` and ``overwrite``; ``errorifexists`` and
    ``ignore`` through :mod:`kcodec.spark.savemode`."""

    def __init__(self, options: dict, schema, overwrite: bool):
        from kcodec.spark.write import WriteOptions, check_input_schema, new_job_id, start_job, with_partition_counts

        self.opts = with_partition_counts(WriteOptions.from_options(options), overwrite)
        self.columns = check_input_schema([(f.name, f.dataType.simpleString()) for f in schema.fields], self.opts)
        self.overwrite = overwrite
        self.job = new_job_id()
        start_job(self.opts, self.job)  # a killed job's half-published commit or staging first; one job at a time

    def write(self, iterator) -> SegmentsCommitMessage:
        from pyspark import TaskContext

        from kcodec.spark.write import write_task

        ctx = TaskContext.get()
        task = ctx.partitionId() if ctx is not None else 0
        attempt = ctx.attemptNumber() if ctx is not None else 0
        return SegmentsCommitMessage(write_task(iterator, self.opts, self.job, task, attempt, self.overwrite))

    def commit(self, messages) -> None:
        from kcodec.spark.write import commit_job

        chunks = [c for m in messages if m is not None for c in m.chunks]
        commit_job(chunks, self.opts, self.job, self.overwrite)

    def abort(self, messages) -> None:
        from kcodec.spark.write import abort_job

        abort_job(self.opts, self.job)
