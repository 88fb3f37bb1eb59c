"""Replay a ``__cluster_metadata`` partition directory into the cluster image as of an offset, as a KRaft
broker loads it (Kafka's MetadataLoader): the latest ``.checkpoint`` snapshot whose records all lie at or
below the offset, then the log's records after the snapshot, up to the offset.

KRaft transactions (KIP-868): the records between a BeginTransactionRecord and its EndTransactionRecord
are applied together when it ends; those before an AbortTransactionRecord are dropped; those of a
transaction still open at the offset are not applied (said in the image's problems). Record types the
schemas do not know are reported per record and the replay goes on; damaged batches stop it with a typed
error naming the file and byte position.
"""

from __future__ import annotations

import os
import struct
import tempfile

from kcodec.errors import DecodeError, KcodecError, TruncatedError
from kcodec.generated.enums import CONTROL_RECORD_TYPE
from kcodec.internal_topics.metadata.image import HANDLERS, IGNORED, MetadataImage
from kcodec.internal_topics.registry import InternalRecord, decode_internal, registry_for_topic
from kcodec.log.files import list_segments
from kcodec.log.fs import FileSystem, resolve
from kcodec.log.kraft_snapshots import SnapshotFile, list_snapshots

__all__ = [
    "NotMetadataDirectoryError",
    "OffsetOutOfLogError",
    "replay_metadata",
]

REGISTRY = "cluster_metadata"
SNAPSHOT_FOOTER = CONTROL_RECORD_TYPE["snapshot_footer"]
_TRANSACTION = {"begin_transaction_record", "end_transaction_record", "abort_transaction_record"}


class NotMetadataDirectoryError(KcodecError):
    """A directory that is not a ``__cluster_metadata`` partition directory."""

    kind = "not_metadata_directory"


class OffsetOutOfLogError(KcodecError):
    """An offset the directory's snapshots and log do not reach (beyond the end, or before the first
    record with no snapshot to start from)."""

    kind = "offset_out_of_log"


class _Pending:
    """An open KRaft transaction's records, as they were stored, in a temporary file (offset, key and value
    lengths, then the bytes): a transaction can hold millions of records, and the replay holds none of them
    in memory until it ends (then they are read back one at a time and applied)."""

    _HEAD = struct.Struct(">qii")

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile()
        self.count = 0

    def add(self, offset: int, key: bytes | None, value: bytes | None) -> None:
        k, v = key or b"", value or b""
        self.file.write(self._HEAD.pack(offset, -1 if key is None else len(k), -1 if value is None else len(v)) + k + v)
        self.count += 1

    def records(self):
        """(offset, key, value) of each record, in order."""
        self.file.seek(0)
        for _ in range(self.count):
            offset, k, v = self._HEAD.unpack(self.file.read(self._HEAD.size))
            key = None if k < 0 else self.file.read(k)
            value = None if v < 0 else self.file.read(v)
            yield offset, key, value

    def close(self) -> None:
        self.file.close()


class _Replay:
    def __init__(self, image: MetadataImage):
        self.image = image
        self.pending: _Pending | None = None  # an open KRaft transaction's records
        self.begun_at = -1

    def raw(self, key: bytes | None, value: bytes | None, offset: int, where: str) -> None:
        """A record as stored: decoded, then applied (or kept for the end of its transaction)."""
        r = decode_internal(REGISTRY, key, value)
        if self.check(r, offset, where):
            if r.name in _TRANSACTION:
                self.transaction(r, offset)
            elif self.pending is not None:
                self.pending.add(offset, key, value)
            else:
                self.apply(r, offset)

    def check(self, r: InternalRecord, offset: int, where: str) -> bool:
        """Whether ``r`` decoded; a type or version the schemas do not know is a problem, other damage an error."""
        if r.error is not None:
            if isinstance(r.error, DecodeError) and r.error.kind in ("unknown_record_type", "unsupported_version"):
                self.image.problem(offset, r.name, f"not applied: {r.error.message}")
                return False
            raise r.error.replace(message=f"{where}: record at offset {offset}: {r.error.message}")
        return True

    def transaction(self, r: InternalRecord, offset: int) -> None:
        if r.name == "begin_transaction_record":
            if self.pending is not None:  # Kafka's loader refuses a nested begin; the earlier one is dropped
                self.problem(offset, r.name, f"a transaction begun at offset {self.begun_at} is still open")
                self.pending.close()
            self.pending, self.begun_at = _Pending(), offset
        elif self.pending is None:
            self.problem(offset, r.name, "no transaction is open")
        else:
            pending, self.pending = self.pending, None
            if r.name == "end_transaction_record":
                for at, key, value in pending.records():
                    self.apply(decode_internal(REGISTRY, key, value), at)  # it decoded when it came
            pending.close()

    def apply(self, r: InternalRecord, offset: int) -> None:
        handler = HANDLERS.get(r.name or "")
        if handler is not None and r.value is not None:
            handler(self.image, r.value.value, offset)
        elif r.name not in IGNORED:
            self.problem(offset, r.name, "the image does not hold this record type")

    def problem(self, offset: int, record: str | None, reason: str) -> None:
        self.image.problem(offset, record, reason)

    def finish(self) -> None:
        if self.pending is not None:
            self.problem(
                self.begun_at, "begin_transaction_record", f"still open: its {self.pending.count} record(s) not applied"
            )
            self.pending.close()
            self.pending = None


def _batches(where: str, reader):
    try:
        yield from reader
    except KcodecError as exc:
        raise exc.replace(message=f"{where}: {exc.message}") from None


def _check_directory(directory: str, name: str, snapshots: list[SnapshotFile], has_segments: bool) -> None:
    if registry_for_topic(name) != REGISTRY and not snapshots:
        raise NotMetadataDirectoryError(
            f"{directory} is not a __cluster_metadata partition directory (named __cluster_metadata-0, or holding "
            "<offset>-<epoch>.checkpoint snapshots)"
        )
    if not snapshots and not has_segments:
        raise NotMetadataDirectoryError(f"{directory} holds no .log segment and no .checkpoint snapshot")


def _snapshot_batches(fs: FileSystem, path: str):
    """A snapshot's batches one at a time: a local file memory-mapped, a remote one fetched whole.

    A ``.checkpoint`` is renamed into place only once Kafka has written all of it, ending with its
    SnapshotFooter: unlike a live segment's, a partial batch at its end is damage (``strict``), and so is
    a file whose last batch is not the footer (Kafka's RecordsSnapshotReader refuses both)."""
    from kcodec.records.reader import read_batches

    last = None
    for batch in read_batches(path if fs.local else fs.read_range(path, 0, None), strict=True):
        last = batch
        yield batch
    footer = (
        last is not None
        and last.is_control
        and any(r.control is not None and r.control.type == SNAPSHOT_FOOTER for r in last.records)
    )
    if not footer:
        end = 0 if last is None else last.position + last.size
        raise TruncatedError(
            f"the snapshot ends at byte {end} without its SnapshotFooter: it is incomplete", position=end
        )


def replay_metadata(
    directory: str | os.PathLike, at_offset: int | None = None, *, fs: FileSystem | None = None
) -> MetadataImage:
    """The cluster image after every record at or below ``at_offset`` (all of them when None). ``directory``
    is a local path or URI, or a path of ``fs`` (an object store's, as :func:`kcodec.log.fs.resolve` gives).

    Batches are read one at a time and each record applied as it is read: what the replay holds is the
    image and one batch, however long the log."""
    if fs is None:
        fs, directory = resolve(os.fspath(directory))
    directory = os.fspath(directory)
    if not fs.is_dir(directory):
        raise NotMetadataDirectoryError(f"{directory} is not a directory")
    snapshots = list_snapshots(fs, directory)
    segments = list_segments(fs, directory).segments
    _check_directory(directory, fs.name(directory.rstrip("/")), snapshots, bool(segments))
    usable = [s for s in snapshots if at_offset is None or s.end_offset - 1 <= at_offset]
    image = MetadataImage()
    replay = _Replay(image)
    start = 0
    if usable:
        snap = usable[-1]
        for batch in _batches(snap.path, _snapshot_batches(fs, snap.path)):
            if batch.is_control:  # SnapshotHeader / SnapshotFooter
                continue
            for rec in batch.records:
                replay.raw(rec.key, rec.value, rec.offset, snap.path)
        start = snap.end_offset
        image.offset = snap.end_offset - 1
        image.snapshot = {"file": fs.name(snap.path), "endOffset": snap.end_offset, "epoch": snap.epoch}
    elif segments and (segments[0].base_offset or 0) > 0:
        raise OffsetOutOfLogError(
            f"{directory}: the log starts at offset {segments[0].base_offset} and no snapshot covers the offsets "
            "below it: the image would miss them"
        )
    last = image.offset
    beyond = False  # whether the log goes on past at_offset
    for i, seg in enumerate(segments):
        following = segments[i + 1].base_offset if i + 1 < len(segments) else None
        if following is not None and following <= start:
            continue  # every offset of this segment is in the snapshot
        if at_offset is not None and (seg.base_offset or 0) > at_offset:
            beyond = True
            break
        for batch in _batches(str(seg.log), seg.batches()):
            if batch.last_offset < start:
                continue
            if at_offset is not None and batch.base_offset > at_offset:
                beyond = True
                break
            for rec in batch.records:
                if rec.offset < start:
                    continue
                if at_offset is not None and rec.offset > at_offset:
                    beyond = True
                    break
                last = max(last, rec.offset)
                if not batch.is_control:
                    replay.raw(rec.key, rec.value, rec.offset, str(seg.log))
    if at_offset is not None and at_offset > last and not beyond:
        raise OffsetOutOfLogError(f"{directory}: offset {at_offset} is beyond the end of the log (last offset {last})")
    replay.finish()
    image.offset = last if at_offset is None else at_offset
    return image
