"""``kcodec bench --operations spark_read``: the opt-in Spark rows run local[1] and local[2] and are
checked against the targets in the same run (speed itself is never asserted)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil

import pytest

from kcodec.cli import main


def test_spark_read_rows_for_one_and_two_cores(tmp_path, needs_spark):
    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "bench.json"
    argv = ["bench", "--quick", "--records", "3000", "--repeats", "1", "--segment-mib", "0", "--only", "kcodec"]
    argv += ["--codecs", "none", "--operations", "decode_arrow,spark_read", "--json", str(path)]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 0, err.getvalue() + out.getvalue()
    rows = {(r["implementation"], r["operation"]): r for r in json.loads(path.read_text())["rows"]}
    for cores in (1, 2):
        row = rows[(f"kcodec local[{cores}]", "spark_read")]
        assert row["status"] == "ok" and row["records"] == 3000 and row["records_per_s"] > 0
        assert row["cores"] == cores and row["input_partitions"] >= cores
    text = out.getvalue()
    assert "| kcodec local[2] | spark_read | none |" in text
    assert "Spark read per core vs read_arrow (kcodec local[1])" in text
    assert "spark_read: local[2] vs local[1]" in text


@pytest.fixture
def needs_spark():  # the rows start their own Spark processes: only what they need must be installed
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java")
