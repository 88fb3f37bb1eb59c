"""``format("kafka-segments")`` in every PySpark 4 session, with no ``register`` call.

PySpark looks up Python data sources among installed top-level packages whose
names start with ``pyspark_`` and that define ``DefaultSource`` (see
``pyspark.sql.worker.lookup_data_sources``); this package is that hook for
:class:`kcodec.spark.source.KafkaSegmentsDataSource`, imported when asked for
(the lookup runs in a Python worker). Its :mod:`~pyspark_kafka_segments.startup`
module, run at interpreter start by the ``kcodec-spark.pth`` file kcodec installs,
gives the driver kcodec's save modes and option checks (:mod:`kcodec.spark.savemode`,
:mod:`kcodec.spark.loadcheck`) once PySpark's readers and writers are imported.

This package lives alone in its folder (``src/spark_plugin``): an editable install
puts that folder on ``sys.path`` (PySpark's lookup, ``pkgutil.iter_modules``, sees
path entries, not the import hook an editable install maps kcodec with).
"""

__all__ = ["DefaultSource"]


def __getattr__(name: str):
    if name == "DefaultSource":
        from kcodec.spark.source import KafkaSegmentsDataSource

        return KafkaSegmentsDataSource
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
