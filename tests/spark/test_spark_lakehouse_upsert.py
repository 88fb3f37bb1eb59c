"""``--mode upsert``'s commit without Spark: the newest record per (topic, partition, key) of each run merged
into Iceberg (copy-on-write: delete and append in one commit) and Delta (a merge) tables; after any split of
the history into runs the table equals DuckDB's ``row_number() over (partition by key order by offset desc)
= 1`` minus tombstoned keys; rows that cannot be placed go to the side table once."""

from __future__ import annotations

import pyarrow as pa
import pytest

pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")
pytest.importorskip("duckdb")

from kcodec.spark.lakehouse.run import TableRun, open_table
from tests.helpers.lakehouse import SMALL_SCHEMA, duckdb_latest, key_rows, small_records, with_tombstones


def _rows(fmt: str, dest) -> pa.Table:
    table = open_table(fmt, str(dest))
    table.load()
    if fmt == "iceberg":
        return table.table.scan().to_arrow()
    return table.table.to_pyarrow_table()


def _upsert(fmt, dest, ends, new, rejected=None):
    side = open_table(fmt, str(dest), "records_rejected")
    with TableRun(open_table(fmt, str(dest)), str(dest), mode="upsert", side_table=side) as run:
        run.begin(ends, SMALL_SCHEMA)
        return run.commit_upsert(duckdb_latest(new, drop_tombstones=False), rejected)


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_upsert_in_one_run_or_many_equals_duckdb(tmp_path, fmt):
    history = pa.concat_tables(
        [with_tombstones(small_records("t", 0, 0, 40)), with_tombstones(small_records("t", 1, 0, 12))]
    )
    want = key_rows(duckdb_latest(history, drop_tombstones=True))
    assert want and len(want) < history.num_rows  # keys repeat and some are deleted
    one = tmp_path / "one"
    _upsert(fmt, one, {("t", 0): 40, ("t", 1): 12}, history)
    assert key_rows(_rows(fmt, one)) == want
    many = tmp_path / "many"
    for a, b in ((0, 9), (9, 10), (10, 31), (31, 40)):
        part = with_tombstones(small_records("t", 0, a, b))
        if b == 40:
            part = pa.concat_tables([part, with_tombstones(small_records("t", 1, 0, 12))])
        result = _upsert(fmt, many, {("t", 0): b, ("t", 1): 12 if b == 40 else 0}, part)
        assert result.committed
    assert key_rows(_rows(fmt, many)) == want
    again = _upsert(fmt, many, {("t", 0): 40, ("t", 1): 12}, history.slice(0, 0))
    assert not again.committed


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_rejected_rows_go_to_the_side_table_once(tmp_path, fmt):
    dest = tmp_path / "dest"
    bad = small_records("t", 0, 5, 7).append_column("reason", pa.array(["null key in upsert mode"] * 2))
    first = _upsert(fmt, dest, {("t", 0): 10}, small_records("t", 0, 0, 10), bad)
    assert first.rejected == 2 and first.rejected_table
    # a run that put its rejected rows in the side table and was killed before the main commit: its re-run
    # adds none again
    side = open_table(fmt, str(dest), "records_rejected")
    state = side.load()
    assert state.offsets == {("t", 0): 10}
    more = small_records("t", 0, 12, 13).append_column("reason", pa.array(["null key in upsert mode"]))
    with TableRun(open_table(fmt, str(dest)), str(dest), mode="upsert", side_table=side) as run:
        run.begin({("t", 0): 15}, SMALL_SCHEMA)
        result = run.commit_upsert(
            duckdb_latest(small_records("t", 0, 10, 15), drop_tombstones=False), pa.concat_tables([bad, more])
        )
    assert result.rejected == 1
    side.load()
    rows = side.table.scan().to_arrow() if fmt == "iceberg" else side.table.to_pyarrow_table()
    assert sorted(rows.column("offset").to_pylist()) == [5, 6, 12]
    assert set(rows.column("reason").to_pylist()) == {"null key in upsert mode"}
