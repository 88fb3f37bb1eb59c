"""The kafka-segments writer's driver and task logic without a Spark session (issue 22, classes 1
and 2): names from rows and options are held to Kafka's rules before they become paths; two jobs on
one path fail naming the other, and a crashed job does not hold the path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import pyarrow as pa

from kcodec.log.commit import COMMIT_RECORD, PathBusyError
from kcodec.log.fs import LocalFS
from kcodec.log.names import BadNameError
from kcodec.records.reader import read_batches
from kcodec.spark.write import WriteOptions, abort_job, commit_job, new_job_id, start_job, write_task


def _table(rows):
    return pa.table(
        {
            "topic": [t for t, _, _ in rows],
            "partition": pa.array([p for _, p, _ in rows], pa.int64()),
            "value": [v for _, _, v in rows],
        }
    )


def _write(root: Path, rows, overwrite: bool, **opts):
    options = WriteOptions(path=str(root), records_per_batch=2, segment_bytes=200, **opts)
    job = new_job_id()
    chunks = write_task(iter(_table(rows).to_batches()), options, job, task=0, attempt=0)
    return options, job, chunks


@pytest.mark.parametrize(
    ("topic", "partition"),
    [("../../../victim", 0), ("a/b", 0), ("..", 0), ("", 0), ("t", -1), ("t", 2147483647), ("t", 3)],
)
def test_row_names_kafka_refuses_never_become_paths(tmp_path, topic, partition):
    root = tmp_path / "deep" / "er" / "out"
    before = sorted(p for p in tmp_path.rglob("*"))
    with pytest.raises(BadNameError) as exc:
        _write(root, [(topic, partition, b"v")], overwrite=True, num_partitions=3)
    assert str(exc.value).startswith("kafka-segments: ") and "\n" not in str(exc.value)
    created = [p for p in tmp_path.rglob("*") if p not in before]
    assert all(str(p).startswith(str(root)) for p in created), created  # nothing outside the target
    assert not [p for p in created if "victim" in p.name or p.name in ("a", "b")]


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"topic": "../x"}, "characters"),
        ({"topic": ".."}, "'.' or '..'"),
        ({"topic": "t", "partition": "2147483647"}, "outside"),
        ({"topic": "t", "partition": "4", "numPartitions": "4"}, "numPartitions=4"),
    ],
)
def test_write_options_with_names_kafka_refuses_fail_at_save(tmp_path, options, match):
    with pytest.raises(ValueError, match=match):
        WriteOptions.from_options({"path": str(tmp_path), **options})


# ----------------------------------------------------------------------------- one job at a time


def _plain_state(root: Path) -> dict:
    return {
        d.name: [r.value for f in sorted(d.glob("*.log")) for b in read_batches(f) for r in b.records]
        for d in sorted(root.iterdir())
        if d.is_dir() and not d.name.startswith("_")
    }


def test_two_jobs_on_one_path_fail_naming_the_other(tmp_path):
    root = tmp_path / "out"
    first = WriteOptions(path=str(root), records_per_batch=2)
    job1, job2 = new_job_id(), new_job_id()
    start_job(first, job1)
    chunks = write_task(iter(_table([("t", 0, b"one")]).to_batches()), first, job1, task=0, attempt=0)
    with pytest.raises(PathBusyError) as exc:
        start_job(first, job2)
    message = str(exc.value)
    assert job1 in message and "\n" not in message
    # the first job's staging is intact and it commits
    commit_job(chunks, first, job1, False)
    assert _plain_state(root) == {"t-0": [b"one"]}
    # once it is over, the path is free again
    start_job(first, job2)
    abort_job(first, job2)
    assert sorted(os.listdir(root)) == ["t-0"]


def test_a_crashed_job_does_not_hold_the_path(tmp_path):
    root = tmp_path / "out"
    opts = WriteOptions(path=str(root), records_per_batch=2)
    crashed = new_job_id()
    write_task(iter(_table([("t", 0, b"lost")]).to_batches()), opts, crashed, task=0, attempt=0)  # no driver lock
    job = new_job_id()
    start_job(opts, job)  # the crashed job's staging is rolled back, not mistaken for a live job
    assert not (root / "_kcodec_staging" / crashed).exists()
    abort_job(opts, job)
    assert not (root / COMMIT_RECORD).exists()
    assert LocalFS().list(str(root)) == []
