"""The opt-in rows of the Iceberg and Delta table runs (they start Spark: minutes): a full run of each
table format next to the Parquet pipeline on the same input, and an incremental run over 1 % new records
(:mod:`kcodec.spark.lakehouse.bench`, ``local[2]``, one warm-up run first)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from kcodec.bench.runner import Result

OPERATIONS = {
    "table_parquet": "kcodec pipeline --no-sizes on the same input: the Parquet folders the table runs compare with",
    "table_iceberg": "kcodec pipeline --table-format iceberg into an empty DEST: every record appended, one commit",
    "table_delta": "kcodec pipeline --table-format delta into an empty DEST: every record appended, one commit",
    "table_iceberg_incremental": "the Iceberg table run when 1 % of the records are new (records/s: of those)",
    "table_delta_incremental": "the Delta table run when 1 % of the records are new (records/s: of those)",
}
CORES = 2
IMPLEMENTATION = f"kcodec local[{CORES}]"


def measure(operations: list[str], records: int, runs: int, say: Callable[[str], None]) -> list[Result]:
    """One Result per operation; ``n/a`` rows without pyspark, pyiceberg or deltalake."""
    missing = []
    for module in ("pyspark", "pyiceberg", "deltalake"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        why = f"needs {', '.join(missing)}"
        return [Result(IMPLEMENTATION, op, "none", records, status="n/a", reason=why) for op in operations]
    from kcodec.spark.lakehouse.bench import run_measurement

    say(f"table runs: {records:,} records (+1 %), local[{CORES}], {runs} run(s) each")
    m = run_measurement(records, runs, CORES, Path(tempfile.gettempdir()) / "kcodec-spark-bench")
    out = []
    for op in operations:
        scenario = op.removeprefix("table_")
        handled = max(records // 100, 1) if scenario.endswith("_incremental") else records + max(records // 100, 1)
        r = Result(IMPLEMENTATION, op, "none", handled)
        if "error" in m:
            r.status, r.reason = "error", m["error"]
        else:
            r.times = list(m[scenario])
        out.append(r)
    return out


def targets(ix, check) -> None:
    """The issue's targets: a table run within 1.2x of the Parquet pipeline; 1 % new data <= 5 % of a full run."""
    parquet = ix.get((IMPLEMENTATION, "table_parquet", "none"))
    for fmt in ("iceberg", "delta"):
        full = ix.get((IMPLEMENTATION, f"table_{fmt}", "none"))
        if full is not None and parquet is not None:
            v = full.median_s / parquet.median_s if full.ok and parquet.ok else None
            check(f"{fmt} table run vs the Parquet pipeline", "none", v, "<= 1.2x", None if v is None else v <= 1.2, "")
        inc = ix.get((IMPLEMENTATION, f"table_{fmt}_incremental", "none"))
        if full is not None and inc is not None:
            v = inc.median_s / full.median_s if full.ok and inc.ok else None
            check(
                f"{fmt}: a run over 1 % new records vs a full run",
                "none",
                v,
                "<= 0.05x",
                None if v is None else v <= 0.05,
                "",
            )
