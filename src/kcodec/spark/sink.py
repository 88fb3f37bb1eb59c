"""Spark's Kafka sink vocabulary on the kafka-segments writer.

Spark's Kafka sink hands ``kafka.*`` options to a producer; here the ones that
shape what lands in the log take effect as the producer would apply them:

* ``kafka.compression.type`` (none, gzip, snappy, lz4, zstd) and, per codec,
  ``kafka.compression.gzip.level`` / ``lz4.level`` / ``zstd.level`` (KIP-390,
  Kafka 3.8+), the same as kcodec's ``compression`` / ``compressionLevel``;
* ``kafka.batch.size``: a record joins the open batch only while the batch, as
  the producer estimates it uncompressed (61-byte v2 header plus each record's
  encoded size), stays within that many bytes; one larger record makes a batch
  of its own; ``0`` is one record per batch (the producer's "batching disabled");
* ``kafka.partitioner.ignore.keys``: keyed rows are placed as keyless ones.

Where a row has no partition (no ``partition`` option or column, or a null in
it) Kafka's default partitioner places it (:mod:`kcodec.records.partitioner`):
keyed rows at ``toPositive(murmur2(key)) % numPartitions``, as the Java
producer; keyless rows the way the producer's sticky partitioner does but
deterministically: each task fills one batch for a partition, then moves on to
the next (task ``t`` starts at partition ``t mod numPartitions``). The
partition count of a topic is the ``numPartitions`` option, or else the
``<topic>-<n>`` directories already under the target (the highest ``n`` plus 1).
"""

from __future__ import annotations

from kcodec.errors import EncodeError
from kcodec.records.partitioner import partition_for_key
from kcodec.spark.options import CODECS, OptionError, agree, default, value

__all__ = [
    "CODECS",
    "producer_settings",
    "partition_counts",
    "check_counts",
    "Router",
]


def producer_settings(opts: dict) -> dict:
    """kcodec's write settings from its own options and the producer's ``kafka.*`` ones
    (``opts``: names lowercased, as Spark passes them)."""
    compression = value(opts, "compression")  # or kafka.compression.type, its alias
    level_name = f"kafka.compression.{compression}.level"
    level = value(opts, "compressionLevel")
    if compression in ("gzip", "lz4", "zstd") and level_name in opts:
        level = agree(opts, "compressionLevel", level_name, level, value(opts, level_name))
    value(opts, "kafka.linger.ms")  # checked only: all rows are at hand, no waiting
    batch_size = value(opts, "kafka.batch.size")
    records_per_batch = value(opts, "recordsPerBatch", None)
    batch_bytes = value(opts, "batchBytes", None)
    if batch_size is not None and batch_bytes is not None:
        raise OptionError("options batchBytes and kafka.batch.size both size batches: give one")
    if batch_size == 0:  # the producer's "batching disabled"
        records_per_batch, batch_size = 1, None
    return {
        "compression": compression,
        "compression_level": level,
        "records_per_batch": records_per_batch or (1 << 62 if batch_size is not None else default("recordsPerBatch")),
        "batch_bytes": batch_bytes or (1 << 62 if batch_size is not None else default("batchBytes")),
        "batch_limit": batch_size,
        "ignore_keys": value(opts, "kafka.partitioner.ignore.keys"),
        "num_partitions": value(opts, "numPartitions"),
    }


def partition_counts(fs, root: str) -> dict[str, int]:
    """Topic -> partition count from the ``<topic>-<n>`` directories under ``root``."""
    from kcodec.log.partition import list_partitions

    if not fs.is_dir(root):
        return {}
    counts: dict[str, int] = {}
    for part in list_partitions(root, fs):
        assert part.topic is not None and part.partition is not None  # list_partitions lists <topic>-<n> only
        counts[part.topic] = max(counts.get(part.topic, 0), part.partition + 1)
    return counts


class Router:
    """One task's placement of rows that name no partition (see the module's docstring)."""

    def __init__(self, task: int, counts: dict[str, int], num_partitions: int | None, ignore_keys: bool, path: str):
        self.task = task
        self.counts = counts
        self.num_partitions = num_partitions
        self.ignore_keys = ignore_keys
        self.path = path
        self.sticky: dict[str, int] = {}

    def count(self, topic: str) -> int:
        n = self.num_partitions or self.counts.get(topic)
        if not n:
            raise EncodeError(
                f"kafka-segments: topic {topic!r} has no partition directories under {self.path} to count, "
                "and rows name no partition: give the option numPartitions, or a partition column"
            )
        return n

    def partition(self, topic: str, key: bytes | None) -> int:
        n = self.count(topic)
        if key is not None and not self.ignore_keys:
            return partition_for_key(key, n)
        if topic not in self.sticky:
            self.sticky[topic] = self.task % n
        return self.sticky[topic]

    def batch_closed(self, topic: str, partition: int) -> None:
        """A batch of ``topic``-``partition`` is full: keyless rows move to the next partition."""
        if self.sticky.get(topic) == partition:
            self.sticky[topic] = (partition + 1) % self.count(topic)


def check_counts(counts: dict[str, int], num_partitions: int | None, path: str) -> None:
    """``numPartitions`` may grow a topic (as Kafka adds partitions) but not shrink it."""
    if num_partitions is None:
        return
    for topic, n in sorted(counts.items()):
        if n > num_partitions:
            raise OptionError(
                f"kafka-segments: option numPartitions={num_partitions}, but topic {topic!r} already has "
                f"{n} partitions under {path} (Kafka cannot remove partitions)"
            )
