"""kcodec's driver hooks for sessions that found ``kafka-segments`` on their own (no ``register`` call).

Spark refuses its default save mode, ``errorifexists``, for every Python data source, and refuses a
bad read option in a worker, with a traceback; kcodec fixes both in the driver by wrapping PySpark's
``DataFrameWriter.save`` and the readers' ``load`` (:mod:`kcodec.spark.savemode`,
:mod:`kcodec.spark.loadcheck`). ``register(spark)`` installs them; a script that never imports kcodec
gets them from here: the ``kcodec-spark.pth`` file kcodec installs imports this module when Python
starts, and it waits, without importing anything, until PySpark's reader and writer modules are
imported, then installs the hooks for this format only. ``KCODEC_SPARK_HOOKS=0`` turns it off. A
failure here never breaks PySpark's import: the hooks are then simply missing (Spark's own errors).
"""

from __future__ import annotations

import os
import sys

# This runs in every Python process of the environment (Spark's workers too) before any work: it imports no
# more than os and sys (importlib.abc would bring importlib.resources, tempfile, random; typing its own cost).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from importlib.abc import Loader

_AFTER = {
    "pyspark.sql.readwriter": "after_readwriter",
    "pyspark.sql.streaming.readwriter": "after_stream_readwriter",
}


class _AfterImport:
    """A meta-path finder that finds nothing itself: for the modules of ``_AFTER`` it takes the spec the
    other finders give and runs kcodec's install once the module has run."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in _AFTER:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _ThenHook(spec.loader, _AFTER[fullname])  # type: ignore[assignment]
        return spec


class _ThenHook:
    """The module's own loader, then the hook (the spec's loader only: one per module). A loader by what it
    does (``create_module``, ``exec_module``), as the import system asks for, without importlib.abc's base."""

    def __init__(self, loader: Loader, hook: str):
        self.loader, self.hook = loader, hook

    def __getattr__(self, name: str):  # get_source, get_filename, is_package ... as the module's loader has them
        return getattr(self.loader, name)

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.loader.exec_module(module)
        try:
            from kcodec.spark import hooks

            getattr(hooks, self.hook)()
        except Exception:  # never break PySpark's import: without the hooks, Spark's own errors stand
            pass


def install() -> None:
    if os.environ.get("KCODEC_SPARK_HOOKS", "1").strip().lower() in ("0", "false", "off", "no"):
        return
    if not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())


install()
