"""Rows per second of the kafka-segments data source on the benchmark workload.

    python -m kcodec.spark.bench [--records 200000] [--cores 1 2] [--codec none] [--runs 3] [--dir DIR]
                                 [--mode read|pipeline|pipeline_no_sizes]

The workload: ``records`` records in v2 batches of 1,000 (one segment, Kafka's
default index interval); each record a 16-byte random key, a 200-byte value
(100 random bytes, then 100 bytes of repetitive text), one header ``h`` of 8
random bytes, timestamps 1 ms apart. For each core count a fresh local Spark
(``local[N]``) runs the mode (:data:`MODES`: by default it reads every row
and sums the value lengths), with ``minPartitions`` = N so the segment is cut
for the cores; three warm-up runs first, then the best and the median of
``runs``. ``kcodec bench --operations spark_read,pipeline`` runs the same in
its table. A query reading one batch gives the fixed cost of a query (planning
in a Python worker, scheduling) that every run includes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WARMUP = 3
PHRASE = b"The quick brown fox jumps over the lazy dog; Kafka appends it to the log. "


def make_workload(directory: Path, records: int, codec: str, seed: int = 20_240_601) -> Path:
    """Write the workload as partition directory ``bench-0`` under ``directory`` (reused when present)."""
    from kcodec.log.writer import SegmentWriter
    from kcodec.records.encode import NewRecord, encode_batch

    part = directory / f"bench-{codec}-{records}" / "bench-0"
    if (part / "00000000000000000000.log").exists():
        return part.parent
    rnd = random.Random(seed)
    text = (PHRASE * 3)[:100]
    with SegmentWriter(part) as w:
        for start in range(0, records, 1000):
            batch = [
                NewRecord(
                    key=rnd.randbytes(16),
                    value=rnd.randbytes(100) + text,
                    headers=(("h", rnd.randbytes(8)),),
                    timestamp=1_700_000_000_000 + i,
                )
                for i in range(start, min(start + 1000, records))
            ]
            w.append(encode_batch(batch, base_offset=start, compression=codec))
    return part.parent


#: What a measurement runs: ``read`` sums the value lengths of every record of
#: ``spark.read.format("kafka-segments").load()``; ``pipeline`` is ``kcodec pipeline`` (records and batches
#: tables to Parquet, with the v0/v1/v2 x codec cost table); ``pipeline_no_sizes`` the same without it.
MODES = ("read", "pipeline", "pipeline_no_sizes")

#: ``vs_parquet`` (:func:`measure_vs_parquet`): the source against Spark's own Parquet reader, in one session.
VS_PARQUET_JOBS = ("source_noop", "parquet_noop", "source_to_parquet", "parquet_to_parquet")


def measure(path: str, cores: int, runs: int, mode: str = "read", warmup: int = WARMUP) -> dict:
    """Run in a fresh process per core count: rows/s of ``mode`` (see :data:`MODES`)."""
    from pyspark.sql import functions as F

    from kcodec.spark.session import local_session

    spark = local_session(f"local[{cores}]", "kcodec bench", conf={"spark.sql.shuffle.partitions": str(cores)})
    df = spark.read.format("kafka-segments").option("minPartitions", cores).load(path)
    partitions = df.rdd.getNumPartitions()
    rows = df.count()
    if mode == "read":

        def job() -> int:
            return df.agg(F.count(F.lit(1)), F.sum(F.length("value"))).collect()[0][0]

    elif mode in ("pipeline", "pipeline_no_sizes"):
        from kcodec.spark.pipeline import run_pipeline

        dest = tempfile.mkdtemp(prefix="kcodec-bench-pipeline-")

        def job() -> int:
            summary = run_pipeline(path, dest, spark=spark, sizes=mode == "pipeline")
            return sum(p.rows for p in summary.partitions)

    else:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    times = []
    for i in range(runs + warmup):
        t = time.perf_counter()
        got = job()
        if got != rows:
            raise AssertionError(f"{mode} handled {got} rows, the source holds {rows}")
        if i >= warmup:  # warm-up runs start the Python workers and let the JVM compile
            times.append(time.perf_counter() - t)
    tiny = spark.read.format("kafka-segments").option("endingOffset", 1).load(path)
    fixed = []
    for _ in range(3):
        t = time.perf_counter()
        tiny.write.format("noop").mode("overwrite").save()
        fixed.append(time.perf_counter() - t)
    spark.stop()
    return {
        "mode": mode,
        "cores": cores,
        "rows": rows,
        "input_partitions": partitions,
        "seconds": times,
        "best_rows_per_s": rows / min(times),
        "median_rows_per_s": rows / statistics.median(times),
        "one_batch_query_seconds": min(fixed),
    }


def measure_vs_parquet(path: str, cores: int, runs: int, warmup: int = WARMUP) -> dict:
    """The kafka-segments source against Spark's Parquet reader over the same rows, in one session
    (``local[cores]``): the rows are written to Parquet once, then each run times, in turn and in an
    order rotated every run, the source into Spark's ``noop`` sink, the Parquet scan into ``noop``,
    segments to Parquet, and Parquet to Parquet. Seconds per job (see :data:`VS_PARQUET_JOBS`)."""
    from kcodec.spark.session import local_session

    spark = local_session(f"local[{cores}]", "kcodec bench", conf={"spark.sql.shuffle.partitions": str(cores)})
    scratch = Path(tempfile.mkdtemp(prefix="kcodec-bench-parquet-"))
    source = spark.read.format("kafka-segments").option("minPartitions", cores).load(path)
    rows = source.count()
    parquet_path = str(scratch / "rows.parquet")
    source.write.parquet(parquet_path)
    parquet = spark.read.parquet(parquet_path)
    if parquet.count() != rows:
        raise AssertionError("the Parquet copy does not hold the source's rows")

    def noop(df) -> None:
        df.write.format("noop").mode("overwrite").save()

    def to_parquet(df, name: str) -> None:
        df.write.mode("overwrite").parquet(str(scratch / name))

    jobs = {
        "source_noop": lambda: noop(source),
        "parquet_noop": lambda: noop(parquet),
        "source_to_parquet": lambda: to_parquet(source, "from-source.parquet"),
        "parquet_to_parquet": lambda: to_parquet(parquet, "from-parquet.parquet"),
    }
    seconds: dict[str, list[float]] = {name: [] for name in jobs}
    order = list(jobs)
    for i in range(runs + warmup):
        for name in order[i % len(order) :] + order[: i % len(order)]:
            t = time.perf_counter()
            jobs[name]()
            if i >= warmup:
                seconds[name].append(time.perf_counter() - t)
    partitions = source.rdd.getNumPartitions()
    spark.stop()
    shutil.rmtree(scratch, ignore_errors=True)
    return {"mode": "vs_parquet", "cores": cores, "rows": rows, "input_partitions": partitions, "seconds": seconds}


def run_measurements(path: Path, cores: list[int], runs: int, mode: str = "read", warmup: int = WARMUP):
    """Yield :func:`measure`'s dict for each core count, each in a fresh process (a fresh Spark); a failed
    child yields ``{"cores", "mode", "error"}``."""
    for n in cores:
        out = subprocess.run(
            [sys.executable, "-m", "kcodec.spark.bench", "--measure", str(path), str(n), str(runs), mode, str(warmup)],
            capture_output=True,
            text=True,
            env=os.environ.copy(),
        )
        if out.returncode:
            lines = [line for line in out.stderr.strip().splitlines() if line.strip()]
            yield {"cores": n, "mode": mode, "error": lines[-1] if lines else f"exit status {out.returncode}"}
            continue
        yield json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kcodec.spark.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=int, default=200_000)
    p.add_argument("--cores", type=int, nargs="+", default=[1, 2])
    p.add_argument("--codec", default="none")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "kcodec-spark-bench")
    p.add_argument("--mode", choices=MODES, default="read")
    p.add_argument("--measure", nargs=5, metavar=("PATH", "CORES", "RUNS", "MODE", "WARMUP"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.measure:
        path, cores, runs, mode, warmup = args.measure
        if mode == "vs_parquet":
            print(json.dumps(measure_vs_parquet(path, int(cores), int(runs), int(warmup))))
        else:
            print(json.dumps(measure(path, int(cores), int(runs), mode, int(warmup))))
        return 0
    args.dir.mkdir(parents=True, exist_ok=True)
    path = make_workload(args.dir, args.records, args.codec)
    size = sum(f.stat().st_size for f in path.rglob("*.log"))
    print(f"workload: {args.records:,} records, v2 batches of 1,000, codec {args.codec}, {size:,} bytes in {path}")
    for r in run_measurements(path, args.cores, args.runs, args.mode):
        if "error" in r:
            print(f"local[{r['cores']}]: {r['error']}", file=sys.stderr)
            return 1
        print(
            f"local[{r['cores']}] {r['mode']}: {r['best_rows_per_s']:,.0f} rows/s best, "
            f"{r['median_rows_per_s']:,.0f} median ({r['rows']:,} rows, {r['input_partitions']} input partitions, "
            f"runs {', '.join(f'{s:.2f}s' for s in r['seconds'])}; a one-batch query takes "
            f"{r['one_batch_query_seconds']:.2f}s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
