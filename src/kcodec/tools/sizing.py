"""Bytes on disk for records of a given shape, from the generated size functions."""
from __future__ import annotations

from dataclasses import dataclass, field

from kcodec.generated import codec


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


def size_on_disk(magic: int, q: SizeQuery) -> SizeResult:
    """v2: one batch holding every record; v0/v1: one log entry per record."""
    key, value = _blob(q.key_size), _blob(q.value_size)
    fields: dict[str, int] = {}
    if magic == 2:
        headers = [{"key": "k" * k, "value": _blob(v)} for k, v in q.headers]
        records = [{"attributes": 0, "timestamp_delta": 0, "offset_delta": i, "key": key, "value": value,
                    "headers": headers} for i in range(q.records)]
        batch = {"base_offset": 0, "partition_leader_epoch": -1,
                 "attributes": {"compression": "none", "timestamp_type": "create_time", "transactional": False,
                                "control": False, "delete_horizon": False, "unused": 0},
                 "last_offset_delta": q.records - 1, "base_timestamp": 0, "max_timestamp": 0,
                 "producer_id": -1, "producer_epoch": -1, "base_sequence": -1, "records": records}
        batch_codec, record_codec = codec("record_batch", 2), codec("record", 2)
        sizes = batch_codec.field_sizes(batch)
        _add(fields, "", {k: v for k, v in sizes.items() if k != "records"})
        for r in records:
            _add(fields, "records[].", record_codec.field_sizes(r))
        return SizeResult(2, batch_codec.size(batch), fields)
    attributes = {"compression": "none", "unused": 0}
    message = {"attributes": attributes, "key": key, "value": value}
    if magic == 1:
        attributes["timestamp_type"] = "create_time"
        message["timestamp"] = 0
    entry = {"offset": 0, "message": message}
    entry_codec, message_codec = codec("legacy_log_entry", magic), codec("legacy_message", magic)
    total = 0
    for _ in range(q.records):
        total += entry_codec.size(entry)
        _add(fields, "", {k: v for k, v in entry_codec.field_sizes(entry).items() if k != "message"})
        _add(fields, "message.", message_codec.field_sizes(message))
    return SizeResult(magic, total, fields)
