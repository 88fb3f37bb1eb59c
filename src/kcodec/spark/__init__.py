"""kcodec on Spark: the ``kafka-segments`` data source and the segments -> tables job.

``pip install 'kcodec[spark]'`` makes ``spark.read.format("kafka-segments")``
and ``df.write.format("kafka-segments")`` available in every PySpark 4
session (PySpark finds the installed ``pyspark_kafka_segments`` package);
``register(spark)`` does it explicitly and also gives ``df.write`` the
``errorifexists`` and ``ignore`` save modes (:mod:`kcodec.spark.savemode`), as
:func:`local_session` does. Importing :mod:`kcodec` never imports pyspark;
importing this package neither imports nor changes pyspark: ``register`` does.

Reading: ``load(PATH)`` takes a segment file, a partition directory, a
directory of ``<topic>-<n>`` partition directories, or a glob of those; local
paths, ``file://`` URIs and any filesystem pyarrow opens (``s3://``,
``gs://``, ``hdfs://`` ...). Columns: Spark's Kafka source's ``key value
topic partition offset timestamp timestampType headers`` with the same types,
then ``magic baseOffset producerId producerEpoch baseSequence isTransactional
isControl partitionLeaderEpoch compression batchPosition segment crcValid
lastOffset deleteHorizonMs crc``.

Read options (defaults first):

==========================  ====================================================================
``verifyCrc``               ``true`` | ``false``: check batch CRCs
``includeControlRecords``   ``false`` | ``true``: keep COMMIT/ABORT markers and other control records
``isolationLevel``          ``read_uncommitted`` | ``read_committed``: drop records of aborted
                            transactions (``.txnindex``; ABORT markers where index files are missing)
``startingOffset``          first offset to read (inclusive), through the ``.index`` files
``endingOffset``            offset to stop at (exclusive)
``startingTimestamp``       ms or ISO-8601: per partition, start at Kafka's ListOffsets answer
                            (through the ``.timeindex`` files)
``onCorrupt``               ``fail`` | ``skip``: skip undecodable batches, reporting each skipped
                            region on the task's stderr and, with ``corruptReportPath`` (a
                            directory), as JSON lines there
``topic`` / ``partition``   override the names taken from directory names
``splitBytes``              128 MiB: segments larger than this are split at ``.index`` positions
``minPartitions``           (none) as Spark's Kafka source: split finer to get at least this many
``maxRowsPerBatch``         10000: rows per Arrow record batch
``view``                    ``records`` | ``batches``: one row per batch instead (position, size,
                            codec, record count, compressed/uncompressed bytes, CRC validity ...)
                            | ``consumerOffsets`` | ``groups`` | ``transactions`` | ``metadata``: Kafka's
                            internal topics as typed rows (:mod:`kcodec.spark.views`; columns: docs/internal-topics.md)
                            | ``producers`` | ``partitionTransactions`` | ``compaction``: ``kcodec txn`` /
                            ``kcodec compact --dry-run`` per partition of a log directory, with the
                            cleaner's settings as options (:mod:`kcodec.spark.housekeeping`; docs/spark.md)
``latest``                  ``false`` | ``true`` (consumerOffsets, groups, transactions): the last row
                            per key, tombstones deleting, as compaction keeps a partition
``sizes``                   ``false`` | ``true`` (batches view): add ``sizeAs``, what each batch's
                            records would take as v0/v1/v2 with each codec
``sizeSample``              1: the fraction of batches (picked by base offset) that get compressed
                            sizes in ``sizeAs``; the others get the uncompressed ones only
``txnIndex``                ``auto`` | ``derive``: always derive aborted transactions from markers
``maxDecompressedSize``     64 MiB: the most one batch may decompress to (a compression bomb fails)
==========================  ====================================================================

Spark's Kafka source options mean what they mean there (``subscribe``,
``subscribePattern``, ``assign``, ``startingOffsets``, ``endingOffsets``,
``startingOffsetsByTimestamp``, ``endingTimestamp``, ``endingOffsetsByTimestamp``,
``startingOffsetsByTimestampStrategy``, ``failOnDataLoss``, ``includeHeaders``,
``maxRecordsPerPartition``, ``kafka.isolation.level`` ...): the table of docs/spark.md
says what each does here. An unknown option fails at ``load()``. Every option, read and write, is a
row of :data:`kcodec.spark.options.OPTIONS` (``kcodec.spark.options.describe("read")`` lists them).

Streaming: ``spark.readStream.format("kafka-segments").load(DIR)`` tails the
partition directories under DIR as a broker writes them, with Spark's Kafka
source offsets, ``startingOffsets`` (``latest`` by default, as in Spark),
``maxOffsetsPerTrigger``, ``Trigger.AvailableNow`` and ``failOnDataLoss``
(see :mod:`kcodec.spark.stream`).

Writing: ``df.write.format("kafka-segments")`` (save modes ``errorifexists``, ``ignore``,
``append``, ``overwrite``: :mod:`kcodec.spark.savemode`; Spark's Kafka sink options:
:mod:`kcodec.spark.sink`)
with a ``value`` column (binary or string) and optional ``key``, ``topic``,
``partition``, ``timestamp``, ``headers``, ``offset`` columns (other columns
are ignored, rows with ``isControl`` true are skipped). Options: ``magic``
(2), ``compression`` (none), ``compressionLevel``, ``recordsPerBatch``
(1000), ``batchBytes`` (1 MiB), ``segmentBytes`` (1 GiB),
``indexIntervalBytes`` (4096), ``topic``, ``partition`` (without one, nor a
column: Kafka's default partitioner over ``numPartitions``), ``keepOffsets`` (false: offsets are assigned in order per
topic-partition). Below magic 2, headers (and at magic 0 timestamps) are
dropped, as a down-conversion does. A job's output appears as one step, and
a job killed while committing is finished or undone by the next writer (see
:mod:`kcodec.spark.write`); ``overwrite`` of the path the job reads is refused.

Values Kafka accepts that Spark's columns cannot hold (an offset past
``bigint``, a timestamp past Spark's microsecond ``timestamp``) fail the read
with ``onCorrupt=fail``, naming the batch offset and field; with ``skip`` only
those records (rows) are left out, counted on the task's stderr and in the
report. Header keys that are not UTF-8 read with replacement characters, as
Kafka's Java client reads them.
"""

from __future__ import annotations

__all__ = ["FORMAT", "register", "local_session", "run_pipeline"]

FORMAT = "kafka-segments"


def register(spark) -> None:
    """Register the ``kafka-segments`` data source with a SparkSession, and give ``df.write`` in this
    process the ErrorIfExists and Ignore save modes (:mod:`kcodec.spark.savemode`); see
    :func:`kcodec.spark.source.register`. Importing this package alone changes nothing in pyspark."""
    from kcodec.spark.source import register as _register

    _register(spark)


def local_session(master: str = "local[*]", app_name: str = "kcodec", conf: dict | None = None):
    """A SparkSession that only talks to 127.0.0.1, with no UI, whose Python
    workers run this interpreter (so they import this kcodec); see
    :func:`kcodec.spark.session.local_session`."""
    from kcodec.spark.session import local_session as _local_session

    return _local_session(master, app_name, conf)


def run_pipeline(source: str, dest: str, **options):
    """The segments -> tables job (see :func:`kcodec.spark.pipeline.run_pipeline`)."""
    from kcodec.spark.pipeline import run_pipeline as _run

    return _run(source, dest, **options)
