"""``kcodec bench``'s table-run rows (kcodec.bench.lakehouse_rows): the issue's targets are computed from the
rows of the same run (the measurement itself starts Spark: ``python -m kcodec.spark.lakehouse.bench``)."""

from __future__ import annotations

from kcodec.bench import report
from kcodec.bench.lakehouse_rows import IMPLEMENTATION
from kcodec.bench.runner import Result


def test_table_targets_from_the_same_runs() -> None:
    def row(op, seconds, records=101_000):
        return Result(IMPLEMENTATION, op, "none", records, 1, times=[seconds])

    results = [
        row("table_parquet", 10.0),
        row("table_iceberg", 11.5),  # 1.15x: within 1.2x
        row("table_delta", 13.0),  # 1.3x
        row("table_iceberg_incremental", 0.5, 1_000),  # 4.3 % of the full Iceberg run
        row("table_delta_incremental", 1.3, 1_000),  # 10 %
    ]
    got = {t["target"]: (t["verdict"], round(t["measured"], 3)) for t in report.targets(results, None)}
    assert got["iceberg table run vs the Parquet pipeline"] == ("PASS", 1.15)
    assert got["delta table run vs the Parquet pipeline"] == ("FAIL", 1.3)
    assert got["iceberg: a run over 1 % new records vs a full run"] == ("PASS", 0.043)
    assert got["delta: a run over 1 % new records vs a full run"] == ("FAIL", 0.1)
