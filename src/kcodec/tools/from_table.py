"""Partition directories rebuilt from a table of kcodec's records rows (``kcodec write --from-table``).

The table is what ``kcodec pipeline`` writes as ``DEST/records`` (a Parquet folder), or the same rows in
an Iceberg table (pyiceberg: a catalog and a table name, or a ``.metadata.json`` file) or a Delta table
(delta-rs). Each topic-partition is read on its own, in windows of offsets (the whole table is never in
memory: a partition's offsets, 8 bytes a row, and one window of rows), its rows grouped into their
batches by (segment, batchPosition, baseOffset), and each batch re-encoded by kcodec's one writer of
decoded batches (:func:`kcodec.records.encode.convert_batches`, at the batch's own magic and codec) into
segments named as the source's, with their indexes (:class:`kcodec.log.writer.SegmentWriter`).

A rebuilt batch is CRC-valid and holds the same records (offsets, gaps included, timestamps, keys,
values, headers, producer state). Where the table has the batch's stored CRC (the ``crc`` column), each
rebuilt batch is checked against it: equal means the same bytes (uncompressed batches, and compressed ones
whose codec wrote the same stream), else the batch is counted as re-encoded. Tables written before the
``lastOffset``, ``deleteHorizonMs``, ``crc`` and ``storedTimestampMs`` columns existed are rebuilt record
for record and the report says byte identity was not checked.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kcodec.errors import KcodecError, needs_extra
from kcodec.log.commit import (
    CommitRecord,
    claim,
    commit_lock,
    identities,
    job_dir,
    recover,
    release,
    roll_forward,
    staged_dir,
    write_record,
)
from kcodec.log.fs import resolve
from kcodec.log.names import (
    RECORDS_TABLE,
    STAGING_DIR,
    TABLE_CATALOG_FILE,
    TABLE_CATALOG_NAME,
    TABLE_NAMESPACE,
    parse_segment_name,
    parse_tiered_name,
    partition_dir_name,
)
from kcodec.log.writer import SegmentWriter
from kcodec.records.decode import decode_entry
from kcodec.records.encode import convert_batches
from kcodec.records.model import Batch, Record, TimestampType

__all__ = ["TableError", "PartitionReport", "open_table", "rebuild", "required_columns", "exact_columns"]


def required_columns() -> tuple[str, ...]:
    """The records view's columns a rebuild needs (:mod:`kcodec.records.view_columns`; needs pyarrow)."""
    from kcodec.records.view_columns import BATCH_FIELD_COLUMNS, KAFKA_SOURCE_COLUMNS, names

    return names(KAFKA_SOURCE_COLUMNS + BATCH_FIELD_COLUMNS)


def exact_columns() -> tuple[str, ...]:
    """The columns that make a rebuild exact and checkable; older tables lack them."""
    from kcodec.records.view_columns import REBUILD_EXACT_COLUMNS, names

    return names(REBUILD_EXACT_COLUMNS)


WINDOW_ROWS = 65536  # rows read at a time: a window of a partition's offsets


class TableError(KcodecError):
    """A table that cannot be rebuilt into segments: not readable as a table, missing columns, offsets that
    repeat or do not follow their batches."""

    kind = "table"


# ----------------------------------------------------------------------------- tables


class _Table(Protocol):
    """Rows of a table, scanned with a filter on topic, partition and an offset range [lo, hi)."""

    name: str
    columns: list[str]

    def scan(self, columns: list[str], topic=None, partition=None, lo=None, hi=None) -> Iterator[Any]: ...


class _ArrowDataset:
    """A pyarrow dataset: a Parquet folder, or a Delta table's files (delta-rs gives the dataset)."""

    def __init__(self, dataset, name: str):
        self.dataset, self.name = dataset, name
        self.columns = list(dataset.schema.names)

    def scan(self, columns, topic=None, partition=None, lo=None, hi=None):
        import pyarrow.dataset as ds

        expr = None
        for part in (
            None if topic is None else ds.field("topic") == topic,
            None if partition is None else ds.field("partition") == partition,
            None if lo is None else ds.field("offset") >= lo,
            None if hi is None else ds.field("offset") < hi,
        ):
            if part is not None:
                expr = part if expr is None else expr & part
        yield from self.dataset.to_batches(columns=columns, filter=expr)


class _Iceberg:
    """An Iceberg table read through pyiceberg's scans (its delete files and schema evolution applied)."""

    def __init__(self, table, name: str):
        self.table, self.name = table, name
        self.columns = [f.name for f in table.schema().fields]

    def scan(self, columns, topic=None, partition=None, lo=None, hi=None):
        from pyiceberg import expressions

        ex: Any = expressions  # pydantic models: their (term, literal) constructors are beyond mypy's plugin-less view
        expr = ex.AlwaysTrue()
        for part in (
            None if topic is None else ex.EqualTo("topic", topic),
            None if partition is None else ex.EqualTo("partition", partition),
            None if lo is None else ex.GreaterThanOrEqual("offset", lo),
            None if hi is None else ex.LessThan("offset", hi),
        ):
            if part is not None:
                expr = ex.And(expr, part)
        yield from self.table.scan(row_filter=expr, selected_fields=tuple(columns)).to_arrow_batch_reader()


def _need(module: str, extra: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise TableError(needs_extra(module, extra)) from None


DEFAULT_CATALOG_NAME = TABLE_CATALOG_NAME  # what `kcodec pipeline --table-format iceberg` registers under


def open_table(table: str, catalog: str | None = None, catalog_name: str = DEFAULT_CATALOG_NAME) -> _Table:
    """The table ``table`` names: with ``catalog`` an Iceberg table name (``namespace.table``) in that pyiceberg
    catalog: a URI (``sqlite:///...``, a REST ``http(s)://`` URL ...; ``catalog_name`` is the name its tables
    were registered under, which SQL catalogs keep), or the name of a catalog pyiceberg's configuration
    (``.pyiceberg.yaml``, ``PYICEBERG_CATALOG__...``) defines; else a path: an Iceberg ``.metadata.json``
    file, a Delta table (a directory with ``_delta_log``), the DEST of ``kcodec pipeline --table-format
    iceberg|delta`` (its records table: in the embedded catalog, or ``DEST/records``), or a folder of Parquet
    files."""
    _need("pyarrow", "arrow")
    try:
        if catalog is not None:
            _need("pyiceberg", "iceberg")
            from pyiceberg.catalog import load_catalog

            if "://" in catalog:
                loaded = load_catalog(catalog_name, uri=catalog)
                where = f"catalog {catalog_name!r} at {catalog}"
            else:
                loaded, where = load_catalog(catalog), f"catalog {catalog!r}"
            try:
                return _Iceberg(loaded.load_table(table), table)
            except Exception as exc:
                raise TableError(f"{table}: not in the {where}: {type(exc).__name__}: {_one_line(exc)}") from None
        path = Path(table)
        if table.endswith(".metadata.json"):
            _need("pyiceberg", "iceberg")
            from pyiceberg.table import StaticTable

            return _Iceberg(StaticTable.from_metadata(table), table)
        if not path.exists():
            raise TableError(f"{table}: no such table (a Parquet folder, a Delta table, or --catalog for Iceberg)")
        if (path / TABLE_CATALOG_FILE).is_file() and not (path / "_delta_log").is_dir():
            _need("pyiceberg", "iceberg")  # kcodec pipeline's Iceberg DEST: the records table of its catalog
            from pyiceberg.catalog import load_catalog

            uri = f"sqlite:///{(path / TABLE_CATALOG_FILE).resolve()}"
            loaded = load_catalog(TABLE_CATALOG_NAME, uri=uri, warehouse=f"file://{path.resolve()}")
            return _Iceberg(loaded.load_table(f"{TABLE_NAMESPACE}.{RECORDS_TABLE}"), table)
        if (path / RECORDS_TABLE / "_delta_log").is_dir():  # kcodec pipeline's Delta DEST
            path = path / RECORDS_TABLE
        if (path / "_delta_log").is_dir():
            deltalake = _need("deltalake", "delta")
            return _ArrowDataset(deltalake.DeltaTable(str(path)).to_pyarrow_dataset(), table)
        import pyarrow.dataset as ds

        return _ArrowDataset(ds.dataset(table, format="parquet", partitioning="hive"), table)
    except TableError:
        raise
    except Exception as exc:  # the table libraries' own errors (no such table, unreadable metadata ...)
        raise TableError(f"{table}: cannot be read as a table: {type(exc).__name__}: {_one_line(exc)}") from None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."


# ----------------------------------------------------------------------------- rows to batches


@dataclass
class PartitionReport:
    """What was rebuilt for one topic-partition."""

    topic: str
    partition: int
    directory: str
    records: int = 0
    batches: int = 0
    identical: int = 0  # rebuilt CRC equal to the stored one: the same bytes
    reencoded: int = 0  # CRC-valid, the same records, other bytes (e.g. another codec's stream)
    unchecked: int = 0  # no stored CRC to compare with (a table without the crc column)
    segments: list[str] = field(default_factory=list)
    moved: int | None = None  # offset of the first batch not at its original byte position, if any

    @property
    def segments_identical(self) -> bool:
        """Whether the segments are the source's byte for byte, as far as the table can tell: every batch
        checked identical and at its original position (batches missing at a segment's end cannot show)."""
        return self.batches == self.identical and self.moved is None

    def as_json(self) -> dict:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "directory": self.directory,
            "records": self.records,
            "batches": self.batches,
            "identical": self.identical,
            "reencoded": self.reencoded,
            "unchecked": self.unchecked,
            "segments": self.segments,
            "movedAtOffset": self.moved,
            "segmentsIdentical": self.segments_identical,
        }


def _partitions(table: _Table) -> list[tuple[str, int]]:
    import pyarrow as pa

    found: set[tuple[str, int]] = set()
    for rb in table.scan(["topic", "partition"]):
        t = pa.Table.from_batches([rb]).group_by(["topic", "partition"]).aggregate([])
        for topic, partition in zip(t.column("topic").to_pylist(), t.column("partition").to_pylist()):
            if topic is None or partition is None:
                raise TableError(f"{table.name}: rows without a topic or partition cannot be placed in a directory")
            found.add((topic, partition))
    return sorted(found)


def _sorted_offsets(table: _Table, topic: str, partition: int):
    """The partition's offsets, sorted; a repeated one is refused."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks = [rb.column(0) for rb in table.scan(["offset"], topic, partition)]
    offsets = pc.sort_indices(pa.chunked_array(chunks, pa.int64()))
    values = pc.take(pa.chunked_array(chunks, pa.int64()), offsets).combine_chunks()
    if pc.any(pc.is_null(values)).as_py():
        raise TableError(f"{table.name}: {topic}-{partition} has rows without an offset")
    if len(values) > 1:
        same = pc.equal(values.slice(1), values.slice(0, len(values) - 1))
        if pc.any(same).as_py():
            at = pc.index(same, True).as_py()
            raise TableError(
                f"{table.name}: offset {values[at].as_py()} appears more than once in {topic}-{partition} "
                "(a table appended twice, or rows of two logs)"
            )
    return values


def _windows(offsets, size: int) -> Iterator[tuple[int, int]]:
    for start in range(0, len(offsets), size):
        end = min(start + size, len(offsets))
        yield offsets[start].as_py(), offsets[end - 1].as_py() + 1


def _ms(array):
    """A timestamp column (any unit, or int64 ms) as int64 milliseconds."""
    import pyarrow as pa

    if pa.types.is_timestamp(array.type):
        return array.cast(pa.timestamp("ms", tz=array.type.tz)).cast(pa.int64())
    return array.cast(pa.int64())


def _windows_of_rows(table: _Table, topic: str, partition: int, columns: list[str]) -> Iterator[dict[str, list]]:
    """The partition's rows in offset order, a window at a time: each column as a list."""
    import pyarrow as pa

    for lo, hi in _windows(_sorted_offsets(table, topic, partition), WINDOW_ROWS):
        parts = list(table.scan(columns, topic, partition, lo, hi))
        if parts:
            t = pa.Table.from_batches(parts).sort_by("offset")
            yield {
                name: (_ms(t.column(name)) if name == "timestamp" else t.column(name)).to_pylist() for name in columns
            }


_TIMESTAMP_TYPES = {t.value: t for t in TimestampType}


@dataclass
class _OpenBatch:
    key: tuple
    first: dict  # the batch's columns, from its first row
    records: list = field(default_factory=list)
    max_timestamp: int = -1  # of the rows' timestamps: a LogAppendTime batch's append time


def _record(cols: dict[str, list], i: int, where: str) -> Record:
    headers = cols["headers"][i]
    if headers:
        headers = tuple((h["key"], h["value"]) for h in headers)
        if any(k is None for k, _ in headers):
            raise TableError(f"{where}: offset {cols['offset'][i]} has a header without a key")
    stored = cols["storedTimestampMs"][i] if "storedTimestampMs" in cols else None  # LogAppendTime batches
    return Record(
        cols["offset"][i],
        cols["timestamp"][i] if stored is None else stored,
        _TIMESTAMP_TYPES[cols["timestampType"][i]],
        cols["key"][i],
        cols["value"][i],
        headers or (),
    )


def _batch(open_batch: _OpenBatch, where: str) -> Batch:
    """The Batch the rows describe, for convert_batches."""
    row, records = open_batch.first, open_batch.records
    last = row.get("lastOffset")  # None: a table without the column, or a null
    if last is None:
        last = records[-1].offset
    if last < records[-1].offset:
        raise TableError(
            f"{where}: batch at offset {row['baseOffset']} holds offset {records[-1].offset} past its lastOffset {last}"
        )
    horizon = row.get("deleteHorizonMs")
    ts_type = TimestampType(row["timestampType"])
    return Batch(
        position=row["batchPosition"],
        size=0,
        magic=row["magic"],
        base_offset=row["baseOffset"],
        last_offset=last,
        crc=row.get("crc") or 0,
        crc_valid=True,
        compression=row["compression"],
        timestamp_type=ts_type,
        max_timestamp=open_batch.max_timestamp,
        records=records,
        partition_leader_epoch=row["partitionLeaderEpoch"],
        is_transactional=row["isTransactional"],
        is_control=row["isControl"],
        has_delete_horizon=horizon is not None,
        producer_id=row["producerId"],
        producer_epoch=row["producerEpoch"],
        base_sequence=row["baseSequence"],
        base_timestamp=horizon if horizon is not None else records[0].timestamp,
    )


def _segment_base(segment: str | None) -> int | None:
    """The base offset a source segment's file name gives (local or tiered), or None."""
    if not segment:
        return None
    name = segment.replace("\\", "/").rsplit("/", 1)[-1]
    try:
        return parse_segment_name(name).base_offset
    except ValueError:
        tiered = parse_tiered_name(name)
        return tiered[0] if tiered is not None else None


def _batches(windows: Iterator[dict[str, list]], where: str) -> Iterator[_OpenBatch]:
    """Rows (in offset order) grouped into their batches. A batch must start after the one before ends
    (its lastOffset, else its last record) and sit after it in its segment: rows of a batch that are not
    together, or batches whose positions go back, mean offsets the table's batches cannot hold."""
    current: _OpenBatch | None = None
    for cols in windows:
        segments, positions, bases, offsets = cols["segment"], cols["batchPosition"], cols["baseOffset"], cols["offset"]
        timestamps = cols["timestamp"]
        for i in range(len(offsets)):
            key = (segments[i], positions[i], bases[i])
            if current is None or key != current.key:
                if offsets[i] < bases[i]:
                    raise TableError(f"{where}: offset {offsets[i]} is below its batch's base offset {bases[i]}")
                if current is not None:
                    _check_follows(current, key, offsets[i], where)
                    yield current
                current = _OpenBatch(key, {name: column[i] for name, column in cols.items()})
            current.records.append(_record(cols, i, where))
            if timestamps[i] > current.max_timestamp:
                current.max_timestamp = timestamps[i]
    if current is not None:
        yield current


def _check_follows(before: _OpenBatch, key: tuple, offset: int, where: str) -> None:
    segment, position, base = key
    first = before.first
    ended = max(before.records[-1].offset, first.get("lastOffset") or 0)
    if base <= ended or (segment == first["segment"] and position <= first["batchPosition"]):
        raise TableError(
            f"{where}: offsets are not monotonic with their batches: offset {offset} (batch at position "
            f"{position}, base offset {base}) comes after offset {before.records[-1].offset} (batch at position "
            f"{first['batchPosition']}, offsets {first['baseOffset']} to {ended})"
        )


def rebuild_partition(table: _Table, topic: str, partition: int, directory: Path, final: Path) -> PartitionReport:
    """One topic-partition's segments written in ``directory`` (``final``: where they will be published)."""
    report = PartitionReport(topic, partition, str(final))
    where = f"{table.name}: {topic}-{partition}"
    columns = list(required_columns()) + [c for c in exact_columns() if c in table.columns]
    writer: SegmentWriter | None = None
    segment: Any = object()  # the source segment being rebuilt
    position = 0  # where the next batch lands in the segment being written
    try:
        for open_batch in _batches(_windows_of_rows(table, topic, partition, columns), where):
            row = open_batch.first
            batch = _batch(open_batch, where)
            try:
                data = convert_batches([batch], magic=batch.magic, compression=batch.compression)
            except KcodecError as exc:
                raise TableError(f"{where}: batch at offset {batch.base_offset}: {exc}") from None
            named = _segment_base(row["segment"])
            if writer is None:
                writer = SegmentWriter(
                    directory,
                    base_offset=named if named is not None else batch.base_offset,
                    segment_bytes=(1 << 31) - 1 if named is not None else 1 << 30,
                    keep_completed_on_error=False,
                )
                segment, position = row["segment"], 0
            elif row["segment"] != segment:
                writer.roll(named)
                segment, position = row["segment"], 0
            try:
                writer.append(data)
            except KcodecError as exc:
                raise TableError(f"{where}: batch at offset {batch.base_offset}: {exc}") from None
            rebuilt = decode_entry(data)
            stored = row.get("crc")
            if stored is None:
                report.unchecked += 1
            elif rebuilt.crc == stored:
                report.identical += 1
            else:
                report.reencoded += 1
            if report.moved is None and position != row["batchPosition"]:
                report.moved = batch.base_offset
            position += len(data)
            report.batches += 1
            report.records += len(batch.records)
    except BaseException:
        if writer is not None:
            writer.abort(keep_completed=False)
        raise
    if writer is not None:
        writer.close()
        report.segments = [os.fspath(final / os.path.basename(os.fspath(s.log))) for s in writer.completed]
    return report


def rebuild(table: _Table, out: Path) -> tuple[list[PartitionReport], list[str]]:
    """Every topic-partition of ``table`` rebuilt under ``out``; (reports, the exact columns the table
    lacks). The partition directories appear together or not at all: they are built in a staging
    directory of ``out`` and published by kcodec's commit of partition directories
    (:mod:`kcodec.log.commit`), which the next run finishes or rolls back after a kill."""
    missing = [c for c in required_columns() if c not in table.columns]
    if missing:
        raise TableError(
            f"{table.name}: not a table of kcodec's records rows: no column {', '.join(missing)} "
            "(written by kcodec pipeline's records table, or the kafka-segments source's records view)"
        )
    lacking = [c for c in exact_columns() if c not in table.columns]
    fs, root = resolve(os.fspath(out))
    fs.makedirs(root)
    job = f"from-table-{uuid.uuid4().hex[:12]}"
    with commit_lock(fs, root):  # recovery and the claim, one writer at a time (the Spark writer's lock too)
        recover(fs, root)  # a killed earlier run: its commit finished, or what it staged removed
        claim(fs, root, job)
    try:
        partitions = _partitions(table)
        names = [partition_dir_name(t, p) for t, p in partitions]
        for name in names:
            if (out / name).is_dir() and any((out / name).glob("*.log")):
                raise TableError(f"{out / name} already holds segments: rebuild into a new directory")
        reports = [
            rebuild_partition(table, t, p, Path(staged_dir(fs, root, job, name)), out / name)
            for (t, p), name in zip(partitions, names)
        ]
        record = CommitRecord(job, False, tuple(names), identities(fs, root, job, names))
    except BaseException:
        fs.delete_dir(job_dir(fs, root, job))  # nothing was published
        raise
    else:
        with commit_lock(fs, root):
            write_record(fs, root, record)  # the commit point: from here the next run rolls forward
            roll_forward(fs, root, record)
    finally:
        release(fs, root, job)
        staging = fs.join(root, STAGING_DIR)
        if fs.is_dir(staging) and not fs.list(staging):
            fs.delete_dir(staging)
    return reports, lacking
