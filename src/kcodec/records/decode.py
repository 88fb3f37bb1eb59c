"""Decode one log entry (a v2 batch or a v0/v1 message) into a :class:`Batch`,
applying Kafka's rules: absolute offsets, effective timestamps, control records,
CRC validity. Field layouts come from the generated codecs."""

from __future__ import annotations

import dataclasses
import struct
import zlib
from collections.abc import Sequence

from kcodec.errors import (
    BadLengthError,
    CorruptError,
    CrcMismatchError,
    DecodeError,
    KcodecError,
    RecordCountError,
    TruncatedError,
    UnknownMagicError,
    record_corrupt_message,
)
from kcodec.generated.enums import CONTROL_RECORD_TYPE
from kcodec.records import projection as kernel_plan
from kcodec.records.chunked import CHUNKED_RECORD_COUNT, ChunkedRecords, DecodeChunk
from kcodec.records.framing import (
    HEADER_SIZE_UP_TO_MAGIC,
    LEGACY_ATTRIBUTES_OFFSET,
    LEGACY_COMPRESSION_MASK,
    LEGACY_CRC_OFFSET,
    LEGACY_CRC_START,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MIN_LEGACY_RECORD_SIZE,
    SIZE_OFFSET,
    V2_CODEC_NAMES,
    V2_CRC_OFFSET,
    V2_CRC_START,
    V2_MIN_BATCH_LENGTH,
    V2_OVERHEAD,
    V2_RECORDS_COUNT_OFFSET,
    V2_RECORDS_OFFSET,
    check_min_size,
    is_control_batch,
    magic_error,
)
from kcodec.records.model import (
    TRANSACTION_MARKERS,
    Batch,
    ControlRecord,
    CrcPending,
    Record,
    TimestampType,
    increment_sequence,
    read_fields_as_slots,
)
from kcodec.records.prefetch import Inflater
from kcodec.runtime import compression as compress_lib
from kcodec.runtime.crc import crc32c

__all__ = [
    "decode_entry",
    "decode_entry_header",
    "LOG_OVERHEAD",
    "HEADER_SIZE_UP_TO_MAGIC",
    "MIN_LEGACY_RECORD_SIZE",
    "V2_MIN_BATCH_LENGTH",
]

_I32 = struct.Struct(">i")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_I64_I32 = struct.Struct(">qi")


def _codecs():
    # Imported on first use: generated code pulls in construct, which plain `import kcodec` avoids.
    from kcodec.generated import codec

    return codec


class _Fast:
    """The generated fast decoders and where the runtime finds each field in their values (the generated
    per-version positions: ``self.b.base_offset`` is the base offset's place in a batch's values)."""

    def __init__(self):
        from kcodec.generated.fast import DECODERS
        from kcodec.generated.fast.legacy_log_entry import AT_LEGACY_LOG_ENTRY_V0
        from kcodec.generated.fast.legacy_message import AT_LEGACY_MESSAGE_V0, AT_LEGACY_MESSAGE_V1
        from kcodec.generated.fast.record import AT_RECORD_V2
        from kcodec.generated.fast.record_batch import AT_RECORD_BATCH_V2

        self.batch = DECODERS[("record_batch", 2)][0]
        self.b = AT_RECORD_BATCH_V2
        r = AT_RECORD_V2
        self.r = (r.length, r.timestamp_delta, r.offset_delta, r.key, r.value, r.headers)
        self.record = DECODERS[("record", 2)][0]
        self.legacy = {m: DECODERS[("legacy_log_entry", m)][0] for m in (0, 1)}
        self.e_offset, self.e_message = AT_LEGACY_LOG_ENTRY_V0.offset, AT_LEGACY_LOG_ENTRY_V0.message
        self.m = {0: AT_LEGACY_MESSAGE_V0, 1: AT_LEGACY_MESSAGE_V1}
        from kcodec.generated.fast.kernel import compiled_kernel

        self.kernel = compiled_kernel()
        self.project = getattr(self.kernel, "project_record_v2", None)  # builds Records in C
        # the same Records, each built when it is read (every record decoded once first, for its errors)
        self.lazy = getattr(self.kernel, "lazy_record_v2", None)
        if self.lazy is not None:
            Sequence.register(self.kernel.LazyRecords)
        if getattr(self.kernel, "tuple_fields", None) is not None:
            read_fields_as_slots(self.kernel.tuple_fields)
        if getattr(self.kernel, "reuse_records", None) is not None:  # freed Records built again, as tuples are
            self.kernel.reuse_records(Record, len(Record._fields))
        if getattr(self.kernel, "reuse_batches", None) is not None:  # and v0/v1 messages' Batches, a run's worth
            self.kernel.reuse_batches(Batch, LEGACY_RUN_MAX)
        # v0/v1 in C: runs of uncompressed messages as Batches, a compressed wrapper's message set as Records
        self.legacy_batches = getattr(self.kernel, "legacy_batches", None)
        self.legacy_inner = getattr(self.kernel, "legacy_inner_records", None)
        # v2 data batches in C: runs of them as Batches, their records a LazyRecords (v2_run)
        self.v2_batches = getattr(self.kernel, "v2_batches", None)
        self.crc32 = getattr(self.kernel, "crc32", None) or zlib.crc32  # a v0/v1 message's CRC-32


_fast: _Fast | None = None


def fast_decoders() -> _Fast:
    global _fast
    if _fast is None:
        _fast = _Fast()
    return _fast


def _decompress(
    codec_name: str, data: bytes, magic: int, limit: int, start: int, base_offset: int, field: str
) -> bytes:
    """Decompress a region stored at absolute position ``start``; errors say where in the input."""
    try:
        return compress_lib.decompress(codec_name, data, magic=magic, max_size=limit)
    except KcodecError as exc:
        raise exc.at(start, base_offset=base_offset).inside(field) from None


def in_stream_error(exc: KcodecError, start: int, base_offset: int | None, codec_name: str, field: str) -> KcodecError:
    """An error inside a decompressed stream (:meth:`~kcodec.errors.KcodecError.in_stream`, the rule the
    generated decoders follow too), with the batch's offset and the field path from the compressed field."""
    located = exc.in_stream(start, codec_name)
    return located.replace(base_offset=base_offset if exc.base_offset is None else exc.base_offset).inside(field)


def decode_entry(
    entry: bytes,
    position: int = 0,
    *,
    verify_crc: bool = True,
    max_decompressed_size: int = compress_lib.DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> Batch:
    """Decode one whole log entry (its 12-byte header included). Errors are
    :class:`~kcodec.errors.DecodeError` subclasses whose ``position`` is
    absolute (``position`` + the offset in ``entry``); inside a compressed
    stream, the position of the stored stream, the message saying where in the
    decompressed bytes."""
    if type(entry) is not bytes:
        entry = bytes(entry)  # the decoders slice it: bytes slices are bytes
    if len(entry) < HEADER_SIZE_UP_TO_MAGIC:
        raise TruncatedError(
            f"log entry of {len(entry)} bytes is shorter than the {HEADER_SIZE_UP_TO_MAGIC}-byte header",
            position=position,
        )
    magic = entry[MAGIC_OFFSET]
    if magic == 2:
        return _decode_v2(entry, position, verify_crc, max_decompressed_size)
    if magic in (0, 1):
        return _decode_legacy(entry, position, verify_crc, max_decompressed_size)
    raise magic_error(magic, position, _I64_I32.unpack_from(entry, 0)[0])


def decode_entry_header(
    entry: bytes,
    position: int = 0,
    *,
    verify_crc: bool = False,
    max_decompressed_size: int = compress_lib.DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> Batch:
    """One whole log entry's header, as Kafka's FileChannelRecordBatch reads it for a shallow walk: every
    header field and the CRC checked against the bytes (``crc_valid``), the records neither decompressed nor
    decoded (``records`` is empty; a v0/v1 compressed wrapper's ``record_count`` is 0, unknown until then).
    :func:`decode_entry`'s signature, so a reader's ``decode`` can be this; ``verify_crc`` raises a
    :class:`~kcodec.errors.CrcMismatchError` for a CRC that does not hold, as there. Errors come only from
    the header itself (a length below the format's minimum, an unknown codec id)."""
    if type(entry) is not bytes:
        entry = bytes(entry)
    if len(entry) < HEADER_SIZE_UP_TO_MAGIC:
        raise TruncatedError(
            f"log entry of {len(entry)} bytes is shorter than the {HEADER_SIZE_UP_TO_MAGIC}-byte header",
            position=position,
        )
    magic = entry[MAGIC_OFFSET]
    offset, size = _I64_I32.unpack_from(entry, 0)
    if magic in (0, 1):
        check_min_size(offset, size, position)
        return _legacy_header(entry, position, verify_crc, max_decompressed_size, offset, size)
    if magic != 2:
        raise magic_error(magic, position, offset)
    if size < V2_MIN_BATCH_LENGTH or len(entry) < LOG_OVERHEAD + size:
        return _decode_v2(entry, position, verify_crc, max_decompressed_size)  # raises what is wrong with the size
    stored_crc = _U32.unpack_from(entry, V2_CRC_OFFSET)[0]
    computed_crc = crc32c(memoryview(entry)[V2_CRC_START:])
    if verify_crc and computed_crc != stored_crc:
        raise CrcMismatchError(
            record_corrupt_message(stored_crc, computed_crc),
            position=position + V2_CRC_OFFSET,
            base_offset=offset,
            field="crc",
        )
    f = fast_decoders()
    try:
        v, _ = f.batch(entry, 0, len(entry), False, max_decompressed_size, False)  # records left as stored
    except KcodecError as exc:
        exc = exc.at(position, base_offset=offset)
        if computed_crc == stored_crc or not isinstance(exc, DecodeError):
            raise exc from None
        raise _crc_first(exc, stored_crc, computed_crc, position + V2_CRC_OFFSET, offset, "crc") from None
    i = f.b
    stored = LOG_OVERHEAD + size - V2_OVERHEAD
    compressed = v[i.attributes]["compression"] != "none"
    return _v2_batch(
        f,
        v,
        position,
        size,
        stored_crc,
        computed_crc,
        (),
        v[i.records_count],
        v[i.attributes]["control"],
        0 if compressed else stored,
    )


def _legacy_crc_first(exc: DecodeError, entry: bytes, position: int, offset: int, size: int) -> DecodeError:
    """What a v0/v1 entry that does not decode raises: the CRC mismatch when its CRC fails (:func:`_crc_first`)."""
    if isinstance(exc, CrcMismatchError) or len(entry) < LOG_OVERHEAD + size:
        return exc
    stored = _U32.unpack_from(entry, LEGACY_CRC_OFFSET)[0]
    computed = zlib.crc32(memoryview(entry)[LEGACY_CRC_START : LOG_OVERHEAD + size])
    if stored == computed:
        return exc
    return _crc_first(exc, stored, computed, position + LEGACY_CRC_OFFSET, offset, "message.crc")


def _legacy_header(entry: bytes, position: int, verify_crc: bool, limit: int, offset: int, size: int) -> Batch:
    """:func:`decode_entry_header` of a v0/v1 entry: the (wrapper) message, its value left compressed."""
    try:
        m, crc_valid = _legacy_message(entry, position, verify_crc, limit, offset)
    except DecodeError as exc:
        raise _legacy_crc_first(exc, entry, position, offset, size) from None
    n = 0 if m.value is None else len(m.value)
    wrapper = m.compression != "none"
    return Batch(
        position=position,
        size=LOG_OVERHEAD + size,
        magic=m.magic,
        base_offset=offset,
        last_offset=offset,
        crc=m.crc,
        crc_valid=crc_valid,
        computed_crc=m.computed_crc,
        compression=m.compression,
        timestamp_type=TimestampType.NO_TIMESTAMP_TYPE if m.magic == 0 else TimestampType.from_schema(m.timestamp_type),
        max_timestamp=m.timestamp,
        records=(),
        record_count=0 if wrapper else 1,
        stored_records_size=n,
        records_size=0 if wrapper else n,
    )


# ---------------------------------------------------------------------------- v2


def _decode_v2(entry: bytes, position: int, verify_crc: bool, limit: int) -> Batch:
    base_offset, batch_length = _I64_I32.unpack_from(entry, 0)
    if batch_length < V2_MIN_BATCH_LENGTH:
        raise BadLengthError(
            f"Record batch is corrupt (the size {batch_length + LOG_OVERHEAD} is smaller than "
            f"the minimum allowed overhead {V2_OVERHEAD})",
            position=position + SIZE_OFFSET,
            base_offset=base_offset,
            field="batch_length",
        )
    if len(entry) < LOG_OVERHEAD + batch_length:
        raise TruncatedError(
            f"batch needs {LOG_OVERHEAD + batch_length} bytes, only {len(entry)} remain",
            position=position,
            base_offset=base_offset,
            field="batch_length",
        )
    stored_crc = _U32.unpack_from(entry, V2_CRC_OFFSET)[0]
    computed_crc = crc32c(memoryview(entry)[V2_CRC_START:])
    crc_valid = computed_crc == stored_crc
    if verify_crc and not crc_valid:
        raise CrcMismatchError(
            record_corrupt_message(stored_crc, computed_crc),
            position=position + V2_CRC_OFFSET,
            base_offset=base_offset,
            field="crc",
        )
    try:
        return _decode_v2_covered(entry, position, limit, base_offset, batch_length, stored_crc, computed_crc)
    except DecodeError as exc:
        if crc_valid:
            raise
        raise _crc_first(exc, stored_crc, computed_crc, position + V2_CRC_OFFSET, base_offset, "crc") from None


def _past_int64(base_offset: int, offset_delta: int, base_ts: int, ts_delta: int) -> CorruptError:
    """A record whose offset or timestamp (base + delta) no int64 holds: the compiled kernel's words."""
    base, delta = (base_offset, offset_delta) if base_offset + offset_delta > _INT64_MAX else (base_ts, ts_delta)
    return CorruptError(f"{base} + {delta} is past the int64 range of offsets and timestamps", field="records")


def _last_offset(base_offset: int, last_offset_delta: int, position: int) -> int:
    last = base_offset + last_offset_delta
    if last > _INT64_MAX:
        raise (
            _past_int64(base_offset, last_offset_delta, 0, 0)
            .replace(field="last_offset_delta")
            .at(position, base_offset=base_offset)
        )
    return last


def _crc_first(exc: DecodeError, stored: int, computed: int, position: int, base_offset: int, field: str):
    """Kafka checks an entry's CRC before it reads what the CRC covers (DefaultRecordBatch and LegacyRecord
    ensureValid): when the CRC does not hold, that is the damage, whatever else then fails to decode."""
    return CrcMismatchError(
        f"{record_corrupt_message(stored, computed)}; what it covers does not decode either: {exc.message}",
        position=position,
        base_offset=base_offset,
        field=field,
    )


def _decode_v2_covered(
    entry: bytes, position: int, limit: int, base_offset: int, batch_length: int, stored_crc: int, computed_crc: int
) -> Batch:
    """The fields a v2 batch's CRC covers, from attributes on."""
    count = _I32.unpack_from(entry, V2_RECORDS_COUNT_OFFSET)[0]
    if count < 0:
        raise RecordCountError(
            f"Found invalid record count {count} in magic v2 batch",
            position=position + V2_RECORDS_COUNT_OFFSET,
            base_offset=base_offset,
            field="records_count",
        )
    f = fast_decoders()
    chunked = count > CHUNKED_RECORD_COUNT  # a record-count bomb is never held as one Record each at once
    if (f.project is not None or chunked) and not is_control_batch(entry):  # not a control batch
        batch = _decode_v2_compiled(
            f, entry, position, base_offset, batch_length, count, stored_crc, computed_crc, limit, chunked
        )
        if batch is not None:
            return batch
    try:
        v, _ = f.batch(entry, 0, len(entry), False, limit)
    except KcodecError as exc:
        raise exc.at(position, base_offset=base_offset) from None
    i = f.b
    a = v[i.attributes]
    base_offset, base_ts, max_ts, base_seq = (
        v[i.base_offset],
        v[i.base_timestamp],
        v[i.max_timestamp],
        v[i.base_sequence],
    )
    ts_type = TimestampType.from_schema(a["timestamp_type"])
    log_append = ts_type is TimestampType.LOG_APPEND_TIME
    control = a["control"]
    r_len, r_ts, r_off, r_key, r_value, r_headers = f.r
    records: list[Record] = []
    append = records.append
    for r in v[i.records]:
        delta = r[r_off]
        if base_offset + delta > _INT64_MAX or not (log_append or _INT64_MIN <= base_ts + r[r_ts] <= _INT64_MAX):
            raise _past_int64(base_offset, delta, base_ts, r[r_ts]).at(position, base_offset=base_offset)
        seq = -1 if base_seq < 0 else increment_sequence(base_seq, delta)
        marker = None
        if control:
            try:
                marker = _control(r[r_key], r[r_value])
            except KcodecError as exc:
                raise exc.at(position, base_offset=base_offset) from None
        append(
            Record(
                base_offset + delta,
                max_ts if log_append else base_ts + r[r_ts],
                ts_type,
                r[r_key],
                r[r_value],
                tuple(r[r_headers]),
                seq,
                marker,
            )
        )
    stored = LOG_OVERHEAD + batch_length - V2_OVERHEAD
    compression = a["compression"]
    size = stored if compression == "none" else sum(r[r_len] + _varint_size(r[r_len]) for r in v[i.records])
    return _v2_batch(f, v, position, batch_length, stored_crc, computed_crc, records, count, control, size)


def _v2_batch(
    f: _Fast,
    v: tuple,
    position: int,
    batch_length: int,
    stored_crc: int,
    computed_crc: int,
    records: Sequence[Record],
    count: int,
    control: bool,
    records_size: int,
) -> Batch:
    """The one place a v2 :class:`Batch` is made: the header fields ``v`` holds (the fast decoder's values
    in FIELDS order) around the decoded ``records``, by either path."""
    i = f.b
    a = v[i.attributes]
    base_offset = v[i.base_offset]
    return Batch(
        position=position,
        size=LOG_OVERHEAD + batch_length,
        magic=2,
        base_offset=base_offset,
        last_offset=_last_offset(base_offset, v[i.last_offset_delta], position),
        crc=stored_crc,
        crc_valid=computed_crc == stored_crc,
        computed_crc=computed_crc,
        compression=a["compression"],
        timestamp_type=TimestampType.from_schema(a["timestamp_type"]),
        max_timestamp=v[i.max_timestamp],
        records=records,
        partition_leader_epoch=v[i.partition_leader_epoch],
        is_transactional=a["transactional"],
        is_control=control,
        has_delete_horizon=a["delete_horizon"],
        producer_id=v[i.producer_id],
        producer_epoch=v[i.producer_epoch],
        base_sequence=v[i.base_sequence],
        base_timestamp=v[i.base_timestamp],
        record_count=count,
        stored_records_size=LOG_OVERHEAD + batch_length - V2_OVERHEAD,
        records_size=records_size,
    )


def _decode_v2_compiled(
    f: _Fast,
    entry: bytes,
    position: int,
    base_offset: int,
    batch_length: int,
    count: int,
    stored_crc: int,
    computed_crc: int,
    limit: int,
    chunked: bool = False,
) -> Batch | None:
    """The compiled kernel builds the Records themselves (no Python per record).
    Returns None when a batch needs the general path (sequence numbers that wrap).
    ``chunked``: the records are a :class:`~kcodec.records.chunked.ChunkedRecords`, decoded a chunk at a
    time (by the compiled kernel when it is loaded and sequences do not wrap, else in Python)."""
    try:
        v, _ = f.batch(entry, 0, len(entry), False, limit, False)  # records left as stored
    except KcodecError as exc:
        raise exc.at(position, base_offset=base_offset) from None
    i = f.b
    a = v[i.attributes]
    base_ts, max_ts, base_seq = v[i.base_timestamp], v[i.max_timestamp], v[i.base_sequence]
    last_delta = v[i.last_offset_delta]
    wraps = base_seq >= 0 and base_seq + max(last_delta, count) > 0x7FFFFFFF
    if wraps and not chunked:
        return None
    ts_type = TimestampType.from_schema(a["timestamp_type"])
    _, r_ts, r_off, r_key, r_value, r_headers = f.r
    plan = kernel_plan.record_plan(
        offset=kernel_plan.plus(r_off, base_offset),
        timestamp=kernel_plan.constant(max_ts)
        if ts_type is TimestampType.LOG_APPEND_TIME
        else kernel_plan.plus(r_ts, base_ts),
        timestamp_type=kernel_plan.constant(ts_type),
        key=kernel_plan.field(r_key),
        value=kernel_plan.field(r_value),
        headers=kernel_plan.as_tuple(r_headers),
        sequence=kernel_plan.plus(r_off, base_seq) if base_seq >= 0 else kernel_plan.constant(-1),
        control=kernel_plan.constant(None),
        crc=kernel_plan.constant(None),
        crc_valid=kernel_plan.constant(None),
        magic=kernel_plan.constant(2),
    )
    compression = a["compression"]
    if compression == "none":
        data, start = entry, V2_RECORDS_OFFSET
    else:
        data, start = (
            _decompress(compression, v[i.records], 2, limit, position + V2_RECORDS_OFFSET, base_offset, "records"),
            0,
        )
    project = None if wraps else f.project
    if project is None and not chunked:  # callers come here only when the compiled kernel is loaded
        return None
    records: Sequence[Record]
    try:
        if chunked:
            decode = (
                _python_chunks(f, data, base_offset, base_ts, max_ts, base_seq, ts_type)
                if project is None
                else _kernel_chunks(project, data, plan)
            )
            records = ChunkedRecords(decode, start, count)
            end = records.end
        elif project is not None:
            records, end = (f.lazy or project)(data, start, len(data), count, Record, plan)
    except KcodecError as exc:
        if compression == "none":
            raise exc.inside("records").at(position, base_offset=base_offset) from None
        raise in_stream_error(exc, position + V2_RECORDS_OFFSET, base_offset, compression, "records") from None
    if end != len(data):
        where = "" if compression == "none" else f" (at byte {end} of the decompressed {compression} stream)"
        raise BadLengthError(
            f"{len(data) - end} bytes left over after records{where}",
            position=position + (end if compression == "none" else V2_RECORDS_OFFSET),
            base_offset=base_offset,
            field="records",
        )
    size = batch_length + LOG_OVERHEAD - V2_OVERHEAD if compression == "none" else len(data)
    return _v2_batch(f, v, position, batch_length, stored_crc, computed_crc, records, count, False, size)


def _kernel_chunks(project, data: bytes, plan: tuple):
    """A :data:`~kcodec.records.chunked.DecodeChunk` by the compiled kernel's ``project``."""

    def decode(pos: int, n: int, _index: int) -> tuple[Sequence[Record], int]:
        return project(data, pos, len(data), n, Record, plan)

    return decode


def _python_chunks(f: _Fast, data: bytes, base_offset: int, base_ts: int, max_ts: int, base_seq: int, ts_type):
    """A :data:`~kcodec.records.chunked.DecodeChunk` in Python: the general path's Records (sequences that
    wrap, no compiled kernel) for a batch that is not a control batch."""
    _, r_ts, r_off, r_key, r_value, r_headers = f.r
    log_append = ts_type is TimestampType.LOG_APPEND_TIME
    decode_record, end = f.record, len(data)

    def decode(pos: int, n: int, _index: int) -> tuple[list[Record], int]:
        out = []
        for _ in range(n):
            r, pos = decode_record(data, pos, end)
            delta = r[r_off]
            if base_offset + delta > _INT64_MAX or not (log_append or _INT64_MIN <= base_ts + r[r_ts] <= _INT64_MAX):
                raise _past_int64(base_offset, delta, base_ts, r[r_ts])
            seq = -1 if base_seq < 0 else increment_sequence(base_seq, delta)
            ts = max_ts if log_append else base_ts + r[r_ts]
            out.append(Record(base_offset + delta, ts, ts_type, r[r_key], r[r_value], tuple(r[r_headers]), seq))
        return out, pos

    return decode


def _varint_size(n: int) -> int:
    from kcodec.runtime.varint import size_varint

    return size_varint(n)


def _control(key: bytes | None, value: bytes | None) -> ControlRecord:
    codec = _codecs()
    if key is None or len(key) < 4:
        n = 0 if key is None else len(key)
        raise CorruptError(
            f"Invalid value size found for end control record key. Must have at least 4 bytes, but found only {n}",
            field="records.key",
        )
    k, _ = codec("control_record_key", 0).parse_prefix(key)
    if k.version < 0:
        raise CorruptError(
            f"Invalid version found for control record: {k.version}. May indicate data corruption",
            field="records.key.version",
        )
    type_id = k.type if isinstance(k.type, int) else CONTROL_RECORD_TYPE[k.type]
    if type_id not in TRANSACTION_MARKERS:
        return ControlRecord(type_id, k.version)
    if value is None or len(value) < 6:
        n = 0 if value is None else len(value)
        raise CorruptError(
            f"Invalid value size found for end transaction marker. Must have at least 6 bytes, but found only {n}",
            field="records.value",
        )
    m, _ = codec("end_txn_marker", 0).parse_prefix(value)  # later versions are read as version 0
    if m.version < 0:
        raise CorruptError(
            f"Invalid version found for end transaction marker: {m.version}. May indicate data corruption",
            field="records.value.version",
        )
    return ControlRecord(type_id, k.version, m.coordinator_epoch, m.version)


# ---------------------------------------------------------------------------- v0 / v1


def _decode_legacy(entry: bytes, position: int, verify_crc: bool, limit: int) -> Batch:
    offset, size = _I64_I32.unpack_from(entry, 0)
    check_min_size(offset, size, position)
    if len(entry) > LEGACY_ATTRIBUTES_OFFSET and not entry[LEGACY_ATTRIBUTES_OFFSET] & LEGACY_COMPRESSION_MASK:
        batch = _legacy_compiled(entry, position, limit, offset, size)
        if batch is not None:
            return batch
    try:
        return _decode_legacy_covered(entry, position, verify_crc, limit, offset, size)
    except DecodeError as exc:
        raise _legacy_crc_first(exc, entry, position, offset, size) from None


# The Batch fields the kernel computes per uncompressed v0/v1 message, in the order it takes them; every
# other field is the same for all such messages (:func:`_legacy_batch_layout`).
_LEGACY_BATCH_FIELDS = (
    "position",
    "size",
    "magic",
    "base_offset",
    "last_offset",
    "crc",
    "computed_crc",
    "timestamp_type",
    "max_timestamp",
    "records",
    "stored_records_size",
    "records_size",
)
_LEGACY_BATCH_CONSTANTS = {"crc_valid": True, "compression": "none", "record_count": 1}
_TIMESTAMP_TYPES = (TimestampType.NO_TIMESTAMP_TYPE, TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME)
_layout: tuple | None = None


def _legacy_batch_layout() -> tuple:
    """How the kernel fills a :class:`Batch` for an uncompressed v0/v1 message: (type, computed fields,
    (name, value) of the others: the dataclass defaults, with the values every such message has)."""
    global _layout
    if _layout is None:
        constants = []
        for f in dataclasses.fields(Batch):
            if f.name in _LEGACY_BATCH_FIELDS:
                continue
            value = _LEGACY_BATCH_CONSTANTS.get(f.name, f.default)
            if value is dataclasses.MISSING:  # a new field without a default: say what it is for v0/v1
                raise TypeError(f"Batch.{f.name} has no value for v0/v1 messages in decode._LEGACY_BATCH_CONSTANTS")
            constants.append((f.name, value))
        _layout = (Batch, _LEGACY_BATCH_FIELDS, tuple(constants))
    return _layout


#: the most Batches one kernel call builds: a run's list stays small whatever the input's size
LEGACY_RUN_MAX = 1024


def legacy_run(buf, base: int, max_size: int, max_count: int = LEGACY_RUN_MAX) -> tuple[list[Batch], int] | None:
    """The run of uncompressed v0/v1 messages at the start of ``buf`` (the bytes from position ``base``),
    each a Batch of its own (Kafka's AbstractLegacyRecordBatch), built by the compiled kernel: at most
    ``max_count``, each whole in ``buf``, at most ``max_size`` bytes (its size field), its CRC
    holding. Returns (batches, bytes they take); empty at the first entry that is anything else (a
    compressed wrapper, a v2 batch, damage, a truncated entry), which :func:`decode_entry` then decides.
    None without the compiled kernel."""
    run = fast_decoders().legacy_batches
    if run is None:
        return None
    return run(buf, 0, len(buf), base, max_count, max_size, _legacy_batch_layout(), Record, _TIMESTAMP_TYPES)


#: about how many bytes of records one v2_run call holds (its batches stay alive until the run is read)
V2_RUN_BYTES = 1 << 20


def v2_run(
    buf, base: int, owner: bytes | None, verify_crc: bool, limit: int, max_size: int, ahead: Inflater | None = None
) -> tuple[list[Batch], int] | None:
    """The run of v2 data batches at the start of ``buf`` (the bytes from position ``base``), each decoded as
    :func:`decode_entry` decodes it, by the compiled kernel in one call: the header, the CRC (checked when
    ``verify_crc``, else computed when first read: :class:`~kcodec.records.model.CrcPending`), the records
    inflated and each checked once, a LazyRecords. Returns (batches, bytes they take); empty at the first entry
    that is anything else (a control batch, v0/v1, damage, a CRC that does not hold when it is checked,
    sequences that wrap, more than :data:`CHUNKED_RECORD_COUNT` records, an entry not whole in ``buf``, about
    :data:`V2_RUN_BYTES` of records taken), which :func:`decode_entry` then decides. ``owner``: the bytes
    object ``buf`` lies in, which the records then read in place (else each entry is copied). ``ahead``: the
    walk's :class:`~kcodec.records.prefetch.Inflater` (compressed batches inflated on another core), or None.
    None without the compiled kernel."""
    f = fast_decoders()
    if f.v2_batches is None:
        return None
    _, r_ts, r_off, r_key, r_value, r_headers = f.r
    return f.v2_batches(
        buf,
        0,
        len(buf),
        base,
        owner,
        crc32c,
        verify_crc,
        CrcPending,
        limit,
        max_size,
        CHUNKED_RECORD_COUNT,
        V2_RUN_BYTES,
        V2_CODEC_NAMES,
        Batch,
        Record,
        (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME),
        (r_ts, r_off, r_key, r_value, r_headers),
        None if ahead is None else ahead.over(buf, base),
    )


def _legacy_compiled(entry: bytes, position: int, limit: int, offset: int, size: int) -> Batch | None:
    """An uncompressed v0/v1 message as one Batch, built by the compiled kernel; None when the kernel is not
    there or the entry is not whole and sound with its CRC holding (the general path then decides)."""
    found = legacy_run(entry, position, size, 1)
    return found[0][0] if found and found[0] else None


def _decode_legacy_covered(entry: bytes, position: int, verify_crc: bool, limit: int, offset: int, size: int) -> Batch:
    magic = entry[MAGIC_OFFSET]
    m, crc_valid = _legacy_message(entry, position, verify_crc, limit, offset)
    codec_name = m.compression
    ts_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else TimestampType.from_schema(m.timestamp_type)
    timestamp = m.timestamp
    common = dict(
        position=position,
        size=LOG_OVERHEAD + size,
        magic=magic,
        crc=m.crc,
        crc_valid=crc_valid,
        computed_crc=m.computed_crc,
        compression=codec_name,
        timestamp_type=ts_type,
        max_timestamp=timestamp,
    )
    if codec_name == "none":
        rec = Record(offset, timestamp, ts_type, m.key, m.value, (), crc=m.crc, crc_valid=crc_valid, magic=magic)
        n = 0 if m.value is None else len(m.value)
        return Batch(
            base_offset=offset,
            last_offset=offset,
            records=[rec],
            record_count=1,
            stored_records_size=n,
            records_size=n,
            **common,
        )
    if m.value is None:
        raise CorruptError(
            f"compressed ({codec_name}) wrapper message has a null value",
            position=position + LOG_OVERHEAD + size - 4,
            base_offset=offset,
            field="message.value",
        )
    value_start = position + LOG_OVERHEAD + size - len(m.value)  # the value ends the entry
    data = _decompress(codec_name, m.value, magic, limit, value_start, offset, "message.value")
    inner: Sequence[Record] | None = None
    if len(data) <= _FEW_INNER_BYTES:  # the kernel builds every message at once: only when few
        inner = _inner_compiled(data, magic, offset, m, ts_type, limit)
    if inner is None:
        try:
            if len(data) > _FEW_INNER_BYTES and _inner_framing(data, offset)[0] <= CHUNKED_RECORD_COUNT:
                inner = _inner_compiled(data, magic, offset, m, ts_type, limit)
            if inner is None:
                inner = _inner_records(data, magic, offset, m, ts_type, verify_crc, limit)
        except KcodecError as exc:
            raise in_stream_error(exc, value_start, offset, codec_name, "message.value") from None
    return Batch(
        base_offset=inner[0].offset,
        last_offset=offset,
        records=inner,
        record_count=len(inner),
        stored_records_size=len(m.value),
        records_size=len(data),
        **common,
    )


class _Message:
    """The fields of a decoded v0/v1 log entry the runtime reads."""

    __slots__ = ("offset", "crc", "computed_crc", "magic", "compression", "timestamp_type", "timestamp", "key", "value")
    offset: int
    crc: int
    computed_crc: int
    magic: int
    compression: str
    timestamp_type: str
    timestamp: int
    key: bytes | None
    value: bytes | None


def _legacy_message(entry: bytes, position: int, verify_crc: bool, limit: int, offset: int) -> tuple[_Message, bool]:
    """Decode a v0/v1 log entry, leaving a wrapper's value compressed."""
    magic = entry[MAGIC_OFFSET]
    f = fast_decoders()
    try:
        e, _ = f.legacy[magic](entry, 0, len(entry), False, limit, False)
    except KcodecError as exc:
        raise exc.at(position, base_offset=offset) from None
    mv, i = e[f.e_message], f.m[magic]
    m = _Message()
    m.offset, m.crc, m.magic = e[f.e_offset], mv[i.crc], magic
    attributes = mv[i.attributes]
    m.compression = attributes["compression"]
    m.timestamp_type = attributes.get("timestamp_type", "create_time")
    m.timestamp = mv[i.timestamp] if magic == 1 else -1
    m.key, m.value = mv[i.key], mv[i.value]
    computed = m.computed_crc = f.crc32(memoryview(entry)[LEGACY_CRC_START:])
    crc_valid = computed == m.crc
    if verify_crc and not crc_valid:
        raise CrcMismatchError(
            record_corrupt_message(m.crc, computed),
            position=position + LEGACY_CRC_OFFSET,
            base_offset=offset,
            field="message.crc",
        )
    return m, crc_valid


def _inner_compiled(
    data: bytes, magic: int, wrapper_offset: int, wrapper: _Message, wrapper_ts_type: TimestampType, limit: int
) -> list[Record] | None:
    """The messages of a compressed wrapper as the compiled kernel builds them (no Python per message),
    when the stream is exactly a message set of the wrapper's magic whose every CRC holds. None leaves
    the stream to :func:`_inner_records`: it decides what Kafka makes of anything else (a truncated
    trailing entry, mixed magics, a CRC that does not hold, a wrapper offset below the last inner one,
    an offset past int64) and says where an error is."""
    inner = fast_decoders().legacy_inner
    if inner is None:
        return None
    if magic == 0:
        ts_type, append_time = TimestampType.NO_TIMESTAMP_TYPE, None
    else:  # v1: the wrapper's timestamp type; under LogAppendTime its timestamp too
        ts_type = wrapper_ts_type
        append_time = wrapper.timestamp if wrapper_ts_type is TimestampType.LOG_APPEND_TIME else None
    return inner(data, magic, wrapper_offset, ts_type, append_time, Record)


def _inner_framing(data: bytes, wrapper_offset: int) -> tuple[int, int]:
    """The framing of a compressed wrapper's message set, checked without keeping anything per message:
    (how many whole inner entries it holds, where the last one starts). A truncated trailing inner entry
    ends it, as in Kafka; a size below the minimum is an error."""
    pos = count = 0
    last = -1
    while len(data) - pos >= LOG_OVERHEAD:
        size = _I32.unpack_from(data, pos + SIZE_OFFSET)[0]
        if size < MIN_LEGACY_RECORD_SIZE:
            raise BadLengthError(
                f"Record size {size} is less than the minimum record overhead ({MIN_LEGACY_RECORD_SIZE})",
                position=pos + SIZE_OFFSET,
                base_offset=wrapper_offset,
                field=f"[{count}].size",
            )
        if len(data) - pos < LOG_OVERHEAD + size:
            break
        last, pos, count = pos, pos + LOG_OVERHEAD + size, count + 1
    if not count:
        raise CorruptError(
            "Found invalid compressed record set with no inner records", position=0, base_offset=wrapper_offset
        )
    return count, last


#: a decompressed message set of at most this many bytes holds at most CHUNKED_RECORD_COUNT messages
_FEW_INNER_BYTES = CHUNKED_RECORD_COUNT * (LOG_OVERHEAD + MIN_LEGACY_RECORD_SIZE)


def _inner_records(
    data: bytes, wrapper_magic: int, wrapper_offset: int, wrapper, wrapper_ts_type, verify_crc: bool, limit: int
) -> Sequence[Record]:
    """The messages of a compressed wrapper (Kafka's DeepRecordsIterator). Error positions are
    positions in ``data``, the decompressed stream; fields are relative to the wrapper's value. Above
    :data:`CHUNKED_RECORD_COUNT` messages they are a :class:`ChunkedRecords`, as a v2 batch's are: each
    message is checked once here, and only chunk starts are kept."""
    count, last_pos = _inner_framing(data, wrapper_offset)
    # Inner offsets: absolute in v0; relative in v1, anchored at the wrapper (= last inner) offset.
    base, last_inner = -1, _I64.unpack_from(data, last_pos)[0]
    if wrapper_magic == 1 and (wrapper_offset == 0 or wrapper_offset >= last_inner):
        base = 0 if wrapper_offset == 0 else wrapper_offset - last_inner
    decode = _inner_chunks(data, wrapper_offset, wrapper, wrapper_ts_type, verify_crc, limit, base)
    records: Sequence[Record]
    if count > CHUNKED_RECORD_COUNT:
        records = ChunkedRecords(decode, 0, count)  # every message checked: its errors come first
    else:
        records = decode(0, count, 0)[0]
    if wrapper_magic == 1 and 0 != wrapper_offset < last_inner:
        raise CorruptError(
            f"Found invalid wrapper offset in compressed v1 message set, wrapper offset "
            f"'{wrapper_offset}' is less than the last inner message offset '{last_inner}' "
            "and it is not zero.",
            position=last_pos,
            base_offset=wrapper_offset,
            field=f"[{count - 1}].offset",
        )
    return records


def _inner_chunks(
    data: bytes, wrapper_offset: int, wrapper, wrapper_ts_type, verify_crc: bool, limit: int, base: int
) -> DecodeChunk:
    """A :data:`~kcodec.records.chunked.DecodeChunk` of a wrapper's inner messages: each one's magic,
    fields, CRC and compression checked, its offset made absolute by ``base`` (-1: already absolute). A
    chunk the compiled kernel finds whole and sound is built by it (:func:`_inner_compiled`, given the
    chunk's own last offset as the anchor that gives ``base``); any other goes through Python, which
    decides what is wrong and where."""
    append_time = wrapper.timestamp if wrapper_ts_type is TimestampType.LOG_APPEND_TIME else None
    magic = wrapper.magic
    kernel = fast_decoders().legacy_inner if magic == 0 or base >= 0 else None
    kernel_ts_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else wrapper_ts_type

    def compiled(kernel, pos: int, n: int) -> tuple[list[Record] | None, int]:
        stop = last = pos
        for _ in range(n):
            last, stop = stop, stop + LOG_OVERHEAD + _I32.unpack_from(data, stop + SIZE_OFFSET)[0]
        anchor = base + _I64.unpack_from(data, last)[0] if magic == 1 else wrapper_offset
        if magic == 1 and anchor == 0 != base:  # the kernel reads an anchor of 0 as absolute offsets
            return None, stop
        chunk = memoryview(data)[pos:stop]
        return kernel(chunk, magic, anchor, kernel_ts_type, append_time if magic == 1 else None, Record), stop

    def decode(pos: int, n: int, index: int) -> tuple[list[Record], int]:
        if kernel is not None:
            built, stop = compiled(kernel, pos, n)
            if built is not None:
                return built, stop
        out = []
        for k in range(index, index + n):
            end = pos + LOG_OVERHEAD + _I32.unpack_from(data, pos + SIZE_OFFSET)[0]
            inner_magic = data[pos + MAGIC_OFFSET]
            if inner_magic not in (0, 1):
                raise UnknownMagicError(
                    f"Invalid magic {inner_magic} in an inner message",
                    position=pos + MAGIC_OFFSET,
                    base_offset=wrapper_offset,
                    field=f"[{k}].message.magic",
                )
            try:
                m, valid = _legacy_message(data[pos:end], pos, verify_crc, limit, wrapper_offset)
            except KcodecError as exc:
                raise exc.replace(base_offset=wrapper_offset).inside(f"[{k}]") from None
            if m.compression != "none":
                raise CorruptError(
                    "Inner messages must not be compressed",
                    position=pos + LEGACY_ATTRIBUTES_OFFSET,
                    base_offset=wrapper_offset,
                    field=f"[{k}].message.attributes",
                )
            if m.magic == 0:
                ts, ts_type = -1, TimestampType.NO_TIMESTAMP_TYPE
            else:
                ts_type, ts = wrapper_ts_type, m.timestamp if append_time is None else append_time
            offset = base + m.offset if base >= 0 else m.offset
            out.append(Record(offset, ts, ts_type, m.key, m.value, (), crc=m.crc, crc_valid=valid, magic=m.magic))
            pos = end
        return out, pos

    return decode
