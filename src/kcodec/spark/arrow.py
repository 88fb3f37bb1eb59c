"""The data source's columns, in Spark's types and the exact Arrow types Spark
expects back from a Python data source, and the column builders that turn
kcodec batches into ``pyarrow.RecordBatch`` objects without per-row tuples (the records
view from the Arrow record columns of :mod:`kcodec.records.columnar`).

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

from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from kcodec.records.view_columns import KAFKA_SOURCE_COLUMNS as _KAFKA_SOURCE
from kcodec.records.view_columns import RECORD_COLUMNS, Column, names
from kcodec.records.view_columns import SPARK_HEADERS as _HEADERS
from kcodec.records.view_columns import SPARK_TIMESTAMP as _TS
from kcodec.spark.options import OptionError

if TYPE_CHECKING:
    from kcodec.spark.options import ReadOptions

__all__ = [
    "RECORD_COLUMNS",
    "KAFKA_SOURCE_COLUMNS",
    "BATCH_COLUMNS",
    "KAFKA07_COLUMNS",
    "SIZES_COLUMN",
    "columns_for",
    "ddl",
    "arrow_schema",
    "RecordColumns",
    "BatchColumns",
    "check_requested",
]


_SIZES = pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", pa.int64(), nullable=True))


#: The columns of Spark's own Kafka source, in its order (``headers`` with ``includeHeaders=true``).
KAFKA_SOURCE_COLUMNS = names(_KAFKA_SOURCE)

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

#: A Kafka 0.7 read's extra columns, after the record columns (:mod:`kcodec.spark.kafka07`): 0.7's offsets.
KAFKA07_COLUMNS: tuple[Column, ...] = (
    Column("byteOffset", "bigint", pa.int64(), "0.7 reads only: byte offset where the message's entry starts"),
    Column("nextByteOffset", "bigint", pa.int64(), "0.7 reads only: byte offset a consumer fetches next"),
)

SIZES_COLUMN = Column(
    "sizeAs",
    "map<string,bigint>",
    _SIZES,
    "bytes the batch's records would take as v0/v1/v2 with each codec (keys like 'v2/zstd'); null for control batches",
)


def columns_for(view: str, sizes: bool = False) -> tuple[Column, ...]:
    if view not in ("records", "batches"):  # a view's columns have Column's fields
        from kcodec.spark.housekeeping_columns import HOUSEKEEPING_VIEWS

        if view in HOUSEKEEPING_VIEWS:
            return HOUSEKEEPING_VIEWS[view]
        from kcodec.internal_topics.views import view_columns

        return view_columns(view)
    if view == "batches":
        return BATCH_COLUMNS + ((SIZES_COLUMN,) if sizes else ())
    return RECORD_COLUMNS


def _ddl_type(spark: str) -> str:
    return spark.replace("array<struct<key:string,value:binary>>", "array<struct<key: string, value: binary>>")


def ddl(columns: tuple[Column, ...]) -> str:
    """The schema as a Spark DDL string (what ``DataSource.schema()`` returns)."""
    return ", ".join(f"`{c.name}` {c.ddl_type or _ddl_type(c.spark)}" for c in columns)


def arrow_schema(columns: list[tuple[Column, bool]]) -> pa.Schema:
    """The Arrow schema Spark expects for ``(column, nullable)`` pairs."""
    return pa.schema([pa.field(c.name, c.arrow, nullable=nullable) for c, nullable in columns])


def check_requested(
    fields: list[tuple[str, str, bool]], view: str, columns: tuple[Column, ...]
) -> list[tuple[Column, bool]]:
    """Match the schema Spark asks for (name, simpleString type, nullable) to
    ours (``columns``): any subset of them, in any order, with our types."""
    ours = {c.name: c for c in columns}
    out = []
    for name, spark_type, nullable in fields:
        c = ours.get(name)
        if c is None:
            raise ValueError(f"kafka-segments ({view}) has no column {name!r}; its columns: {', '.join(ours)}")
        if spark_type.replace(" ", "") != c.spark:
            raise ValueError(f"kafka-segments column {name!r} has type {c.spark}, not {spark_type}")
        out.append((c, nullable))
    return out


def read_columns(opts: ReadOptions, topics: list[str] | None = None) -> tuple[Column, ...]:
    """The columns a read gives: ``includeHeaders=false`` leaves out ``headers``, as Spark's Kafka source does,
    and ``includeHeaders`` given at all gives exactly that source's columns (7, or 8 with headers);
    ``keyFormat``/``valueFormat=confluent`` make ``key``/``value`` typed, with their ``_raw`` and ``_error``
    (:mod:`kcodec.spark.value_columns`; ``topics``: the topics read, when known)."""
    out = [c for c in columns_for(opts.view, opts.sizes) if opts.include_headers or c.name != "headers"]
    if opts.kafka_schema and opts.view == "records":  # includeHeaders given: a Spark Kafka job's exact schema
        out = [c for c in out if c.name in KAFKA_SOURCE_COLUMNS]
    if opts.view != "records" or (opts.value_format != "confluent" and opts.key_format != "confluent"):
        return tuple(out) + _kafka07_columns(opts)
    from kcodec.spark.value_columns import typed_parts

    for part in typed_parts(opts, topics if topics is not None else read_topics(opts)):
        at = next(i for i, c in enumerate(out) if c.name == part.part)
        out[at : at + 1] = [
            Column(name, simple, arrow, f"{part.part} decoded (Schema Registry framing)", ddl_type=ddl_type)
            for name, simple, ddl_type, arrow in part.columns()
        ]
    return tuple(out)


def _kafka07_columns(opts: ReadOptions) -> tuple[Column, ...]:
    """A Kafka 0.7 read's extra columns, its byte offsets (:mod:`kcodec.spark.kafka07`)."""
    if opts.view != "records" or opts.kafka_schema:
        return ()
    from kcodec.spark.planning import kafka07_dirs

    return KAFKA07_COLUMNS if kafka07_dirs(opts.path, opts.storage) is not None else ()


def read_topics(opts: ReadOptions) -> list[str]:
    """The topics a read covers (the partitions under its path that its options select)."""
    from kcodec.spark.planning import discover, select

    found = select(discover(opts.path, topic=opts.topic, partition=opts.partition, storage=opts.storage), opts)
    return sorted({p.topic for p in found if p.topic is not None})


def requested_columns(opts: ReadOptions, schema) -> list[tuple[Column, bool]]:
    """The (Column, nullable) pairs of the schema Spark asks for (a ``StructType``), checked against what
    ``opts`` read (a batch read's or a stream's)."""
    fields = [(f.name, f.dataType.simpleString(), f.nullable) for f in schema.fields]
    if not opts.include_headers and any(name == "headers" for name, _, _ in fields):
        raise OptionError("kafka-segments: includeHeaders=false reads no headers column, but the schema asks for one")
    return check_requested(fields, opts.view, read_columns(opts))


# ----------------------------------------------------------------------------- builders


class RecordColumns:
    """Spark's rows for the records of kcodec batches, mapped from their Arrow record columns
    (:func:`kcodec.records.columnar.schema`, built by the kernel or from Records alike): the one place
    where the record view's Spark types are made. Each Kafka batch adds its record columns and its
    batch values; :meth:`flush` makes the Spark columns once for all of them (a batch column as runs of
    its values, timestamps and headers converted once), so no pyarrow object is built per Kafka batch."""

    _RECORD_NAMES = ("key", "value", "offset", "timestampType", "timestamp", "headers")

    def __init__(self, columns: list[tuple[Column, bool]]):
        self.columns = columns
        self.schema = arrow_schema(columns)
        self.record_names = [c.name for c, _ in columns if c.name in self._RECORD_NAMES]
        self.parts: list = []  # record columns of each added batch (only those asked for)
        self.batch_values: list[dict] = []
        self.run_ends: list[int] = []
        # a LogAppendTime batch's stored timestamps, only when the column is asked for
        self.stored_timestamps: list | None = [] if any(c.name == "storedTimestampMs" for c, _ in columns) else None
        self.rows = 0
        # a column one value fills (the topic, the segment, mostly the codec ...): (value, rows, array), the
        # array given again while the value and the row count stay the same (Arrow arrays are immutable)
        self.constants: dict[str, tuple] = {}

    def _constant(self, column: Column, value) -> pa.Array:
        got = self.constants.get(column.name)
        if got is not None and got[1] == self.rows and type(got[0]) is type(value) and got[0] == value:
            return got[2]
        array = pa.repeat(pa.scalar(value, column.arrow), self.rows)
        self.constants[column.name] = (value, self.rows, array)
        return array

    def add(self, batch, table: pa.RecordBatch, topic, partition, segment) -> None:
        """The rows of ``table`` (records of ``batch``, possibly filtered) with the batch's own columns."""
        self.add_run(table, [(batch, table.num_rows)], topic, partition, segment)

    def add_run(self, table: pa.RecordBatch, pieces, topic, partition, segment) -> None:
        """The rows of ``table``: the records of many batches in order, ``pieces`` saying how many rows of
        it are each batch's ((batch, rows) pairs), with each batch's own columns."""
        if not table.num_rows:
            return
        at = 0
        for batch, n in pieces:
            if not n:
                continue
            self.batch_values.append(
                {
                    "topic": topic,
                    "partition": partition,
                    "magic": batch.magic,
                    "baseOffset": batch.base_offset,
                    "producerId": batch.producer_id,
                    "producerEpoch": batch.producer_epoch,
                    "baseSequence": batch.base_sequence,
                    "isTransactional": batch.is_transactional,
                    "isControl": batch.is_control,
                    "partitionLeaderEpoch": batch.partition_leader_epoch,
                    "compression": batch.compression,
                    "batchPosition": batch.position,
                    "segment": segment,
                    "crcValid": batch.crc_valid,
                    "lastOffset": batch.last_offset,
                    "deleteHorizonMs": batch.delete_horizon_ms,
                    "crc": batch.crc,
                }
            )
            if self.stored_timestamps is not None:  # a batch without them: how many null rows it adds
                stored = getattr(batch, "stored_timestamps", None) is not None
                self.stored_timestamps.append(_stored_timestamps(batch, table.slice(at, n)) if stored else n)
            at += n
            self.rows += n
            self.run_ends.append(self.rows)
        self.parts.append([table.column(name) for name in self.record_names])

    def flush(self) -> pa.RecordBatch | None:
        if not self.rows:
            return None
        if len(self.parts) == 1:
            records = dict(zip(self.record_names, self.parts[0]))
        else:
            records = {
                name: pa.concat_arrays([part[i] for part in self.parts]) for i, name in enumerate(self.record_names)
            }
        run_ends = pa.array(self.run_ends, pa.int32())
        arrays = []
        for c, _ in self.columns:
            if c.name == "timestamp":  # ms to Spark's us: in range, checked by the reader
                arrays.append(pc.multiply_checked(records["timestamp"], 1000).cast(_TS))
            elif c.name == "headers":
                arrays.append(_spark_headers(records["headers"]))
            elif c.name in records:  # key, value, offset, timestampType: the same types
                arrays.append(records[c.name])
            elif c.name == "storedTimestampMs":
                assert self.stored_timestamps is not None
                if all(type(part) is int for part in self.stored_timestamps):
                    arrays.append(self._constant(c, None))
                else:
                    parts = [pa.nulls(p, pa.int64()) if type(p) is int else p for p in self.stored_timestamps]
                    arrays.append(pa.concat_arrays(parts))
            else:  # a batch column: each batch's value for its rows
                values = [v[c.name] for v in self.batch_values]
                if values.count(values[0]) == len(values):
                    arrays.append(self._constant(c, values[0]))
                else:
                    runs = pa.RunEndEncodedArray.from_arrays(run_ends, pa.array(values, c.arrow))
                    arrays.append(pc.run_end_decode(runs))
        out = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        self.parts, self.batch_values, self.run_ends, self.rows = [], [], [], 0
        if self.stored_timestamps is not None:
            self.stored_timestamps = []
        return out


def _stored_timestamps(batch, table: pa.RecordBatch) -> pa.Array:
    """``storedTimestampMs`` of ``table``'s rows: a LogAppendTime v2 batch's stored timestamps (of the rows
    left after any filter, by offset), else nulls."""
    stored = getattr(batch, "stored_timestamps", None)
    if stored is None:
        return pa.nulls(table.num_rows, pa.int64())
    by_offset = pa.array(stored, pa.int64())
    if len(by_offset) == table.num_rows:
        return by_offset
    return pc.take(by_offset, pc.index_in(table.column("offset"), value_set=batch.table.column("offset")))


def _spark_headers(headers: pa.ListArray) -> pa.ListArray:
    """Headers as Spark's Kafka source gives them: an ``element`` struct with a nullable key, and null
    for a record without headers."""
    # a slice of a Kafka batch's records (read.py) starts inside the values: offsets from 0 over its own
    first, last = headers.offsets[0].as_py(), headers.offsets[-1].as_py()
    offsets = pc.subtract(headers.offsets, pa.scalar(first, headers.offsets.type))
    values = headers.values.slice(first, last - first)
    entries = pa.StructArray.from_arrays(values.flatten(), fields=list(_HEADERS.value_type))
    return pa.ListArray.from_arrays(offsets, entries, type=_HEADERS, mask=pc.equal(pc.list_value_length(headers), 0))


class BatchColumns:
    """One row per kcodec batch."""

    def __init__(self, columns: list[tuple[Column, bool]]):
        self.columns = columns
        self.schema = arrow_schema(columns)
        self.rows: list[tuple] = []
        self.sizes: list = []

    def add(self, batch, topic, partition, segment, sizes: dict[str, int] | None = None) -> None:
        self.rows.append(
            (
                topic,
                partition,
                segment,
                batch.position,
                batch.size,
                batch.magic,
                batch.base_offset,
                batch.last_offset,
                len(batch.records),
                batch.compression,
                batch.stored_records_size,
                batch.records_size,
                batch.crc_valid,
                batch.is_transactional,
                batch.is_control,
                batch.producer_id,
                batch.producer_epoch,
                batch.base_sequence,
                batch.partition_leader_epoch,
                int(batch.timestamp_type),
                batch.max_timestamp * 1000,
            )
        )
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
