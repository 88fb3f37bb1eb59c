"""Bytes on disk for records of a given shape, from the generated size functions."""

from __future__ import annotations

from dataclasses import dataclass, field

from kcodec.generated import codec
from kcodec.records import values
from kcodec.records.model import Record, TimestampType


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
    fields: dict[str, int] = {}
    if magic == 2:
        batch = values.v2_batch(records, base_offset=0)
        batch_codec, record_codec = codec("record_batch", 2), codec("record", 2)
        sizes = batch_codec.field_sizes(batch)
        _add(fields, "", {k: v for k, v in sizes.items() if k != "records"})
        for r in batch["records"]:
            _add(fields, "records[].", record_codec.field_sizes(r))
        return SizeResult(2, batch_codec.size(batch), fields)
    entry_codec, message_codec = codec("legacy_log_entry", magic), codec("legacy_message", magic)
    total = 0
    for entry in values.legacy_entries(records, magic=magic, base_offset=0):
        total += entry_codec.size(entry)
        _add(fields, "", {k: v for k, v in entry_codec.field_sizes(entry).items() if k != "message"})
        _add(fields, "message.", message_codec.field_sizes(entry["message"]))
    return SizeResult(magic, total, fields)
