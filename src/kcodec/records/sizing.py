"""Bytes on disk for records of a given shape, from the generated size functions.

The totals are arithmetic on key, value and header lengths
(:func:`legacy_entry_size`, :func:`v2_fixed_size` and :func:`v2_record_size`: the one
place a record's size is written by hand), with the per-format
overheads the generator emits; ``kcodec size`` and the pipeline's cost table
(:mod:`kcodec.spark.cost_table`) both use them. The per-field breakdown comes from
the generated ``field_sizes``.

Size arithmetic needs no buffers: keys and values are objects whose ``len()`` is their size (the size
functions read nothing else), and records that take the same bytes are sized once and counted (in v2 a
record's size changes only where its offset delta's varint grows a byte), so ``--value-size 2**40`` or
``--records 10**12`` costs no memory. What the format's int32 fields cannot hold is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kcodec.errors import EncodeError
from kcodec.generated import codec
from kcodec.generated.legacy_log_entry import LEGACY_LOG_ENTRY_V0_OVERHEAD, LEGACY_LOG_ENTRY_V1_OVERHEAD
from kcodec.generated.legacy_message import LEGACY_MESSAGE_V0_OVERHEAD, LEGACY_MESSAGE_V1_OVERHEAD
from kcodec.generated.record_batch import RECORD_BATCH_V2_OVERHEAD
from kcodec.records import values
from kcodec.records.framing import LOG_OVERHEAD
from kcodec.records.model import Record, TimestampType
from kcodec.runtime.sizes import size_varint, size_varlong

__all__ = [
    "SizeQuery",
    "SizeResult",
    "size_on_disk",
    "legacy_entry_size",
    "v2_fixed_size",
    "v2_fixed_size_of",
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


def v2_fixed_size(key_size: int, value_size: int, headers: tuple = ()) -> int:
    """The part of a v2 record's body that does not depend on its place in the batch: its key, value and
    headers as ``DefaultRecord`` writes them (sizes, -1 for null; ``headers`` are (key bytes, value bytes
    or -1)). The compiled kernel's ``columns_sizes_v2`` computes the same for Arrow columns."""
    # A varint length then the bytes; null is the length -1, which takes one byte (zigzag).
    body = size_varint(key_size) + max(key_size, 0) + size_varint(value_size) + max(value_size, 0)
    body += size_varint(len(headers))
    for k, v in headers:
        body += size_varint(k) + k + size_varint(v) + max(v, 0)
    return body


def v2_record_size(offset_delta: int, timestamp_delta: int, fixed: int) -> int:
    """Bytes of one v2 record (``DefaultRecord.sizeInBytes``) from its :func:`v2_fixed_size` and its place:
    the attributes byte, the timestamp and offset deltas, and the length varint before it all."""
    body = 1 + size_varlong(timestamp_delta) + size_varint(offset_delta) + fixed
    return size_varint(body) + body


def v2_fixed_size_of(key: bytes | None, value: bytes | None, headers) -> int:
    """:func:`v2_fixed_size` of a record's objects: bytes or None, headers (str key, bytes or None)."""
    lengths = tuple((len(hk.encode("utf-8")), -1 if hv is None else len(hv)) for hk, hv in headers)
    return v2_fixed_size(-1 if key is None else len(key), -1 if value is None else len(value), lengths)


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
        out: dict[str, object] = {"magic": self.magic, "bytes": self.total}
        if breakdown:
            out["fields"] = dict(self.fields)
        return out


_INT32_MAX = 2**31 - 1


class _Length:
    """Stands for ``n`` bytes: the size functions only take ``len()`` of keys and values."""

    __slots__ = ("n",)

    def __init__(self, n: int):
        self.n = n

    def __len__(self) -> int:
        return self.n


def _blob(n: int) -> _Length | None:
    if n > _INT32_MAX:
        raise EncodeError(f"{n} bytes do not fit a key or value: its length is an int32 (at most {_INT32_MAX})")
    return None if n < 0 else _Length(n)


def _groups(count: int, magic: int) -> list[tuple[int, int]]:
    """(first record index, records) of runs of records that take the same bytes: all of them in v0/v1;
    in v2 those whose offset delta (the index, a zigzag varint) takes as many bytes."""
    if magic != 2:
        return [(0, count)]
    out, start, width = [], 0, 1
    while start < count:
        stop = min(count, 1 << (7 * width - 1))  # zigzag(i) = 2i takes ``width`` bytes below 2**(7*width)
        if stop > start:
            out.append((start, stop - start))
            start = stop
        width += 1
    return out


def _add(into: dict[str, int], prefix: str, sizes: dict[str, int]) -> None:
    for k, v in sizes.items():
        into[f"{prefix}{k}"] = into.get(f"{prefix}{k}", 0) + v


def _records(q: SizeQuery, magic: int) -> list[tuple[Record, int]]:
    """One record per run of records of the same size (offsets 0.., timestamp 0, none in v0; headers only
    in v2), with how many it stands for."""
    key, value = _blob(q.key_size), _blob(q.value_size)
    headers = tuple(("k" * k, _blob(v)) for k, v in q.headers) if magic == 2 else ()
    ts_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else TimestampType.CREATE_TIME
    # a _Length stands for the bytes: the size functions take only len() of a key or value
    return [
        (Record(i, 0 if magic else -1, ts_type, key, value, headers), n)  # type: ignore[arg-type]
        for i, n in _groups(q.records, magic)
    ]


def _check_int32(total: int, what: str) -> None:
    if total > _INT32_MAX:
        raise EncodeError(f"{what} of {total} bytes does not fit its int32 size field (at most {_INT32_MAX})")


def size_on_disk(magic: int, q: SizeQuery) -> SizeResult:
    """v2: one batch holding every record; v0/v1: one log entry per record."""
    if q.records < 1:
        raise EncodeError(f"a size query needs at least one record, not {q.records}")
    if magic == 2 and q.records > _INT32_MAX:
        raise EncodeError(
            f"{q.records} records do not fit one v2 batch: its record count is an int32 (at most {_INT32_MAX})"
        )
    groups = _records(q, magic)
    fields: dict[str, int] = {}
    if magic == 2:
        batch = values.v2_batch([r for r, _ in groups], base_offset=0, last_offset=q.records - 1)
        batch_codec, record_codec = codec("record_batch", 2), codec("record", 2)
        sizes = batch_codec.field_sizes(batch)
        _add(fields, "", {k: v for k, v in sizes.items() if k != "records"})
        total = sum(v for k, v in sizes.items() if k != "records")
        for value, (_, n) in zip(batch["records"], groups):
            size = record_codec.size(value)
            _check_int32(size, "a record")
            total += n * size
            _add(fields, "records[].", {k: n * v for k, v in record_codec.field_sizes(value).items()})
        _check_int32(total - LOG_OVERHEAD, "the batch")
        return SizeResult(2, total, fields)
    entry_codec, message_codec = codec("legacy_log_entry", magic), codec("legacy_message", magic)
    total = 0
    entries = values.legacy_entries([r for r, _ in groups], magic=magic, base_offset=0)
    for entry, (_, n) in zip(entries, groups):
        size = entry_codec.size(entry)
        _check_int32(size - LOG_OVERHEAD, "a message")
        total += n * size
        _add(fields, "", {k: n * v for k, v in entry_codec.field_sizes(entry).items() if k != "message"})
        _add(fields, "message.", {k: n * v for k, v in message_codec.field_sizes(entry["message"]).items()})
    return SizeResult(magic, total, fields)
