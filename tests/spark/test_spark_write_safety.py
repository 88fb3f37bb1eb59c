"""The kafka-segments writer's driver and task logic without a Spark session (issue 22, classes 1
and 2): names from rows and options are held to Kafka's rules before they become paths; a plain
reader (one that does not know ``_kcodec_commit``, as a broker started on a copy of the directory)
sees each partition old or new at every crash point of the commit, and never old data under a
name a broker deletes; two jobs on one path fail naming the other."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import pyarrow as pa

from kcodec.log import commit as commit_module
from kcodec.log.commit import COMMIT_RECORD, PathBusyError
from kcodec.log.fs import LocalFS
from kcodec.log.names import DELETE_SUFFIX, BadNameError
from kcodec.records.reader import read_batches
from kcodec.spark.write import WriteOptions, abort_job, commit_job, new_job_id, start_job, write_task


class Killed(BaseException):
    """Stands for kill -9: nothing after it runs."""


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


# ----------------------------------------------------------------------------- a plain reader


def _plain_state(root: Path) -> dict:
    """What a reader that does not know the commit record sees: each <topic>-<n> directory's .log files."""
    out = {}
    for name in sorted(os.listdir(root)):
        d = root / name
        if not d.is_dir() or name.startswith("_") or name.endswith(DELETE_SUFFIX):
            continue
        values = []
        for f in sorted(d.iterdir()):
            if f.name.endswith(".log"):
                values += [r.value for b in read_batches(f) for r in b.records]
        out[name] = values
    return out


def _values(tag: str, tp: str, n: int) -> list[bytes]:
    return [b"%s %s #%d" % (tag.encode(), tp.encode(), i) for i in range(n)]


@pytest.mark.parametrize("overwrite", [True, False], ids=["overwrite", "append"])
def test_a_plain_reader_sees_each_partition_old_or_new_at_every_crash_point(tmp_path, monkeypatch, overwrite):
    tps = [("a", 0), ("a", 1)]
    initial = tmp_path / "initial"
    options, job, chunks = _write(initial, [(t, p, v) for t, p in tps for v in _values("old", f"{t}-{p}", 5)], False)
    commit_job(chunks, options, job, False)
    old = _plain_state(initial)
    new_rows = [(t, p, v) for t, p in tps for v in _values("new", f"{t}-{p}", 4)]
    k = 0
    while True:  # bounded: the loop ends when the commit runs through without a kill
        k += 1
        assert k < 100
        root = tmp_path / f"k{k}"
        shutil.copytree(initial, root)
        options, job, chunks = _write(root, new_rows, overwrite)
        steps: list[str] = []

        def after_step(step: str, k=k, steps=steps, root=root) -> None:
            steps.append(step)
            # at every step: no old data under a name a broker deletes at start-up
            assert not [n for n in os.listdir(root) if n.endswith(DELETE_SUFFIX)], step
            seen = _plain_state(root)
            for name, values in old.items():
                new = _values("new", name, 4) if overwrite else values + _values("new", name, 4)
                assert seen.get(name) in (values, new), f"{name} after {step}: {seen.get(name)}"
            if len(steps) == k:
                raise Killed(step)

        monkeypatch.setattr(commit_module, "_after_step", after_step)
        try:
            commit_job(chunks, options, job, overwrite)
        except Killed:
            continue
        finally:
            monkeypatch.undo()
        break
    assert k > 4


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
