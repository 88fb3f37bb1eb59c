"""Topics as lakehouse tables: ``kcodec pipeline --table-format iceberg|delta`` (see docs/lakehouse.md).

Spark's executors write the records as Parquet data files (Spark's own writer) into a run's directory
inside the table; the driver then commits those files to the table in one step, storing in the commit
(an Iceberg snapshot's summary, a Delta commit's info) the next offset of every topic-partition the table
now covers. The next run reads only what comes after.

* :mod:`~kcodec.spark.lakehouse.offsets`: what a run reads (no Spark, no table library);
* :mod:`~kcodec.spark.lakehouse.iceberg`, :mod:`~kcodec.spark.lakehouse.delta`: one table format each,
  through pyiceberg and delta-rs (imported when used);
* :mod:`~kcodec.spark.lakehouse.run`: a run's steps on the driver (lock, orphan files, plan, commit),
  usable without Spark;
* :mod:`~kcodec.spark.lakehouse.job`: the Spark job between the plan and the commit;
* :mod:`~kcodec.spark.lakehouse.stream`: Structured Streaming, a table run per micro-batch keyed by its id.
"""

from __future__ import annotations

__all__ = ["TABLE_FORMATS", "MODES"]

#: ``--table-format``: parquet is the plain folders of ``kcodec pipeline``
TABLE_FORMATS = ("parquet", "iceberg", "delta")
#: ``--mode``: every record a row, or the latest record per key
MODES = ("append", "upsert")
