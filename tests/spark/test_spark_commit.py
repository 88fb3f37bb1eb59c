"""The kafka-segments writer's commit is one visible step: killed after any of
its steps, kcodec's Partition and the Spark reader see the old state or the
new one (never a mix), and the next writer finishes or undoes the commit,
leaving ordinary partition directories and no staging. A reader that does not
know the commit record (a broker on a copy of the directory) sees each
partition directory whole, old or new, and never old data under a name a
broker deletes (docs/spark.md: Limits)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import pyarrow as pa

from kcodec.log import commit as commit_module
from kcodec.log.commit import COMMIT_RECORD
from kcodec.log.names import DELETE_SUFFIX
from kcodec.log.partition import Partition, list_partitions
from kcodec.records.reader import read_batches
from kcodec.spark.write import WriteOptions, abort_job, commit_job, new_job_id, recover_path, write_task

FORMAT = "kafka-segments"
SEGMENT_FILE = re.compile(r"\d{20}\.(log|index|timeindex|txnindex)")


class Killed(BaseException):
    """Stands for kill -9: nothing after it runs (no except/finally cleanup catches it)."""


def _stage(root: Path, rows: list[tuple[str, int, bytes]], overwrite: bool):
    """Run the tasks of a job writing ``rows`` (topic, partition, value): (options, job, chunks)."""
    opts = WriteOptions(path=str(root), records_per_batch=2, segment_bytes=200)
    job = new_job_id()
    table = pa.table(
        {
            "topic": [t for t, _, _ in rows],
            "partition": pa.array([p for _, p, _ in rows], pa.int32()),
            "value": [v for _, _, v in rows],
        }
    )
    chunks = write_task(iter(table.to_batches()), opts, job, task=0, attempt=0)
    return opts, job, chunks


def _commit(root: Path, rows, overwrite: bool) -> None:
    opts, job, chunks = _stage(root, rows, overwrite)
    commit_job(chunks, opts, job, overwrite)


def _state(root: Path) -> dict:
    """(topic, partition) -> [(offset, value)] as kcodec's Partition reads it."""
    out = {}
    for part in list_partitions(root):
        records = [(r.offset, r.value) for b in part.iter_batches() for r in b.records]
        if records:
            out[(part.topic, part.partition)] = records
    return out


def _plain_state(root: Path) -> dict:
    """What a reader that does not know the commit record sees: each <topic>-<n> directory's .log
    files, read as they are (a broker deletes <name>.<id>-delete directories at start-up)."""
    out = {}
    for d in sorted(root.iterdir()):
        if not d.is_dir() or d.name.startswith("_") or d.name.endswith(DELETE_SUFFIX):
            continue
        out[d.name] = [r.value for f in sorted(d.glob("*.log")) for b in read_batches(f) for r in b.records]
    return out


def _spark_state(spark, root: Path) -> dict:
    from kcodec.spark import register

    register(spark)
    out: dict = {}
    rows = spark.read.format(FORMAT).load(str(root)).select("topic", "partition", "offset", "value").collect()
    for r in sorted(rows, key=lambda r: (r.topic, r.partition, r.offset)):
        out.setdefault((r.topic, r.partition), []).append((r.offset, bytes(r.value)))
    return out


def _rows(tag: str, tps: list[tuple[str, int]], n: int) -> list[tuple[str, int, bytes]]:
    return [(t, p, b"%s %s-%d #%d" % (tag.encode(), t.encode(), p, i)) for i in range(n) for t, p in tps]


def _assert_plain_layout(root: Path) -> None:
    """Only partition directories holding Kafka-named files: no staging, record or retired directory."""
    for name in os.listdir(root):
        assert re.fullmatch(r"[a-z]+-\d+", name), name
        for f in os.listdir(root / name):
            assert SEGMENT_FILE.fullmatch(f), f"{name}/{f}"


OLD = [("a", 0), ("a", 1), ("b", 0)]


@pytest.mark.parametrize("overwrite", [True, False], ids=["overwrite", "append"])
def test_commit_killed_after_each_step(spark, tmp_path, monkeypatch, overwrite):
    initial = tmp_path / "initial"
    _commit(initial, _rows("old", OLD, 7), overwrite=False)
    old = _state(initial)
    # overwrite drops b-0 and creates c-0; append extends a-0/a-1 and creates c-0
    new_rows = _rows("new", [("a", 0), ("a", 1), ("c", 0)], 5)
    expected_dir = tmp_path / "expected"
    shutil.copytree(initial, expected_dir)
    _commit(expected_dir, new_rows, overwrite)
    new = _state(expected_dir)
    assert new != old
    plain_old, plain_new = _plain_state(initial), _plain_state(expected_dir)

    steps_seen = 0
    for k in range(1, 100):  # bounded: the commit has far fewer steps
        root = tmp_path / f"k{k}"
        shutil.copytree(initial, root)
        opts, job, chunks = _stage(root, new_rows, overwrite)
        steps: list[str] = []

        def after_step(step: str, k=k, steps=steps) -> None:
            steps.append(step)
            if len(steps) == k:
                raise Killed(step)

        monkeypatch.setattr(commit_module, "_after_step", after_step)
        try:
            commit_job(chunks, opts, job, overwrite)
        except Killed:
            pass
        else:
            assert _state(root) == new
            break
        finally:
            monkeypatch.undo()
        steps_seen = k
        decided = "record renamed" in steps  # the commit point
        assert (root / COMMIT_RECORD).exists() == (decided and "record removed" not in steps)
        seen = _state(root)
        assert seen == (new if decided else old), f"killed after step {k} ({steps[-1]})"
        assert not [n for n in os.listdir(root) if n.endswith(DELETE_SUFFIX)], f"killed after step {k}"
        plain = _plain_state(root)
        for name in set(plain_old) | set(plain_new):  # each partition whole: old or new
            assert plain.get(name) in (plain_old.get(name), plain_new.get(name)), f"{name}, killed after {steps[-1]}"
        assert _spark_state(spark, root) == seen, f"killed after step {k} ({steps[-1]})"
        # the next writer finishes (or undoes) the commit
        recover_path(WriteOptions(path=str(root)))
        assert _state(root) == seen
        _assert_plain_layout(root)
        if k in (1, 3):  # and writes on top of it, offsets continuing
            _commit(root, _rows("more", [("a", 0)], 3), overwrite=False)
            more = _state(root)[("a", 0)]
            assert more[: len(seen[("a", 0)])] == seen[("a", 0)]
            assert [o for o, _ in more] == list(range(len(seen[("a", 0)]) + 3))
    assert steps_seen >= 5  # the kill reached every step: record written and renamed, moves, removals


def test_abort_after_the_commit_point_publishes(tmp_path, monkeypatch):
    """A job whose commit record is written is decided: an abort (Spark calls it
    when commit raises) publishes it rather than deleting what the record names."""
    root = tmp_path / "out"
    _commit(root, _rows("old", OLD, 4), overwrite=False)
    opts, job, chunks = _stage(root, _rows("new", [("a", 0)], 3), True)

    def after_step(step: str) -> None:
        if step == "record renamed":
            raise OSError("disk went away")

    monkeypatch.setattr(commit_module, "_after_step", after_step)
    with pytest.raises(OSError):
        commit_job(chunks, opts, job, True)
    monkeypatch.undo()
    abort_job(opts, job)
    assert _state(root) == {("a", 0): [(i, b"new a-0 #%d" % i) for i in range(3)]}
    _assert_plain_layout(root)


def test_partition_of_a_committed_but_unpublished_job(tmp_path, monkeypatch):
    """Partition(PATH/t-n) alone (not through a listing) resolves the record too."""
    root = tmp_path / "out"
    opts, job, chunks = _stage(root, _rows("new", [("t", 0)], 3), False)

    def after_step(step: str) -> None:
        if step == "record renamed":
            raise Killed(step)

    monkeypatch.setattr(commit_module, "_after_step", after_step)
    with pytest.raises(Killed):
        commit_job(chunks, opts, job, False)
    monkeypatch.undo()
    assert not (root / "t-0").exists()
    part = Partition(root / "t-0")
    assert part.next_offset() == 3
    assert [r.value for b in part.iter_batches() for r in b.records] == [b"new t-0 #%d" % i for i in range(3)]
