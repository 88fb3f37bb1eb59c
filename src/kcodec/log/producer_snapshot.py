"""Producer-state snapshot files (``<offset>.snapshot`` in a partition directory), read as Kafka's
``ProducerStateManager.readSnapshot`` reads them: the ``producer_snapshot`` entity (int16 version 1, CRC-32C
of the entries, the int32-counted producer entries), the CRC checked, each entry turned into the
``ProducerStateEntry`` Kafka rebuilds from it (no batch metadata when ``last_offset`` is negative, no open
transaction when ``current_txn_first_offset`` is)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kcodec.errors import CorruptError, CrcMismatchError, DecodeError
from kcodec.generated import ENTITY_VERSIONS, codec

__all__ = ["BatchMetadata", "ProducerStateEntry", "read_producer_snapshot", "MAX_PRODUCER_SNAPSHOT_BYTES"]

ENTITY = "producer_snapshot"
# 44 bytes per producer: a larger file would hold millions of producer ids, which no broker keeps
MAX_PRODUCER_SNAPSHOT_BYTES = 256 << 20
_INT32_MAX = (1 << 31) - 1


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
    """The entries of a producer-state snapshot, in file order. Damage is a
    :class:`~kcodec.errors.DecodeError` naming the file: a CRC that does not hold is a
    :class:`~kcodec.errors.CrcMismatchError` with the stored and the computed CRC."""
    path = Path(path)
    with open(path, "rb") as f:
        data = f.read(MAX_PRODUCER_SNAPSHOT_BYTES + 1)
    if len(data) > MAX_PRODUCER_SNAPSHOT_BYTES:
        raise CorruptError(f"{path}: larger than {MAX_PRODUCER_SNAPSHOT_BYTES} bytes: not a producer-state snapshot")
    version = ENTITY_VERSIONS[ENTITY][-1]
    try:
        value = codec(ENTITY, version).parse(data)
    except CrcMismatchError as exc:
        raise exc.replace(
            message=f"{path}: producer-state snapshot is corrupt, CRC-32C does not hold: {exc.message}"
        ) from None
    except DecodeError as exc:
        raise exc.replace(message=f"{path}: not a producer-state snapshot: {exc.message}") from None
    return [_entry(e) for e in value["producer_entries"]]


def _entry(e) -> ProducerStateEntry:
    batch = None
    if e["last_offset"] >= 0:
        batch = BatchMetadata(e["last_sequence"], e["last_offset"], e["offset_delta"], e["timestamp"])
    first = e["current_txn_first_offset"]
    return ProducerStateEntry(
        e["producer_id"], e["epoch"], e["coordinator_epoch"], e["timestamp"], first if first >= 0 else None, batch
    )
