"""Producer-state snapshot files (``<offset>.snapshot`` in a partition directory), read as Kafka's
``ProducerStateManager.readSnapshot`` reads them: the ``producer_snapshot`` entity (int16 version 1, CRC-32C
of the entries, the int32-counted producer entries), the CRC checked, each entry turned into the
``ProducerStateEntry`` Kafka rebuilds from it (no batch metadata when ``last_offset`` is negative, no open
transaction when ``current_txn_first_offset`` is)."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kcodec.errors import (
    BadLengthError,
    CorruptError,
    CrcMismatchError,
    RecordCountError,
    TruncatedError,
    record_corrupt_message,
)
from kcodec.generated import ENTITY_VERSIONS
from kcodec.generated import producer_snapshot as _layout
from kcodec.generated import producer_snapshot__producer_entry as _entry_layout
from kcodec.generated.fast.producer_snapshot__producer_entry import (
    FIELDS_PRODUCER_SNAPSHOT__PRODUCER_ENTRY_V1 as _NAMES,
)
from kcodec.generated.fast.producer_snapshot__producer_entry import (
    decode_producer_snapshot__producer_entry_v1 as _decode,
)
from kcodec.runtime.crc import crc32c
from kcodec.runtime.regular_files import open_regular_file

__all__ = [
    "BatchMetadata",
    "ProducerStateEntry",
    "iter_producer_snapshot",
    "read_producer_snapshot",
    "MAX_PRODUCER_SNAPSHOT_BYTES",
]

ENTITY = "producer_snapshot"
# 44 bytes per producer: a larger file would hold millions of producer ids, which no broker keeps
MAX_PRODUCER_SNAPSHOT_BYTES = 256 << 20
_INT32_MAX = (1 << 31) - 1
# the file's layout, as the schema generates it (schemas/internal/producer_snapshot.yaml)
_SNAPSHOT_VERSION = ENTITY_VERSIONS[ENTITY][-1]  # the only version Kafka writes
_VERSION = _layout.PRODUCER_SNAPSHOT_V1_OFFSET_VERSION
_CRC = _layout.PRODUCER_SNAPSHOT_V1_OFFSET_CRC
_COUNT = _layout.PRODUCER_SNAPSHOT_V1_OFFSET_PRODUCER_ENTRIES  # the int32 count, then the entries
_ENTRIES = _layout.PRODUCER_SNAPSHOT_V1_OVERHEAD
_ENTRY = _entry_layout.PRODUCER_SNAPSHOT__PRODUCER_ENTRY_V1_SIZE
_CHUNK = 4096  # entries read at once
_I16, _I32, _U32 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">I")


@dataclass(frozen=True)
class BatchMetadata:
    """The producer's last written batch (Kafka's BatchMetadata)."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        """DefaultRecordBatch.decrementSequence: sequences wrap past Integer.MAX_VALUE to 0."""
        if self.last_seq < self.offset_delta:
            return _INT32_MAX - (self.offset_delta - self.last_seq) + 1
        return self.last_seq - self.offset_delta


@dataclass(frozen=True)
class ProducerStateEntry:
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    last_timestamp: int
    current_txn_first_offset: int | None  # None: no transaction open
    batch: BatchMetadata | None  # None: the producer wrote nothing that is still in the log


def read_producer_snapshot(path: str | os.PathLike) -> list[ProducerStateEntry]:
    """The entries of a producer-state snapshot, in file order (:func:`iter_producer_snapshot`, as a list)."""
    return list(iter_producer_snapshot(path))


def iter_producer_snapshot(path: str | os.PathLike) -> Iterator[ProducerStateEntry]:
    """The entries of a producer-state snapshot, in file order, read a chunk of fixed-size entries at a time
    (a 41 MB snapshot of a million producers took 1.1 GiB parsed whole). The whole file is checked first
    (its version, that the count fills it exactly, the CRC-32C over the entries), so damage is a
    :class:`~kcodec.errors.DecodeError` naming the file before any entry is given: a CRC that does not hold
    is a :class:`~kcodec.errors.CrcMismatchError` with the stored and the computed CRC."""
    path = Path(path)
    fd = open_regular_file(path)
    try:
        size = os.fstat(fd).st_size
        if size > MAX_PRODUCER_SNAPSHOT_BYTES:
            raise CorruptError(
                f"{path}: larger than {MAX_PRODUCER_SNAPSHOT_BYTES} bytes: not a producer-state snapshot"
            )
        count = _check(path, fd, size)  # before the first entry is asked for: damage is said before output
    except BaseException:
        os.close(fd)
        raise
    return _entries(path, fd, count)


def _entries(path: Path, fd: int, count: int) -> Iterator[ProducerStateEntry]:
    try:
        for first in range(0, count, _CHUNK):
            n = min(_CHUNK, count - first)
            at = _ENTRIES + first * _ENTRY
            buf = os.pread(fd, n * _ENTRY, at)
            if len(buf) < n * _ENTRY:  # the file shrank after it was checked
                raise TruncatedError(f"{path}: not a producer-state snapshot: input ends early", position=at + len(buf))
            for k in range(n):
                yield _entry(dict(zip(_NAMES, _decode(buf, k * _ENTRY, (k + 1) * _ENTRY)[0])))
    finally:
        os.close(fd)


def _check(path: Path, fd: int, size: int) -> int:
    """The entry count of a whole, undamaged snapshot file (the header, the size, the CRC checked)."""
    head = os.pread(fd, _ENTRIES, 0)
    what = f"{path}: not a producer-state snapshot"
    if len(head) < _ENTRIES:
        raise TruncatedError(f"{what}: input ends early ({len(head)} bytes, the header takes {_ENTRIES})", position=0)
    version = _I16.unpack_from(head, _VERSION)[0]
    if version != _SNAPSHOT_VERSION:
        raise CorruptError(f"{what}: version is {version}, expected {_SNAPSHOT_VERSION}", position=_VERSION)
    stored, count = _U32.unpack_from(head, _CRC)[0], _I32.unpack_from(head, _COUNT)[0]
    if count < 0:
        raise RecordCountError(f"{what}: negative producer count {count}", position=_COUNT, field="producer_entries")
    need = _ENTRIES + count * _ENTRY
    if size < need:
        raise TruncatedError(
            f"{what}: input ends early: {count} producers take {need} bytes, the file {size}", position=size
        )
    if size > need:
        raise BadLengthError(f"{what}: {size - need} bytes left after its {count} producers", position=need)
    crc, at = 0, _CRC + 4
    while at < size:  # the CRC covers the count and the entries, read a chunk at a time
        chunk = os.pread(fd, min(1 << 20, size - at), at)
        if not chunk:
            raise TruncatedError(f"{what}: input ends early (the file shrank while it was read)", position=at)
        crc, at = crc32c(chunk, crc), at + len(chunk)
    if crc != stored:
        raise CrcMismatchError(
            f"{path}: producer-state snapshot is corrupt, CRC-32C does not hold: {record_corrupt_message(stored, crc)}",
            position=_CRC,
            field="crc",
        )
    return count


def _entry(e) -> ProducerStateEntry:
    batch = None
    if e["last_offset"] >= 0:
        batch = BatchMetadata(e["last_sequence"], e["last_offset"], e["offset_delta"], e["timestamp"])
    first = e["current_txn_first_offset"]
    return ProducerStateEntry(
        e["producer_id"], e["epoch"], e["coordinator_epoch"], e["timestamp"], first if first >= 0 else None, batch
    )
