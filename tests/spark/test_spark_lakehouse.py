"""``kcodec pipeline --table-format iceberg|delta``: the bundled samples appended to tables in two runs (the
second reading only the new segments), read back by pyiceberg, delta-rs and DuckDB; a re-run commits
nothing."""

from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")
pytest.importorskip("duckdb")

from kcodec.cli import main
from tests.helpers.lakehouse import delta_rows, duckdb_rows, pyiceberg_rows, pyiceberg_table, split_copy
from tests.helpers.spark_expected import expected_rows


def _pipeline(capsys, *args) -> dict:
    assert main(["pipeline", *map(str, args), "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("table_format", ["iceberg", "delta"])
def test_incremental_append_matches_the_table_readers(spark, samples, tmp_path, capsys, table_format):
    src, dest = tmp_path / "src", tmp_path / "dest"
    add_the_rest = split_copy(samples, src)
    first = _pipeline(capsys, src, dest, "--table-format", table_format)
    assert first["committed"] and first["rows"] == len(expected_rows(src))
    add_the_rest()
    second = _pipeline(capsys, src, dest, "--table-format", table_format)
    want = sorted(expected_rows(src), key=lambda r: (r[2], r[3], r[4]))
    # the second run read only what came after the first run's offsets
    assert second["committed"] and second["rows"] == len(want) - first["rows"]
    assert {tp: r["from"] for tp, r in second["read"].items()} == first["next_offsets"]
    assert second["next_offsets"] == {
        f"{t}-{p}": max(r[4] for r in want if (r[2], r[3]) == (t, p)) + 1 for t, p in {(r[2], r[3]) for r in want}
    }
    if table_format == "iceberg":
        table = pyiceberg_table(dest)
        files = [t.file.file_path for t in table.scan().plan_files()]
        # pyiceberg reads a null list as an empty one: kcodec's files hold null (DuckDB reads them so)
        got = [r[:7] + (r[7] or None,) + r[8:] for r in pyiceberg_rows(dest)]
        assert got == want
        assert [f.name for f in table.spec().fields] == ["topic", "timestamp_day"]
        assert [table.schema().find_column_name(f.source_id) for f in table.sort_order().fields] == [
            "partition",
            "offset",
        ]
        assert table.schema().find_field("offset").field_id > 0
        assert len(table.snapshots()) == 2
    else:
        from deltalake import DeltaTable

        table = DeltaTable(str(dest / "records"))
        files = [u.removeprefix("file://") for u in table.file_uris()]
        assert delta_rows(dest) == want
        assert table.version() == 2  # created, then one commit per run
    assert duckdb_rows(files, hive=table_format == "delta") == want
    # nothing new: nothing committed
    again = _pipeline(capsys, src, dest, "--table-format", table_format)
    assert not again["committed"] and again["version"] == second["version"]
    assert main(["pipeline", str(src), str(dest), "--table-format", table_format]) == 0
    assert "nothing new since the last commit: committed nothing" in capsys.readouterr().out
    # and back: `kcodec write --from-table DEST` finds the records table and rebuilds the same records
    restored = tmp_path / "restored"
    assert main(["write", "--from-table", str(dest), str(restored)]) == 0, capsys.readouterr().err
    capsys.readouterr()

    def records(rows):
        return sorted((r[2], r[3], r[4], r[0], r[1], r[7] or None) for r in rows)

    assert records(expected_rows(restored)) == records(want)


def test_table_run_refusals(spark, samples, tmp_path, capsys):
    src, dest = tmp_path / "src", tmp_path / "dest"
    shutil.copytree(samples, src)
    _pipeline(capsys, src, dest, "--table-format", "delta")
    last = sorted((src / "clicks-0").glob("*.log"))[-1]
    for f in (src / "clicks-0").glob(last.name.split(".")[0] + ".*"):
        f.unlink()  # an older copy of the log: it now ends before the table's offset
    assert main(["pipeline", str(src), str(dest), "--table-format", "delta"]) == 3
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "offsets went backwards: clicks-0 ends at" in err
    moved = _pipeline(capsys, src, dest, "--table-format", "delta", "--allow-offsets-backwards")
    assert moved["committed"] and moved["rows"] == 0 and moved["reset"] == ["clicks-0"]
    assert main(["pipeline", str(src), str(dest), "--table-format", "delta", "--option", "startingOffset=3"]) == 3
    assert "cannot be given" in capsys.readouterr().err
    assert main(["pipeline", str(src), str(dest), "--table-format", "delta", "--format", "orc"]) == 2
    assert main(["pipeline", str(src), str(dest), "--mode", "upsert"]) == 2
    assert "--mode is for --table-format iceberg or delta" in capsys.readouterr().err


def _compacted_topic(directory, start: int, n: int) -> None:
    """A compacted topic's records at ``start``..: five keys over and over, every 7th a tombstone, every
    11th with no key."""
    from kcodec.log.writer import SegmentWriter
    from kcodec.records.encode import NewRecord, encode_batch

    records = [
        NewRecord(
            key=None if o % 11 == 5 else b"key-%d" % (o % 5),
            value=None if o % 7 == 3 else b"value-%d" % o,
            timestamp=1_735_689_600_000 + o,
        )
        for o in range(start, start + n)
    ]
    with SegmentWriter(directory, base_offset=start) as writer:
        for i in range(0, n, 10):
            writer.append(encode_batch(records[i : i + 10], base_offset=start + i))


@pytest.mark.parametrize("table_format", ["iceberg", "delta"])
def test_upsert_equals_duckdb_row_number(spark, tmp_path, capsys, table_format):
    src, dest = tmp_path / "src", tmp_path / "dest"
    _compacted_topic(src / "kv-0", 0, 40)
    first = _pipeline(capsys, src, dest, "--table-format", table_format, "--mode", "upsert")
    _compacted_topic(src / "kv-0", 40, 30)
    second = _pipeline(capsys, src, dest, "--table-format", table_format, "--mode", "upsert")
    assert second["read"] == {"kv-0": {"from": 40, "to": 70}}
    import duckdb
    import pyarrow as pa

    from tests.helpers.lakehouse import LATEST_SQL, key_rows

    rows = expected_rows(src)
    history = pa.table(
        {
            "topic": [r[2] for r in rows],
            "partition": pa.array([r[3] for r in rows], pa.int32()),
            "key": pa.array([r[0] for r in rows], pa.binary()),
            "offset": [r[4] for r in rows],
            "value": pa.array([r[1] for r in rows], pa.binary()),
        }
    )
    con = duckdb.connect()
    con.register("rows", history.filter(pa.compute.is_valid(history.column("key"))))
    rel = con.sql(f"select * from ({LATEST_SQL}) where value is not null")
    want = key_rows(rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow())
    if table_format == "iceberg":
        got = pyiceberg_table(dest).scan().to_arrow()
        rejected = pyiceberg_table(dest, "records_rejected").scan().to_arrow()
    else:
        from deltalake import DeltaTable

        got = DeltaTable(str(dest / "records")).to_pyarrow_table()
        rejected = DeltaTable(str(dest / "records_rejected")).to_pyarrow_table()
    assert key_rows(got) == want
    assert len(want) == 4  # key-1's newest record (offset 66) is a tombstone: the key is gone
    assert sorted(rejected.column("offset").to_pylist()) == [o for o in range(70) if o % 11 == 5]
    assert set(rejected.column("reason").to_pylist()) == {"null key in upsert mode"}
    assert first["rejected"] + second["rejected"] == rejected.num_rows
