"""Records given as Arrow columns, for the writer (:func:`kcodec.records.encode.encode_batch`).

``encode_batch(RecordColumns(keys, values, timestamps, headers), ...)`` writes one batch from
pyarrow arrays. At magic 2 with the compiled kernel the records are written straight from the
arrays' buffers (validity bitmap, int32 offsets, data), with no Python object per row; otherwise
(magic 0/1, the Python backend, or a row the kernel leaves to the row writer's checks) the columns
are iterated as record dicts, and the writer validates and words errors as it does for rows.
Offsets run from the batch's ``base_offset``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from kcodec.errors import EncodeError

__all__ = ["RecordColumns"]


class RecordColumns:
    """``keys`` and ``values``: binary or string arrays (None: all null); ``timestamps``: int64 or
    timestamp arrays in milliseconds (None or null: -1); ``headers``: one list of (str,
    bytes-or-None) pairs per row, or None. Chunked arrays are combined."""

    __slots__ = ("keys", "values", "timestamps", "headers", "count")

    def __init__(self, keys: Any = None, values: Any = None, timestamps: Any = None, headers: Sequence | None = None):
        import pyarrow as pa

        self.keys = _binary(pa, "keys", keys)
        self.values = _binary(pa, "values", values)
        self.timestamps = _int64(pa, timestamps)
        self.headers = headers
        lengths = {
            name: len(column)
            for name, column in (
                ("keys", self.keys),
                ("values", self.values),
                ("timestamps", self.timestamps),
                ("headers", headers),
            )
            if column is not None
        }
        if not lengths:
            raise EncodeError("RecordColumns needs at least one of keys, values, timestamps or headers")
        if len(set(lengths.values())) > 1:
            raise EncodeError(
                "the columns differ in length: " + ", ".join(f"{name} {n}" for name, n in lengths.items())
            )
        self.count = next(iter(lengths.values()))

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[dict]:
        """The rows as the writer's record dicts."""
        n = self.count
        keys = self.keys.to_pylist() if self.keys is not None else [None] * n
        values = self.values.to_pylist() if self.values is not None else [None] * n
        stamps = self.timestamps.to_pylist() if self.timestamps is not None else [None] * n
        headers = self.headers if self.headers is not None else [None] * n
        for key, value, timestamp, row_headers in zip(keys, values, stamps, headers):
            yield {
                "key": key,
                "value": value,
                "timestamp": -1 if timestamp is None else timestamp,
                "headers": row_headers or (),
            }

    def kernel_args(self) -> tuple:
        """The buffers encode_record_columns_v2 takes (count, keys, values, timestamps, headers)."""
        headers = self.headers
        if headers is not None and type(headers) not in (list, tuple):
            headers = list(headers)
        return self.count, _buffers(self.keys), _buffers(self.values), _buffers(self.timestamps), headers


def _chunks_combined(pa, name: str, array: Any):
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if not isinstance(array, pa.Array):
        raise EncodeError(f"{name} must be a pyarrow array, not {type(array).__name__}")
    return array


def _binary(pa, name: str, array: Any):
    if array is None:
        return None
    array = _chunks_combined(pa, name, array)
    t = array.type
    if pa.types.is_null(t):
        return None
    if not (
        pa.types.is_binary(t) or pa.types.is_string(t) or pa.types.is_large_binary(t) or pa.types.is_large_string(t)
    ):
        raise EncodeError(f"{name} must be a binary or string array, not {t}")
    try:
        return array.cast(pa.binary())  # UTF-8 text is its bytes; large offsets narrowed (a batch is < 2 GiB)
    except (pa.ArrowInvalid, OverflowError) as exc:
        raise EncodeError(f"{name}: {exc}") from None


def _int64(pa, array: Any):
    if array is None:
        return None
    array = _chunks_combined(pa, "timestamps", array)
    t = array.type
    if pa.types.is_null(t):
        return None
    try:
        if pa.types.is_timestamp(t):
            array = array.cast(pa.timestamp("ms")).cast(pa.int64())
        elif pa.types.is_integer(t):
            array = array.cast(pa.int64())
        else:
            raise EncodeError(f"timestamps must be an integer or timestamp array (ms), not {t}")
    except (pa.ArrowInvalid, OverflowError) as exc:
        raise EncodeError(f"timestamps: {exc}") from None
    return array


def _buffers(array: Any) -> tuple | None:
    """(offset, validity or None, [int32 offsets,] data) of a binary or int64 array."""
    if array is None:
        return None
    buffers = array.buffers()
    validity = buffers[0] if array.null_count else None
    data = buffers[-1] if buffers[-1] is not None else b""
    return (array.offset, validity, buffers[1], data) if len(buffers) == 3 else (array.offset, validity, data)
