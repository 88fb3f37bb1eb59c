"""Apache Iceberg tables through pyiceberg: an embedded SQLite catalog in DEST by default, any catalog
pyiceberg loads from a URI otherwise (REST, SQL, Hive ...).

Tables are partitioned by topic and by the day of the record timestamp, sorted by partition and
offset, with Iceberg field ids; data files written elsewhere (Spark's) are added with ``add_files``:
each file holds one topic and one day, so pyiceberg reads its partition from the file's statistics.
The commit fails rather than retries when another commit came first (``commit.retry.num-retries=0``):
the snapshot a run read is the one it commits on top of.
"""

from __future__ import annotations

from typing import Any

from kcodec.log.names import TABLE_CATALOG_FILE, TABLE_CATALOG_NAME, TABLE_NAMESPACE
from kcodec.spark.lakehouse.offsets import decode
from kcodec.spark.lakehouse.state import (
    MODE_KEY,
    OFFSETS_KEY,
    RUN_KEY,
    STREAM_KEY,
    ConcurrentCommitError,
    MissingTableLibraryError,
    TableState,
)

__all__ = ["IcebergTable", "NAMESPACE", "default_catalog_uri"]

NAMESPACE = TABLE_NAMESPACE
CATALOG_FILE = TABLE_CATALOG_FILE


def default_catalog_uri(dest: str) -> str:
    """The embedded catalog: a SQLite file in DEST."""
    import os

    return f"sqlite:///{os.path.join(os.path.abspath(dest), CATALOG_FILE)}"


class IcebergTable:
    """One Iceberg table (``kcodec.<name>``) of a pipeline's DEST."""

    format = "iceberg"

    def __init__(self, dest: str, name: str = "records", catalog_uri: str | None = None):
        import os

        try:
            from pyiceberg.catalog import load_catalog
        except ImportError:
            raise MissingTableLibraryError("pyiceberg", "iceberg") from None
        self.dest = os.path.abspath(dest)
        self.identifier = f"{NAMESPACE}.{name}"
        uri = catalog_uri or default_catalog_uri(self.dest)
        props: dict[str, Any] = {"uri": uri}
        if uri.startswith(("sqlite:", "postgresql", "mysql")):
            props["warehouse"] = f"file://{self.dest}"
            os.makedirs(self.dest, exist_ok=True)
        self.catalog = load_catalog(TABLE_CATALOG_NAME, **props)
        self.location = os.path.join(self.dest, name) if catalog_uri is None else None
        self.table: Any = None

    @property
    def name(self) -> str:
        return self.identifier

    @property
    def data_root(self) -> str:
        """Where runs write their data files: the table's data folder."""
        from urllib.parse import unquote, urlparse

        assert self.table is not None, "load() or create() first"
        location = self.table.location().rstrip("/")
        if location.startswith("file:"):
            location = unquote(urlparse(location).path)
        return location + "/data"

    def load(self) -> TableState:
        from pyiceberg.exceptions import NoSuchTableError

        try:
            self.table = self.catalog.load_table(self.identifier)
        except NoSuchTableError:
            self.table = None
            return TableState(False)
        state = TableState(True)
        snapshot = self.table.current_snapshot()
        state.version = None if snapshot is None else str(snapshot.snapshot_id)
        while snapshot is not None:  # the newest snapshot kcodec committed (others may be a user's)
            props = snapshot.summary.additional_properties if snapshot.summary else {}
            if OFFSETS_KEY in props:
                state.offsets = decode(props[OFFSETS_KEY])
                state.mode = props.get(MODE_KEY)
                state.stream_batch = props.get(STREAM_KEY)
                break
            snapshot = (
                None if snapshot.parent_snapshot_id is None else self.table.snapshot_by_id(snapshot.parent_snapshot_id)
            )
        for s in self.table.snapshots():
            run = (s.summary.additional_properties if s.summary else {}).get(RUN_KEY)
            if run:
                state.run_ids.add(run)
        return state

    def create(self, schema) -> TableState:
        """The table, for records of this Arrow ``schema``: partitioned by topic and day, sorted by partition
        and offset. A table another run created meanwhile is loaded instead."""
        from pyiceberg.exceptions import TableAlreadyExistsError
        from pyiceberg.transforms import DayTransform, IdentityTransform

        self.catalog.create_namespace_if_not_exists(NAMESPACE)
        kwargs: dict[str, Any] = {"properties": {"commit.retry.num-retries": "0"}}
        if self.location is not None:
            kwargs["location"] = self.location
        try:
            tx = self.catalog.create_table_transaction(self.identifier, schema=schema, **kwargs)
            names = set(schema.names)
            with tx.update_spec() as spec:
                if "topic" in names:
                    spec.add_field("topic", IdentityTransform(), "topic")
                if "timestamp" in names:
                    spec.add_field("timestamp", DayTransform(), "timestamp_day")
            with tx.update_sort_order() as order:
                for column in ("partition", "offset"):
                    if column in names:
                        order.asc(column, IdentityTransform())
            tx.commit_transaction()
        except TableAlreadyExistsError:
            pass
        return self.load()

    def commit(self, files: list[str], properties: dict[str, str]) -> str:
        """Add ``files`` in one snapshot whose summary carries ``properties``; the snapshot id."""
        from pyiceberg.exceptions import CommitFailedException

        assert self.table is not None
        try:
            self.table.add_files(files, snapshot_properties=properties, check_duplicate_files=False)
        except CommitFailedException as exc:
            raise ConcurrentCommitError(
                f"{self.identifier}: another run committed since this run read the table; this run committed "
                f"nothing ({str(exc).splitlines()[0] if str(exc) else 'commit failed'})"
            ) from None
        snapshot = self.table.current_snapshot()
        return str(snapshot.snapshot_id) if snapshot is not None else "-"

    def upsert(self, latest, properties: dict[str, str]) -> str:
        """Copy-on-write in one commit: the rows of every (topic, partition, key) in ``latest`` deleted, then
        ``latest``'s rows that are not tombstones (null value) appended."""
        import pyarrow.compute as pc
        from pyiceberg import expressions
        from pyiceberg.exceptions import CommitFailedException

        e: Any = expressions  # its pydantic models' constructors are beyond mypy

        assert self.table is not None
        tx = self.table.transaction()
        keys: dict[tuple[str, int], set[bytes]] = {}
        for r in latest.select(["topic", "partition", "key"]).to_pylist():
            keys.setdefault((r["topic"], r["partition"]), set()).add(r["key"])
        matches = [
            e.And(e.EqualTo("topic", topic), e.EqualTo("partition", partition), e.In("key", group))
            for (topic, partition), group in sorted(keys.items())
        ]
        live = latest.filter(pc.is_valid(latest.column("value")))
        if matches and self.table.current_snapshot() is not None:
            tx.delete(e.Or(*matches) if len(matches) > 1 else matches[0], snapshot_properties=properties)
        if live.num_rows:
            tx.append(live.cast(self.table.schema().as_arrow()), snapshot_properties=properties)
        elif not matches or self.table.current_snapshot() is None:
            tx.add_files([], snapshot_properties=properties)  # offsets still move on
        try:
            tx.commit_transaction()
        except CommitFailedException as exc:
            raise ConcurrentCommitError(
                f"{self.identifier}: another run committed since this run read the table; this run committed "
                f"nothing ({str(exc).splitlines()[0] if str(exc) else 'commit failed'})"
            ) from None
        snapshot = self.table.current_snapshot()
        return str(snapshot.snapshot_id) if snapshot is not None else "-"

    def append_rows(self, rows, properties: dict[str, str]) -> str:
        """``rows`` (Arrow) appended by pyiceberg's own writer, in one commit (the side table of rejected rows)."""
        assert self.table is not None
        self.table.append(rows.cast(self.table.schema().as_arrow()), snapshot_properties=properties)
        snapshot = self.table.current_snapshot()
        return str(snapshot.snapshot_id) if snapshot is not None else "-"

    def data_files(self) -> list[str]:
        """The data files of the current snapshot."""
        assert self.table is not None
        return [task.file.file_path for task in self.table.scan().plan_files()]
