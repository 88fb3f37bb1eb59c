"""The internal topics' tables ``kcodec pipeline`` writes beside records and batches, when its source holds
them:

* ``consumer_offsets``, ``groups`` (from ``__consumer_offsets``) and ``transactions`` (``__transaction_state``):
  the ``kafka-segments`` views with ``latest=true``: the committed offsets, groups and transactions as the
  coordinators hold them now (what an operator asks of these topics); the full history stays one
  ``spark.read ... option("view", ...)`` away;
* ``metadata_records`` (``__cluster_metadata``): the ``metadata`` view, every record of the log and its
  snapshots;
* ``metadata_image/<table>``: the cluster image at the end of the log (:mod:`kcodec.internal_topics.metadata.tables`),
  replayed on the driver one batch at a time.
"""

from __future__ import annotations

from dataclasses import dataclass

from kcodec.errors import KcodecError
from kcodec.internal_topics.views import VIEW_TOPICS
from kcodec.spark.planning import discover

__all__ = ["InternalTable", "VIEW_TABLES", "write_internal_tables", "join_path"]

#: table name -> (view, latest)
VIEW_TABLES = {
    "consumer_offsets": ("consumerOffsets", True),
    "groups": ("groups", True),
    "transactions": ("transactions", True),
    "metadata_records": ("metadata", False),
}
METADATA_TOPIC = VIEW_TOPICS["metadata"]


class ManyMetadataPartitionsError(KcodecError):
    """A source holding several ``__cluster_metadata`` partitions: the image is one cluster's."""

    kind = "many_metadata_partitions"


@dataclass
class InternalTable:
    name: str  # consumer_offsets ... metadata_image/topics
    path: str
    rows: int
    source: str  # the view, or the __cluster_metadata directory replayed


def join_path(dest: str, name: str) -> str:
    """``name`` under the directory or URI ``dest`` (the job's tables and reports)."""
    return dest.rstrip("/") + "/" + name


def write_internal_tables(spark, source: str, dest: str, fmt: str, options: dict[str, str]) -> list[InternalTable]:
    """Write the tables of the internal topics ``source`` holds under ``dest`` in ``fmt``; read ``options``
    (onCorrupt, isolationLevel, filters ...) apply to the views as to records."""
    from kcodec.log.fs import resolve, storage_options

    storage = storage_options(options)
    topics: dict[str, list[str]] = {}
    for part in discover(source, storage=storage):
        if part.topic is not None:
            topics.setdefault(part.topic, []).append(part.path)
    out: list[InternalTable] = []
    for name, (view, latest) in VIEW_TABLES.items():
        if VIEW_TOPICS[view] not in topics:
            continue
        path = join_path(dest, name)
        reader = spark.read.format("kafka-segments").options(**options).option("view", view)
        reader.option("latest", str(latest).lower()).load(source).write.mode("overwrite").format(fmt).save(path)
        out.append(InternalTable(name, path, spark.read.format(fmt).load(path).count(), f"view={view}"))
    metadata = topics.get(METADATA_TOPIC, [])
    if len(metadata) > 1:
        raise ManyMetadataPartitionsError(
            f"{source} holds {len(metadata)} {METADATA_TOPIC} partitions ({', '.join(sorted(metadata))}): the "
            "image is one cluster's; point the pipeline at one, or pass --no-internal-tables"
        )
    if metadata:
        from kcodec.internal_topics.metadata.replay import replay_metadata
        from kcodec.internal_topics.metadata.tables import image_tables

        fs, _ = resolve(source, storage)  # discovery's paths are this filesystem's
        image = replay_metadata(metadata[0], fs=fs)
        for name, table in image_tables(image.as_dict()).items():
            path = join_path(dest, f"metadata_image/{name}")
            spark.createDataFrame(table).write.mode("overwrite").format(fmt).save(path)
            out.append(InternalTable(f"metadata_image/{name}", path, table.num_rows, metadata[0]))
    return out
