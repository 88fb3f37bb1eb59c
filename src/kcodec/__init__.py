"""kcodec: schema-driven codecs for Apache Kafka's record formats.

The public API, loaded on first use so that ``import kcodec`` stays light::

    import kcodec
    for batch in kcodec.read_batches("00000000000000000000.log"):
        for record in batch.records:
            record.offset, record.timestamp, record.key, record.value, record.headers

    data = kcodec.encode_batch([{"key": b"k", "value": b"v"}], magic=2, compression="zstd")

    committed = kcodec.read_records(path, isolation_level="read_committed")  # as a consumer reads
    table = kcodec.read_arrow(path)  # a pyarrow.Table: pip install 'kcodec[arrow]'
    offsets = kcodec.read_internal_view(log_dir, "consumerOffsets", latest=True)  # Kafka's internal topics

Errors are :class:`kcodec.errors.KcodecError` subclasses.

The names listed here (``__all__``) are the public API, with the modules ``kcodec.errors``,
``kcodec.records`` and ``kcodec.log`` they come from. The other packages serve the ``kcodec``
command line (``cli``, ``commands``, ``tools``, ``bench``, ``fuzz``), the code generator and the
PySpark data source (``kcodec.spark``, documented there); their insides may change between releases.
"""

from __future__ import annotations

import functools
import importlib
import os
from typing import TYPE_CHECKING, Any, TypeGuard

__version__ = "0.1.0"

# The public API as checkers see it (``X as X``: re-exported), and the one list of what __getattr__ loads on
# first use (:func:`_exports` reads it).
if TYPE_CHECKING:
    from kcodec.errors import DecodeError as DecodeError
    from kcodec.errors import EncodeError as EncodeError
    from kcodec.errors import KcodecError as KcodecError
    from kcodec.generated import codec as codec
    from kcodec.log.index import build_indexes as build_indexes
    from kcodec.log.partition import Partition as Partition
    from kcodec.log.partition import PartitionRecord as PartitionRecord
    from kcodec.log.writer import SegmentWriter as SegmentWriter
    from kcodec.records.encode import convert_batches as convert_batches
    from kcodec.records.encode import encode_batch as encode_batch
    from kcodec.records.encode import encode_control_batch as encode_control_batch
    from kcodec.records.model import Batch as Batch
    from kcodec.records.model import ControlRecord as ControlRecord
    from kcodec.records.model import Record as Record
    from kcodec.records.model import TimestampType as TimestampType
    from kcodec.records.reader import BatchReader as BatchReader
    from kcodec.records.reader import PartialTail as PartialTail
    from kcodec.records.reader import read_batches as read_batches
    from kcodec.records.reader import read_records as read_records

if TYPE_CHECKING:  # names of annotations only
    import pyarrow

    from kcodec.records.source import Source


@functools.cache
def _exports() -> dict[str, str]:
    """name -> module of the imports under the first ``if TYPE_CHECKING:`` above, read from this file when a
    name (or ``__all__``) is first asked for: not on import, which every ``kcodec`` command pays."""
    import ast

    with open(__file__, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    return {
        alias.asname or alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


ARROW_HINT = "pip install 'kcodec[arrow]'"


def read_arrow(
    source: Source | str | os.PathLike[str],
    *,
    start_offset: int | None = None,
    end_offset: int | None = None,
    **options: Any,
) -> pyarrow.Table:
    """Every record of ``source`` (what :func:`read_batches` takes, or a partition directory: a local path or
    a URI) as one ``pyarrow.Table``: offset, timestamp, timestamp type, key, value, headers, sequence,
    control flag and batch position, one row per record, decoded straight into Arrow buffers where the
    compiled kernel is built. ``start_offset`` / ``end_offset`` (exclusive): only the records in that range
    (a partition seeks to it through its index files, as :meth:`Partition.read_arrow`).
    ``options``: ``verify_crc``, ``max_decompressed_size`` and :func:`read_batches`' others.
    Needs pyarrow (the ``arrow`` extra); without it, an ImportError saying how to install it."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ImportError(f"kcodec.read_arrow needs pyarrow: {ARROW_HINT}", name="pyarrow") from None
    if _is_directory(source):
        from kcodec.log.partition import Partition

        return Partition(source).read_arrow(start_offset, end_offset, **options)
    from kcodec.records.columnar import read_arrow as read

    return read(source, start_offset=start_offset, end_offset=end_offset, **options)


def _is_directory(source: object) -> TypeGuard[str | os.PathLike[str]]:
    """Whether ``source`` names a directory: a local one, or a URI of a filesystem that says so."""
    if not isinstance(source, (str, os.PathLike)):
        return False
    text = os.fspath(source)
    if isinstance(text, bytes):
        return False
    if "://" not in text:
        return os.path.isdir(text)
    from kcodec.log.fs import resolve

    fs, path = resolve(text)
    return fs.is_dir(path)


def read_internal_view(path: str | os.PathLike[str], view: str, **options: Any) -> pyarrow.Table:
    """A view of one of Kafka's internal topics under ``path`` (a log directory or a partition directory)
    as a ``pyarrow.Table`` of typed columns: ``consumerOffsets``, ``groups`` (``__consumer_offsets``),
    ``transactions`` (``__transaction_state``) or ``metadata`` (``__cluster_metadata``, log and snapshots).
    ``options``: ``latest`` (the last row per key, as compaction keeps it), ``isolation_level``,
    ``include_control``, ``on_corrupt`` (``fail`` | ``skip``) with ``on_skip``, ``verify_crc``; see
    :func:`kcodec.internal_topics.tables.read_internal_view` and the columns docs/internal-topics.md lists.
    Needs pyarrow."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ImportError(f"kcodec.read_internal_view needs pyarrow: {ARROW_HINT}", name="pyarrow") from None
    from kcodec.internal_topics.tables import read_internal_view as read

    return read(path, view, **options)


def __getattr__(name: str) -> Any:
    if name == "__all__":  # the public API, as the TYPE_CHECKING block above lists it
        value: Any = sorted([*_exports(), "read_arrow", "read_internal_view"]) + ["__version__"]
        globals()[name] = value
        return value
    module = _exports().get(name)
    if module is None:
        raise AttributeError(f"module 'kcodec' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    all_names: list[str] = __getattr__("__all__")
    return all_names
