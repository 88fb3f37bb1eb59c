"""kcodec on a real Spark cluster: a standalone master and a worker on 127.0.0.1,
``kcodec pipeline --master spark://...`` and a kafka-segments write/read round
trip, with the records decoded by executors, JVM and Python processes of the
worker's own, not the driver's."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from tests.helpers import spark_cluster as standalone
from tests.helpers.short_jvm import SHORT_LIVED_JVM_OPTIONS
from tests.helpers.spark_expected import expected_rows, python_summary

DRIVER_TIMEOUT_S = 600  # a bound, not an expectation: the driver's JVM, two jobs, the executors' start
pytestmark = pytest.mark.slow  # two JVMs of its own and a driver: minutes on a shared two-core machine

EXECUTOR_CONF = ["--conf", "spark.executor.memory=512m", "--conf", "spark.cores.max=2"]
EXECUTOR_CONF += ["--conf", "spark.executor.extraJavaOptions=" + " ".join(SHORT_LIVED_JVM_OPTIONS)]


@pytest.fixture
def cluster(tmp_path):
    if not standalone.java():
        pytest.skip("Spark needs Java")
    c = standalone.start(tmp_path / "cluster")
    try:
        yield c
    finally:
        standalone.stop(c)
    assert all(p.poll() is not None for p in c.procs)  # no JVM left behind


def _run(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(args, env=standalone.loopback_env(), capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S)


def _digest(rows) -> str:
    """A digest of (topic, partition, offset, key, value) rows, in order."""
    h = hashlib.sha256()
    for topic, partition, offset, key, value in sorted(rows, key=lambda r: (r[0], r[1], r[2])):
        h.update(repr((topic, partition, offset, key, value)).encode())
    return h.hexdigest()


# One driver for both jobs (a driver JVM and the worker's executors start once, not twice): ``kcodec
# pipeline --master spark://...`` as the command runs it, then the write/read round trip on the session the
# pipeline left (getOrCreate: the same application, which the test checks by its id)
_DRIVER = """
import contextlib, hashlib, io, json, os, sys
from kcodec.cli import main
from kcodec.spark.session import local_session

master, src, dest, out = sys.argv[1:5]
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    code = main(["pipeline", "--master", master, *sys.argv[5:], src, dest, "--json"])
if code:
    sys.exit(code)
conf = {"spark.executor.memory": "512m", "spark.cores.max": "2"}
spark = local_session(master, "kcodec cluster round trip", conf=conf)
df = spark.read.format("kafka-segments").load(src)
writer = df.write.format("kafka-segments").mode("overwrite").option("keepOffsets", "true")
writer.option("compression", "zstd").save(out)
back = spark.read.format("kafka-segments").load(out)
rows = [
    (r["topic"], r["partition"], r["offset"], None if r["key"] is None else bytes(r["key"]),
     None if r["value"] is None else bytes(r["value"]))
    for r in back.select("topic", "partition", "offset", "key", "value").collect()
]
h = hashlib.sha256()
for row in sorted(rows, key=lambda r: (r[0], r[1], r[2])):
    h.update(repr(row).encode())
pids = spark.sparkContext.parallelize(range(4), 2).map(lambda _: os.getpid()).distinct().collect()
print(json.dumps({"pipeline": json.loads(printed.getvalue()), "master": spark.sparkContext.master,
                  "app": spark.sparkContext.applicationId, "rows": len(rows), "digest": h.hexdigest(),
                  "codecs": sorted({r["compression"] for r in back.select("compression").distinct().collect()}),
                  "driver_pid": os.getpid(), "task_pids": pids}))
spark.stop()
"""


def test_pipeline_and_round_trip_on_a_standalone_cluster(cluster, samples, tmp_path):
    dest, out = tmp_path / "tables", tmp_path / "copy"
    run = _run([sys.executable, "-c", _DRIVER, cluster.url, str(samples), str(dest), str(out), *EXECUTOR_CONF])
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    summary = result["pipeline"]
    assert summary["master"] == cluster.url
    want = python_summary(samples)
    got = {f"{p['topic']}-{p['partition']}": p for p in summary["partitions"]}
    assert set(got) == set(want)
    for name, w in want.items():
        for k, v in w.items():
            assert got[name][k] == v, (name, k)
    assert (dest / "records").is_dir() and (dest / "batches").is_dir()

    assert result["master"] == cluster.url
    want_rows = [(r[2], r[3], r[4], r[0], r[1]) for r in expected_rows(samples)]
    assert result["rows"] == len(want_rows)
    assert result["digest"] == _digest(want_rows)
    assert result["codecs"] == ["zstd"]
    assert result["driver_pid"] not in result["task_pids"]  # executors' Python workers, not the driver's
    # the worker ran the executors of that one application: the pipeline's, which the round trip reused
    assert [p.name for p in cluster.apps()] == [result["app"]]
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == sorted(want)
