"""Reading kcodec's Iceberg and Delta tables back with readers nobody here wrote (pyiceberg, delta-rs,
DuckDB), as rows comparable with :func:`tests.helpers.spark_expected.expected_rows`; and data files for a
table run written without Spark, for the commit tests."""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timezone

import pyarrow as pa
import pyarrow.parquet as pq

from tests.helpers.spark_expected import COLUMNS

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _micros(ts) -> int | None:
    if ts is None:
        return None
    if isinstance(ts, datetime):
        delta = ts - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return int(ts)


def _headers(h):
    if h is None:
        return None
    return tuple((e["key"], e["value"]) for e in h) or None


def rows_of(table: pa.Table) -> list[tuple]:
    """Rows in the data source's column order, sorted by topic, partition, offset."""
    data = table.select(list(COLUMNS)).to_pylist()
    out = []
    for r in data:
        r["timestamp"] = _micros(r["timestamp"])
        r["headers"] = _headers(r["headers"])
        out.append(tuple(r[c] for c in COLUMNS))
    return sorted(out, key=lambda r: (r[2], r[3], r[4]))


def pyiceberg_table(dest, name: str = "records"):
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("kcodec", uri=f"sqlite:///{dest}/catalog.db", warehouse=f"file://{dest}")
    return catalog.load_table(f"kcodec.{name}")


def pyiceberg_rows(dest) -> list[tuple]:
    return rows_of(pyiceberg_table(dest).scan().to_arrow())


def delta_rows(dest) -> list[tuple]:
    from deltalake import DeltaTable

    return rows_of(DeltaTable(os.path.join(dest, "records")).to_pyarrow_table())


def duckdb_rows(files: list[str], *, hive: bool) -> list[tuple]:
    """DuckDB over the data files a table lists (``hive``: partition values from the folder names, as in a
    Delta table's files)."""
    import duckdb

    con = duckdb.connect()
    rel = con.sql("select * from read_parquet(?, hive_partitioning = ?)", params=[files, hive])
    table = rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()
    if hive:  # DuckDB's hive columns are strings, and may come with Spark's folder names of other tables
        table = table.set_column(
            table.schema.get_field_index("topic"), "topic", table.column("topic").cast(pa.string())
        )
    return rows_of(table)


def write_run_files(table_format: str, records: pa.Table, data_dir: str) -> list[str]:
    """``records`` as data files of a run, laid out as Spark lays them out for ``table_format``."""
    import pyarrow.compute as pc

    written = []
    for topic in sorted(set(records.column("topic").to_pylist())):
        part = records.filter(pc.equal(records.column("topic"), topic))
        if table_format == "iceberg":
            path = os.path.join(data_dir, f"kcodec_topic={topic}", "part-0.parquet")
        else:
            path = os.path.join(data_dir, f"topic={topic}", "part-0.parquet")
            part = part.drop_columns(["topic"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        pq.write_table(part, path)
        written.append(path)
    return written


#: a small records table for the commit tests (one day: one Iceberg partition per topic)
SMALL_SCHEMA = pa.schema(
    [
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp", pa.timestamp("us", tz="UTC")),
    ]
)


def small_records(topic: str, partition: int, start: int, end: int) -> pa.Table:
    n = end - start
    return pa.table(
        {
            "key": [b"k%d" % (o % 3) for o in range(start, end)],
            "value": [b"v%d" % o for o in range(start, end)],
            "topic": [topic] * n,
            "partition": [partition] * n,
            "offset": list(range(start, end)),
            "timestamp": [datetime(2024, 5, 1, tzinfo=timezone.utc)] * n,
        },
        schema=SMALL_SCHEMA,
    )


def with_tombstones(records: pa.Table, every: int = 7) -> pa.Table:
    """``records`` with the value of every ``every``-th offset null (a tombstone: the key is deleted)."""
    values = [
        None if o % every == 3 else v
        for o, v in zip(records.column("offset").to_pylist(), records.column("value").to_pylist())
    ]
    return records.set_column(records.schema.get_field_index("value"), "value", pa.array(values, pa.binary()))


LATEST_SQL = (
    'select * from rows qualify row_number() over (partition by topic, "partition", key order by "offset" desc) = 1'
)


def duckdb_latest(rows: pa.Table, *, drop_tombstones: bool) -> pa.Table:
    """DuckDB's answer to an upsert: the newest record per (topic, partition, key), tombstoned keys left out."""
    import duckdb

    con = duckdb.connect()
    con.register("rows", rows)
    sql = f"select * from ({LATEST_SQL}) where value is not null" if drop_tombstones else LATEST_SQL
    rel = con.sql(sql)
    return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()


def key_rows(table: pa.Table) -> list[tuple]:
    """(topic, partition, key, offset, value), sorted: what an upsert table is compared by."""
    return sorted(
        (r["topic"], r["partition"], r["key"], r["offset"], r["value"])
        for r in table.select(["topic", "partition", "key", "offset", "value"]).to_pylist()
    )


def split_copy(samples, src):
    """``samples`` under ``src`` with each partition's last segment held back; a function that adds them."""
    held = []
    for part in sorted(samples.iterdir()):
        (src / part.name).mkdir(parents=True)
        bases = sorted({f.name.split(".")[0] for f in part.iterdir()})
        for f in part.iterdir():
            (held if f.name.split(".")[0] == bases[-1] else []).append(f)
            if f.name.split(".")[0] != bases[-1]:
                shutil.copy2(f, src / part.name / f.name)

    def add_the_rest():
        for f in held:
            shutil.copy2(f, src / f.parent.name / f.name)

    return add_the_rest
