"""What the records of one batch would take on disk as v0, v1 and v2 with each
codec, from the generated size calculators (``codec(entity, v).size``).

The records keep their grouping: one source batch becomes one v2 batch, one
v0/v1 compressed wrapper, or (uncompressed v0/v1) one log entry per record,
as a producer that batched them the same way would write them. v0 and v1
cannot hold headers and v0 has no timestamps, so those are left out there (as
a down-conversion would); zstd exists only in v2. Control batches have no
v0/v1 form and get no sizes.
"""

from __future__ import annotations

from kcodec.records import values
from kcodec.records.model import TimestampType

__all__ = ["COMBINATIONS", "size_as", "label"]

LEGACY_CODECS = ("none", "gzip", "snappy", "lz4")
V2_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
#: (magic, codec) in the order the summary prints them.
COMBINATIONS: tuple[tuple[int, str], ...] = tuple(
    [(0, c) for c in LEGACY_CODECS] + [(1, c) for c in LEGACY_CODECS] + [(2, c) for c in V2_CODECS]
)


def label(magic: int, codec: str) -> str:
    return f"v{magic}/{codec}"


def _codec(entity: str, version: int):
    from kcodec.generated import codec

    return codec(entity, version)


def _v2_size(batch, records, compression: str) -> int:
    log_append = batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    value = values.v2_batch(
        records,
        base_offset=batch.base_offset,
        compression=compression,
        ts_type=batch.timestamp_type if log_append else TimestampType.CREATE_TIME,
        log_append_time=batch.max_timestamp if log_append else None,
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence,
        transactional=batch.is_transactional,
        partition_leader_epoch=batch.partition_leader_epoch,
    )
    return _codec("record_batch", 2).size(value)


def _legacy_size(records, magic: int, compression: str) -> int:
    entry = _codec("legacy_log_entry", magic)
    ts_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else TimestampType.CREATE_TIME
    return sum(
        map(
            entry.size,
            values.legacy_entries(
                records, magic=magic, base_offset=records[0].offset, compression=compression, ts_type=ts_type
            ),
        )
    )


def size_as(batch) -> dict[str, int] | None:
    """``{"v0/none": bytes, ..., "v2/zstd": bytes}`` for one decoded batch's
    records; None for a control batch. An empty batch costs 0 in v0/v1 (no
    entry) and a bare header in v2."""
    if batch.is_control:
        return None
    records = batch.records
    out: dict[str, int] = {}
    for magic, codec in COMBINATIONS:
        if magic == 2:
            out[label(magic, codec)] = _v2_size(batch, records, codec if records else "none")
        else:
            out[label(magic, codec)] = _legacy_size(records, magic, codec) if records else 0
    return out
