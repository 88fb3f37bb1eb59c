"""The names `kcodec bench` takes: its implementations and every operation with what it measures, split
into the operations a plain run includes and those that take minutes (Spark, the table formats, a 1 GiB
partition) and run only when named. Cheap to import: the command line is built from it; the tables of
operations come from the modules that measure them, imported when asked for."""

from __future__ import annotations

IMPLEMENTATIONS = ("kcodec", "aiokafka", "kafka-python", "primitive")
STREAM_OPERATION = "stream_segment"
STREAM_DESCRIPTION = "peak memory of a child process decoding every record of a --segment-mib MiB segment"


def plain() -> dict[str, str]:
    """The operations a run without --operations measures, in table order."""
    from kcodec.bench.implementations import OPERATIONS

    return {**OPERATIONS, STREAM_OPERATION: STREAM_DESCRIPTION}


def named_only() -> dict[str, str]:
    """The operations that run only when named: they start Spark or build a 1 GiB partition."""
    from kcodec.bench import compact_rows, lakehouse_rows, spark_rows, spark_value_rows

    return {
        **spark_rows.OPERATIONS,
        **spark_value_rows.OPERATIONS,
        **lakehouse_rows.OPERATIONS,
        **compact_rows.OPERATIONS,
    }
