"""The data source's columns, in Spark's types and the exact Arrow types Spark
expects back from a Python data source, and the column builders that turn
kcodec batches into ``pyarrow.RecordBatch`` objects without per-row tuples.

The Arrow schema is written out by hand rather than taken from pyspark's
internal helper (which moved between 4.0 and 4.3): Spark's ``binary`` is
Arrow ``binary``, ``timestamp`` is ``timestamp[us, tz=UTC]``, ``int``
``int32``, an array's element field is named ``element``, a map's entries
``key``/``value`` with a non-null key. The test suite checks it against the
installed pyspark's own conversion.

The first eight record columns are Spark's Kafka source's (same names, types,
and values: ``timestamp`` is the record's timestamp in ms as a timestamp, so
-1 reads as 1969-12-31 23:59:59.999 as it does there; ``headers`` is null for
a record without headers), so a Kafka job can switch sources unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

__all__ = ["RECORD_COLUMNS", "BATCH_COLUMNS", "SIZES_COLUMN", "columns_for", "ddl", "arrow_schema",
           "RecordColumns", "BatchColumns", "check_requested"]


@dataclass(frozen=True)
class Column:
    name: str
    spark: str  # Spark SQL type, as DataType.simpleString() prints it
    arrow: pa.DataType
    doc: str


_HEADER_STRUCT = pa.struct([pa.field("key", pa.string(), nullable=True), pa.field("value", pa.binary(), nullable=True)])
_HEADERS = pa.list_(pa.field("element", _HEADER_STRUCT, nullable=True))
_TS = pa.timestamp("us", tz="UTC")
_SIZES = pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", pa.int64(), nullable=True))

RECORD_COLUMNS: tuple[Column, ...] = (
    # Spark's Kafka source
    Column("key", "binary", pa.binary(), "record key (null for none)"),
    Column("value", "binary", pa.binary(), "record value (null for a tombstone)"),
    Column("topic", "string", pa.string(), "from the partition directory name, or the topic option"),
    Column("partition", "int", pa.int32(), "from the partition directory name, or the partition option"),
    Column("offset", "bigint", pa.int64(), "absolute offset"),
    Column("timestamp", "timestamp", _TS, "record timestamp (the batch's under LogAppendTime)"),
    Column("timestampType", "int", pa.int32(), "Kafka's id: -1 none (v0), 0 CreateTime, 1 LogAppendTime"),
    Column("headers", "array<struct<key:string,value:binary>>", _HEADERS, "null when the record has none"),
    # batch metadata
    Column("magic", "int", pa.int32(), "message format of the batch: 0, 1 or 2"),
    Column("baseOffset", "bigint", pa.int64(), "the batch's base offset"),
    Column("producerId", "bigint", pa.int64(), "-1 when none"),
    Column("producerEpoch", "int", pa.int32(), "-1 when none"),
    Column("baseSequence", "int", pa.int32(), "-1 when none"),
    Column("isTransactional", "boolean", pa.bool_(), "the batch's transactional flag"),
    Column("isControl", "boolean", pa.bool_(), "the batch holds a control record (COMMIT/ABORT marker ...)"),
    Column("partitionLeaderEpoch", "int", pa.int32(), "-1 when none"),
    Column("compression", "string", pa.string(), "none, gzip, snappy, lz4 or zstd"),
    Column("batchPosition", "bigint", pa.int64(), "byte position of the batch in its segment"),
    Column("segment", "string", pa.string(), "the segment file"),
    Column("crcValid", "boolean", pa.bool_(), "whether the batch CRC holds (false rows only with verifyCrc=false)"),
)

BATCH_COLUMNS: tuple[Column, ...] = (
    Column("topic", "string", pa.string(), "from the partition directory name, or the topic option"),
    Column("partition", "int", pa.int32(), "from the partition directory name, or the partition option"),
    Column("segment", "string", pa.string(), "the segment file"),
    Column("position", "bigint", pa.int64(), "byte position of the batch in its segment"),
    Column("size", "int", pa.int32(), "bytes on disk, log overhead included"),
    Column("magic", "int", pa.int32(), "message format: 0, 1 or 2"),
    Column("baseOffset", "bigint", pa.int64(), "first offset"),
    Column("lastOffset", "bigint", pa.int64(), "last offset"),
    Column("records", "int", pa.int32(), "records decoded from the batch"),
    Column("compression", "string", pa.string(), "none, gzip, snappy, lz4 or zstd"),
    Column("compressedBytes", "bigint", pa.int64(), "bytes of the records region as stored"),
    Column("uncompressedBytes", "bigint", pa.int64(), "bytes of the records region once decompressed"),
    Column("crcValid", "boolean", pa.bool_(), "whether the CRC holds"),
    Column("isTransactional", "boolean", pa.bool_(), "transactional flag"),
    Column("isControl", "boolean", pa.bool_(), "control batch"),
    Column("producerId", "bigint", pa.int64(), "-1 when none"),
    Column("producerEpoch", "int", pa.int32(), "-1 when none"),
    Column("baseSequence", "int", pa.int32(), "-1 when none"),
    Column("partitionLeaderEpoch", "int", pa.int32(), "-1 when none"),
    Column("timestampType", "int", pa.int32(), "-1 none (v0), 0 CreateTime, 1 LogAppendTime"),
    Column("maxTimestamp", "timestamp", _TS, "the batch's max timestamp"),
)

SIZES_COLUMN = Column("sizeAs", "map<string,bigint>", _SIZES,
                      "bytes the batch's records would take as v0/v1/v2 with each codec "
                      "(keys like 'v2/zstd'); null for control batches")


def columns_for(view: str, sizes: bool = False) -> tuple[Column, ...]:
    if view == "batches":
        return BATCH_COLUMNS + ((SIZES_COLUMN,) if sizes else ())
    return RECORD_COLUMNS


def _ddl_type(spark: str) -> str:
    return spark.replace("array<struct<key:string,value:binary>>", "array<struct<key: string, value: binary>>")


def ddl(columns: tuple[Column, ...]) -> str:
    """The schema as a Spark DDL string (what ``DataSource.schema()`` returns)."""
    return ", ".join(f"`{c.name}` {_ddl_type(c.spark)}" for c in columns)


def arrow_schema(columns: list[tuple[Column, bool]]) -> pa.Schema:
    """The Arrow schema Spark expects for ``(column, nullable)`` pairs."""
    return pa.schema([pa.field(c.name, c.arrow, nullable=nullable) for c, nullable in columns])


def check_requested(fields: list[tuple[str, str, bool]], view: str, sizes: bool) -> list[tuple[Column, bool]]:
    """Match the schema Spark asks for (name, simpleString type, nullable) to
    ours: any subset of our columns, in any order, with our types."""
    ours = {c.name: c for c in columns_for(view, sizes)}
    out = []
    for name, spark_type, nullable in fields:
        c = ours.get(name)
        if c is None:
            raise ValueError(f"kafka-segments ({view}) has no column {name!r}; its columns: {', '.join(ours)}")
        if spark_type.replace(" ", "") != c.spark:
            raise ValueError(f"kafka-segments column {name!r} has type {c.spark}, not {spark_type}")
        out.append((c, nullable))
    return out


# ----------------------------------------------------------------------------- builders

def _repeat(runs: list[tuple[object, int]]) -> list:
    out: list = []
    for value, n in runs:
        out += [value] * n
    return out


class RecordColumns:
    """Accumulates records of kcodec batches column by column."""

    def __init__(self, columns: list[tuple[Column, bool]]):
        self.columns = columns
        self.schema = arrow_schema(columns)
        self.names = {c.name for c, _ in columns}
        self._reset()

    def _reset(self) -> None:
        self.rows = 0
        self.keys: list = []
        self.values: list = []
        self.offsets: list = []
        self.timestamps: list = []
        self.ts_types: list = []
        self.h_offsets: list = [0]
        self.h_null: list = []
        self.h_keys: list = []
        self.h_values: list = []
        self.runs: list[tuple[tuple, int]] = []  # (batch-level values, rows)

    def add(self, batch, records, topic, partition, segment) -> None:
        n = len(records)
        if not n:
            return
        self.rows += n
        want_headers = "headers" in self.names
        keys, values, offsets, tss, types = self.keys, self.values, self.offsets, self.timestamps, self.ts_types
        h_offsets, h_null, h_keys, h_values = self.h_offsets, self.h_null, self.h_keys, self.h_values
        count = h_offsets[-1]
        for r in records:  # one pass with appends beats a comprehension per column here
            keys.append(r.key)
            values.append(r.value)
            offsets.append(r.offset)
            tss.append(r.timestamp * 1000)
            types.append(r.timestamp_type)
            if want_headers:
                hs = r.headers
                if hs:
                    for k, v in hs:
                        h_keys.append(k)
                        h_values.append(v)
                    count += len(hs)
                    h_null.append(False)
                else:
                    h_null.append(True)
                h_offsets.append(count)
        self.runs.append(((topic, partition, batch.magic, batch.base_offset, batch.producer_id, batch.producer_epoch,
                           batch.base_sequence, batch.is_transactional, batch.is_control,
                           batch.partition_leader_epoch, batch.compression, batch.position, segment,
                           batch.crc_valid), n))

    _RUN_FIELDS = ("topic", "partition", "magic", "baseOffset", "producerId", "producerEpoch", "baseSequence",
                   "isTransactional", "isControl", "partitionLeaderEpoch", "compression", "batchPosition",
                   "segment", "crcValid")

    def flush(self) -> pa.RecordBatch | None:
        if not self.rows:
            return None
        arrays = []
        for c, _ in self.columns:
            name = c.name
            if name == "key":
                arr = pa.array(self.keys, pa.binary())
            elif name == "value":
                arr = pa.array(self.values, pa.binary())
            elif name == "offset":
                arr = pa.array(self.offsets, pa.int64())
            elif name == "timestamp":
                arr = pa.array(self.timestamps, pa.int64()).cast(_TS)
            elif name == "timestampType":
                arr = pa.array([int(t) for t in self.ts_types], pa.int32())
            elif name == "headers":
                struct = pa.StructArray.from_arrays(
                    [pa.array(self.h_keys, pa.string()), pa.array(self.h_values, pa.binary())],
                    fields=list(_HEADER_STRUCT))
                arr = pa.ListArray.from_arrays(pa.array(self.h_offsets, pa.int32()), struct, type=_HEADERS,
                                               mask=pa.array(self.h_null, pa.bool_()))
            else:
                i = self._RUN_FIELDS.index(name)
                arr = pa.array(_repeat([(v[i], n) for v, n in self.runs]), c.arrow)
            arrays.append(arr)
        out = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        self._reset()
        return out


class BatchColumns:
    """One row per kcodec batch."""

    def __init__(self, columns: list[tuple[Column, bool]]):
        self.columns = columns
        self.schema = arrow_schema(columns)
        self.rows: list[tuple] = []
        self.sizes: list = []

    def add(self, batch, topic, partition, segment, sizes: dict[str, int] | None = None) -> None:
        self.rows.append((topic, partition, segment, batch.position, batch.size, batch.magic, batch.base_offset,
                          batch.last_offset, len(batch.records), batch.compression, batch.stored_records_size,
                          batch.records_size, batch.crc_valid, batch.is_transactional, batch.is_control,
                          batch.producer_id, batch.producer_epoch, batch.base_sequence,
                          batch.partition_leader_epoch, int(batch.timestamp_type), batch.max_timestamp * 1000))
        self.sizes.append(None if sizes is None else list(sizes.items()))

    def __len__(self) -> int:
        return len(self.rows)

    def flush(self) -> pa.RecordBatch | None:
        if not self.rows:
            return None
        names = [c.name for c in BATCH_COLUMNS]
        arrays = []
        for c, _ in self.columns:
            if c.name == "sizeAs":
                arrays.append(pa.array(self.sizes, _SIZES))
                continue
            i = names.index(c.name)
            values = [row[i] for row in self.rows]
            if c.name == "maxTimestamp":
                arrays.append(pa.array(values, pa.int64()).cast(_TS))
            else:
                arrays.append(pa.array(values, c.arrow))
        out = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        self.rows, self.sizes = [], []
        return out
