"""The writer side: records in, Kafka log bytes out, as Kafka's MemoryRecordsBuilder writes them.

Three entry points, all returning the bytes of one or more log entries exactly
as Kafka writes them to a segment or a Produce/Fetch ``records`` field:

* :func:`encode_batch` -- one v2 batch, or v0/v1 messages (one entry per record,
  or one compressed wrapper holding them all);
* :func:`encode_control_batch` -- a COMMIT/ABORT transaction marker or a KRaft
  control batch;
* :func:`convert_batches` -- decoded :class:`~kcodec.records.model.Batch`
  objects re-encoded at another magic or codec, keeping every record's offset
  and timestamp, the way a broker up- or down-converts.

Every byte is produced by the generated codecs (``kcodec.generated``), which
fill in lengths, counts and CRCs; the field values come from
:mod:`kcodec.records.values`; this module validates the inputs with the rules
of Kafka's ``MemoryRecordsBuilder``. Anything Kafka's
builder refuses raises :class:`~kcodec.errors.EncodeError`.

Records are given as :class:`NewRecord`, as kcodec :class:`Record` objects
(e.g. read from another log) or as plain dicts with the keys of
:class:`NewRecord` (the Spark writer hands Arrow columns to the kernel itself:
:mod:`kcodec.records.arrow_encode`). A record's ``offset`` is absolute: when given it is used
as is (compacted gaps, conversions keeping offsets); otherwise it is the
previous record's offset + 1, starting at ``base_offset`` (Kafka's
``nextSequentialOffset``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kcodec.errors import EncodeError, KcodecError
from kcodec.generated.enums import CONTROL_RECORD_TYPE
from kcodec.records import values
from kcodec.records.model import TRANSACTION_MARKERS, Batch, Record, TimestampType
from kcodec.records.values import NO_TIMESTAMP
from kcodec.runtime import compression as compress_lib
from kcodec.runtime.encoded import EncodedArray

__all__ = [
    "NewRecord",
    "RecordInput",
    "encode_batch",
    "encode_control_batch",
    "convert_batches",
    "encode_v2_written",
    "NO_TIMESTAMP",
    "CONTROL_TYPES",
]

_NO_PRODUCER_ID = -1
_NO_PRODUCER_EPOCH = -1
_NO_SEQUENCE = -1
_NO_PARTITION_LEADER_EPOCH = -1
#: The batch fields of a plain (non-idempotent, non-transactional, data) batch, as the producer's defaults.
_NO_PRODUCER_STATE: dict[str, Any] = {
    "producer_id": _NO_PRODUCER_ID,
    "producer_epoch": _NO_PRODUCER_EPOCH,
    "base_sequence": _NO_SEQUENCE,
    "transactional": False,
    "control": False,
    "partition_leader_epoch": _NO_PARTITION_LEADER_EPOCH,
    "delete_horizon_ms": None,
}
_INT16 = (-(1 << 15), (1 << 15) - 1)
_INT32 = (-(1 << 31), (1 << 31) - 1)
_INT64 = (-(1 << 63), (1 << 63) - 1)

#: Control record type ids by (lower-case) name, as the control_record_key schema spells them.
CONTROL_TYPES: dict[str, int] = dict(CONTROL_RECORD_TYPE)


@dataclass(frozen=True, slots=True)
class NewRecord:
    """A record to write.

    ``timestamp`` is in milliseconds, -1 for none. ``offset`` is the absolute
    offset; None means "the previous record's offset + 1" (the batch's base
    offset for the first record)."""

    key: bytes | None = None
    value: bytes | None = None
    headers: Sequence[tuple[str, bytes | None]] = ()
    timestamp: int = NO_TIMESTAMP
    offset: int | None = None


#: What the encoders accept for one record.
RecordInput = NewRecord | Record | Mapping[str, Any]

_RECORD_KEYS = frozenset(("key", "value", "headers", "timestamp", "offset"))


@dataclass(frozen=True, slots=True)
class _Rec:
    """A validated record with its absolute offset assigned."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


def _codec(entity: str, version: int):
    # Imported on first use, as the reader does: generated code pulls in construct.
    from kcodec.generated import codec

    return codec(entity, version)


# ---------------------------------------------------------------------------- validation helpers


def _int(name: str, value: Any, bounds: tuple[int, int]) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise EncodeError(f"{name} must be an int, not {type(value).__name__}")
    if not bounds[0] <= value <= bounds[1]:
        raise EncodeError(f"{name} {value} is out of range [{bounds[0]}, {bounds[1]}]")
    return value


def _timestamp(name: str, value: Any) -> int:
    value = _int(name, value, _INT64)
    if value < 0 and value != NO_TIMESTAMP:
        # MemoryRecordsBuilder.appendWithOffset: "Invalid negative timestamp N"
        raise EncodeError(f"Invalid negative timestamp {value} ({name}: a timestamp is >= 0, or -1 for none)")
    return value


def _bytes(name: str, value: Any) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise EncodeError(f"{name} must be bytes or None, not {type(value).__name__}")


def _magic(magic: Any) -> int:
    if isinstance(magic, bool) or magic not in (0, 1, 2):
        raise EncodeError(f"magic must be 0, 1 or 2, not {magic!r}")
    return magic


def _compression(compression: Any, magic: int, level: int | None) -> str:
    """The codec name, checked against the magic, with its level validated."""
    if isinstance(compression, str) and compression.lower() in compress_lib.CODEC_IDS:
        name = compression.lower()
    elif isinstance(compression, int) and not isinstance(compression, bool) and compression in compress_lib.CODECS:
        name = compress_lib.CODECS[compression]
    else:
        raise EncodeError(f"unknown compression codec {compression!r} (known: {', '.join(compress_lib.CODEC_IDS)})")
    if name == "zstd" and magic < 2:
        raise EncodeError(f"ZStandard compression is not supported for magic {magic}")
    if type(level) is int or level is None:
        _check_level(name, magic, level)  # the levels of a program are few: each is checked once
    else:
        _check_level.__wrapped__(name, magic, level)
    return name


@lru_cache(maxsize=64)
def _check_level(name: str, magic: int, level: Any) -> None:
    try:
        compress_lib.compress(name, b"", magic=magic, level=level)  # validates the level (KIP-390 ranges)
    except KcodecError as exc:
        raise EncodeError(f"compression level: {exc.message}") from None


def _timestamp_type(value: Any, magic: int) -> TimestampType:
    try:
        ts_type = TimestampType(value)
    except ValueError:
        raise EncodeError(f"unknown timestamp type {value!r}") from None
    if magic == 0:
        if ts_type is TimestampType.LOG_APPEND_TIME:
            raise EncodeError("magic 0 has no timestamps: timestamp_type must be CREATE_TIME or NO_TIMESTAMP_TYPE")
        return TimestampType.NO_TIMESTAMP_TYPE
    if ts_type is TimestampType.NO_TIMESTAMP_TYPE:
        # MemoryRecordsBuilder: "TimestampType must be set for magic >= 0"
        raise EncodeError(f"timestamp_type must be CREATE_TIME or LOG_APPEND_TIME for magic {magic}")
    return ts_type


def _log_append_time(ts_type: TimestampType, log_append_time: Any) -> int | None:
    if ts_type is TimestampType.LOG_APPEND_TIME:
        if log_append_time is None:
            raise EncodeError(values.NEEDS_APPEND_TIME)
        value = _timestamp("log_append_time", log_append_time)
        if value < 0:
            raise EncodeError(f"log_append_time must be >= 0, not {value}")
        return value
    if log_append_time is not None:
        raise EncodeError("log_append_time is only used with timestamp_type LOG_APPEND_TIME")
    return None


def _fields(item: Any, index: int) -> tuple:
    """(key, value, headers, timestamp, offset) of one record input."""
    if isinstance(item, NewRecord):
        return item.key, item.value, item.headers, item.timestamp, item.offset
    if isinstance(item, Record):
        if item.control is not None:
            raise EncodeError(f"record {index} is a control record: write those with encode_control_batch")
        return item.key, item.value, item.headers, item.timestamp, item.offset
    if isinstance(item, Mapping):
        unknown = item.keys() - _RECORD_KEYS if not item.keys() <= _RECORD_KEYS else ()
        if unknown:
            raise EncodeError(
                f"record {index}: unknown field(s) {', '.join(sorted(map(str, unknown)))} "
                f"(known: {', '.join(sorted(_RECORD_KEYS))})"
            )
        return (
            item.get("key"),
            item.get("value"),
            item.get("headers") or (),
            item.get("timestamp", NO_TIMESTAMP),
            item.get("offset"),
        )
    raise EncodeError(f"record {index} must be a NewRecord, a kcodec Record or a dict, not {type(item).__name__}")


def _headers(headers: Any, index: int) -> tuple[tuple[str, bytes | None], ...]:
    if type(headers) in (list, tuple) and all(
        type(h) is tuple and len(h) == 2 and type(h[0]) is str and (h[1] is None or type(h[1]) is bytes)
        for h in headers
    ):
        return tuple(headers)  # already (str, bytes-or-None) pairs: nothing to convert
    if isinstance(headers, (str, bytes)) or not isinstance(headers, Iterable):
        raise EncodeError(f"record {index}: headers must be a list of (key, value) pairs")
    out = []
    for h in headers:
        try:
            key, value = h
        except (TypeError, ValueError):
            raise EncodeError(f"record {index}: header {h!r} is not a (key, value) pair") from None
        if key is None:
            raise EncodeError(f"record {index}: Invalid null header key found in headers")
        if not isinstance(key, str):
            raise EncodeError(f"record {index}: header keys are str, not {type(key).__name__}")
        out.append((key, _bytes(f"record {index}: header {key!r} value", value)))
    return tuple(out)


def _normalize(
    records: Iterable[RecordInput], base_offset: int | None, magic: int, allow_lossy: bool
) -> tuple[int, list[_Rec]]:
    """Validate the inputs and assign absolute offsets; returns (base offset, records)."""
    if isinstance(records, (str, bytes, Mapping, NewRecord, Record)) or not isinstance(records, Iterable):
        raise EncodeError("records must be a list of records")
    items = [_fields(item, i) for i, item in enumerate(records)]
    if base_offset is None:
        first = items[0][4] if items else None
        base_offset = 0 if first is None else first
    base_offset = _int("base_offset", base_offset, (0, _INT64[1]))
    out: list[_Rec] = []
    previous = None
    for i, (key, value, headers, timestamp, offset) in enumerate(items):
        if offset is None:
            offset = base_offset if previous is None else previous + 1
            if offset > _INT64[1]:
                raise EncodeError(
                    f"record {i}: its offset would be {offset}, past the int64 range of offsets "
                    f"({len(items)} records from base offset {base_offset})"
                )
        elif type(offset) is not int or offset < 0:
            offset = _int(f"record {i} offset", offset, (0, _INT64[1]))
        if previous is not None and offset <= previous:
            raise EncodeError(
                f"record {i}: Illegal offset {offset} following previous offset {previous} "
                "(Offsets must increase monotonically)."
            )
        if offset < base_offset:
            raise EncodeError(f"record {i}: offset {offset} is below the batch's base offset {base_offset}")
        if magic == 2 and offset - base_offset > _INT32[1]:
            raise EncodeError(
                f"record {i}: offset {offset} is {offset - base_offset} past the base offset "
                f"{base_offset}; a v2 offset delta must fit in an int32"
            )
        if type(timestamp) is not int or timestamp < -1 or timestamp > _INT64[1]:
            timestamp = _timestamp(f"record {i} timestamp", timestamp)
        hdrs = _headers(headers, i) if headers else ()
        if hdrs and magic < 2:
            if not allow_lossy:
                raise EncodeError(
                    f"record {i}: Magic v{magic} does not support record headers (pass allow_lossy=True to drop them)"
                )
            hdrs = ()
        if magic == 0 and timestamp != NO_TIMESTAMP:
            if not allow_lossy:
                raise EncodeError(
                    f"record {i}: magic 0 has no timestamps, but the record has timestamp "
                    f"{timestamp} (pass allow_lossy=True to drop it)"
                )
            timestamp = NO_TIMESTAMP
        if key is not None and type(key) is not bytes:
            key = _bytes(f"record {i} key", key)
        if value is not None and type(value) is not bytes:
            value = _bytes(f"record {i} value", value)
        out.append(_Rec(offset, timestamp, key, value, hdrs))
        previous = offset
    return base_offset, out


# ---------------------------------------------------------------------------- building through the codecs


class _Encoders:
    """The generated fast encoders (compiled where built) and their field orders."""

    def __init__(self):
        from kcodec.generated.fast import legacy_log_entry, legacy_message, record, record_batch
        from kcodec.generated.fast.kernel import compiled_kernel

        self.record = record.encode_record_v2_array
        self.batch = record_batch.encode_record_batch_v2
        kernel = compiled_kernel()
        # the kernel's v2 record writer (None without the compiled kernel: the Python path does it all)
        self.records = getattr(kernel, "encode_records_v2", None)
        self.legacy = getattr(kernel, "encode_legacy_entries", None)  # v0/v1 entries, likewise
        self.batch_fields = record_batch.FIELDS_RECORD_BATCH_V2
        self.entry = {0: legacy_log_entry.encode_legacy_log_entry_v0, 1: legacy_log_entry.encode_legacy_log_entry_v1}
        self.entry_fields = {m: getattr(legacy_log_entry, f"FIELDS_LEGACY_LOG_ENTRY_V{m}") for m in (0, 1)}
        self.message_fields = {m: getattr(legacy_message, f"FIELDS_LEGACY_MESSAGE_V{m}") for m in (0, 1)}
        # Records are built as tuples directly (the hot path): the schema's order is checked once here.
        if record.FIELDS_RECORD_V2 != (
            "length",
            "attributes",
            "timestamp_delta",
            "offset_delta",
            "key",
            "value",
            "headers",
        ):
            raise ImportError("record v2 fields changed in the schema: update kcodec.records.encode")


_encoders: _Encoders | None = None


def _enc() -> _Encoders:
    global _encoders
    if _encoders is None:
        _encoders = _Encoders()
    return _encoders


def _ordered(value: dict, fields: tuple[str, ...]) -> tuple:
    return tuple(value.get(name) for name in fields)


def _encode_v2(value: dict, level: int | None) -> bytes:
    e = _enc()
    try:
        return e.batch(_ordered(value, e.batch_fields), level)
    except EncodeError:
        raise
    except KcodecError as exc:  # e.g. a CompressionError from a codec
        raise EncodeError(exc.message) from None


def _encode_legacy(magic: int, entry: dict, level: int | None) -> bytes:
    e = _enc()
    message = dict(entry["message"])
    value = message["value"]
    if isinstance(value, list):  # a wrapper: its inner entries as tuples
        message["value"] = [legacy_entry_tuple(magic, inner) for inner in value]
    t = _ordered(
        {"offset": entry["offset"], "message": _ordered(message, e.message_fields[magic])}, e.entry_fields[magic]
    )
    try:
        return e.entry[magic](t, level)
    except EncodeError:
        raise
    except KcodecError as exc:
        raise EncodeError(exc.message) from None


def legacy_entry_tuple(magic: int, entry: dict) -> tuple:
    """A v0/v1 log entry value (a dict, as :mod:`kcodec.records.values` builds it) as the tuple the fast
    encoders take."""
    e = _enc()
    return _ordered(
        {"offset": entry["offset"], "message": _ordered(entry["message"], e.message_fields[magic])},
        e.entry_fields[magic],
    )


def _build_v2(recs: list[_Rec], *, level: int | None, **batch) -> bytes:
    value = values.v2_batch(recs, fast=True, **batch)
    return _encode_v2(value, level if recs else None)


def _encode_v2_records(
    records: Iterable[RecordInput],
    base_offset: int | None,
    *,
    last_offset: int | None,
    empty_max_timestamp: int | None = None,
    **batch,
) -> bytes:
    """One v2 batch of writer inputs: the records written by the compiled kernel when it takes them,
    else validated and built in Python (``_normalize``, ``_build_v2``), which also words every error."""
    written = kernel_v2_records(records, base_offset, batch["delete_horizon_ms"])
    if written is None:
        base, recs = _normalize(records, base_offset, 2, False)
        return _build_v2(
            recs, base_offset=base, last_offset=last_offset, empty_max_timestamp=empty_max_timestamp, **batch
        )
    return _batch_around(written, last_offset=last_offset, **batch)


def _batch_around(written: tuple, *, level: int | None, last_offset: int | None, **batch) -> bytes:
    """The v2 batch around records the compiled kernel wrote (``written``: records bytes, count, base
    offset, last record offset, base timestamp, max timestamp), by the generated batch encoder."""
    data, count, base, last_record_offset, base_timestamp, max_timestamp = written
    value = values.v2_batch_value(
        EncodedArray(data, count),
        base_offset=base,
        last_offset_delta=values.v2_last_offset_delta(base, last_offset, last_record_offset),
        base_timestamp=base_timestamp,
        max_timestamp=max_timestamp,
        **batch,
    )
    return _encode_v2(value, level)


def kernel_v2_records(records: Any, base_offset: int | None, delete_horizon_ms: int | None) -> tuple | None:
    """The compiled kernel's (records bytes, count, base offset, last offset, base timestamp, max
    timestamp), or None: no kernel, or inputs it leaves to the Python path."""
    e = _enc()
    if type(records) not in (list, tuple) or e.records is None:
        return None
    return e.records(records, base_offset, delete_horizon_ms, NewRecord, Record)


def _encode_legacy_records(
    records: Iterable[RecordInput],
    base_offset: int | None,
    *,
    magic: int,
    compression: str,
    level: int | None,
    ts_type: TimestampType,
    log_append_time: int | None,
    allow_lossy: bool,
) -> bytes:
    """v0/v1 entries of writer inputs: the messages written by the compiled kernel when it takes them
    (a compressed wrapper gets them as an EncodedArray, so the wrapper, its compression and CRC stay the
    generated encoder's), else validated and built in Python (``_normalize``, ``_build_legacy``)."""
    relative = magic == 1 and compression != "none"  # v1 inner offsets (values.legacy_entries)
    written = kernel_legacy_entries(records, base_offset, magic, log_append_time, relative, allow_lossy)
    if written is None:
        base, recs = _normalize(records, base_offset, magic, allow_lossy)
        return _build_legacy(
            recs,
            magic=magic,
            base_offset=base,
            compression=compression,
            level=level,
            ts_type=ts_type,
            log_append_time=log_append_time,
        )
    data, count, _base, last_offset, max_timestamp = written
    if compression == "none":
        return data
    wrapper_ts = max_timestamp if log_append_time is None else log_append_time
    message = values.legacy_message(magic, compression, ts_type, wrapper_ts, None, EncodedArray(data, count))
    return _encode_legacy(magic, {"offset": last_offset, "message": message}, level)


def kernel_legacy_entries(
    records: Any, base_offset: int | None, magic: int, append_time: int | None, relative: bool, allow_lossy: bool
) -> tuple | None:
    """The compiled kernel's v0/v1 log entries of ``records``: (bytes, count, base offset, last offset, max
    timestamp), or None: no kernel, or inputs it leaves to the Python path (which words the errors)."""
    e = _enc()
    if e.legacy is None or type(records) not in (list, tuple):
        return None
    return e.legacy(records, base_offset, magic, append_time, relative, allow_lossy, NewRecord, Record)


def _build_legacy(
    recs: list[_Rec],
    *,
    magic: int,
    base_offset: int,
    compression: str,
    level: int | None,
    ts_type: TimestampType,
    log_append_time: int | None,
) -> bytes:
    entries = values.legacy_entries(
        recs,
        magic=magic,
        base_offset=base_offset,
        compression=compression,
        ts_type=ts_type,
        log_append_time=log_append_time,
    )
    return b"".join(_encode_legacy(magic, e, None if compression == "none" else level) for e in entries)


# ---------------------------------------------------------------------------- public API


def encode_batch(
    records: Iterable[RecordInput],
    *,
    magic: int = 2,
    compression: str | int = "none",
    compression_level: int | None = None,
    base_offset: int | None = None,
    timestamp_type: TimestampType | int = TimestampType.CREATE_TIME,
    log_append_time: int | None = None,
    producer_id: int = _NO_PRODUCER_ID,
    producer_epoch: int = _NO_PRODUCER_EPOCH,
    base_sequence: int = _NO_SEQUENCE,
    transactional: bool = False,
    partition_leader_epoch: int = _NO_PARTITION_LEADER_EPOCH,
    delete_horizon_ms: int | None = None,
    allow_lossy: bool = False,
) -> bytes:
    """Encode ``records`` as Kafka writes them at ``magic``.

    * magic 2: one record batch. ``base_offset`` (default: the first record's
      explicit offset, else 0) is the batch's baseOffset; baseTimestamp is
      the first record's timestamp, or ``delete_horizon_ms`` when given (the
      delete-horizon bit is then set and every delta is against it).
      maxTimestamp is the largest record timestamp (CreateTime) or
      ``log_append_time`` (LogAppendTime, which it then requires). No records
      gives an empty batch (count 0, baseTimestamp -1, compression none).
    * magic 0/1 uncompressed: one log entry per record.
    * magic 0/1 compressed: one wrapper message holding the compressed
      message set; v1 inner offsets are relative to ``base_offset`` and the
      wrapper's offset is the last record's. Under LogAppendTime (v1 only)
      the wrapper and every message carry ``log_append_time``.

    ``compression`` is none, gzip, snappy, lz4 or zstd (or its id);
    ``compression_level`` follows KIP-390 (gzip 1..9 or -1, lz4 1..17, zstd
    -131072..22; None for the default). Producer fields, ``transactional``,
    ``partition_leader_epoch`` and ``delete_horizon_ms`` exist only in v2.

    Raises :class:`EncodeError` for what Kafka's MemoryRecordsBuilder refuses:
    transactional without a producer id; a producer id without an epoch or a
    base sequence >= 0; offsets that do not increase or whose delta does not
    fit an int32; negative timestamps other than -1; null header keys; zstd,
    headers, producer state or a delete horizon below magic 2; unknown codecs
    and levels out of range. With ``allow_lossy`` headers below magic 2 and
    timestamps at magic 0 are dropped instead of refused.
    """
    magic = _magic(magic)
    name = _compression(compression, magic, compression_level)
    ts_type = _timestamp_type(timestamp_type, magic)
    lat = _log_append_time(ts_type, log_append_time)
    producer_id = _int("producer_id", producer_id, _INT64)
    producer_epoch = _int("producer_epoch", producer_epoch, _INT16)
    base_sequence = _int("base_sequence", base_sequence, _INT32)
    partition_leader_epoch = _int("partition_leader_epoch", partition_leader_epoch, _INT32)
    if not isinstance(transactional, bool):
        raise EncodeError(f"transactional must be a bool, not {type(transactional).__name__}")
    if delete_horizon_ms is not None:
        delete_horizon_ms = _timestamp("delete_horizon_ms", delete_horizon_ms)
        if delete_horizon_ms < 0:
            raise EncodeError(f"delete_horizon_ms must be >= 0, not {delete_horizon_ms}")
    if magic < 2:
        if transactional:
            raise EncodeError(f"Transactional records are not supported for magic {magic}")
        if (producer_id, producer_epoch, base_sequence) != (_NO_PRODUCER_ID, _NO_PRODUCER_EPOCH, _NO_SEQUENCE):
            raise EncodeError(
                f"Idempotent messages are not supported for magic {magic} "
                "(producer_id, producer_epoch and base_sequence must stay -1)"
            )
        if delete_horizon_ms is not None:
            raise EncodeError(f"Delete horizon timestamp is not supported for magic {magic}")
        if partition_leader_epoch != _NO_PARTITION_LEADER_EPOCH:
            raise EncodeError(f"magic {magic} has no partition leader epoch (leave it -1)")
    else:
        _check_producer_state(producer_id, producer_epoch, base_sequence, transactional, control=False)
    if magic == 2:
        return _encode_v2_records(
            records,
            base_offset,
            last_offset=None,
            compression=name,
            level=compression_level,
            ts_type=ts_type,
            log_append_time=lat,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=base_sequence,
            transactional=transactional,
            control=False,
            partition_leader_epoch=partition_leader_epoch,
            delete_horizon_ms=delete_horizon_ms,
        )
    return _encode_legacy_records(
        records,
        base_offset,
        magic=magic,
        compression=name,
        level=compression_level,
        ts_type=ts_type,
        log_append_time=lat,
        allow_lossy=allow_lossy,
    )


def _check_producer_state(
    producer_id: int, producer_epoch: int, base_sequence: int, transactional: bool, control: bool
) -> None:
    """MemoryRecordsBuilder.validateProducerState."""
    if transactional and producer_id == _NO_PRODUCER_ID:
        raise EncodeError("Cannot write transactional messages without a valid producer ID")
    if producer_id != _NO_PRODUCER_ID:
        if producer_epoch == _NO_PRODUCER_EPOCH:
            raise EncodeError(f"Invalid negative producer epoch (producer_id {producer_id} needs an epoch)")
        if base_sequence < 0 and not control:
            raise EncodeError(
                f"Invalid negative sequence number used (producer_id {producer_id} needs base_sequence >= 0)"
            )


def encode_control_batch(
    kind: str,
    *,
    producer_id: int | None = None,
    producer_epoch: int | None = None,
    coordinator_epoch: int = 0,
    offset: int = 0,
    timestamp: int = NO_TIMESTAMP,
    partition_leader_epoch: int = _NO_PARTITION_LEADER_EPOCH,
    transactional: bool | None = None,
    value: bytes | None = None,
) -> bytes:
    """One v2 control batch holding one control record at ``offset``.

    ``kind`` "commit" or "abort" (any case) gives a transaction marker, as
    ``MemoryRecords.writeEndTransactionalMarker``: control and transactional
    bits, the producer's ``producer_id`` and ``producer_epoch`` (both
    required), baseSequence -1, CreateTime ``timestamp``; the key is a
    control_record_key {version 0, type} and the value an end_txn_marker
    {version 0, ``coordinator_epoch``}.

    A KRaft type ("leader_change", "snapshot_header", "snapshot_footer",
    "kraft_version", "kraft_voters") gives a KRaft control batch, as
    ``createKraftControlRecordBuilder``: producer id and epoch -1, not
    transactional, the caller's serialized ``value``.

    ``transactional`` defaults to True for markers and False for KRaft types.
    """
    if not isinstance(kind, str) or kind.lower() not in CONTROL_TYPES:
        raise EncodeError(f"unknown control record type {kind!r} (known: {', '.join(CONTROL_TYPES)})")
    kind = kind.lower()
    offset = _int("offset", offset, (0, _INT64[1]))
    timestamp = _timestamp("timestamp", timestamp)
    partition_leader_epoch = _int("partition_leader_epoch", partition_leader_epoch, _INT32)
    key = _codec("control_record_key", 0).build({"version": 0, "type": kind})
    if CONTROL_TYPES[kind] in TRANSACTION_MARKERS:
        if producer_id is None or producer_epoch is None:
            raise EncodeError(f"a {kind.upper()} marker needs the producer_id and producer_epoch of the transaction")
        if value is not None:
            raise EncodeError(f"a {kind.upper()} marker's value is built from coordinator_epoch; do not pass value")
        coordinator_epoch = _int("coordinator_epoch", coordinator_epoch, _INT32)
        record_value = _codec("end_txn_marker", 0).build({"version": 0, "coordinator_epoch": coordinator_epoch})
        transactional = True if transactional is None else transactional
    else:
        producer_id = _NO_PRODUCER_ID if producer_id is None else producer_id
        producer_epoch = _NO_PRODUCER_EPOCH if producer_epoch is None else producer_epoch
        if producer_id != _NO_PRODUCER_ID or producer_epoch != _NO_PRODUCER_EPOCH or transactional:
            raise EncodeError(
                f"a KRaft {kind.upper()} control batch has producer id and epoch -1 and is not transactional"
            )
        if coordinator_epoch != 0:
            raise EncodeError("coordinator_epoch belongs to COMMIT / ABORT markers only")
        record_value = _bytes("value", value)
        transactional = False
    if not isinstance(transactional, bool):
        raise EncodeError(f"transactional must be a bool, not {type(transactional).__name__}")
    producer_id = _int("producer_id", producer_id, _INT64)
    producer_epoch = _int("producer_epoch", producer_epoch, _INT16)
    _check_producer_state(producer_id, producer_epoch, _NO_SEQUENCE, transactional, control=True)
    rec = _Rec(offset, timestamp, key, record_value, ())
    return _build_v2(
        [rec],
        base_offset=offset,
        last_offset=None,
        compression="none",
        level=None,
        ts_type=TimestampType.CREATE_TIME,
        log_append_time=None,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=_NO_SEQUENCE,
        transactional=transactional,
        control=True,
        partition_leader_epoch=partition_leader_epoch,
        delete_horizon_ms=None,
    )


def convert_batches(
    batches: Iterable[Batch],
    *,
    magic: int,
    compression: str | int = "none",
    compression_level: int | None = None,
    allow_lossy: bool = False,
) -> bytes:
    """Re-encode decoded batches at ``magic`` with ``compression``, batch by batch.

    Every record keeps its absolute offset and (effective) timestamp; each
    source batch becomes one v2 batch, one v0/v1 wrapper (compressed) or one
    v0/v1 entry per record (uncompressed). v2 -> v2 also keeps the batch's
    base and last offsets (compaction gaps), producer id, epoch, base
    sequence, transactional flag, partition leader epoch, timestamp type and
    delete horizon; LogAppendTime batches keep their append time.

    Control batches stay v2 and are written uncompressed, as Kafka writes
    them. Converting to v0/v1 drops what those formats cannot hold, and is
    refused (EncodeError) unless ``allow_lossy``: headers, producer state
    (producer id, sequence, transactional flag), control batches (skipped, as
    Kafka's down-conversion does), delete horizons, and at magic 0 the
    timestamps. Empty v2 batches have nothing to convert to v0/v1 and vanish.
    """
    magic = _magic(magic)
    name = _compression(compression, magic, compression_level)
    out = []
    for index, batch in enumerate(batches):
        if not isinstance(batch, Batch):
            raise EncodeError(f"batch {index} is a {type(batch).__name__}, not a kcodec Batch")
        out.append(_convert_one(batch, index, magic, name, compression_level, allow_lossy))
    return b"".join(out)


def _convert_one(batch: Batch, index: int, magic: int, compression: str, level: int | None, allow_lossy: bool) -> bytes:
    where = f"batch {index} (offset {batch.base_offset})"
    records = batch.records
    if batch.is_control:
        if magic < 2:
            if allow_lossy:
                return b""  # RecordsUtil.downConvert skips control batches
            raise EncodeError(
                f"{where} is a control batch; control batches exist only in magic 2 "
                "(pass allow_lossy=True to drop them)"
            )
        recs = [_Rec(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in records]
        return _build_v2(
            recs,
            base_offset=batch.base_offset,
            last_offset=batch.last_offset,
            compression="none",
            level=None,
            ts_type=_source_ts_type(batch),
            log_append_time=_source_lat(batch),
            producer_id=batch.producer_id,
            producer_epoch=batch.producer_epoch,
            base_sequence=batch.base_sequence,
            transactional=batch.is_transactional,
            control=True,
            partition_leader_epoch=batch.partition_leader_epoch,
            delete_horizon_ms=batch.delete_horizon_ms,
            empty_max_timestamp=batch.max_timestamp,
        )

    if magic == 2:
        # the Records are writer inputs as they are (control batches were handled above)
        items = records if type(records) in (list, tuple) else list(records)
        if batch.magic == 2:
            return _encode_v2_records(
                items,
                batch.base_offset,
                last_offset=batch.last_offset,
                compression=compression,
                level=level,
                ts_type=_source_ts_type(batch),
                log_append_time=_source_lat(batch),
                producer_id=batch.producer_id,
                producer_epoch=batch.producer_epoch,
                base_sequence=batch.base_sequence,
                transactional=batch.is_transactional,
                control=False,
                partition_leader_epoch=batch.partition_leader_epoch,
                delete_horizon_ms=batch.delete_horizon_ms,
                empty_max_timestamp=batch.max_timestamp,
            )
        # Up-conversion from v0/v1: the records' own offsets and timestamps.
        return _encode_v2_records(
            items,
            None,
            last_offset=None,
            compression=compression,
            level=level,
            ts_type=_source_ts_type(batch),
            log_append_time=_source_lat(batch),
            **_NO_PRODUCER_STATE,
        )

    # Down to v0/v1 (or v0 <-> v1): refuse what would be lost, unless allowed.
    lost = []
    if any(r.headers for r in records):
        lost.append("record headers")
    if batch.producer_id != _NO_PRODUCER_ID or batch.base_sequence != _NO_SEQUENCE or batch.is_transactional:
        lost.append("producer state (producer id, epoch, sequence, transactional flag)")
    if batch.has_delete_horizon:
        lost.append("the delete horizon")
    if magic == 0 and (
        batch.timestamp_type is TimestampType.LOG_APPEND_TIME or any(r.timestamp != NO_TIMESTAMP for r in records)
    ):
        lost.append("timestamps")
    if lost and not allow_lossy:
        raise EncodeError(f"{where}: magic {magic} cannot hold {', '.join(lost)} (pass allow_lossy=True to drop them)")
    if not records:
        return b""
    # the Records are writer inputs as they are (their own offsets; what is lost was allowed above)
    ts_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else _source_ts_type(batch)
    return _encode_legacy_records(
        records if type(records) in (list, tuple) else list(records),
        None,
        magic=magic,
        compression=compression,
        level=level,
        ts_type=ts_type,
        log_append_time=_source_lat(batch) if magic == 1 else None,
        allow_lossy=True,
    )


def _source_ts_type(batch: Batch) -> TimestampType:
    if batch.timestamp_type is TimestampType.LOG_APPEND_TIME:
        return TimestampType.LOG_APPEND_TIME
    return TimestampType.CREATE_TIME  # v0's NoTimestampType becomes CreateTime with timestamps -1


def _source_lat(batch: Batch) -> int | None:
    return batch.max_timestamp if batch.timestamp_type is TimestampType.LOG_APPEND_TIME else None


def encode_v2_written(
    written: tuple, *, compression: str | int = "none", compression_level: int | None = None
) -> bytes:
    """The v2 batch ``encode_batch`` makes of the same records with its defaults (CreateTime, no
    producer state), around records the compiled kernel wrote already: ``written`` is what its
    record writers return (``encode_records_v2``, ``encode_columns_v2``: records bytes, count, base
    offset, last offset, base timestamp, max timestamp) for at least one record."""
    return _batch_around(
        written,
        level=compression_level,
        last_offset=None,
        compression=_compression(compression, 2, compression_level),
        ts_type=TimestampType.CREATE_TIME,
        log_append_time=None,
        **_NO_PRODUCER_STATE,
    )
