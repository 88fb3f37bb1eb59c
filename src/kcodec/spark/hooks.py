"""kcodec's hooks on classic PySpark's readers and writer in the driver, installed once per process.

* ``DataFrameWriter.save``: Spark's four save modes for this format (:mod:`kcodec.spark.savemode`);
* ``DataFrameReader.load`` and ``DataStreamReader.load``: a read's options checked in the driver, one
  line instead of a worker's traceback (:mod:`kcodec.spark.loadcheck`).

:func:`kcodec.spark.register` and :func:`kcodec.spark.local_session` call :func:`install`; a session
that found the format on its own gets them when PySpark's modules are imported, through
``pyspark_kafka_segments.startup`` (the ``kcodec-spark.pth`` file), which calls the ``after_*``
functions. Other formats pass through untouched. Importing this module changes nothing.
"""

from __future__ import annotations

from kcodec.spark import loadcheck, savemode

__all__ = ["install", "after_readwriter", "after_stream_readwriter"]


def after_readwriter() -> None:
    """Once ``pyspark.sql.readwriter`` has run: the writer's save modes and the batch reader's checks."""
    from pyspark.sql.readwriter import DataFrameReader

    savemode.install()
    loadcheck.install_reader(DataFrameReader, streaming=False)


def after_stream_readwriter() -> None:
    """Once ``pyspark.sql.streaming.readwriter`` has run: the stream reader's checks."""
    from pyspark.sql.streaming.readwriter import DataStreamReader

    loadcheck.install_reader(DataStreamReader, streaming=True)


def install() -> None:
    after_readwriter()
    after_stream_readwriter()
