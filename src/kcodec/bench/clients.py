"""The rival clients the benchmark times kcodec against (aiokafka, kafka-python): their record classes,
their codec ids and whether a codec is usable here. Shared by the library rows
(:mod:`kcodec.bench.implementations`) and the command rows (:mod:`kcodec.bench.command_rows`)."""

from __future__ import annotations

from kcodec.bench.workload import CODECS

__all__ = ["CODEC_IDS", "Unavailable", "client_codec_check", "client_modules"]

CODEC_IDS = {name: i for i, name in enumerate(CODECS)}


class Unavailable(Exception):
    """This row cannot be measured here; the message says why."""


def client_modules(impl: str):
    """(MemoryRecords, DefaultRecordBatchBuilder) of ``impl``: aiokafka or kafka-python."""
    if impl == "aiokafka":
        try:
            from aiokafka.record.default_records import DefaultRecordBatchBuilder
            from aiokafka.record.memory_records import MemoryRecords
        except ImportError as exc:
            raise Unavailable(f"aiokafka is not installed ({exc})") from None
        return MemoryRecords, DefaultRecordBatchBuilder
    try:
        from kafka.record.default_records import DefaultRecordBatchBuilder
        from kafka.record.memory_records import MemoryRecords
    except ImportError as exc:
        raise Unavailable(f"kafka-python is not installed ({exc})") from None
    return MemoryRecords, DefaultRecordBatchBuilder


def client_codec_check(impl: str, codec: str) -> None:
    """Unavailable when ``impl`` cannot use ``codec`` here (kafka-python's codecs are optional)."""
    if impl == "kafka-python":
        import kafka.codec as kc

        available = {
            "none": True,
            "gzip": kc.has_gzip(),
            "snappy": kc.has_snappy(),
            "lz4": kc.has_lz4(),
            "zstd": kc.has_zstd(),
        }
        if not available[codec]:
            library = {"snappy": "python-snappy", "lz4": "lz4", "zstd": "zstandard"}.get(codec, codec)
            raise Unavailable(f"kafka-python has no {codec} codec here ({library} is not installed)")
