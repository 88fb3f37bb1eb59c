"""The opt-in rows of Schema Registry framed Avro values in Spark (they start Spark: minutes), on one
segment of the benchmark's records as framed Avro values (:func:`kcodec.bench.value_rows.framed_values`)
with their schema in a ``GET /schemas`` export beside it:

- ``spark_avro_values``: ``kcodec local[1]`` reads the topic with ``valueFormat=confluent`` and writes its
  typed ``value`` column to Spark's ``noop`` sink; ``primitive`` is fastavro's own ``schemaless_reader``
  loop over the same payloads on one core, run in the same process in turn with each Spark run (the
  machine's other work lands on both). The issue's target: the first at least half the
  second. ``kcodec local[1], value as bytes`` reads the same ``value`` column undecoded: the source's own
  cost, which the typed read includes.
- ``pipeline_avro_values``: ``kcodec local[1]`` is ``kcodec pipeline --no-sizes --value-format confluent``
  (the records and batches tables, then the values table); ``kcodec local[1], no decoding`` the same
  pipeline without ``--value-format``. The target: the first at least half the second.

Each Spark measurement runs in a fresh process (a fresh ``local[1]``), one warm-up run first."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kcodec.bench.runner import Result

OPERATIONS = {
    "spark_avro_values": "framed Avro values (a record of key, value, timestamp and a decimal) read as the typed "
    "value column by the kafka-segments source (valueFormat=confluent, to the noop sink), local[1]; primitive: "
    "fastavro's schemaless_reader loop over the same payloads on one core; 'value as bytes': the same read undecoded",
    "pipeline_avro_values": "kcodec pipeline --no-sizes --value-format confluent on the same segment, local[1]; "
    "'no decoding': the same pipeline without --value-format",
}
SPARK = "kcodec local[1]"
PLAIN_PIPELINE = "kcodec local[1], no decoding"
BYTES_READ = "kcodec local[1], value as bytes"
TOPIC = "bench"
_MODES = {  # (operation, implementation) -> what the child process times
    ("spark_avro_values", SPARK): "typed_read",
    ("spark_avro_values", BYTES_READ): "bytes_read",
    ("pipeline_avro_values", SPARK): "typed_pipeline",
    ("pipeline_avro_values", PLAIN_PIPELINE): "plain_pipeline",
}
TARGET = 0.5


def make_workload(directory: Path, records: int) -> Path:
    """The log directory (``bench-0`` and ``schemas.json``) of ``records`` framed Avro values, reused when
    present."""
    from kcodec.bench import value_rows
    from kcodec.log.writer import SegmentWriter
    from kcodec.records.encode import NewRecord, encode_batch

    root = directory / f"avro-values-{records}"
    if (root / "schemas.json").exists():
        return root
    w, values = _values(records)
    with SegmentWriter(root / f"{TOPIC}-0") as out:
        for start in range(0, records, 1_000):
            end = min(start + 1_000, records)
            batch = [NewRecord(key=w.keys[i], value=values[i], timestamp=w.timestamps[i]) for i in range(start, end)]
            out.append(encode_batch(batch, base_offset=start))
    export = [
        {
            "subject": f"{TOPIC}-value",
            "version": 1,
            "id": value_rows.SCHEMA_ID,
            "schemaType": "AVRO",
            "schema": json.dumps(value_rows.SCHEMA),
        }
    ]
    (root / "schemas.json.tmp").write_text(json.dumps(export))
    (root / "schemas.json.tmp").rename(root / "schemas.json")  # last: a workload cut short is made again
    return root


def _values(records: int) -> tuple:
    """The workload and its framed Avro values (the same every time: the workload's seed is fixed)."""
    from kcodec.bench import value_rows
    from kcodec.bench.workload import build_workload

    w = build_workload(records, 1_000, codecs=("none",))
    return w, value_rows.framed_values(w)


def fastavro_loop(records: int) -> Callable[[], float]:
    """fastavro's own ``schemaless_reader`` loop over the workload's payloads, as a function giving the
    seconds of one run."""
    import fastavro

    from kcodec.bench import value_rows
    from kcodec.values.frame import HEADER_SIZE

    schema = fastavro.parse_schema(value_rows.SCHEMA)
    payloads = [v[HEADER_SIZE:] for v in _values(records)[1]]
    read = fastavro.schemaless_reader

    def run() -> float:
        t = time.perf_counter()
        for p in payloads:
            read(io.BytesIO(p), schema, None)
        return time.perf_counter() - t

    return run


def measure_in_spark(root: str, mode: str, runs: int, warmup: int = 1) -> dict:
    """In a fresh process: seconds per run of ``mode`` (see :data:`_MODES`) in ``local[1]``."""
    from kcodec.spark.session import local_session

    spark = local_session("local[1]", "kcodec bench", conf={"spark.sql.shuffle.partitions": "1"})
    schemas = str(Path(root) / "schemas.json")
    reader = spark.read.format("kafka-segments").option("subscribe", TOPIC).option("schemas", schemas)
    rows = reader.load(root).count()
    if mode in ("typed_read", "bytes_read"):
        value_format = "confluent" if mode == "typed_read" else "binary"
        df = reader.option("valueFormat", value_format).load(root).select("value")

        def job() -> int:
            df.write.format("noop").mode("overwrite").save()
            return rows

    elif mode in ("typed_pipeline", "plain_pipeline"):
        from kcodec.spark.pipeline import run_pipeline

        dest = tempfile.mkdtemp(prefix="kcodec-bench-values-")
        value_format = "confluent" if mode == "typed_pipeline" else "binary"

        def job() -> int:
            summary = run_pipeline(
                root, dest, spark=spark, sizes=False, options={"schemas": schemas}, value_format=value_format
            )
            if value_format == "confluent" and sum(t.decoded for t in summary.value_tables) != rows:
                raise AssertionError(f"the values table decoded {summary.value_tables} of {rows} rows")
            return sum(p.rows for p in summary.partitions)

    else:
        raise ValueError(f"unknown mode {mode!r}")
    # the typed read's reference, fastavro's own loop, runs in turn with it: whatever else the machine does
    # lands on both
    loop = fastavro_loop(rows) if mode == "typed_read" else None
    times: list[float] = []
    loop_times: list[float] = []
    for i in range(runs + warmup):
        t = time.perf_counter()
        got = job()
        if got != rows:
            raise AssertionError(f"{mode} handled {got} rows, the source holds {rows}")
        if i >= warmup:
            times.append(time.perf_counter() - t)
            if loop is not None:
                loop_times.append(loop())
    spark.stop()
    return {"rows": rows, "seconds": times, "loop_seconds": loop_times}


def _child(root: Path, mode: str, runs: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "kcodec.bench.spark_value_rows", str(root), mode, str(runs)],
        capture_output=True,
        text=True,
    )
    if out.returncode:
        lines = [line for line in out.stderr.strip().splitlines() if line.strip()]
        return {"error": lines[-1] if lines else f"exit status {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(operations: list[str], records: int, runs: int, say: Callable[[str], None]) -> list[Result]:
    """The rows of ``operations``; ``n/a`` rows when pyspark or fastavro is not installed."""
    wanted = [(op, impl) for op, impl in [("spark_avro_values", "primitive"), *_MODES] if op in operations]
    missing = []
    for module in ("pyspark", "fastavro"):
        try:
            __import__(module)
        except ImportError as exc:
            missing.append(f"needs {module} ({exc})")
    if missing:
        return [Result(impl, op, "none", records, status="n/a", reason="; ".join(missing)) for op, impl in wanted]
    root = make_workload(Path(tempfile.gettempdir()) / "kcodec-spark-bench", records)
    size = (root / f"{TOPIC}-0" / "00000000000000000000.log").stat().st_size
    out = []
    loop = None  # the primitive row: timed by the typed read's child, in turn with it
    for op, impl in wanted:
        r = Result(impl, op, "none", records, size)
        out.append(r)
        if impl == "primitive":
            loop = r
            continue
        say(f"{op} ({impl}): {records:,} framed Avro values, {runs} run(s)")
        m = _child(root, _MODES[(op, impl)], runs)
        if "error" in m:
            r.status, r.reason = "error", m["error"]
        else:
            r.records, r.times = m["rows"], list(m["seconds"])
        if loop is not None and _MODES[(op, impl)] == "typed_read":
            loop.records, loop.times = r.records, list(m.get("loop_seconds", ()))
            loop.status, loop.reason = r.status, r.reason
    return out


def targets(ix: dict, check) -> None:
    """The issue's two value targets, when those (opt-in) rows ran."""
    for op, reference, what in (
        ("spark_avro_values", "primitive", "Avro values decoded in the Spark source vs fastavro's own loop"),
        ("pipeline_avro_values", PLAIN_PIPELINE, "pipeline with typed values vs the pipeline without decoding"),
    ):
        r, ref = ix.get((SPARK, op, "none")), ix.get((reference, op, "none"))
        if r is None or ref is None:
            continue
        v = r.records_per_s / ref.records_per_s if r.ok and ref.ok else None
        bad = r if not r.ok else ref
        why = "" if v is not None else (f"{bad.status}: {bad.reason}" if bad.reason else bad.status)
        check(what, "none", v, f">= {TARGET}x", None if v is None else v >= TARGET, why)


def main(argv: list[str]) -> int:
    root, mode, runs = argv
    print(json.dumps(measure_in_spark(root, mode, int(runs))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
