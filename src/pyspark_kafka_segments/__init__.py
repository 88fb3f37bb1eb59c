"""``format("kafka-segments")`` in every PySpark 4 session, with no ``register`` call.

PySpark looks up Python data sources among installed top-level packages whose
names start with ``pyspark_`` and that define ``DefaultSource`` (see
``pyspark.sql.worker.lookup_data_sources``); this package is that hook for
:class:`kcodec.spark.source.KafkaSegmentsDataSource`. The lookup runs in a
Python worker, not in the driver, so importing this package changes nothing
else: the driver's ``errorifexists`` / ``ignore`` save modes come with
:func:`kcodec.spark.register` (or :func:`kcodec.spark.local_session`).
"""

from kcodec.spark.source import KafkaSegmentsDataSource as DefaultSource

__all__ = ["DefaultSource"]
