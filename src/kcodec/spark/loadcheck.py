"""``spark.read`` / ``spark.readStream`` ``.format("kafka-segments").load()``: the options checked in the driver.

Spark asks a Python data source for its schema in a Python worker, so an option the source refuses
comes back as ``[PYTHON_DATA_SOURCE_ERROR]`` with the worker's traceback (8 to 17 lines) and kcodec's
message last. kcodec wraps ``DataFrameReader.load`` and ``DataStreamReader.load`` in the driver
(installed with the save modes of :mod:`kcodec.spark.savemode` by :mod:`kcodec.spark.hooks`, never by an
import): for this format
it runs the same checks the source runs (:func:`kcodec.spark.stream.checked_read_options`, and a
stream's :class:`~kcodec.spark.stream.StreamOptions`) first, so a bad option raises kcodec's
:class:`~kcodec.spark.options.OptionError`, one line, before Spark starts a worker.

When Spark does not find the format at all (``DATA_SOURCE_NOT_FOUND``), the usual cause is that
Spark's Python workers run an interpreter without kcodec; that is said in one line naming it and the
setting that fixes it (``spark.pyspark.python`` or ``PYSPARK_PYTHON``).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys

from kcodec.errors import KcodecError

# the checks themselves (kcodec.spark.stream, .options) are imported by a load of this format only: the
# hooks are installed whenever PySpark's readers are imported, and must cost nothing until used

__all__ = ["install_reader", "check", "workers_python", "WorkersPythonError"]

_FORMAT = "kafka-segments"
_CHOSEN = "_kcodec_format"  # attributes kept on a PySpark reader object: its format and options so far
_OPTIONS = "_kcodec_options"


class WorkersPythonError(KcodecError):
    """Spark's Python workers run an interpreter that cannot import kcodec."""


def workers_python(conf) -> str:
    """The interpreter Spark starts its Python workers with, as PySpark chooses it: the
    ``spark.pyspark.python`` setting, else ``PYSPARK_PYTHON``, else ``python3``."""
    return conf.get("spark.pyspark.python", None) or os.environ.get("PYSPARK_PYTHON") or "python3"


def _python_finds_the_source(python: str) -> bool:
    try:
        done = subprocess.run(
            [python, "-c", "import pyspark_kafka_segments"],
            capture_output=True,
            timeout=60,
            env=dict(os.environ),
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _not_found_cause(reader) -> WorkersPythonError | None:
    """Why Spark found no ``kafka-segments`` source, when the workers' interpreter is the reason."""
    try:
        conf = reader._spark.sparkContext.getConf()
    except Exception:  # a Spark Connect session has no SparkContext: nothing to tell
        return None
    python = workers_python(conf)
    if _python_finds_the_source(python):
        return None
    return WorkersPythonError(
        f"kafka-segments: Spark's Python workers run {python}, which cannot import kcodec; set "
        f"spark.pyspark.python (or PYSPARK_PYTHON) to an interpreter that has it, e.g. {sys.executable}"
    )


def _given(reader) -> dict[str, str | None]:
    """The options given to ``reader`` so far (kept on it by the wrapped ``option`` / ``options``)."""
    given = getattr(reader, _OPTIONS, None)
    if given is None:
        given = {}
        setattr(reader, _OPTIONS, given)
    return given


def _record_methods(cls) -> None:
    """Keep, on each reader object, the format and options given to it (PySpark holds them in the JVM,
    where a stream reader cannot be asked for them)."""
    from pyspark.sql.utils import to_str  # PySpark's own spelling of an option's value

    format_, option, options = cls.format, cls.option, cls.options

    @functools.wraps(format_)
    def format(self, source):
        setattr(self, _CHOSEN, str(source))
        return format_(self, source)

    @functools.wraps(option)
    def one_option(self, key, value):
        _given(self)[str(key)] = to_str(value)
        return option(self, key, value)

    @functools.wraps(options)
    def many_options(self, **opts):
        _given(self).update({str(k): to_str(v) for k, v in opts.items()})
        return options(self, **opts)

    cls.format, cls.option, cls.options = format, one_option, many_options


def _wrap_load(cls, streaming: bool) -> None:
    original = cls.load

    @functools.wraps(original)
    def load(self, path=None, format=None, schema=None, **options):
        if format is not None:
            self.format(format)
        if options:
            self.options(**options)
        if str(getattr(self, _CHOSEN, "")).lower() == _FORMAT:
            check(dict(_given(self)), path, streaming)
        try:
            return original(self, path, None, schema)
        except Exception as exc:
            if str(getattr(self, _CHOSEN, "")).lower() == _FORMAT and "DATA_SOURCE_NOT_FOUND" in str(exc):
                cause = _not_found_cause(self)
                if cause is not None:
                    raise cause from None
            raise

    load._kcodec_checks = True  # type: ignore[attr-defined]  # a marker: installed once
    cls.load = load


def check(options: dict, path, streaming: bool) -> None:
    """Refuse, with kcodec's one line, what the source would refuse in its worker."""
    from kcodec.spark.stream import StreamOptions, checked_read_options

    opts = dict(options)
    if isinstance(path, str):
        opts["path"] = path
    elif path:  # a list of paths: Spark hands the source their JSON (``paths``)
        opts["paths"] = list(path)
    checked_read_options(opts)
    if streaming:
        StreamOptions.from_options(opts)


def install_reader(cls, streaming: bool) -> None:
    """Wrap a classic PySpark reader class (``DataFrameReader``, or ``DataStreamReader`` when
    ``streaming``), once."""
    if getattr(cls.load, "_kcodec_checks", False):
        return
    _record_methods(cls)
    _wrap_load(cls, streaming)
