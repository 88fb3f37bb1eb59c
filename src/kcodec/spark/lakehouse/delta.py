"""Delta Lake tables through the ``deltalake`` package (delta-rs).

A table is a folder in DEST, partitioned by topic (Delta's partition values live in the log, not in the
data files, so Spark writes the files partitioned by topic); the data files Spark wrote are added in one
commit whose info carries kcodec's offsets. The commit is not retried (``max_commit_retries=0``): when
another commit took the next version first, this one fails and commits nothing.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import unquote

from kcodec.spark.lakehouse.offsets import decode
from kcodec.spark.lakehouse.state import (
    MODE_KEY,
    OFFSETS_KEY,
    RUN_KEY,
    RUN_PREFIX,
    STREAM_KEY,
    ConcurrentCommitError,
    MissingTableLibraryError,
    TableState,
)

__all__ = ["DeltaLakeTable", "PARTITION_COLUMNS"]

#: Delta partition columns are left out of the data files; Spark writes them as directory names
PARTITION_COLUMNS = ("topic",)
#: the commits a run reads first for the newest kcodec commit (the whole log only when it is not among them)
_RECENT_COMMITS = 10


def _deltalake():
    try:
        import deltalake
    except ImportError:
        raise MissingTableLibraryError("deltalake", "delta") from None
    return deltalake


class DeltaLakeTable:
    """One Delta table (``DEST/<name>``) of a pipeline's DEST."""

    format = "delta"

    def __init__(self, dest: str, name: str = "records"):
        _deltalake()
        self.path = os.path.join(os.path.abspath(dest), name)
        self.table: Any = None

    @property
    def name(self) -> str:
        return self.path

    @property
    def data_root(self) -> str:
        return os.path.join(self.path, "data")

    def load(self) -> TableState:
        dl = _deltalake()
        try:
            self.table = dl.DeltaTable(self.path)
        except dl.exceptions.TableNotFoundError:
            self.table = None
            return TableState(False)
        state = TableState(True, version=str(self.table.version()))
        # The log holds one commit per run: reading all of it each run grows with the table's age. The
        # newest kcodec commit is among the last few; the runs the current files come from are known
        # without the log, and only a run folder none of them is in (a killed run's, or one whose files a
        # later commit replaced) needs the whole history to tell which.
        recent = self.table.history(_RECENT_COMMITS)
        referenced = self._current_runs()
        unknown = self._run_folders() - referenced
        history = self.table.history() if unknown or not any(OFFSETS_KEY in i for i in recent) else recent
        found = False
        for info in history:  # newest first
            if OFFSETS_KEY in info and not found:
                state.offsets = decode(info[OFFSETS_KEY])
                state.mode = info.get(MODE_KEY)
                state.stream_batch = info.get(STREAM_KEY)
                found = True
            if info.get(RUN_KEY):
                state.run_ids.add(info[RUN_KEY])
        state.run_ids |= referenced
        return state

    def _current_runs(self) -> set[str]:
        """The runs whose folders the current version's files are in."""
        runs = set()
        for uri in self.table.file_uris():
            relative = os.path.relpath(unquote(uri.removeprefix("file://")), self.data_root)
            head = relative.split(os.sep, 1)[0]
            if head.startswith(RUN_PREFIX):
                runs.add(head[len(RUN_PREFIX) :])
        return runs

    def _run_folders(self) -> set[str]:
        try:
            names = os.listdir(self.data_root)
        except FileNotFoundError:
            return set()
        return {n[len(RUN_PREFIX) :] for n in names if n.startswith(RUN_PREFIX)}

    def create(self, schema) -> TableState:
        dl = _deltalake()
        try:
            dl.DeltaTable.create(self.path, schema=schema, partition_by=list(PARTITION_COLUMNS), mode="error")
        except Exception as exc:  # delta-rs: a table another run created meanwhile is loaded instead
            if "exists" not in str(exc).lower():
                raise
        return self.load()

    def commit(self, files: list[str], properties: dict[str, str]) -> str:
        """Add ``files`` (under the table's folder) in one commit whose info carries ``properties``."""
        from deltalake.exceptions import CommitFailedError
        from deltalake.transaction import CommitProperties

        assert self.table is not None
        actions = [self._add_action(f) for f in files]
        try:
            self.table.create_write_transaction(
                actions,
                "append",
                self.table.schema(),
                partition_by=list(PARTITION_COLUMNS),
                commit_properties=CommitProperties(custom_metadata=dict(properties), max_commit_retries=0),
            )
        except CommitFailedError as exc:
            raise ConcurrentCommitError(
                f"{self.path}: another run committed version {int(self.table.version()) + 1} since this run read "
                f"the table; this run committed nothing ({str(exc).splitlines()[0]})"
            ) from None
        self.table.update_incremental()
        return str(self.table.version())

    def upsert(self, latest, properties: dict[str, str]) -> str:
        """A Delta merge on (topic, partition, key): a tombstone (null value) deletes the key, another record
        replaces or inserts it; one commit."""
        from deltalake.exceptions import CommitFailedError
        from deltalake.transaction import CommitProperties

        assert self.table is not None
        if latest.num_rows == 0:
            return self.commit([], properties)
        try:
            (
                self.table.merge(
                    latest,
                    predicate="t.topic = s.topic AND t.partition = s.partition AND t.key = s.key",
                    source_alias="s",
                    target_alias="t",
                    commit_properties=CommitProperties(custom_metadata=dict(properties), max_commit_retries=0),
                )
                .when_matched_delete(predicate="s.value IS NULL")
                .when_matched_update_all()
                .when_not_matched_insert_all(predicate="s.value IS NOT NULL")
                .execute()
            )
        except CommitFailedError as exc:
            raise ConcurrentCommitError(
                f"{self.path}: another run committed since this run read the table; this run committed nothing "
                f"({str(exc).splitlines()[0]})"
            ) from None
        self.table.update_incremental()
        return str(self.table.version())

    def append_rows(self, rows, properties: dict[str, str]) -> str:
        """``rows`` (Arrow) appended by delta-rs's own writer, in one commit (the side table of rejected rows)."""
        from deltalake.transaction import CommitProperties

        _deltalake().write_deltalake(
            self.path,
            rows,
            mode="append",
            partition_by=list(PARTITION_COLUMNS),
            commit_properties=CommitProperties(custom_metadata=dict(properties), max_commit_retries=0),
        )
        self.table = _deltalake().DeltaTable(self.path)
        return str(self.table.version())

    def _add_action(self, path: str):
        import pyarrow.parquet as pq
        from deltalake.transaction import AddAction

        relative = os.path.relpath(path, self.path).replace(os.sep, "/")
        values: dict[str, str | None] = {}
        for part in relative.split("/")[:-1]:
            name, eq, value = part.partition("=")
            if eq and name in PARTITION_COLUMNS:  # Spark's partition folders
                values[name] = None if value == "__HIVE_DEFAULT_PARTITION__" else unquote(value)
        meta = pq.read_metadata(path)
        stat = os.stat(path)
        stats = json.dumps({"numRecords": meta.num_rows})
        return AddAction(relative, stat.st_size, values, int(stat.st_mtime * 1000), True, stats)

    def data_files(self) -> list[str]:
        assert self.table is not None
        return [unquote(u.removeprefix("file://")) for u in self.table.file_uris()]
