"""The opt-in rows that start Spark (they take minutes): ``spark_read`` (records/s of
``spark.read.format("kafka-segments").load()`` summing value lengths), ``pipeline`` (the whole
``kcodec pipeline`` job, cost table included) and ``pipeline_no_sizes`` (without it), each in a fresh
``local[1]`` and ``local[2]`` Spark (:mod:`kcodec.spark.bench`), on one uncompressed segment of the
benchmark's records (``kcodec bench --spark-records``), one warm-up run first. ``spark_noop`` and
``spark_to_parquet`` put the source beside Spark's own Parquet reader over the same rows: one
``local[2]`` session, the jobs alternating, medians (:func:`kcodec.spark.bench.measure_vs_parquet`)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from kcodec.bench.runner import Result

OPERATIONS = {
    "spark_read": "records/s of spark.read.format('kafka-segments').load() summing value lengths (local[N])",
    "pipeline": "kcodec pipeline on one segment: records and batches tables to Parquet, with the cost table",
    "pipeline_no_sizes": "kcodec pipeline --no-sizes: the same job without the cost table",
    "spark_noop": "rows into Spark's noop sink: the kafka-segments source (kcodec rows) vs Spark's Parquet scan of "
    "the same rows (Spark Parquet rows); local[2], one session, the jobs alternating",
    "spark_to_parquet": "rows written to Parquet: segments -> Parquet (kcodec rows) vs Parquet -> Parquet (Spark "
    "Parquet rows); local[2], one session, the jobs alternating",
}
#: The vs-Parquet operations: (implementation, job of kcodec.spark.bench.VS_PARQUET_JOBS) per operation.
VS_PARQUET = {
    "spark_noop": (("source", "source_noop"), ("parquet", "parquet_noop")),
    "spark_to_parquet": (("source", "source_to_parquet"), ("parquet", "parquet_to_parquet")),
}
VS_PARQUET_CORES = 2
_MODES = {"spark_read": "read", "pipeline": "pipeline", "pipeline_no_sizes": "pipeline_no_sizes"}
CORES = (1, 2)


def implementation(cores: int) -> str:
    return f"kcodec local[{cores}]"


def parquet_implementation(cores: int) -> str:
    """The rows of Spark's own Parquet reader beside the source's."""
    return f"Spark Parquet local[{cores}]"


def measure(operations: list[str], records: int, runs: int, say: Callable[[str], None]) -> list[Result]:
    """One Result per operation and core count; ``n/a`` rows when pyspark is not installed."""
    out = []
    try:
        import pyspark  # noqa: F401
    except ImportError as exc:
        why = f"needs pyspark ({exc})"
        for op in operations:
            if op in VS_PARQUET:
                for impl in (implementation, parquet_implementation):
                    out.append(Result(impl(VS_PARQUET_CORES), op, "none", records, status="n/a", reason=why))
                continue
            for n in CORES:
                out.append(Result(implementation(n), op, "none", records, status="n/a", reason=why))
        return out
    from kcodec.spark.bench import make_workload, run_measurements

    path = make_workload(Path(tempfile.gettempdir()) / "kcodec-spark-bench", records, "none")
    size = sum(f.stat().st_size for f in path.rglob("*.log"))
    versus = [op for op in operations if op in VS_PARQUET]
    if versus:
        out += _vs_parquet(versus, path, size, records, runs, say)
    for op in (op for op in operations if op not in VS_PARQUET):
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


def _vs_parquet(operations: list[str], path: Path, size: int, records: int, runs: int, say) -> list[Result]:
    from kcodec.spark.bench import run_measurements

    n = VS_PARQUET_CORES
    say(f"{', '.join(operations)}: {records:,} records, local[{n}], one session, {runs} run(s) of each job")
    (m,) = run_measurements(path, [n], runs, "vs_parquet", warmup=1)
    out = []
    for op in operations:
        for side, job in VS_PARQUET[op]:
            impl = implementation(n) if side == "source" else parquet_implementation(n)
            r = Result(impl, op, "none", m.get("rows", records), size)
            if "error" in m:
                r.status, r.reason = "error", m["error"]
            else:
                r.times = list(m["seconds"][job])
                r.extra = {"cores": n, "input_partitions": m["input_partitions"]}
            out.append(r)
    return out
