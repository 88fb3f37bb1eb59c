"""``kcodec pipeline``: the records and batches tables and the summary, on the bundled samples."""

from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from kcodec.cli import main
from kcodec.spark.cost_table import COMBINATIONS, label
from tests.helpers.spark_expected import python_summary


def test_pipeline_on_the_samples(spark, samples, tmp_path, capsys):
    dest = tmp_path / "tables"
    assert main(["pipeline", str(samples), str(dest), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    want = python_summary(samples)
    got = {f"{p['topic']}-{p['partition']}": p for p in summary["partitions"]}
    assert set(got) == set(want) == {"orders-0", "orders-1", "clicks-0", "legacy-0"}
    for name, w in want.items():
        g = got[name]
        for k, v in w.items():
            assert g[k] == v, (name, k)
        assert g["rows"] == w["records"]  # the records table holds the data records
    assert list(summary["total"]["sizes"]) == [label(m, c) for m, c in COMBINATIONS]
    # the tables are there, in Parquet
    records = spark.read.parquet(str(dest / "records"))
    batches = spark.read.parquet(str(dest / "batches"))
    assert records.count() == sum(w["records"] for w in want.values())
    assert batches.count() == sum(w["batches"] for w in want.values())
    assert {"position", "size", "compression", "records", "compressedBytes", "uncompressedBytes", "crcValid"} <= set(
        batches.columns
    )
    # the cost table as a chart beside the tables, named in the summary
    assert summary["charts"] == [str(dest / "cost_table.svg")]
    svg = (dest / "cost_table.svg").read_text()
    assert svg.count('class="bar"') == len(COMBINATIONS) and "on disk now" in svg


def test_pipeline_table_output_and_corrupt_skip(spark, samples, tmp_path, capsys):
    src = tmp_path / "src"
    shutil.copytree(samples, src)
    log = sorted((src / "orders-1").glob("*.log"))[0]
    data = bytearray(log.read_bytes())
    data[18] ^= 0x01  # the first batch's CRC
    log.write_bytes(bytes(data))
    assert main(["pipeline", str(src), str(tmp_path / "out"), "--no-sizes"]) == 3
    assert "Spark job failed" in capsys.readouterr().err
    assert (
        main(
            ["pipeline", str(src), str(tmp_path / "out"), "--on-corrupt", "skip", "--isolation-level", "read_committed"]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "topic-partition" in text and "orders-0" in text and "total" in text
    assert "v2      zstd" in text and "vs on disk" in text
    assert "skipped 1 region" in text and "00000000000000000000.log @ 0" in text


def test_pipeline_usage_errors(tmp_path, capsys):
    assert main(["pipeline", str(tmp_path / "missing"), str(tmp_path / "out")]) == 2
    assert "no such file" in capsys.readouterr().err
