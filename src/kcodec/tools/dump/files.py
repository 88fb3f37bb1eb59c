"""``kcodec dump`` of the files beside the segments in a partition directory.

Files are told apart by name, as Kafka's DumpLogSegments does (by the suffix after the last dot),
plus the partition directory's small text files, which that tool does not read:

- ``leader-epoch-checkpoint`` (LeaderEpochCheckpointFile) and the log directory's offset
  checkpoints (OffsetCheckpointFile: ``replication-offset-checkpoint`` and its kin): Kafka's
  CheckpointFile format, a version line, a count line, then that many entry lines;
- ``partition.metadata`` (PartitionMetadataFile): ``version: 0`` and ``topic_id: <Uuid>``.

Producer-state snapshots (``.snapshot``) print as DumpLogSegments.dumpProducerIdSnapshot prints them;
KRaft snapshots (``.checkpoint``) are logs, read by the log dump.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath

from kcodec.errors import CorruptError
from kcodec.log.kraft_snapshots import KRAFT_BOOTSTRAP_SNAPSHOT, KRAFT_SNAPSHOT_SUFFIX, parse_kraft_snapshot_name
from kcodec.log.names import (
    INDEX_SUFFIX,
    KAFKA07_SUFFIX,
    LOG_SUFFIX,
    SNAPSHOT_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
)

__all__ = [
    "FileKind",
    "file_kind",
    "TextFileDump",
    "dump_text_file",
    "dump_producer_snapshot",
    "kraft_snapshot_line",
    "MAX_TEXT_FILE_SIZE",
]

LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"
# The log directory's OffsetCheckpointFile instances (LogManager, ReplicaManager, LogCleanerManager).
OFFSET_CHECKPOINTS = (
    "replication-offset-checkpoint",
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
)
MAX_TEXT_FILE_SIZE = 64 << 20  # these files hold one line per partition; more is not one of them

_BY_SUFFIX = {
    LOG_SUFFIX: "log",
    INDEX_SUFFIX: "index",
    TIME_INDEX_SUFFIX: "timeindex",
    TXN_INDEX_SUFFIX: "txnindex",
    SNAPSHOT_SUFFIX: "producer-snapshot",
    KRAFT_SNAPSHOT_SUFFIX: "kraft-snapshot",
    KAFKA07_SUFFIX: "kafka07",
}


class FileKind:
    LOG = "log"
    KRAFT_SNAPSHOT = "kraft-snapshot"  # a log too, with its own first line
    KAFKA07 = "kafka07"  # a Kafka 0.7 segment (.kafka): byte offsets, 0.7's framing
    PRODUCER_SNAPSHOT = "producer-snapshot"
    UNKNOWN = "unknown"
    INDEXES = ("index", "timeindex", "txnindex")
    TEXT = ("leader-epoch-checkpoint", "offset-checkpoint", "partition-metadata")


def file_kind(path: PurePath) -> str:
    """What a file in a partition (or log) directory holds, from its name alone."""
    name = path.name
    if name == LEADER_EPOCH_CHECKPOINT:
        return "leader-epoch-checkpoint"
    if name == PARTITION_METADATA:
        return "partition-metadata"
    if name in OFFSET_CHECKPOINTS:
        return "offset-checkpoint"
    dot = name.rfind(".")
    return _BY_SUFFIX.get(name[dot:], FileKind.UNKNOWN) if dot >= 0 else FileKind.UNKNOWN


@dataclass
class TextFileDump:
    """A parsed text file: ``lines`` for the terminal, ``fields`` for ``--json``."""

    lines: list[str]
    fields: dict


def _read_lines(path: Path) -> list[str]:
    with open(path, "rb") as f:
        data = f.read(MAX_TEXT_FILE_SIZE + 1)
    if len(data) > MAX_TEXT_FILE_SIZE:
        raise CorruptError(f"{path.name} is larger than {MAX_TEXT_FILE_SIZE} bytes: not a checkpoint file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptError(f"{path.name} is not UTF-8 text", position=exc.start) from None
    return text.splitlines()


def _bad(path: Path, line_no: int, what: str) -> CorruptError:
    return CorruptError(f"{path.name}, line {line_no}: {what}")


def _int(path: Path, line_no: int, text: str, what: str) -> int:
    if not re.fullmatch(r"-?[0-9]+", text.strip()):
        raise _bad(path, line_no, f"expected {what} (an integer), found {text!r}")
    return int(text)


def _checkpoint(path: Path, fields: tuple[str, ...]) -> tuple[int, list[list[int | str]]]:
    """Kafka's CheckpointFile: version 0, a count, then ``count`` lines of whitespace-separated fields."""
    lines = _read_lines(path)
    if len(lines) < 2:
        raise _bad(path, len(lines) + 1, "expected a version line and a count line")
    version = _int(path, 1, lines[0], "the version")
    if version != 0:
        raise _bad(path, 1, f"unrecognised version {version} (Kafka writes version 0)")
    count = _int(path, 2, lines[1], "the entry count")
    entries = lines[2:]
    if count < 0 or len(entries) != count:
        raise _bad(path, 2, f"says {count} entries, but {len(entries)} entry line(s) follow")
    out: list[list[int | str]] = []
    for i, line in enumerate(entries, start=3):
        parts = line.split()
        if len(parts) != len(fields):
            raise _bad(path, i, f"expected '{' '.join(fields)}', found {line!r}")
        # all fields are integers but a topic name
        out.append([p if f == "topic" else _int(path, i, p, f) for f, p in zip(fields, parts)])
    return version, out


def _dump_checkpoint(path: Path, fields: tuple[str, ...], names: tuple[str, ...]) -> TextFileDump:
    version, entries = _checkpoint(path, fields)
    lines = [f"version: {version}", f"count: {len(entries)}"]
    lines += [" ".join(f"{n}: {v}" for n, v in zip(names, e)) for e in entries]
    return TextFileDump(lines, {"version": version, "entries": [dict(zip(names, e)) for e in entries]})


def _dump_partition_metadata(path: Path) -> TextFileDump:
    lines = _read_lines(path)
    if len(lines) < 2:
        raise _bad(path, len(lines) + 1, "expected 'version: 0' and 'topic_id: <id>' lines")
    version_text = lines[0].removeprefix("version: ")
    if version_text == lines[0]:
        raise _bad(path, 1, f"expected 'version: 0', found {lines[0]!r}")
    version = _int(path, 1, version_text, "the version")
    if version != 0:
        raise _bad(path, 1, f"unrecognised version {version} (Kafka writes version 0)")
    topic_id = lines[1].removeprefix("topic_id: ")
    if topic_id == lines[1]:
        raise _bad(path, 2, f"expected 'topic_id: <id>', found {lines[1]!r}")
    try:  # Kafka's Uuid.toString: the 16 bytes in URL-safe base64 without padding
        raw = base64.urlsafe_b64decode(topic_id + "==")
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 16 or len(topic_id) != 22:
        raise _bad(path, 2, f"topic id {topic_id!r} is not a Kafka Uuid (22 characters of URL-safe base64)")
    return TextFileDump([f"version: {version}", f"topic_id: {topic_id}"], {"version": version, "topicId": topic_id})


def dump_text_file(path: Path, kind: str) -> TextFileDump:
    """The parsed content of a ``leader-epoch-checkpoint``, an offset checkpoint or ``partition.metadata``;
    :class:`~kcodec.errors.CorruptError` naming the line for one that does not follow Kafka's format."""
    if kind == "leader-epoch-checkpoint":
        return _dump_checkpoint(path, ("epoch", "offset"), ("epoch", "startOffset"))
    if kind == "offset-checkpoint":
        return _dump_checkpoint(path, ("topic", "partition", "offset"), ("topic", "partition", "offset"))
    if kind == "partition-metadata":
        return _dump_partition_metadata(path)
    raise ValueError(f"not a text file kind: {kind}")


def kraft_snapshot_line(path: PurePath) -> str | None:
    """The line DumpLogSegments prints before a KRaft snapshot's batches (``Snapshot end offset: O, epoch: E``,
    or ``KRaft bootstrap snapshot``); None for a ``.checkpoint`` name Kafka's Snapshots.parse does not take."""
    if path.name == KRAFT_BOOTSTRAP_SNAPSHOT:
        return "KRaft bootstrap snapshot"
    parsed = parse_kraft_snapshot_name(path.name)
    return f"Snapshot end offset: {parsed[0]}, epoch: {parsed[1]}" if parsed else None


def dump_producer_snapshot(path: Path) -> Iterator[tuple[str, dict]]:
    """DumpLogSegments.dumpProducerIdSnapshot's line and the typed entry (``--json``) of each producer, one at a
    time (the batch part only when the producer has one). A damaged file raises the
    :class:`~kcodec.errors.DecodeError` of :func:`~kcodec.log.producer_snapshot.iter_producer_snapshot` here,
    before the first one."""
    from kcodec.log.producer_snapshot import iter_producer_snapshot

    return _producer_lines(iter_producer_snapshot(path))


def _producer_lines(snapshot) -> Iterator[tuple[str, dict]]:
    for e in snapshot:
        # Kafka prints the OptionalLong as Java's toString does
        txn = (
            "OptionalLong.empty"
            if e.current_txn_first_offset is None
            else f"OptionalLong[{e.current_txn_first_offset}]"
        )
        line = (
            f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch} coordinatorEpoch: {e.coordinator_epoch} "
            f"currentTxnFirstOffset: {txn} lastTimestamp: {e.last_timestamp} "
        )
        entry: dict = {
            "producerId": e.producer_id,
            "producerEpoch": e.producer_epoch,
            "coordinatorEpoch": e.coordinator_epoch,
            "currentTxnFirstOffset": e.current_txn_first_offset,
            "lastTimestamp": e.last_timestamp,
            "batch": None,
        }
        if e.batch is not None:
            b = e.batch
            line += (
                f"firstSequence: {b.first_seq} lastSequence: {b.last_seq} lastOffset: {b.last_offset} "
                f"offsetDelta: {b.offset_delta} timestamp: {b.timestamp}"
            )
            entry["batch"] = {
                "firstSequence": b.first_seq,
                "lastSequence": b.last_seq,
                "lastOffset": b.last_offset,
                "offsetDelta": b.offset_delta,
                "timestamp": b.timestamp,
            }
        yield line, entry
