"""Records -> the values the generated codecs take, written once.

The writer (:mod:`kcodec.records.encode`), ``kcodec size``
(:mod:`kcodec.records.sizing`) and the Spark ``sizeAs`` column
(:mod:`kcodec.spark.cost_table`) all turn records into the dicts the generated
codecs build, encode and size. The field values follow Kafka's
``MemoryRecordsBuilder``: v2 deltas against the first record (or the delete
horizon), maxTimestamp the largest timestamp or the append time, v0/v1
wrappers holding inner messages whose v1 offsets are relative.

Records are anything with ``offset``, ``timestamp``, ``key``, ``value`` and
``headers`` ((str, bytes-or-None) pairs): kcodec Records, or the writer's
validated records. Nothing here checks types; the writer does that before.
"""

from __future__ import annotations

from collections.abc import Sequence, Sized
from typing import Any

from kcodec.errors import EncodeError
from kcodec.records.model import TimestampType

__all__ = [
    "NO_TIMESTAMP",
    "v2_attributes",
    "v2_batch",
    "v2_batch_value",
    "v2_last_offset_delta",
    "legacy_message",
    "legacy_entries",
]

NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP
_INT32 = (-(1 << 31), (1 << 31) - 1)
NEEDS_APPEND_TIME = "timestamp_type LOG_APPEND_TIME needs log_append_time (the broker's append time, ms)"
_INT64 = (-(1 << 63), (1 << 63) - 1)


def v2_attributes(
    compression: str,
    ts_type: TimestampType,
    *,
    transactional: bool = False,
    control: bool = False,
    delete_horizon: bool = False,
) -> dict:
    """A v2 batch's attributes field."""
    return {
        "compression": compression,
        "timestamp_type": ts_type.schema_name,
        "transactional": transactional,
        "control": control,
        "delete_horizon": delete_horizon,
        "unused": 0,
    }


def _record_dict(timestamp_delta: int, offset_delta: int, r) -> dict:
    return {
        "attributes": 0,
        "timestamp_delta": timestamp_delta,
        "offset_delta": offset_delta,
        "key": r.key,
        "value": r.value,
        "headers": [{"key": k, "value": v} for k, v in r.headers],
    }


def _record_tuple(timestamp_delta: int, offset_delta: int, r) -> tuple:
    # the fast encoders' record: FIELDS_RECORD_V2 order (the writer checks it once), length computed by them
    return (None, 0, timestamp_delta, offset_delta, r.key, r.value, r.headers)


def v2_batch(
    records: Sequence,
    *,
    base_offset: int,
    last_offset: int | None = None,
    compression: str = "none",
    ts_type: TimestampType = TimestampType.CREATE_TIME,
    log_append_time: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    control: bool = False,
    partition_leader_epoch: int = -1,
    delete_horizon_ms: int | None = None,
    empty_max_timestamp: int | None = None,
    fast: bool = False,
) -> dict:
    """The value of one v2 batch holding ``records``, whose offsets are absolute.

    ``last_offset`` defaults to the last record's (a compacted batch keeps a larger one). No records gives
    Kafka's empty batch (``DefaultRecordBatch.writeEmptyHeader``: no compression, baseTimestamp -1,
    maxTimestamp ``empty_max_timestamp``, by default the append time or -1). Records come as dicts for the
    construct codecs and size functions, or, with ``fast``, as the tuples the generated fast encoders take.
    Raises :class:`EncodeError` for deltas that do not fit the format."""
    last_offset_delta = v2_last_offset_delta(base_offset, last_offset, records[-1].offset if records else None)
    log_append = ts_type is TimestampType.LOG_APPEND_TIME
    if not records:
        if delete_horizon_ms is not None:
            raise EncodeError(
                "an empty batch cannot carry a delete horizon "
                "(Kafka's writeEmptyHeader writes baseTimestamp -1 and no horizon bit)"
            )
        if empty_max_timestamp is None:
            empty_max_timestamp = log_append_time if log_append else NO_TIMESTAMP
        values: list = []
        compression, base_timestamp, max_timestamp = "none", NO_TIMESTAMP, empty_max_timestamp
    else:
        # the MemoryRecordsBuilder constructor: with a delete horizon, every delta is against it
        base_timestamp = records[0].timestamp if delete_horizon_ms is None else delete_horizon_ms
        max_timestamp = max([NO_TIMESTAMP] + [r.timestamp for r in records])
        make = _record_tuple if fast else _record_dict
        values = []
        for i, r in enumerate(records):
            delta = r.timestamp - base_timestamp
            if not _INT64[0] <= delta <= _INT64[1]:
                raise EncodeError(f"record {i}: timestamp delta {delta} does not fit in a varlong")
            values.append(make(delta, r.offset - base_offset, r))
    return v2_batch_value(
        values,
        base_offset=base_offset,
        last_offset_delta=last_offset_delta,
        base_timestamp=base_timestamp,
        max_timestamp=max_timestamp,
        compression=compression,
        ts_type=ts_type,
        log_append_time=log_append_time,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        transactional=transactional,
        control=control,
        partition_leader_epoch=partition_leader_epoch,
        delete_horizon_ms=delete_horizon_ms,
    )


def v2_last_offset_delta(base_offset: int, last_offset: int | None, last_record_offset: int | None) -> int:
    """lastOffsetDelta: ``last_offset`` (by default the last record's offset, ``last_record_offset``,
    None when there are no records) less the base offset."""
    if last_offset is None:
        last_offset = base_offset if last_record_offset is None else last_record_offset
    if last_record_offset is not None and last_offset < last_record_offset:
        raise EncodeError(f"last offset {last_offset} is below the last record's offset {last_record_offset}")
    last_offset_delta = last_offset - base_offset
    if not _INT32[0] <= last_offset_delta <= _INT32[1]:
        raise EncodeError(f"lastOffsetDelta {last_offset_delta} does not fit in an int32")
    return last_offset_delta


def v2_batch_value(
    records: Sized,
    *,
    base_offset: int,
    last_offset_delta: int,
    base_timestamp: int,
    max_timestamp: int | None,
    compression: str,
    ts_type: TimestampType,
    log_append_time: int | None,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    transactional: bool,
    control: bool,
    partition_leader_epoch: int,
    delete_horizon_ms: int | None,
) -> dict:
    """The batch value around records that are built already: the generated encoders' record values,
    or an :class:`~kcodec.runtime.encoded.EncodedArray` the compiled kernel wrote (``v2_batch`` with
    the records' timestamps summed up: the base and the largest; under LogAppendTime a batch with
    records takes ``log_append_time`` as its largest)."""
    if ts_type is TimestampType.LOG_APPEND_TIME and len(records):
        max_timestamp = log_append_time
    return {
        "base_offset": base_offset,
        "partition_leader_epoch": partition_leader_epoch,
        "attributes": v2_attributes(
            compression,
            ts_type,
            transactional=transactional,
            control=control,
            delete_horizon=delete_horizon_ms is not None,
        ),
        "last_offset_delta": last_offset_delta,
        "base_timestamp": base_timestamp,
        "max_timestamp": max_timestamp,
        "producer_id": producer_id,
        "producer_epoch": producer_epoch,
        "base_sequence": base_sequence,
        "records": records,
    }


def legacy_message(
    magic: int, compression: str, ts_type: TimestampType, timestamp: int, key: bytes | None, value: Any
) -> dict:
    """A v0/v1 message; ``value`` is bytes, or a wrapper's inner entries."""
    attributes: dict[str, Any] = {"compression": compression, "unused": 0}
    message: dict[str, Any] = {"attributes": attributes, "key": key, "value": value}
    if magic == 1:
        attributes["timestamp_type"] = ts_type.schema_name
        message["timestamp"] = timestamp
    return message


def legacy_entries(
    records: Sequence,
    *,
    magic: int,
    base_offset: int,
    compression: str = "none",
    ts_type: TimestampType = TimestampType.CREATE_TIME,
    log_append_time: int | None = None,
) -> list[dict]:
    """The v0/v1 log entries of ``records``: one per record uncompressed, else one wrapper holding them all.

    In a wrapper, inner offsets are absolute (v0) or relative to ``base_offset`` (v1, Kafka's
    ``toInnerOffset``), and the wrapper's offset is the last record's. Under LogAppendTime (v1) every message
    carries ``log_append_time`` (``appendLegacyRecord``)."""
    if not records:
        return []
    append_time = None  # every message's timestamp under LogAppendTime
    if ts_type is TimestampType.LOG_APPEND_TIME:
        if log_append_time is None:
            raise EncodeError(NEEDS_APPEND_TIME)
        append_time = log_append_time

    def message(r, codec: str) -> dict:
        return legacy_message(
            magic, codec, ts_type, append_time if append_time is not None else r.timestamp, r.key, r.value
        )

    if compression == "none":
        return [{"offset": r.offset, "message": message(r, "none")} for r in records]
    inner = [
        {"offset": r.offset - base_offset if magic == 1 else r.offset, "message": message(r, "none")} for r in records
    ]
    wrapper_ts = append_time if append_time is not None else max([NO_TIMESTAMP] + [r.timestamp for r in records])
    return [
        {"offset": records[-1].offset, "message": legacy_message(magic, compression, ts_type, wrapper_ts, None, inner)}
    ]
