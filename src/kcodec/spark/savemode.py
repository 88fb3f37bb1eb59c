"""Spark's four save modes for ``df.write.format("kafka-segments")``, as Spark's file sources have them.

PySpark's Python data source API (4.x) passes a writer ``overwrite: bool``
only, and Spark itself refuses ``ErrorIfExists`` (its default) and ``Ignore``
for a Python data source before the source is asked
(``UNSUPPORTED_DATA_SOURCE_SAVE_MODE``): the source cannot tell them from
``Append``. So kcodec wraps ``DataFrameWriter.save`` in the driver (installed by
:func:`kcodec.spark.register` and :func:`kcodec.spark.local_session`, never by an
import): for this format it reads the mode Spark holds and

* ``ErrorIfExists``: fails with one line when the target path exists (as
  Spark's ``InsertIntoHadoopFsRelationCommand`` does), else writes;
* ``Ignore``: does nothing when the target path exists, else writes;
* ``Append`` / ``Overwrite``: as before.

A write it lets through runs as ``Append`` with the option
:data:`~kcodec.spark.options.SAVE_MODE_OPTION` naming the real mode, and the
commit checks again under its lock (:func:`kcodec.spark.write.commit_job`), so
data appearing at the path while the job ran is never appended to. Without the
hook (a Spark Connect session, or a session that found the format through
``pyspark_kafka_segments`` with no ``register`` call) Spark's own error stands
and ``mode("append")`` / ``mode("overwrite")`` work.
"""

from __future__ import annotations

import functools

from kcodec.errors import PathExistsError

# kcodec.log.fs and kcodec.spark.options are imported by a save of this format only: the hooks are
# installed whenever PySpark's writer is imported (kcodec.spark.hooks), and must cost nothing until used

__all__ = ["install", "check_target"]

_FORMAT = "kafka-segments"


def check_target(mode: str, path: str, storage=()) -> bool:
    """Whether a write in save ``mode`` goes ahead on ``path``: False for ``ignore`` on an existing
    path; :class:`PathExistsError` for ``errorifexists`` on one."""
    if mode not in ("errorifexists", "ignore"):
        return True
    from kcodec.log.fs import resolve

    fs, root = resolve(path, storage)
    if not fs.exists(root):
        return True
    if mode == "ignore":
        return False
    raise PathExistsError(
        f"kafka-segments: {path} already exists (save mode ErrorIfExists, Spark's default); "
        "use mode('append') to add to it or mode('overwrite') to replace it"
    )


def _java_options(writer) -> dict[str, str]:
    jvm = writer._spark._jvm
    original = writer._jwrite.extraOptions().originalMap()
    return {str(k): str(v) for k, v in dict(jvm.scala.jdk.javaapi.CollectionConverters.asJava(original)).items()}


def install() -> None:
    """Wrap classic PySpark's ``DataFrameWriter.save`` (once)."""
    from pyspark.sql.readwriter import DataFrameWriter

    original = DataFrameWriter.save
    if getattr(original, "_kcodec_save_modes", False):
        return

    @functools.wraps(original)
    def save(self, path=None, format=None, mode=None, partitionBy=None, **options):
        self.mode(mode).options(**options)
        if partitionBy is not None:
            self.partitionBy(partitionBy)
        if format is not None:
            self.format(format)
        if str(self._jwrite.source()) != _FORMAT:
            return original(self, path)
        from kcodec.log.fs import storage_options
        from kcodec.spark.options import SAVE_MODE_OPTION, OptionError

        chosen = str(self._jwrite.curmode().toString()).lower()
        opts = _java_options(self)
        target = path if path is not None else opts.get("path")
        if not target:
            raise OptionError("kafka-segments needs a path: df.write.format('kafka-segments').save(PATH)")
        if not check_target(chosen, str(target), storage_options(opts)):
            return None
        try:
            if chosen != "overwrite":
                self.mode("append")
            self.option(SAVE_MODE_OPTION, chosen)
            return original(self, path)
        finally:
            self.mode(chosen)

    save._kcodec_save_modes = True  # type: ignore[attr-defined]  # a marker on the function: installed once
    DataFrameWriter.save = save  # type: ignore[method-assign]  # replacing pyspark's method is the point
