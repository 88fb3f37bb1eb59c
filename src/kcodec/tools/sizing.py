"""Bytes on disk for records of a given shape, from the generated size functions.

The totals are arithmetic on key, value and header lengths
(:func:`legacy_entry_size`, :func:`v2_record_size`), with the per-format
overheads the generator emits; ``kcodec size`` and the pipeline's cost table
(:mod:`kcodec.spark.sizes`) both use them. The per-field breakdown comes from
the generated ``field_sizes``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kcodec.generated import codec
from kcodec.generated.legacy_log_entry import LEGACY_LOG_ENTRY_V0_OVERHEAD, LEGACY_LOG_ENTRY_V1_OVERHEAD
from kcodec.generated.legacy_message import LEGACY_MESSAGE_V0_OVERHEAD, LEGACY_MESSAGE_V1_OVERHEAD
from kcodec.generated.record_batch import RECORD_BATCH_V2_OVERHEAD
from kcodec.records import values
from kcodec.records.model import Record, TimestampType
from kcodec.runtime.sizes import size_varint, size_varlong

__all__ = [
    "SizeQuery",
    "SizeResult",
    "size_on_disk",
    "legacy_entry_size",
    "v2_record_size",
    "LEGACY_ENTRY_OVERHEAD",
    "V2_BATCH_OVERHEAD",
]

#: A v0/v1 log entry around its key and value bytes (offset, size, then the message's
#: crc, magic, attributes, v1 timestamp and the key and value lengths).
LEGACY_ENTRY_OVERHEAD = {
    0: LEGACY_LOG_ENTRY_V0_OVERHEAD + LEGACY_MESSAGE_V0_OVERHEAD,
    1: LEGACY_LOG_ENTRY_V1_OVERHEAD + LEGACY_MESSAGE_V1_OVERHEAD,
}
#: A v2 batch's header, before its records.
V2_BATCH_OVERHEAD = RECORD_BATCH_V2_OVERHEAD


def legacy_entry_size(magic: int, key_size: int, value_size: int) -> int:
    """Bytes of one uncompressed v0/v1 log entry; a size of -1 is null (a length of -1, no bytes)."""
    return LEGACY_ENTRY_OVERHEAD[magic] + max(key_size, 0) + max(value_size, 0)


def v2_record_size(timestamp_delta: int, offset_delta: int, key_size: int, value_size: int, headers: tuple = ()) -> int:
    """Bytes of one v2 record (DefaultRecord.sizeInBytes): ``headers`` are (key bytes, value bytes or -1)."""
    # A varint length then the bytes; null is the length -1, which takes one byte (zigzag).
    body = (
        1  # attributes
        + size_varlong(timestamp_delta)
        + size_varint(offset_delta)
        + size_varint(key_size)
        + max(key_size, 0)
        + size_varint(value_size)
        + max(value_size, 0)
        + size_varint(len(headers))
    )
    for k, v in headers:
        body += size_varint(k) + k + size_varint(v) + max(v, 0)
    return size_varint(body) + body


@dataclass(frozen=True)
class SizeQuery:
    key_size: int  # -1: null
    value_size: int  # -1: null
    records: int = 1
    headers: tuple[tuple[int, int], ...] = ()  # (key bytes, value bytes or -1)


@dataclass
class SizeResult:
    magic: int
    total: int
    fields: dict[str, int] = field(default_factory=dict)  # bytes per field, summed over records

    def as_dict(self, breakdown: bool = False) -> dict:
        out = {"magic": self.magic, "bytes": self.total}
        if breakdown:
            out["fields"] = dict(self.fields)
        return out


def _blob(n: int) -> bytes | None:
    return None if n < 0 else b"\0" * n


def _add(into: dict[str, int], prefix: str, sizes: dict[str, int]) -> None:
    for k, v in sizes.items():
        into[f"{prefix}{k}"] = into.get(f"{prefix}{k}", 0) + v


def _records(q: SizeQuery, magic: int) -> list[Record]:
    """The records the query describes: offsets 0.., timestamp 0 (none in v0), headers only in v2."""
    key, value = _blob(q.key_size), _blob(q.value_size)
    headers = tuple(("k" * k, _blob(v)) for k, v in q.headers) if magic == 2 else ()
    ts_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else TimestampType.CREATE_TIME
    return [Record(i, 0 if magic else -1, ts_type, key, value, headers) for i in range(q.records)]


def size_on_disk(magic: int, q: SizeQuery) -> SizeResult:
    """v2: one batch holding every record; v0/v1: one log entry per record."""
    records = _records(q, magic)
    if magic == 2:
        total = V2_BATCH_OVERHEAD + sum(
            v2_record_size(0, i, q.key_size, q.value_size, q.headers) for i in range(q.records)
        )
    else:
        total = q.records * legacy_entry_size(magic, q.key_size, q.value_size)
    return SizeResult(magic, total, _field_sizes(magic, records))


def _field_sizes(magic: int, records: list[Record]) -> dict[str, int]:
    """Bytes per field, summed over the records, from the generated field size functions."""
    fields: dict[str, int] = {}
    if magic == 2:
        batch = values.v2_batch(records, base_offset=0)
        batch_codec, record_codec = codec("record_batch", 2), codec("record", 2)
        sizes = batch_codec.field_sizes(batch)
        _add(fields, "", {k: v for k, v in sizes.items() if k != "records"})
        for r in batch["records"]:
            _add(fields, "records[].", record_codec.field_sizes(r))
        return fields
    entry_codec, message_codec = codec("legacy_log_entry", magic), codec("legacy_message", magic)
    for entry in values.legacy_entries(records, magic=magic, base_offset=0):
        _add(fields, "", {k: v for k, v in entry_codec.field_sizes(entry).items() if k != "message"})
        _add(fields, "message.", message_codec.field_sizes(entry["message"]))
    return fields
