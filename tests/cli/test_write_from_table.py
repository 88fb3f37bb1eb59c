"""``kcodec write --from-table TABLE OUT`` from the command line: what it prints, and its one-line refusals."""

from __future__ import annotations

import hashlib
import json
import sys

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")

from kcodec.cli import main  # noqa: E402
from kcodec.tools.from_table import exact_columns  # noqa: E402
from tests.helpers.paths import TESTS  # noqa: E402
from tests.helpers.records_table import records_table, write_table  # noqa: E402

SAMPLES = TESTS.parent / "samples" / "data"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def sha256s(root):
    return {f"{p.parent.name}/{p.name}": hashlib.sha256(p.read_bytes()).hexdigest() for p in root.glob("*/*.log")}


def test_from_an_iceberg_catalog_with_the_table_printed(tmp_path, capsys):
    name, uri = write_table("iceberg", records_table(SAMPLES), tmp_path / "lake")
    code, out, err = run(capsys, "write", "--from-table", name, "--catalog", uri, tmp_path / "restored")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"rebuilt 1,782 records in 295 batches from kafka.records into {tmp_path / 'restored'}"
    assert lines[1].split() == [
        "topic-partition",
        "records",
        "batches",
        "identical",
        "re-encoded",
        "unchecked",
        "segments",
    ]
    assert lines[2].split() == ["clicks-0", "480", "161", "161", "0", "0", "3,", "byte-identical"]
    assert lines[4].split() == ["orders-0", "602", "20", "20", "0", "0", "2,", "byte-identical"]
    assert lines[6].startswith("identical: the batch's bytes are the source's")
    assert sha256s(tmp_path / "restored") == sha256s(SAMPLES)


def test_json_and_an_older_table(tmp_path, capsys):
    table, _ = write_table("delta", records_table(SAMPLES / "orders-1", drop=exact_columns()), tmp_path / "lake")
    code, out, _ = run(capsys, "write", "--from-table", table, tmp_path / "restored", "--json")
    assert code == 0
    got = json.loads(out)
    assert set(got) == {"table", "output", "partitions", "columnsMissing"}  # as docs/commands.md lists them
    assert set(got["partitions"][0]) == {
        "topic",
        "partition",
        "directory",
        "records",
        "batches",
        "identical",
        "reencoded",
        "unchecked",
        "segments",
        "movedAtOffset",
        "segmentsIdentical",
    }
    assert got["columnsMissing"] == list(exact_columns())
    (p,) = got["partitions"]
    assert (p["topic"], p["partition"], p["records"], p["batches"], p["unchecked"]) == ("orders", 1, 500, 10, 10)
    assert p["segmentsIdentical"] is False
    code, out, _ = run(capsys, "write", "--from-table", table, tmp_path / "again")
    assert "3, not checked" in out
    assert out.splitlines()[-1].startswith("note: the table has no lastOffset, deleteHorizonMs, crc, storedTimestampMs")


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("kcodec write: "), err
    return err


def test_refusals_are_one_line(tmp_path, capsys, monkeypatch):
    table = records_table(SAMPLES / "orders-1")
    parquet, _ = write_table("parquet", pa.concat_tables([table, table.slice(100, 1)]), tmp_path / "dup")
    code, _, err = run(capsys, "write", "--from-table", parquet, tmp_path / "out")
    assert code == 3 and "offset 100 appears more than once in orders-1" in one_line(err)
    assert not (tmp_path / "out" / "orders-1").exists()

    partial, _ = write_table("parquet", table.drop_columns(["segment"]), tmp_path / "partial")
    code, _, err = run(capsys, "write", "--from-table", partial, tmp_path / "out")
    assert code == 3 and "not a table of kcodec's records rows: no column segment" in one_line(err)

    code, _, err = run(capsys, "write", "--from-table", tmp_path / "nowhere", tmp_path / "out")
    assert code == 3 and "no such table" in one_line(err)

    delta, _ = write_table("delta", table, tmp_path / "delta")
    monkeypatch.setitem(sys.modules, "deltalake", None)
    code, _, err = run(capsys, "write", "--from-table", delta, tmp_path / "out")
    assert code == 3 and one_line(err).endswith("needs deltalake (the delta extra): pip install 'kcodec[delta]'\n")

    code, _, err = run(capsys, "write", "--from-table", delta, tmp_path / "out", "--compression", "gzip")
    assert code == 2 and "--from-table keeps each batch as the table has it; it takes no --compression" in one_line(err)
    code, _, err = run(capsys, "write", tmp_path / "x.log", "--catalog", "sqlite:///c.db")
    assert code == 2 and "name the Iceberg catalog of --from-table" in one_line(err)
    code, _, err = run(capsys, "write", "--from-table", delta, tmp_path / "x.log")
    assert code == 2 and "OUT is a directory, not x.log" in one_line(err)
    code, _, err = run(capsys, "write", "--from-table", delta, delta)
    assert code == 2 and one_line(err)
