"""And back: the records table ``kcodec pipeline`` writes (Spark's Parquet) rebuilt into segments by
``kcodec write --from-table``, byte for byte."""

from __future__ import annotations

import hashlib

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from kcodec.cli import main


def sha256s(root):
    return {f"{p.parent.name}/{p.name}": hashlib.sha256(p.read_bytes()).hexdigest() for p in root.glob("*/*.log")}


def test_pipeline_records_table_back_to_segments(spark, samples, tmp_path, capsys):
    dest = tmp_path / "tables"
    argv = ["pipeline", str(samples), str(dest), "--no-sizes", "--no-internal-tables"]
    assert main([*argv, "--option", "includeControlRecords=true"]) == 0
    capsys.readouterr()
    assert main(["write", "--from-table", str(dest / "records"), str(tmp_path / "restored")]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"rebuilt 1,782 records in 295 batches from {dest / 'records'}")
    assert out.count("byte-identical") == 4
    assert sha256s(tmp_path / "restored") == sha256s(samples)
