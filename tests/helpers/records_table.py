"""kcodec's records rows (the kafka-segments source's records view, what ``kcodec pipeline`` writes as
DEST/records) built without Spark: each batch decoded to Arrow columns (kcodec.records.columnar) and
turned into rows by the data source's own builder (kcodec.spark.arrow.RecordColumns)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from kcodec.log.partition import Partition, list_partitions
from kcodec.records.columnar import entry_to_arrow
from kcodec.records.reader import read_batches
from kcodec.spark.arrow import RECORD_COLUMNS, RecordColumns


def records_table(log_dir: Path, *, include_control: bool = True, drop: tuple[str, ...] = ()) -> pa.Table:
    """Every record of the partition directories under ``log_dir`` (or of one partition directory) as the
    records view's rows; ``drop`` leaves columns out (a table written before they existed)."""
    columns = [(c, True) for c in RECORD_COLUMNS if c.name not in drop]
    rows = RecordColumns(columns)
    parts = list_partitions(log_dir) or [Partition(log_dir)]
    for part in parts:
        topic, partition = part.topic, part.partition
        for seg in Partition(part.path).segments:
            for batch in read_batches(seg.log, strict=True, decode=entry_to_arrow):
                if batch.is_control and not include_control:
                    continue
                rows.add(batch, batch.table, topic, partition, str(seg.log))
    out = rows.flush()
    return pa.Table.from_batches([out] if out is not None else [], schema=rows.schema)


TABLE_FORMATS = ("parquet", "iceberg", "delta")


def write_table(kind: str, table: pa.Table, root: Path, *, files: int = 3) -> tuple[str, str | None]:
    """``table`` written as a ``kind`` table under ``root`` by that format's own library; returns
    (TABLE, catalog URI or None), the arguments of ``kcodec write --from-table``. Parquet: ``files``
    files of small row groups, as Spark's tasks leave them."""
    if kind == "parquet":
        import pyarrow.parquet as pq

        folder = root / "records"
        folder.mkdir(parents=True)
        step = -(-table.num_rows // files) or 1
        for i in range(files):
            pq.write_table(table.slice(i * step, step), folder / f"part-{i:05d}.parquet", row_group_size=64)
        (folder / "_SUCCESS").write_bytes(b"")
        return str(folder), None
    if kind == "iceberg":
        from pyiceberg.catalog.sql import SqlCatalog

        root.mkdir(parents=True, exist_ok=True)
        uri = f"sqlite:///{root / 'catalog.db'}"
        # registered under the catalog name kcodec pipeline uses (write --from-table's default)
        catalog = SqlCatalog(
            "kcodec",
            uri=uri,
            warehouse=(root / "warehouse").as_uri(),
        )
        catalog.create_namespace("kafka")
        ice = catalog.create_table("kafka.records", schema=table.schema)
        for part in _thirds(table, files):  # a snapshot per append: data files the scan must merge
            ice.append(part)
        return "kafka.records", uri
    if kind == "delta":
        from deltalake import write_deltalake

        path = root / "delta"
        for part in _thirds(table, files):
            write_deltalake(str(path), part, mode="append")
        return str(path), None
    raise ValueError(kind)


def _thirds(table: pa.Table, files: int):
    step = -(-table.num_rows // files) or 1
    return [table.slice(i * step, step) for i in range(files) if table.slice(i * step, step).num_rows]
