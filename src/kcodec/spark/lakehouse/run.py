"""A table run's steps on the driver, with or without Spark: lock, orphan files, plan, commit.

1. :meth:`TableRun.begin` takes DEST's run lock (a second run at once fails with one line), loads the
   table (creating it, empty, on the first run), deletes the data folders of runs that were killed before
   they committed, and plans what to read from the stored offsets and the logs' ends.
2. Whoever writes the data files (Spark's executors) writes them under :attr:`TableRun.data_dir`, a folder
   no commit refers to yet: a run killed now leaves the table as it was, and the folder for the next run
   to delete.
3. :meth:`TableRun.commit` adds the files and stores the next offsets in one commit of the table format;
   a commit another run made after step 1 makes it fail and commit nothing.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kcodec.errors import KcodecError
from kcodec.log.lock import OutputLock
from kcodec.spark.lakehouse.offsets import ReadPlan, TopicPartition, encode, plan_read, tp_text
from kcodec.spark.lakehouse.state import MODE_KEY, OFFSETS_KEY, RUN_KEY, RUN_PREFIX, TableState

__all__ = ["Table", "TableRun", "RunResult", "RUN_PREFIX", "open_table", "run_lock"]

#: DEST's run lock: one run writes DEST's tables at a time
LOCK_NAME = ".kcodec-tables.lock"


class Table(Protocol):
    format: str

    @property
    def name(self) -> str: ...
    @property
    def data_root(self) -> str: ...
    def load(self) -> TableState: ...
    def create(self, schema) -> TableState: ...
    def commit(self, files: list[str], properties: dict[str, str]) -> str: ...
    def upsert(self, latest, properties: dict[str, str]) -> str: ...
    def append_rows(self, rows, properties: dict[str, str]) -> str: ...
    def data_files(self) -> list[str]: ...


def run_lock(dest: str) -> OutputLock:
    """DEST's run lock (not taken yet)."""
    os.makedirs(dest, exist_ok=True)
    return OutputLock(Path(dest) / LOCK_NAME)


def open_table(table_format: str, dest: str, name: str = "records", catalog: str | None = None) -> Table:
    """The ``name`` table of DEST in ``table_format`` (iceberg: in ``catalog``, the SQLite file in DEST by
    default)."""
    if table_format == "iceberg":
        from kcodec.spark.lakehouse.iceberg import IcebergTable

        return IcebergTable(dest, name, catalog)
    if table_format == "delta":
        if catalog is not None:
            raise KcodecError("--catalog is Iceberg's: a Delta table is its folder in DEST")
        from kcodec.spark.lakehouse.delta import DeltaLakeTable

        return DeltaLakeTable(dest, name)
    raise KcodecError(f"table format must be iceberg or delta, not {table_format!r}")


@dataclass
class RunResult:
    """What a run did to its table."""

    table: str
    format: str
    mode: str
    committed: bool
    version: str | None  # the snapshot id / table version committed, or the one left as it was
    files: int = 0
    rows: int = 0
    ranges: dict[TopicPartition, tuple[int | None, int]] = field(default_factory=dict)
    next_offsets: dict[TopicPartition, int] = field(default_factory=dict)
    reset: list[TopicPartition] = field(default_factory=list)
    orphans_removed: list[str] = field(default_factory=list)
    rejected: int = 0  # rows put in the side table (upsert: null keys), with the reason
    rejected_table: str | None = None

    def as_dict(self) -> dict:
        """For ``--json``: offsets as ``{"topic-partition": n}``."""
        return {
            "table": self.table,
            "format": self.format,
            "mode": self.mode,
            "committed": self.committed,
            "version": self.version,
            "files": self.files,
            "rows": self.rows,
            "read": {tp_text(tp): {"from": a, "to": b} for tp, (a, b) in sorted(self.ranges.items())},
            "next_offsets": {tp_text(tp): n for tp, n in sorted(self.next_offsets.items())},
            "reset": [tp_text(tp) for tp in self.reset],
            "orphans_removed": self.orphans_removed,
            "rejected": self.rejected,
            "rejected_table": self.rejected_table,
        }


class TableRun:
    """One run into ``table``; ``dest`` is where the run lock lives (DEST, a local folder)."""

    def __init__(
        self,
        table: Table,
        dest: str,
        *,
        mode: str = "append",
        allow_backwards: bool = False,
        run_id: str | None = None,
        side_table: Table | None = None,
        locked: bool = False,
        skip_behind: bool = False,
    ):
        self.table = table
        self.dest = dest
        self.mode = mode
        self.allow_backwards = allow_backwards
        self.run_id = run_id or uuid.uuid4().hex[:16]
        self.state: TableState | None = None
        self.plan: ReadPlan | None = None
        self.orphans_removed: list[str] = []
        self.side_table = side_table  # where upsert puts the rows it cannot place
        self.locked = locked  # the caller holds DEST's run lock (a stream, for its whole life)
        # a stream's micro-batch may end before the table's offsets (another run got further): those
        # partitions are already in the table, not a log gone backwards
        self.skip_behind = skip_behind
        self._lock: OutputLock | None = None

    # -------------------------------------------------------------------- 1. begin

    def begin(self, log_ends: dict[TopicPartition, int], schema) -> ReadPlan:
        """``schema``: the records' Arrow schema, or a function giving it (called only to create the table)."""
        os.makedirs(self.dest, exist_ok=True)
        if not self.locked:
            # OutputLockedError (one line, naming the process) when another run holds it
            self._lock = run_lock(self.dest).acquire()
        state = self.table.load()
        if not state.exists:
            state = self.table.create(schema() if callable(schema) else schema)
        if state.mode is not None and state.mode != self.mode:
            raise KcodecError(
                f"{self.table.name} was written with --mode {state.mode}; this run asks for {self.mode} "
                "(one table, one mode: write the other mode to another DEST)"
            )
        self.state = state
        self.orphans_removed = self._remove_orphans(state)
        if self.skip_behind:
            log_ends = {tp: end for tp, end in log_ends.items() if end >= state.offsets.get(tp, end)}
        self.plan = plan_read(state.offsets, log_ends, allow_backwards=self.allow_backwards)
        return self.plan

    @property
    def data_dir(self) -> str:
        """Where this run's data files go."""
        return os.path.join(self.table.data_root, RUN_PREFIX + self.run_id)

    def _remove_orphans(self, state: TableState) -> list[str]:
        """Data folders of runs no commit refers to: runs killed before committing (under the run lock no
        other run is writing, so none is in progress)."""
        import shutil

        root = self.table.data_root
        if not os.path.isdir(root):
            return []
        removed = []
        for name in sorted(os.listdir(root)):
            if name.startswith(RUN_PREFIX) and name[len(RUN_PREFIX) :] not in state.run_ids:
                shutil.rmtree(os.path.join(root, name), ignore_errors=True)
                removed.append(os.path.join(root, name))
        return removed

    # -------------------------------------------------------------------- 3. commit

    def files(self) -> list[str]:
        """The Parquet data files under :attr:`data_dir` (Spark's ``_SUCCESS`` and checksum files left out)."""
        out = []
        for here, dirs, names in os.walk(self.data_dir):
            dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
            out += [
                os.path.join(here, n) for n in sorted(names) if n.endswith(".parquet") and not n.startswith(("_", "."))
            ]
        return out

    def _result(self) -> RunResult:
        """The run's result before its commit: what it planned, nothing committed yet."""
        assert self.plan is not None and self.state is not None, "begin() first"
        return RunResult(
            self.table.name,
            self.table.format,
            self.mode,
            False,
            self.state.version,
            ranges=dict(self.plan.ranges),
            next_offsets=dict(self.plan.next_offsets),
            reset=list(self.plan.reset),
            orphans_removed=list(self.orphans_removed),
        )

    def _stored(self) -> dict[str, str]:
        """What a commit stores in the table's metadata: the next offsets, the run id and the mode."""
        assert self.plan is not None
        return {OFFSETS_KEY: encode(self.plan.next_offsets), RUN_KEY: self.run_id, MODE_KEY: self.mode}

    def commit(self, properties: dict[str, str] | None = None) -> RunResult:
        """Commit this run's files and the next offsets (and ``properties``, stored beside them), unless
        there is nothing new (then nothing is committed and the run's empty folder goes)."""
        import shutil

        import pyarrow.parquet as pq

        assert self.plan is not None and self.state is not None, "begin() first"
        result = self._result()
        files = self.files()
        if self.plan.nothing_new:
            if files:
                raise KcodecError(f"{self.data_dir}: data files for a run that had nothing to read")
            shutil.rmtree(self.data_dir, ignore_errors=True)
            return result
        result.files = len(files)
        result.rows = sum(pq.read_metadata(f).num_rows for f in files)
        result.version = self.table.commit(files, {**(properties or {}), **self._stored()})
        result.committed = True
        return result

    def commit_upsert(self, latest, rejected=None) -> RunResult:
        """``--mode upsert``: ``latest`` holds, per (topic, partition, key), the newest record of this run's
        offsets (a null value: a tombstone); merged into the table in one commit with the next offsets.
        ``rejected`` rows (with a ``reason`` column) go first to the side table (``side_table``), skipping
        those a killed run already put there (offsets below the side table's stored ones)."""
        assert self.plan is not None and self.state is not None, "begin() first"
        result = self._result()
        if self.plan.nothing_new:
            return result
        properties = self._stored()
        if rejected is not None and rejected.num_rows:
            result.rejected, result.rejected_table = self._reject(rejected, properties)
        result.rows = latest.num_rows
        result.version = self.table.upsert(latest, properties)
        result.committed = True
        return result

    def _reject(self, rejected, properties: dict[str, str]) -> tuple[int, str]:
        import pyarrow as pa

        side = self.side_table
        if side is None:
            raise KcodecError(f"{rejected.num_rows} rows cannot be placed and this run has no side table for them")
        state = side.load()
        if not state.exists:
            state = side.create(rejected.schema)
        done = state.offsets
        if done:
            keep = [
                r["offset"] >= done.get((r["topic"], r["partition"]), -1)
                for r in rejected.select(["topic", "partition", "offset"]).to_pylist()
            ]
            rejected = rejected.filter(pa.array(keep, type=pa.bool_()))
        if rejected.num_rows:
            side.append_rows(rejected, {**properties, MODE_KEY: "append"})
        return rejected.num_rows, side.name

    def close(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> TableRun:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
