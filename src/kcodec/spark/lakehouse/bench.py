"""Seconds of a table run against the Parquet pipeline on the same input, and of an incremental run.

    python -m kcodec.spark.lakehouse.bench [--records 100000] [--runs 3] [--cores 2]

The workload is :func:`kcodec.spark.bench.make_workload`'s segment (``bench-0``) and a second partition
holding 1 % as many records (``extra-0``). Each timed run starts from a fresh DEST, in one local Spark:

* ``parquet``: ``kcodec pipeline --no-sizes`` (records and batches folders, rewritten whole);
* ``iceberg`` / ``delta``: ``--table-format`` on an empty DEST, every record appended;
* ``iceberg_incremental`` / ``delta_incremental``: the table already holds ``bench-0`` (restored from a copy
  before each run), the run reads and commits ``extra-0`` only: 1 % of the data.

One warm-up run of each first; the best of ``runs`` is reported.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

SCENARIOS = ("parquet", "iceberg", "delta", "iceberg_incremental", "delta_incremental")


def workload(directory: Path, records: int) -> tuple[Path, Path]:
    """(the source with both partitions, the source with ``bench-0`` only)."""
    from kcodec.spark.bench import make_workload

    main = make_workload(directory, records, "none") / "bench-0"
    extra = make_workload(directory, max(records // 100, 1), "none") / "bench-0"
    both, first = directory / f"lakehouse-{records}" / "both", directory / f"lakehouse-{records}" / "first"
    for root, parts in ((both, {"bench-0": main, "extra-0": extra}), (first, {"bench-0": main})):
        for name, target in parts.items():
            link = root / name
            if not link.exists():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(target, target_is_directory=True)
    return both, first


def measure(records: int, runs: int, cores: int, directory: Path) -> dict[str, list[float]]:
    from kcodec.spark.lakehouse.job import run_table_pipeline
    from kcodec.spark.pipeline import run_pipeline
    from kcodec.spark.session import local_session

    both, first = workload(directory, records)
    spark = local_session(f"local[{cores}]", "kcodec bench", conf={"spark.sql.shuffle.partitions": str(cores)})
    work = Path(tempfile.mkdtemp(prefix="kcodec-bench-lakehouse-"))
    dest = work / "dest"
    prepared: dict[str, Path] = {}
    for fmt in ("iceberg", "delta"):  # a table that holds bench-0, to restore before each incremental run
        prepared[fmt] = work / f"prepared-{fmt}"
        run_table_pipeline(str(first), str(dest), table_format=fmt, spark=spark)
        shutil.move(str(dest), prepared[fmt])

    def job(scenario: str) -> None:
        fmt = scenario.split("_")[0]
        if scenario == "parquet":
            run_pipeline(str(both), str(dest), spark=spark, sizes=False, internal_tables=False)
        else:
            r = run_table_pipeline(str(both), str(dest), table_format=fmt, spark=spark)
            if not r.committed:
                raise AssertionError(f"{scenario}: the run committed nothing")

    out: dict[str, list[float]] = {}
    for scenario in SCENARIOS:
        times = []
        for i in range(runs + 1):
            shutil.rmtree(dest, ignore_errors=True)
            if scenario.endswith("_incremental"):
                shutil.copytree(prepared[scenario.split("_")[0]], dest, symlinks=True)
            t = time.perf_counter()
            job(scenario)
            if i:  # the first run warms up
                times.append(time.perf_counter() - t)
        out[scenario] = times
    spark.stop()
    shutil.rmtree(work, ignore_errors=True)
    return out


def run_measurement(records: int, runs: int, cores: int, directory: Path) -> dict:
    """:func:`measure` in a fresh process (a fresh Spark); ``{"error": line}`` when it failed."""
    import os
    import subprocess

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kcodec.spark.lakehouse.bench",
            "--json",
            "--records",
            str(records),
            "--runs",
            str(runs),
            "--cores",
            str(cores),
            "--dir",
            str(directory),
        ],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )
    if out.returncode:
        lines = [line for line in out.stderr.strip().splitlines() if line.strip()]
        return {"error": lines[-1] if lines else f"exit status {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kcodec.spark.lakehouse.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=int, default=100_000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--cores", type=int, default=2)
    p.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "kcodec-spark-bench")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    times = measure(args.records, args.runs, args.cores, args.dir)
    if args.json:
        print(json.dumps(times))
        return 0
    extra = max(args.records // 100, 1)
    print(f"{args.records:,} + {extra:,} records, local[{args.cores}], best of {args.runs} (seconds)")
    best = {k: min(v) for k, v in times.items()}
    for scenario, b in best.items():
        fmt = scenario.split("_")[0]
        if scenario == "parquet":
            vs = "the reference (records and batches folders, --no-sizes)"
        elif scenario.endswith("_incremental"):
            vs = f"{b / best[fmt]:.1%} of a full {fmt} run (1 % new records)"
        else:
            vs = f"{b / best['parquet']:.2f}x the Parquet pipeline"
        print(f"  {scenario:<20} {b:7.2f}  {vs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
