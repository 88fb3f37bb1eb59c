"""A table column as kcodec's tables declare it (name, Spark type, Arrow type, doc), and the records
view's columns: the rows the Spark source reads, ``kcodec pipeline`` writes into its tables, and ``kcodec
write --from-table`` reads back into segments. Declared once here, below both the Spark source and the
tools, so each takes the names and types from one place. Needs pyarrow (the ``spark`` extra).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from kcodec.records import arrow as t

__all__ = [
    "Column",
    "SPARK_HEADERS",
    "SPARK_TIMESTAMP",
    "names",
    "KAFKA_SOURCE_COLUMNS",
    "BATCH_FIELD_COLUMNS",
    "CRC_VALID_COLUMN",
    "REBUILD_EXACT_COLUMNS",
    "RECORD_COLUMNS",
]


@dataclass(frozen=True)
class Column:
    name: str
    spark: str  # Spark SQL type, as DataType.simpleString() prints it
    arrow: pa.DataType
    doc: str
    ddl_type: str | None = None  # the DDL spelling when it differs (a typed value's struct: field names quoted)


#: Spark's headers: an array whose element field is named ``element``, null for a record without any
SPARK_HEADERS = pa.list_(pa.field("element", t.header_struct(key_nullable=True), nullable=True))
#: Spark's ``timestamp``
SPARK_TIMESTAMP = pa.timestamp("us", tz="UTC")


def names(columns: tuple[Column, ...]) -> tuple[str, ...]:
    return tuple(c.name for c in columns)


#: Spark's own Kafka source's columns, in its order (``headers`` with ``includeHeaders=true``)
KAFKA_SOURCE_COLUMNS: tuple[Column, ...] = (
    Column("key", "binary", t.KEY, "record key (null for none)"),
    Column("value", "binary", t.VALUE, "record value (null for a tombstone)"),
    Column("topic", "string", pa.string(), "from the partition directory name, or the topic option"),
    Column("partition", "int", pa.int32(), "from the partition directory name, or the partition option"),
    Column("offset", "bigint", t.OFFSET, "absolute offset"),
    Column("timestamp", "timestamp", SPARK_TIMESTAMP, "record timestamp (the batch's under LogAppendTime)"),
    Column("timestampType", "int", t.TIMESTAMP_TYPE, "Kafka's id: -1 none (v0), 0 CreateTime, 1 LogAppendTime"),
    Column("headers", "array<struct<key:string,value:binary>>", SPARK_HEADERS, "null when the record has none"),
)

#: each record's batch: what a segment rebuilt from the table needs beyond the record itself
BATCH_FIELD_COLUMNS: tuple[Column, ...] = (
    Column("magic", "int", pa.int32(), "message format of the batch: 0, 1 or 2"),
    Column("baseOffset", "bigint", pa.int64(), "the batch's base offset"),
    Column("producerId", "bigint", pa.int64(), "-1 when none"),
    Column("producerEpoch", "int", pa.int32(), "-1 when none"),
    Column("baseSequence", "int", pa.int32(), "-1 when none"),
    Column("isTransactional", "boolean", pa.bool_(), "the batch's transactional flag"),
    Column("isControl", "boolean", pa.bool_(), "the batch holds a control record (COMMIT/ABORT marker ...)"),
    Column("partitionLeaderEpoch", "int", pa.int32(), "-1 when none"),
    Column("compression", "string", pa.string(), "none, gzip, snappy, lz4 or zstd"),
    Column("batchPosition", "bigint", t.POSITION, "byte position of the batch in its segment"),
    Column("segment", "string", pa.string(), "the segment file"),
)

CRC_VALID_COLUMN = Column(
    "crcValid", "boolean", pa.bool_(), "whether the batch CRC holds (false rows only with verifyCrc=false)"
)

#: what rebuilding the batch byte for byte needs beyond the above (``kcodec write --from-table``); last in
#: the view, so the columns before keep their places (tables written before them lack them)
REBUILD_EXACT_COLUMNS: tuple[Column, ...] = (
    Column(
        "lastOffset",
        "bigint",
        pa.int64(),
        "the batch's last offset (past its last record's when compaction removed records at its end)",
    ),
    Column(
        "deleteHorizonMs",
        "bigint",
        pa.int64(),
        "the batch's delete horizon (ms) when its attributes carry one (v2, set by compaction), else null",
    ),
    Column(
        "crc",
        "bigint",
        pa.int64(),
        "the batch's stored CRC (v2: CRC-32C; v0/v1: the log entry's CRC-32), to check a rebuilt batch against",
    ),
    Column(
        "storedTimestampMs",
        "bigint",
        pa.int64(),
        "in a LogAppendTime v2 batch, the record's own (producer's) timestamp the batch still stores, which "
        "timestamp replaces by the broker's; else null",
    ),
)

RECORD_COLUMNS: tuple[Column, ...] = (
    KAFKA_SOURCE_COLUMNS + BATCH_FIELD_COLUMNS + (CRC_VALID_COLUMN,) + REBUILD_EXACT_COLUMNS
)
