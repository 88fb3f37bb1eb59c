"""kcodec: schema-driven codecs for Apache Kafka's record formats.

The public API, loaded on first use so that ``import kcodec`` stays light::

    import kcodec
    for batch in kcodec.read_batches("00000000000000000000.log"):
        for record in batch.records:
            record.offset, record.timestamp, record.key, record.value, record.headers

    data = kcodec.encode_batch([{"key": b"k", "value": b"v"}], magic=2, compression="zstd")

Errors are :class:`kcodec.errors.KcodecError` subclasses.
"""

from __future__ import annotations

import importlib

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
    "SegmentWriter": "kcodec.log.writer",
    "build_indexes": "kcodec.log.index",
    # the generated codecs, by entity and version
    "codec": "kcodec.generated",
    # errors
    "KcodecError": "kcodec.errors",
    "DecodeError": "kcodec.errors",
    "EncodeError": "kcodec.errors",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kcodec' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
