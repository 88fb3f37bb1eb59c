"""v2 records straight from Arrow columns, by the compiled kernel.

The Spark writer holds its rows as pyarrow arrays; :func:`encode_rows` hands
their buffers (validity bitmaps, offsets, data; sliced arrays at their
offsets) to the kernel's ``encode_columns_v2``, which writes the records of a
selection of rows with the generated record writer, and
:func:`~kcodec.records.encode.encode_v2_written` puts the batch around them:
the bytes ``encode_batch`` makes of the same rows as :class:`NewRecord`.

Columns: ``key``/``value`` binary or string (null: a null key or value),
``timestamp`` int64 microseconds (floored to milliseconds as
``timestamp // 1000``; null: -1), ``headers`` list<struct<key: string,
value: binary|string>>, ``offset`` int64 (kept offsets; without it offsets are
assigned from the batch's base). Rows the kernel leaves to the Python writer
(a timestamp below -1 ms, kept offsets that do not increase, a null header or
header key) give None: :func:`new_records` turns them into the writer's inputs,
and ``encode_batch`` words the error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kcodec.errors import EncodeError
from kcodec.records.encode import NewRecord
from kcodec.records.partitioner import partition_for_key

__all__ = ["ArrowRows", "kernel", "encode_rows", "encode_parts", "selection_arg", "new_records", "partitions_for_keys"]


def kernel() -> Any:
    """The compiled kernel when it has the column encoder, else None."""
    from kcodec.generated.fast.kernel import compiled_kernel

    k = compiled_kernel()
    return k if k is not None and hasattr(k, "encode_columns_v2") else None


def _binary(arr) -> tuple:
    import pyarrow as pa

    if not (pa.types.is_binary(arr.type) or pa.types.is_string(arr.type)):  # large or view layouts
        arr = arr.cast(pa.binary())
    valid, offsets, data = arr.buffers()[:3]
    return (valid, offsets, b"" if data is None else data, arr.offset, len(arr))


def _int64(arr) -> tuple:
    import pyarrow as pa

    if arr.type != pa.int64():
        arr = arr.cast(pa.int64())
    valid, data = arr.buffers()[:2]
    return (valid, data, arr.offset, len(arr))


def _headers(arr) -> tuple:
    structs = arr.values
    valid, offsets = arr.buffers()[:2]
    return (
        valid,
        offsets,
        arr.offset,
        len(arr),
        structs.buffers()[0],
        structs.offset,
        _binary(structs.field("key")),
        _binary(structs.field("value")),
    )


@dataclass
class ArrowRows:
    """One Arrow record batch's writer columns (None: absent, every row null or empty)."""

    key: Any = None
    value: Any = None
    timestamp_us: Any = None  # int64 microseconds
    headers: Any = None
    offset: Any = None  # int64 kept offsets, or None: assigned

    def buffers(self) -> tuple:
        """The arguments of the kernel's encode_columns_v2 for these columns (computed once)."""
        cached = self.__dict__.get("_buffers")
        if cached is None:
            cached = self.__dict__["_buffers"] = (
                None if self.key is None else _binary(self.key),
                None if self.value is None else _binary(self.value),
                None if self.timestamp_us is None else _int64(self.timestamp_us),
                None if self.headers is None else _headers(self.headers),
                None if self.offset is None else _int64(self.offset),
            )
        return cached


def encode_rows(
    rows: ArrowRows,
    selection,
    *,
    base_offset: int | None = None,
    previous_offset: int | None = None,
    base_timestamp: int | None = None,
) -> tuple | None:
    """The kernel's (records bytes, count, base offset, last offset, base timestamp, max timestamp) for
    the ``selection`` of rows (an int32/int64 Arrow array of indices, in order, or a ``(start, count)`` range).

    Offsets: the ``offset`` column's, else ``base_offset`` for the first row and one more for each
    next. A batch may be written in parts (rows of several Arrow batches): a later part gives the
    batch's ``base_offset`` and ``base_timestamp`` and the ``previous_offset`` the last part ended
    at. None: no kernel, or rows the Python writer words (see the module's docstring)."""
    k = kernel()
    if k is None:
        return None
    return k.encode_columns_v2(*rows.buffers(), selection_arg(selection), base_offset, previous_offset, base_timestamp)


def encode_parts(parts, base_offset: int | None) -> tuple | None:
    """One batch's records from its parts (``(ArrowRows, selection)`` pairs, in order), as the kernel's
    record writers return them; None when a part is left to the Python writer (or no kernel)."""
    data, count, previous, base_ts, max_ts = [], 0, None, None, -1
    base = base_offset
    for rows, sel in parts:
        w = encode_rows(rows, sel, base_offset=base, previous_offset=previous, base_timestamp=base_ts)
        if w is None:
            return None
        if not w[1]:
            continue
        if base_ts is None:
            base, base_ts = w[2], w[4]
        data.append(w[0])
        count += w[1]
        previous = w[3]
        max_ts = max(max_ts, w[5])
    return (b"".join(data), count, base, previous, base_ts, max_ts)


def selection_arg(selection) -> tuple:
    """Rows as the kernel takes them: ``(start, count)``, or an int32/int64 Arrow array's
    ``(data buffer, offset, length, byte width)``."""
    if isinstance(selection, tuple):
        return selection
    if selection.null_count:
        raise ValueError("row indices cannot be null")
    return (selection.buffers()[1], selection.offset, len(selection), selection.type.byte_width)


def _text(v):
    return v.encode("utf-8") if isinstance(v, str) else v


def new_records(rows: ArrowRows, selection) -> list[NewRecord]:
    """The rows as the Python writer's inputs (what ``encode_batch`` takes): for magic 0/1 and the
    rows the kernel leaves to it. The columns become Python values once per :class:`ArrowRows`."""
    cols = rows.__dict__.get("_pylists")
    if cols is None:
        cols = rows.__dict__["_pylists"] = tuple(
            None if arr is None else arr.to_pylist()
            for arr in (rows.key, rows.value, rows.timestamp_us, rows.headers, rows.offset)
        )
    keys, values, tss, headers, offsets = cols
    if isinstance(selection, tuple):
        order: Any = range(selection[0], selection[0] + selection[1])
    else:
        order = selection.to_pylist()
    out = []
    for i in order:
        hs = headers[i] if headers is not None else None
        hdrs: tuple = ()
        if hs:
            if any(h is None for h in hs):
                raise EncodeError("a null header (headers hold key/value structs)")
            hdrs = tuple((h["key"], _text(h["value"])) for h in hs)
        t = tss[i] if tss is not None else None
        out.append(
            NewRecord(
                _text(keys[i]) if keys is not None else None,
                _text(values[i]) if values is not None else None,
                hdrs,
                -1 if t is None else t // 1000,
                offsets[i] if offsets is not None else None,
            )
        )
    return out


def partitions_for_keys(keys, num_partitions: int):
    """Kafka's default partition (``toPositive(murmur2(key)) % num_partitions``) of each key of a
    binary or string array, as an int32 Arrow array; -1 where the key is null."""
    import pyarrow as pa

    k = kernel()
    if k is not None:
        data = k.partitions_for_keys(_binary(keys), num_partitions)
        return pa.Array.from_buffers(pa.int32(), len(keys), [None, pa.py_buffer(data)])
    return pa.array(
        [-1 if key is None else partition_for_key(_text(key), num_partitions) for key in keys.to_pylist()],
        pa.int32(),
    )
