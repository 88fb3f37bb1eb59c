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

The listing of segments (:mod:`kcodec.log.files`) and the commit protocol
(:mod:`kcodec.log.commit`) both read names here, so neither imports the other
for them.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

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
    """Whether a directory name is a live partition directory's (``<topic>-<n>``;
    not hidden, staging, or being deleted). Kafka's internal topics (``__consumer_offsets-7``,
    ``__cluster_metadata-0``) start with two underscores: those are partitions, not hidden."""
    hidden = name.startswith(".") or (name.startswith("_") and not name.startswith("__"))
    if hidden or name.endswith(DELETE_SUFFIX):
        return False
    try:
        parse_partition_dir(name)
    except ValueError:
        return False
    return True
