"""A table run's commit without Spark (kcodec.spark.lakehouse.run), for Iceberg and Delta: a run killed
(SIGKILL) before or inside its commit leaves the table as it was and its files for the next run to remove;
two runs at once: the second fails with one line and commits nothing; offsets that went backwards are
refused unless allowed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")

from kcodec.log.lock import OutputLockedError
from kcodec.spark.lakehouse.offsets import OffsetsWentBackwardsError
from kcodec.spark.lakehouse.run import TableRun, open_table
from kcodec.spark.lakehouse.state import ConcurrentCommitError
from tests.helpers.lakehouse import SMALL_SCHEMA, small_records, write_run_files

REPO = Path(__file__).resolve().parents[2]
FORMATS = ["iceberg", "delta"]

# a run into DEST killed by SIGKILL at STEP, after writing offsets 10..19 of t-0
_KILLED_RUN = """
import os, signal, sys
sys.path.insert(0, {repo!r})
from kcodec.spark.lakehouse.run import TableRun, open_table
from tests.helpers.lakehouse import SMALL_SCHEMA, small_records, write_run_files
fmt, dest, step = sys.argv[1:4]
table = open_table(fmt, dest)
run = TableRun(table, dest)
run.begin({{("t", 0): 20}}, SMALL_SCHEMA)
write_run_files(fmt, small_records("t", 0, 10, 20), run.data_dir)
if step == "before-commit":
    os.kill(os.getpid(), signal.SIGKILL)
if step == "in-commit":  # Iceberg: manifests and snapshot written, the catalog not yet switched to them
    table.catalog.commit_table = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
run.commit()
"""


def _run(fmt: str, dest: Path, ends: dict, records=None, **kwargs):
    with TableRun(open_table(fmt, str(dest)), str(dest), **kwargs) as run:
        run.begin(ends, SMALL_SCHEMA)
        if records is not None:
            write_run_files(fmt, records, run.data_dir)
        return run.commit()


def _offsets(fmt: str, dest: Path) -> list[int]:
    table = open_table(fmt, str(dest))
    table.load()
    import pyarrow.parquet as pq

    return sorted(o for f in table.data_files() for o in pq.read_table(f, columns=["offset"]).column(0).to_pylist())


# delta-rs writes a commit's log file in one step, from Rust: there is no point inside it to stop at
@pytest.mark.parametrize(
    ("fmt", "step"), [("iceberg", "before-commit"), ("iceberg", "in-commit"), ("delta", "before-commit")]
)
def test_a_killed_run_leaves_the_table_as_it_was(tmp_path, fmt, step):
    dest = tmp_path / "dest"
    first = _run(fmt, dest, {("t", 0): 10}, small_records("t", 0, 0, 10))
    script = _KILLED_RUN.format(repo=str(REPO))
    proc = subprocess.run([sys.executable, "-c", script, fmt, str(dest), step], capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    table = open_table(fmt, str(dest))
    state = table.load()
    assert state.offsets == {("t", 0): 10} and state.version == first.version
    assert _offsets(fmt, dest) == list(range(10))
    runs = os.listdir(table.data_root)
    assert len(runs) == 2  # the first run's and the killed run's
    again = _run(fmt, dest, {("t", 0): 20}, small_records("t", 0, 10, 20))
    assert len(again.orphans_removed) == 1 and again.committed
    assert _offsets(fmt, dest) == list(range(20))
    assert len(os.listdir(table.data_root)) == 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_two_runs_at_once_one_commits(tmp_path, fmt):
    dest = tmp_path / "dest"
    _run(fmt, dest, {("t", 0): 5}, small_records("t", 0, 0, 5))
    # the second run on this machine: DEST's run lock
    with TableRun(open_table(fmt, str(dest)), str(dest)) as run:
        run.begin({("t", 0): 10}, SMALL_SCHEMA)
        with pytest.raises(OutputLockedError, match="another writer"):
            TableRun(open_table(fmt, str(dest)), str(dest)).begin({("t", 0): 10}, SMALL_SCHEMA)
    # runs elsewhere (no shared lock): the commit that comes second fails, naming the race
    a, b = open_table(fmt, str(dest)), open_table(fmt, str(dest))
    a.load(), b.load()
    files_a = write_run_files(fmt, small_records("t", 0, 5, 10), os.path.join(a.data_root, "run-a"))
    files_b = write_run_files(fmt, small_records("t", 0, 5, 10), os.path.join(b.data_root, "run-b"))
    a.commit(files_a, {"kcodec.offsets": '{"t":{"0":10}}', "kcodec.run-id": "a"})
    with pytest.raises(ConcurrentCommitError, match="another run committed") as err:
        b.commit(files_b, {"kcodec.offsets": '{"t":{"0":10}}', "kcodec.run-id": "b"})
    assert "\n" not in str(err.value)
    assert _offsets(fmt, dest) == list(range(10))


@pytest.mark.parametrize("fmt", FORMATS)
def test_offsets_backwards_and_nothing_new(tmp_path, fmt):
    dest = tmp_path / "dest"
    done = _run(fmt, dest, {("t", 0): 10, ("u", 0): 3}, small_records("t", 0, 0, 10))
    nothing = _run(fmt, dest, {("t", 0): 10, ("u", 0): 3})
    assert not nothing.committed and nothing.version == done.version
    with pytest.raises(OffsetsWentBackwardsError, match="t-0 ends at 4, the table holds up to 10"):
        _run(fmt, dest, {("t", 0): 4, ("u", 0): 3})
    moved = _run(fmt, dest, {("t", 0): 4, ("u", 0): 3}, allow_backwards=True)
    assert moved.committed and moved.reset == [("t", 0)] and moved.rows == 0
    state = open_table(fmt, str(dest)).load()
    assert state.offsets == {("t", 0): 4, ("u", 0): 3}
    with pytest.raises(Exception, match="was written with --mode append"):
        _run(fmt, dest, {("t", 0): 4}, mode="upsert")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_run_with_nothing_new_starts_no_spark(tmp_path, fmt, monkeypatch):
    pytest.importorskip("pyspark")
    from kcodec.log.writer import SegmentWriter
    from kcodec.records.encode import NewRecord, encode_batch
    from kcodec.spark import session
    from kcodec.spark.lakehouse.job import run_table_pipeline

    src, dest = tmp_path / "src", tmp_path / "dest"
    with SegmentWriter(src / "t-0") as writer:
        writer.append(encode_batch([NewRecord(key=b"k", value=b"v%d" % i, timestamp=1) for i in range(10)]))
    _run(fmt, dest, {("t", 0): 10}, small_records("t", 0, 0, 10))

    def no_spark(*args, **kwargs):
        raise AssertionError("Spark started for a run with nothing to read")

    monkeypatch.setattr(session, "local_session", no_spark)
    result = run_table_pipeline(str(src), str(dest), table_format=fmt)
    assert not result.committed and result.next_offsets == {("t", 0): 10}


def test_delta_reads_its_whole_log_only_when_it_must(tmp_path):
    """A run reads the last few commits for its offsets; a run folder no current file is in (here: a
    user deleted its rows) sends it through the whole log, and the folder stays (time travel reads it)."""
    from deltalake import DeltaTable
    from deltalake.transaction import CommitProperties

    dest = tmp_path / "dest"
    _run("delta", dest, {("t", 0): 10}, small_records("t", 0, 0, 10))
    table = DeltaTable(str(dest / "records"))
    for i in range(12):  # others' commits after kcodec's: more than a run reads first
        table.create_write_transaction(
            [], "append", table.schema(), commit_properties=CommitProperties(custom_metadata={"by": f"user {i}"})
        )
        table.update_incremental()
    state = open_table("delta", str(dest)).load()
    assert state.offsets == {("t", 0): 10} and len(state.run_ids) == 1
    table.delete("offset < 5")  # rewrites the first run's file: its folder keeps the old one
    again = _run("delta", dest, {("t", 0): 15}, small_records("t", 0, 10, 15))
    assert again.committed and again.ranges == {("t", 0): (10, 15)} and again.orphans_removed == []
    assert _offsets("delta", dest) == list(range(5, 15))
    assert len(os.listdir(open_table("delta", str(dest)).data_root)) == 2
