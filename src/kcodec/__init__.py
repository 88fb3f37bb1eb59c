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

import importlib
import os

__version__ = "0.1.0"

_EXPORTS = {
    # reading
    "read_batches": "kcodec.records.reader",
    "read_records": "kcodec.records.reader",
    "BatchReader": "kcodec.records.reader",
    "PartialTail": "kcodec.records.reader",
    "Batch": "kcodec.records.model",
    "Record": "kcodec.records.model",
    "ControlRecord": "kcodec.records.model",
    "TimestampType": "kcodec.records.model",
    # writing
    "encode_batch": "kcodec.records.encode",
    "encode_control_batch": "kcodec.records.encode",
    "convert_batches": "kcodec.records.encode",
    # segments and partitions
    "Partition": "kcodec.log.partition",
    "PartitionRecord": "kcodec.log.partition",
    "SegmentWriter": "kcodec.log.writer",
    "build_indexes": "kcodec.log.index",
    # the generated codecs, by entity and version
    "codec": "kcodec.generated",
    # errors
    "KcodecError": "kcodec.errors",
    "DecodeError": "kcodec.errors",
    "EncodeError": "kcodec.errors",
}

__all__ = sorted([*_EXPORTS, "read_arrow", "read_internal_view"]) + ["__version__"]

ARROW_HINT = "pip install 'kcodec[arrow]'"


def read_arrow(source, *, start_offset=None, end_offset=None, **options):
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


def _is_directory(source) -> bool:
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


def read_internal_view(path, view: str, **options):
    """A view of one of Kafka's internal topics under ``path`` (a log directory or a partition directory)
    as a ``pyarrow.Table`` of typed columns: ``consumerOffsets``, ``groups`` (``__consumer_offsets``),
    ``transactions`` (``__transaction_state``) or ``metadata`` (``__cluster_metadata``, log and snapshots).
    ``options``: ``latest`` (the last row per key, as compaction keeps it), ``isolation_level``,
    ``include_control``, ``on_corrupt`` (``fail`` | ``skip``) with ``on_skip``, ``verify_crc``; see
    :func:`kcodec.internal_topics.tables.read_internal_view` and the README's columns. Needs pyarrow."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ImportError(f"kcodec.read_internal_view needs pyarrow: {ARROW_HINT}", name="pyarrow") from None
    from kcodec.internal_topics.tables import read_internal_view as read

    return read(path, view, **options)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kcodec' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
