"""Records as Arrow columns, without a Python object per record.

With the compiled kernel, each v2 batch's records are decoded straight into
Arrow buffers (offsets, validity bitmaps, data) and wrapped zero-copy; the
batch-level arithmetic (absolute offsets, timestamps) is vectorised. Without
it, or for v0/v1 and control batches, columns are built from decoded Records.
Needs pyarrow (the ``spark`` extra).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from typing import Any

from kcodec.errors import BadLengthError, KcodecError
from kcodec.generated.enums import COMPRESSION_TYPE_BY_VALUE
from kcodec.generated.record_batch import (
    RECORD_BATCH_V2_ATTRIBUTES_DELETE_HORIZON_MASK,
    RECORD_BATCH_V2_ATTRIBUTES_TIMESTAMP_TYPE_MASK,
    RECORD_BATCH_V2_ATTRIBUTES_TRANSACTIONAL_MASK,
)
from kcodec.records.chunked import CHUNKED_RECORD_COUNT
from kcodec.records.decode import decode_entry, fast_decoders, in_stream_error
from kcodec.records.framing import (
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    V2_ATTRIBUTES_LOW_BYTE,
    V2_CODEC_NAMES,
    V2_COMPRESSION_MASK,
    V2_CRC_START,
    V2_HEADER,
    V2_OVERHEAD,
    V2_RECORDS_COUNT_OFFSET,
    V2_RECORDS_OFFSET,
    V2_TIMESTAMP_TYPE_MASK,
    is_control_batch,
)
from kcodec.records.framing import last_offset as entry_last_offset
from kcodec.records.model import Batch, TimestampType
from kcodec.records.prefetch import Inflater, inflater
from kcodec.records.reader import Source, read_batches
from kcodec.records.source import is_buffer, is_stream
from kcodec.runtime import compression
from kcodec.runtime.crc import crc32c
from kcodec.runtime.varint import INT64_MAX

_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")


def _pa():
    import pyarrow as pa
    import pyarrow.compute as pc

    return pa, pc


_SCHEMA = None


def schema():
    """The columns every table from this module has."""
    global _SCHEMA
    if _SCHEMA is not None:
        return _SCHEMA
    pa, _ = _pa()
    from kcodec.records import arrow as t

    _SCHEMA = pa.schema(
        [
            pa.field("offset", t.OFFSET, nullable=False),
            pa.field("timestamp", t.TIMESTAMP_MS, nullable=False),
            pa.field("timestampType", t.TIMESTAMP_TYPE, nullable=False),
            pa.field("key", t.KEY),
            pa.field("value", t.VALUE),
            pa.field("headers", pa.list_(t.header_struct(key_nullable=False)), nullable=False),
            pa.field("sequence", t.SEQUENCE, nullable=False),
            pa.field("isControl", pa.bool_(), nullable=False),
            pa.field("batchPosition", t.POSITION, nullable=False),
        ]
    )
    return _SCHEMA


def _binary(pa, spec, n: int, text: bool = False):
    kind, valid, offsets, data, nulls = spec
    return pa.Array.from_buffers(
        pa.string() if text else pa.binary(),
        n,
        [pa.py_buffer(valid) if nulls else None, pa.py_buffer(offsets), pa.py_buffer(data)],
        null_count=nulls,
    )


def _ints(pa, spec, n: int):
    return pa.Array.from_buffers(pa.int64() if spec[0] == "int64" else pa.int32(), n, [None, pa.py_buffer(spec[1])])


def _headers(pa, spec, n: int):
    _, offsets, child = spec
    count = len(offsets) // 4 - 1
    keys = _binary(pa, child["key"], _child_len(child["key"]), text=True)
    values = _binary(pa, child["value"], _child_len(child["value"]))
    struct = pa.StructArray.from_arrays([keys, values], fields=list(schema().field("headers").type.value_type))
    return pa.ListArray.from_arrays(
        pa.Array.from_buffers(pa.int32(), count + 1, [None, pa.py_buffer(offsets)]),
        struct,
        type=schema().field("headers").type,
    )


def _const(pa, value: int, n: int, type_, fmt: str):
    # bytes arithmetic: pyarrow's scalar() looks for numpy on every call
    return pa.Array.from_buffers(type_, n, [None, pa.py_buffer(struct.pack(fmt, value) * n)])


def _child_len(spec) -> int:
    return len(spec[2]) // 4 - 1  # offsets hold count + 1 entries


def _columns_compiled(entry: bytes, position: int, verify_crc: bool, limit: int):
    """A v2 data batch decoded by the kernel into an Arrow RecordBatch, or None."""
    got = _compiled_v2(entry, position, verify_crc, limit, header=False)
    return None if got is None else got[1]


def kernel_columns() -> bool:
    """Whether v2 data batches decode straight into columns here (the compiled kernel is in use)."""
    f = fast_decoders()
    return f.kernel is not None and getattr(f.kernel, "columns_record_v2", None) is not None


def column_decoder():
    """:func:`entry_to_arrow` when v2 data batches decode straight into columns here (the compiled kernel,
    and pyarrow, are there), else None."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return None
    return entry_to_arrow if kernel_columns() else None


def _compiled_v2(entry: bytes, position: int, verify_crc: bool, limit: int, header: bool = True):
    """(the batch without its records, the records as an Arrow RecordBatch) of a v2 data batch decoded by
    the kernel, or None where the general path decodes it. ``header=False``: only the records are wanted
    (the batch is None), so without ``verify_crc`` the CRC is not computed."""
    f = fast_decoders()
    kernel_columns = getattr(f.kernel, "columns_record_v2", None) if f.kernel is not None else None
    if kernel_columns is None or len(entry) < V2_OVERHEAD or entry[MAGIC_OFFSET] != 2 or is_control_batch(entry):
        return None
    base_offset = _I64.unpack_from(entry, 0)[0]
    try:
        v, _ = f.batch(entry, 0, len(entry), False, limit, False)
    except KcodecError as exc:
        raise exc.at(position, base_offset=base_offset) from None
    i = f.b
    computed_crc = crc32c(memoryview(entry)[V2_CRC_START:]) if verify_crc or header else None
    if verify_crc and computed_crc != v[i.crc]:
        return None  # the general path raises the CRC error with all its details
    a = v[i.attributes]
    count, base_seq = v[i.records_count], v[i.base_sequence]
    if base_seq >= 0 and base_seq + max(v[i.last_offset_delta], count) > 0x7FFFFFFF:
        return None
    ts_type = TimestampType.from_schema(a["timestamp_type"])
    log_append = ts_type is TimestampType.LOG_APPEND_TIME
    addends = {"offset_delta": base_offset}
    if not log_append:
        addends["timestamp_delta"] = v[i.base_timestamp]
    try:
        if a["compression"] == "none":
            data, start = entry, V2_RECORDS_OFFSET
        else:
            data, start = compression.decompress(a["compression"], v[i.records], magic=2, max_size=limit), 0
        cols, n, end = kernel_columns(data, start, len(data), count, addends)
    except KcodecError as exc:  # placed as the object path places it (decode.py)
        if a["compression"] == "none":
            raise exc.inside("records").at(position, base_offset=base_offset) from None
        raise in_stream_error(exc, position + V2_RECORDS_OFFSET, base_offset, a["compression"], "records") from None
    if end != len(data):
        raise BadLengthError(
            f"{len(data) - end} bytes left over after records",
            position=position + V2_RECORDS_OFFSET,
            base_offset=base_offset,
            field="records",
        )
    last_offset = base_offset + v[i.last_offset_delta]
    if last_offset > INT64_MAX:
        return None  # the general path raises it
    batch = (
        None
        if not header
        else ColumnBatch(
            position=position,
            size=len(entry),
            magic=2,
            base_offset=base_offset,
            last_offset=last_offset,
            crc=v[i.crc],
            crc_valid=computed_crc == v[i.crc],
            computed_crc=computed_crc,
            compression=a["compression"],
            timestamp_type=ts_type,
            max_timestamp=v[i.max_timestamp],
            records=(),
            partition_leader_epoch=v[i.partition_leader_epoch],
            is_transactional=a["transactional"],
            has_delete_horizon=a["delete_horizon"],
            producer_id=v[i.producer_id],
            producer_epoch=v[i.producer_epoch],
            base_sequence=base_seq,
            base_timestamp=v[i.base_timestamp],
            record_count=count,
            stored_records_size=len(entry) - V2_OVERHEAD,
            records_size=len(data) - start,
        )
    )
    pa = _pa()[0]
    offsets = _ints(pa, cols["offset_delta"], n)
    timestamps = (
        _const(pa, v[i.max_timestamp], n, pa.int64(), "<q") if log_append else _ints(pa, cols["timestamp_delta"], n)
    )
    if base_seq >= 0:  # sequence = baseSequence + offsetDelta, which never wraps here (checked above)
        sequence = _pa()[1].add(offsets, base_seq - base_offset).cast(pa.int32())
    else:
        sequence = _const(pa, -1, n, pa.int32(), "<i")
    arrow = _record_batch(
        pa,
        cols,
        n,
        offsets,
        timestamps,
        _const(pa, int(ts_type), n, pa.int32(), "<i"),
        sequence,
        _const(pa, position, n, pa.int64(), "<q"),
    )
    if batch is not None:
        batch.arrow = arrow
    return batch, arrow


def _record_batch(pa, cols, n: int, offsets, timestamps, timestamp_types, sequence, positions):
    """The RecordBatch of :func:`schema` from the kernel's record columns and the batch-level ones."""
    return pa.RecordBatch.from_arrays(
        [
            offsets,
            timestamps,
            timestamp_types,
            _binary(pa, cols["key"], n),
            _binary(pa, cols["value"], n),
            _headers(pa, cols["headers"], n),
            sequence,
            pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(bytes(-(-n // 8)))]),
            positions,
        ],
        schema=_SCHEMA or schema(),
    )


#: about how many bytes of batches one kernel run takes: its columns (a few times that) then come from blocks
#: the kernel kept from released columns, instead of a segment's worth of fresh pages faulted in each time
RUN_BYTES = 4 << 20


def segment_run(
    verify_crc: bool,
    limit: int,
    max_batch_size: int,
    start_offset: int | None,
    batches: bool = False,
    stored=False,
    ahead: Inflater | None = None,
):
    """``run(bytes, position)`` for :meth:`~kcodec.records.reader.BatchReader.entry_runs`: the kernel's
    ``segment_columns`` decodes the run of v2 data batches at the start of the bytes into one RecordBatch
    (entries before ``start_offset`` passed over), up to the first entry it does not take (a control batch,
    v0/v1, damage, a CRC that does not hold when it is checked, ...), which the caller decodes as one entry.
    With ``batches`` what it makes is (the RecordBatch, :func:`run_batches` of the run, ``stored`` passed on).
    ``ahead``: the walk's :class:`~kcodec.records.prefetch.Inflater` (compressed batches inflated on another
    core while the kernel decodes, the GIL released), or None. None without the compiled kernel."""
    f = fast_decoders()
    kernel_run = getattr(f.kernel, "segment_columns", None) if f.kernel is not None else None
    if kernel_run is None:
        return None
    crc = crc32c if verify_crc else None
    pa = _pa()[0]

    def run(data, position: int):
        cols, n, end, full = kernel_run(
            data,
            0,
            len(data),
            crc,
            limit,
            max_batch_size,
            CHUNKED_RECORD_COUNT,
            V2_CODEC_NAMES,
            start_offset,
            position,
            RUN_BYTES,
            None if ahead is None else ahead.over(data, position),
        )
        if cols is None:
            return None, end, full
        made = _record_batch(
            pa,
            cols,
            n,
            _ints(pa, cols["offset_delta"], n),
            _ints(pa, cols["timestamp_delta"], n),
            _ints(pa, cols["timestamp_type"], n),
            _ints(pa, cols["sequence"], n),
            _ints(pa, cols["position"], n),
        )
        if batches:
            made = made, run_batches(data, end, position, start_offset, verify_crc, stored, limit)
        return made, end, full

    return run


_ATTRIBUTE_MASKS = (
    RECORD_BATCH_V2_ATTRIBUTES_TIMESTAMP_TYPE_MASK,
    RECORD_BATCH_V2_ATTRIBUTES_TRANSACTIONAL_MASK,
    RECORD_BATCH_V2_ATTRIBUTES_DELETE_HORIZON_MASK,
)


def run_batches(
    data, end: int, position: int, start_offset: int | None, crc_checked: bool, stored: bool = False, limit: int = 0
) -> list[ColumnBatch]:
    """The batches of a run :func:`segment_run` decoded (``data[:end]``, ``data[0]`` at ``position``), in the
    order of its rows, from their headers alone (``records`` empty: the run's RecordBatch holds them);
    entries whose last offset is before ``start_offset`` were passed over, and are not listed. Every one is a
    v2 data batch the kernel took whole. ``crc_checked``: the run checked each CRC (so each holds), else it is
    computed here. ``stored``: a LogAppendTime batch's :attr:`~ColumnBatch.stored_timestamps` are read too
    (``limit``: the decompressed-size cap). ``records_size`` is only known of uncompressed batches (0 for the
    others: their inflated bytes are the kernel's)."""
    out = []
    unpack = V2_HEADER.unpack_from
    ts_mask, txn_mask, horizon_mask = _ATTRIBUTE_MASKS
    p = 0
    while p < end:
        (base, length, leader_epoch, _, crc, attrs, last_delta, base_ts, max_ts, pid, epoch, base_seq, count) = unpack(
            data, p
        )
        size = LOG_OVERHEAD + length
        last = base + last_delta
        if start_offset is None or last >= start_offset:
            computed = crc if crc_checked else crc32c(memoryview(data)[p + V2_CRC_START : p + size])
            codec = COMPRESSION_TYPE_BY_VALUE[attrs & V2_COMPRESSION_MASK]
            log_append = bool(attrs & ts_mask)
            batch = ColumnBatch(
                position=position + p,
                size=size,
                magic=2,
                base_offset=base,
                last_offset=last,
                crc=crc,
                crc_valid=computed == crc,
                computed_crc=computed,
                compression=codec,
                timestamp_type=TimestampType.LOG_APPEND_TIME if log_append else TimestampType.CREATE_TIME,
                max_timestamp=max_ts,
                records=(),
                partition_leader_epoch=leader_epoch,
                is_transactional=bool(attrs & txn_mask),
                has_delete_horizon=bool(attrs & horizon_mask),
                producer_id=pid,
                producer_epoch=epoch,
                base_sequence=base_seq,
                base_timestamp=base_ts,
                record_count=count,
                stored_records_size=size - V2_OVERHEAD,
                records_size=size - V2_OVERHEAD if codec == "none" else 0,
            )
            if stored and log_append:
                batch.stored_timestamps = stored_timestamps(bytes(data[p : p + size]), limit)
            out.append(batch)
        p += size
    return out


@dataclass(slots=True)
class ColumnBatch(Batch):
    """A batch whose records are Arrow columns (:attr:`table`, see :func:`schema`). From the kernel's
    columns its ``records`` are empty; from decoded Records the table is built when first asked for (a
    reader that only wants the Records, or a record-count bomb's chunked records, never builds it)."""

    arrow: Any = None
    #: a LogAppendTime v2 batch's record timestamps as stored (the producers'), which the records'
    #: timestamps replace by the append time; None for other batches (see :func:`stored_timestamps`)
    stored_timestamps: list[int] | None = None

    @property
    def table(self):
        if self.arrow is None:
            self.arrow = batch_to_arrow(self)
        return self.arrow


def entry_to_arrow(
    entry: bytes,
    position: int = 0,
    *,
    verify_crc: bool = True,
    max_decompressed_size: int = compression.DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> ColumnBatch:
    """One whole log entry as a :class:`ColumnBatch`: from the kernel's columns for v2 data batches, from
    decoded Records otherwise (v0/v1, control batches, no kernel). Same signature and errors as
    :func:`~kcodec.records.decode.decode_entry`, so ``read_batches(decode=entry_to_arrow)`` reads columns."""
    if type(entry) is not bytes:
        entry = bytes(entry)
    try:
        # a record-count bomb goes to the general path, which decodes it chunk by chunk
        bomb = len(entry) >= V2_OVERHEAD and _I32.unpack_from(entry, V2_RECORDS_COUNT_OFFSET)[0] > CHUNKED_RECORD_COUNT
        got = None if bomb else _compiled_v2(entry, position, verify_crc, max_decompressed_size)
    except KcodecError:
        got = None  # the general path raises the error with all its details (the CRC's first)
    if got is not None:
        out = got[0]
    else:
        batch = decode_entry(entry, position, verify_crc=verify_crc, max_decompressed_size=max_decompressed_size)
        out = ColumnBatch(**{f.name: getattr(batch, f.name) for f in fields(Batch)})
    if out.magic == 2 and out.timestamp_type is TimestampType.LOG_APPEND_TIME and not out.is_control:
        out.stored_timestamps = stored_timestamps(entry, max_decompressed_size)
    return out


def stored_timestamps(
    entry: bytes, max_decompressed_size: int = compression.DEFAULT_MAX_DECOMPRESSED_SIZE
) -> list[int]:
    """The record timestamps a v2 batch stores (baseTimestamp + each delta). Under LogAppendTime Kafka
    reads every record's timestamp as the batch's append time, yet the producer's stay in the bytes (the
    broker only stamps maxTimestamp): they are the same batch read as CreateTime, its CRC set aside (the
    timestamp-type bit is under it)."""
    flipped = bytearray(entry)
    flipped[V2_ATTRIBUTES_LOW_BYTE] &= ~V2_TIMESTAMP_TYPE_MASK  # a byte, so the result stays one
    batch = decode_entry(bytes(flipped), verify_crc=False, max_decompressed_size=max_decompressed_size)
    return [r.timestamp for r in batch.records]


def batch_to_arrow(batch: Batch):
    """One decoded batch as an Arrow RecordBatch (the general path)."""
    pa, _ = _pa()
    from kcodec.records.arrow import POSITION, RecordArrays

    cols = RecordArrays()
    cols.add(batch.records)
    return pa.RecordBatch.from_arrays(
        [
            cols.offsets(),
            cols.timestamps_ms(),
            cols.timestamp_types(),
            cols.keys(),
            cols.values(),
            cols.headers(schema().field("headers").type, null_when_empty=False),
            cols.sequences(),
            cols.controls(),
            pa.array([batch.position] * cols.rows, POSITION),
        ],
        schema=schema(),
    )


def iter_arrow(
    source: Source,
    *,
    verify_crc: bool = True,
    max_decompressed_size: int = compression.DEFAULT_MAX_DECOMPRESSED_SIZE,
    start_offset: int | None = None,
    **options,
) -> Iterator:
    """Arrow RecordBatches in order: with the compiled kernel one per run of v2 data batches (decoded in one
    kernel call), otherwise and for any other entry (v0/v1, control batches, damage) one per Kafka batch;
    entries whose last offset is before ``start_offset`` are passed over undecoded."""
    reader = read_batches(source, verify_crc=verify_crc, max_decompressed_size=max_decompressed_size, **options)
    size = memoryview(source).nbytes if is_buffer(source) else None
    ahead = inflater(reader.max_decompressed_size, reader.prefetch, size) if not is_stream(source) else None
    run = segment_run(verify_crc, reader.max_decompressed_size, reader.max_batch_size, start_offset, ahead=ahead)
    try:
        for position, entry, made in reader.entry_runs(run):
            if entry is None:
                if made is not None:
                    yield made
                continue
            if start_offset is not None and (entry_last_offset(entry) or 0) < start_offset:
                continue
            rb = _columns_compiled(entry, position, verify_crc, max_decompressed_size)
            if rb is None:
                rb = batch_to_arrow(
                    decode_entry(entry, position, verify_crc=verify_crc, max_decompressed_size=max_decompressed_size)
                )
            yield rb
    finally:
        if ahead is not None:
            ahead.close()


def read_arrow(source: Source, *, start_offset: int | None = None, end_offset: int | None = None, **options):
    """Every record of ``source`` as one pyarrow.Table (see :func:`schema`); with ``start_offset`` /
    ``end_offset`` (exclusive) only the records in that range (entries wholly before it are not decoded)."""
    pa, _ = _pa()
    batches = iter_arrow(source, start_offset=start_offset, **options)
    return offset_window(pa.Table.from_batches(list(batches), schema=schema()), start_offset, end_offset)


def offset_window(table, start_offset: int | None, end_offset: int | None):
    """The rows of a table of :func:`schema` whose offset is in [start_offset, end_offset)."""
    if start_offset is None and end_offset is None:
        return table
    _, pc = _pa()
    offsets = table.column("offset")
    keep = None
    for bound in (
        None if start_offset is None else pc.greater_equal(offsets, start_offset),
        None if end_offset is None else pc.less(offsets, end_offset),
    ):
        if bound is not None:
            keep = bound if keep is None else pc.and_(keep, bound)
    return table.filter(keep)


def batches_to_arrow(batches: Iterable[Batch]):
    pa, _ = _pa()
    return pa.Table.from_batches([batch_to_arrow(b) for b in batches], schema=schema())
