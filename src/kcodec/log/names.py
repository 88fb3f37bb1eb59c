"""Kafka's file names in a log directory: what each name says, from the name alone.

A partition directory ``<topic>-<partition>`` holds segments named by their
base offset written as exactly 20 ASCII digits (``00000000000000000042.log``),
with, per segment, an offset index (``.index``), a time index
(``.timeindex``) and, when the segment holds ABORT markers, a transaction
index (``.txnindex``); Kafka's ``LogFileUtils`` names them so.

Kafka tiered storage (KIP-405) names a partition directory
``<topic>-<partition>-<topic id>`` and a segment's files
``<base offset>-<segment id>.<suffix>``, ids being Kafka ``Uuid`` strings (22
URL-safe base64 characters).

Files being removed carry Kafka's suffixes: a segment file renamed ``.deleted``
waits file.delete.delay.ms before it goes; a directory renamed
``<name>.<id>-delete`` is deleted by the broker (and by kcodec's commit).

Names from data (a DataFrame's ``topic`` and ``partition``) become paths only
through :func:`partition_dir_name`, which holds them to Kafka's own rules
(``Topic.validate``: ``[a-zA-Z0-9._-]{1,249}``, not ``.`` or ``..``; a partition is
an int32 in ``[0, numPartitions)``), so no name from data can leave the target
directory. Kafka-valid topics may start with ``_`` or ``.`` (``_schemas``,
``_confluent-metrics``): only kcodec's own entries and Spark's output files are
recognised, by exact name (:data:`RESERVED_NAMES`).

The listing of segments (:mod:`kcodec.log.files`) and the commit protocol
(:mod:`kcodec.log.commit`) both read names here, so neither imports the other
for them.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

from kcodec.errors import KcodecError

__all__ = [
    "LOG_SUFFIX",
    "KAFKA07_SUFFIX",
    "INDEX_SUFFIX",
    "TIME_INDEX_SUFFIX",
    "TXN_INDEX_SUFFIX",
    "SNAPSHOT_SUFFIX",
    "TMP_SUFFIX",
    "DELETE_SUFFIX",
    "DELETED_SUFFIX",
    "PathLike",
    "SegmentFileName",
    "segment_name",
    "parse_segment_name",
    "parse_tiered_name",
    "skip_reason",
    "parse_partition_dir",
    "is_partition_dir_name",
    "COMMIT_RECORD",
    "STAGING_DIR",
    "RESERVED_NAMES",
    "MAX_TOPIC_LENGTH",
    "MAX_PARTITION",
    "BadNameError",
    "check_topic",
    "topic_problem",
    "check_partition",
    "partition_dir_name",
]

LOG_SUFFIX = ".log"
KAFKA07_SUFFIX = ".kafka"  # a Kafka 0.7 segment, named by the byte offset of its first byte (Log.FileSuffix)
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
SNAPSHOT_SUFFIX = ".snapshot"
TMP_SUFFIX = ".tmp"  # SegmentWriter / write_atomically temporaries; Kafka ignores such files
DELETE_SUFFIX = "-delete"  # a directory being deleted: <topic>-<n>.<id>-delete (Kafka's LogManager)
DELETED_SUFFIX = ".deleted"  # a segment file Kafka deleted, removed file.delete.delay.ms later

_INT64_MAX = (1 << 63) - 1

COMMIT_RECORD = "_kcodec_commit"  # kcodec.log.commit: the record of a commit being published
STAGING_DIR = "_kcodec_staging"  # kcodec.log.commit: where write jobs build their segments
#: Entries of a log directory that are no partition's, by exact name: kcodec's own (the commit record,
#: its temporary, staging) and what Spark's file writers leave beside their output. Anything else named
#: ``<topic>-<n>`` with a Kafka-valid topic is a partition, ``_schemas-0`` and ``.hidden-0`` included.
RESERVED_NAMES = frozenset(
    {COMMIT_RECORD, COMMIT_RECORD + ".tmp", STAGING_DIR, "_SUCCESS", "_temporary", "_spark_metadata"}
)

# `kcodec pipeline --table-format`'s tables in DEST (kcodec.spark.lakehouse writes them; `kcodec write
# --from-table DEST` finds them there)
TABLE_CATALOG_FILE = "catalog.db"  # the embedded Iceberg catalog, a SQLite file
TABLE_CATALOG_NAME = "kcodec"  # the catalog name the SQL catalog files its tables under
TABLE_NAMESPACE = "kcodec"
RECORDS_TABLE = "records"

MAX_TOPIC_LENGTH = 249  # Kafka's Topic.MAX_NAME_LENGTH
MAX_PARTITION = (1 << 31) - 2  # partitions are int32 ids below a count that is itself an int32
_TOPIC = re.compile(r"[a-zA-Z0-9._-]+", re.ASCII)  # Kafka's Topic.LEGAL_CHARS

PathLike = str | os.PathLike

# Exactly 20 ASCII digits: [0-9], not \d, which also matches other scripts' digits (and int() reads them).
_SEGMENT_NAME = re.compile(r"([0-9]{20})\.(.+)", re.ASCII)
_PARTITION_DIR = re.compile(r"(.+)-([0-9]+)", re.ASCII)
_KAFKA_UUID = r"[A-Za-z0-9_-]{22}"  # org.apache.kafka.common.Uuid.toString: URL-safe base64, no padding
_TIERED_NAME = re.compile(rf"([0-9]{{1,20}})-({_KAFKA_UUID})\.(.+)", re.ASCII)
_TIERED_PARTITION_DIR = re.compile(rf"(.+)-([0-9]+)-{_KAFKA_UUID}", re.ASCII)


class SegmentFileName(NamedTuple):
    """A parsed segment file name: ``00000000000000000042.log.deleted`` ->
    ``(42, "log.deleted")``. ``kind`` is everything after the first dot."""

    base_offset: int
    kind: str


def segment_name(base_offset: int, suffix: str) -> str:
    """``segment_name(42, ".log")`` -> ``"00000000000000000042.log"`` (the dot is optional)."""
    if not isinstance(base_offset, int) or not 0 <= base_offset <= _INT64_MAX:
        raise ValueError(f"a segment base offset must be an int in [0, 2^63-1], got {base_offset!r}")
    if not suffix:
        raise ValueError("a segment file name needs a suffix such as '.log'")
    return f"{base_offset:020d}{suffix if suffix.startswith('.') else '.' + suffix}"


def parse_segment_name(path: PathLike) -> SegmentFileName:
    """The base offset and kind of a segment file, from its name only.

    Kinds are ``log``, ``index``, ``timeindex``, ``txnindex``, ``snapshot``, or
    those with a transient suffix (``log.deleted``, ``index.swap``, ``log.cleaned``,
    ``log.tmp``). Raises ValueError for any name that is not 20 ASCII digits,
    a dot and a suffix, or whose offset does not fit an int64."""
    name = os.path.basename(os.fspath(path))
    m = _SEGMENT_NAME.fullmatch(name)
    if not m or int(m.group(1)) > _INT64_MAX:
        raise ValueError(f"{name!r} is not a segment file name (<20-digit base offset>.<suffix>)")
    return SegmentFileName(int(m.group(1)), m.group(2))


def parse_tiered_name(path: PathLike) -> tuple[int, str, str] | None:
    """``"00000000000000000042-oAtiIQ95REujbuzNd_lkLQ.log"`` -> ``(42, "oAtiIQ95REujbuzNd_lkLQ", "log")``:
    a tiered-storage object's base offset, segment id and kind; None for other names."""
    m = _TIERED_NAME.fullmatch(os.path.basename(os.fspath(path)))
    if not m or int(m.group(1)) > _INT64_MAX:
        return None
    return int(m.group(1)), m.group(2), m.group(3)


def skip_reason(name: str) -> str:
    """Why a listing skipped ``name`` (one of :attr:`SegmentListing.skipped`)."""
    if parse_tiered_name(name) is not None:
        return "an older tiered-storage copy of the same base offset (the newest copy is read)"
    return "not a Kafka segment name (20 ASCII digits and a suffix)"


def parse_partition_dir(path: PathLike) -> tuple[str, int]:
    """``"orders-3"`` -> ``("orders", 3)``; topic names may hold dashes, the
    partition follows the last one. A tiered-storage directory
    ``orders-3-<topic id>`` is partition 3 of ``orders`` too. Raises
    ValueError for other names, including directories being deleted
    (``<topic>-<n>.<id>-delete``)."""
    name = os.path.basename(os.path.normpath(os.fspath(path)))
    m = _PARTITION_DIR.fullmatch(name) or _TIERED_PARTITION_DIR.fullmatch(name)
    if not m:
        raise ValueError(f"{name!r} is not a partition directory name (<topic>-<partition>)")
    return m.group(1), int(m.group(2))


def is_partition_dir_name(name: str) -> bool:
    """Whether a directory name is a live partition directory's: ``<topic>-<n>`` with a topic
    Kafka accepts, not one of kcodec's or Spark's own entries (:data:`RESERVED_NAMES`), not
    being deleted. Topics starting with ``_`` or ``.`` (``__consumer_offsets``, ``_schemas``)
    are partitions like any other."""
    if name in RESERVED_NAMES or name.endswith(DELETE_SUFFIX) or not _TOPIC.fullmatch(name):
        return False  # the whole name is of Kafka's characters (a tiered-storage topic id too): no separator
    try:
        topic, partition = parse_partition_dir(name)
    except ValueError:
        return False
    return topic_problem(topic) is None and partition <= MAX_PARTITION


class BadNameError(KcodecError, ValueError):
    """A topic or partition that Kafka would refuse, so it never becomes a path."""

    kind = "bad_name"


def topic_problem(topic: object) -> str | None:
    """Why Kafka refuses ``topic`` as a topic name (``Topic.validate``), or None."""
    if not isinstance(topic, str):
        return f"topic {topic!r} is not a string"
    if not topic:
        return "the topic name is empty"
    if topic in (".", ".."):
        return f"topic {topic!r} cannot be '.' or '..'"
    if len(topic) > MAX_TOPIC_LENGTH:
        return f"topic {topic[:40]!r}... is {len(topic)} characters, longer than Kafka's {MAX_TOPIC_LENGTH}"
    if not _TOPIC.fullmatch(topic):
        return f"topic {topic!r} has characters Kafka does not allow (only ASCII letters, digits, '.', '_', '-')"
    return None


def check_topic(topic: object) -> str:
    """``topic`` when Kafka accepts it as a topic name; else a :class:`BadNameError` saying why."""
    problem = topic_problem(topic)
    if problem is not None:
        raise BadNameError(problem)
    assert isinstance(topic, str)
    return topic


def check_partition(partition: object, num_partitions: int | None = None, topic: str | None = None) -> int:
    """``partition`` when it is a partition id Kafka accepts: an int in ``[0, 2^31-1)``, and below
    ``num_partitions`` when that is known; else a :class:`BadNameError` saying why."""
    where = f" of topic {topic!r}" if topic is not None else ""
    if isinstance(partition, bool) or not isinstance(partition, int):
        raise BadNameError(f"partition {partition!r}{where} is not an integer")
    if not 0 <= partition <= MAX_PARTITION:
        raise BadNameError(f"partition {partition}{where} is outside Kafka's range [0, {MAX_PARTITION}]")
    if num_partitions is not None and partition >= num_partitions:
        raise BadNameError(f"partition {partition}{where} is not below numPartitions={num_partitions}")
    return partition


def partition_dir_name(topic: object, partition: object, num_partitions: int | None = None) -> str:
    """``"<topic>-<partition>"`` after :func:`check_topic` and :func:`check_partition`: the only way a
    topic-partition from data becomes a directory name (it cannot hold a separator or be ``..``)."""
    t = check_topic(topic)
    return f"{t}-{check_partition(partition, num_partitions, t)}"
