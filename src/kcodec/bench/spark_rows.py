"""The opt-in rows that start Spark (they take minutes): ``spark_read`` (records/s of
``spark.read.format("kafka-segments").load()`` summing value lengths), ``pipeline`` (the whole
``kcodec pipeline`` job, cost table included) and ``pipeline_no_sizes`` (without it), each in a fresh
``local[1]`` and ``local[2]`` Spark (:mod:`kcodec.spark.bench`), on one uncompressed segment of the
benchmark's records (``kcodec bench --spark-records``), one warm-up run first."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from kcodec.bench.runner import Result

OPERATIONS = {
    "spark_read": "records/s of spark.read.format('kafka-segments').load() summing value lengths (local[N])",
    "pipeline": "kcodec pipeline on one segment: records and batches tables to Parquet, with the cost table",
    "pipeline_no_sizes": "kcodec pipeline --no-sizes: the same job without the cost table",
}
_MODES = {"spark_read": "read", "pipeline": "pipeline", "pipeline_no_sizes": "pipeline_no_sizes"}
CORES = (1, 2)


def implementation(cores: int) -> str:
    return f"kcodec local[{cores}]"


def measure(operations: list[str], records: int, runs: int, say: Callable[[str], None]) -> list[Result]:
    """One Result per operation and core count; ``n/a`` rows when pyspark is not installed."""
    out = []
    try:
        import pyspark  # noqa: F401
    except ImportError as exc:
        for op in operations:
            for n in CORES:
                why = f"needs pyspark ({exc})"
                out.append(Result(implementation(n), op, "none", records, status="n/a", reason=why))
        return out
    from kcodec.spark.bench import make_workload, run_measurements

    path = make_workload(Path(tempfile.gettempdir()) / "kcodec-spark-bench", records, "none")
    size = sum(f.stat().st_size for f in path.rglob("*.log"))
    for op in operations:
        say(f"{op}: {records:,} records, local[{'] and local['.join(map(str, CORES))}], {runs} run(s) each")
        for m in run_measurements(path, list(CORES), runs, _MODES[op], warmup=1):
            r = Result(implementation(m["cores"]), op, "none", m.get("rows", records), size)
            if "error" in m:
                r.status, r.reason = "error", m["error"]
            else:
                r.times = list(m["seconds"])
                r.extra = {"cores": m["cores"], "input_partitions": m["input_partitions"]}
            out.append(r)
    return out
