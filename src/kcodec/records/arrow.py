"""Records as Arrow columns: the Arrow types of the per-record columns, and the one builder that gathers
them from decoded records. Used by :mod:`kcodec.records.columnar` (``read_arrow``) and by the Spark data
source (:mod:`kcodec.spark.arrow`), whose tables differ only in how they present two columns: Spark wants
timestamps as ``timestamp[us, UTC]`` and a null ``headers`` for a record without any, in an array whose
element field is named ``element``. Needs pyarrow (the ``spark`` extra).
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

__all__ = [
    "KEY",
    "VALUE",
    "OFFSET",
    "TIMESTAMP_MS",
    "TIMESTAMP_TYPE",
    "SEQUENCE",
    "POSITION",
    "HEADER_KEY",
    "HEADER_VALUE",
    "header_struct",
    "RecordArrays",
]

KEY = pa.binary()  # null for none
VALUE = pa.binary()  # null for a tombstone
OFFSET = pa.int64()  # absolute offset
TIMESTAMP_MS = pa.int64()  # epoch ms, -1 for none
TIMESTAMP_TYPE = pa.int32()  # Kafka's id: -1 none (v0), 0 CreateTime, 1 LogAppendTime
SEQUENCE = pa.int32()  # -1 for none
POSITION = pa.int64()  # byte position of the batch in its input
HEADER_KEY = pa.string()
HEADER_VALUE = pa.binary()


def header_struct(key_nullable: bool) -> pa.StructType:
    """One header: a string key (never null in Kafka; Spark's type allows null) and a binary value."""
    return pa.struct([pa.field("key", HEADER_KEY, nullable=key_nullable), pa.field("value", HEADER_VALUE)])


class RecordArrays:
    """The per-record columns of many records, gathered in one pass, as Arrow arrays."""

    def __init__(self, headers: bool = True):
        self.want_headers = headers
        self.rows = 0
        self._keys: list = []
        self._values: list = []
        self._offsets: list = []
        self._timestamps: list = []
        self._types: list = []
        self._sequences: list = []
        self._controls: list = []
        self._h_offsets: list = [0]
        self._h_null: list = []
        self._h_keys: list = []
        self._h_values: list = []

    def add(self, records: Iterable) -> None:
        keys, values, offsets, tss, types = self._keys, self._values, self._offsets, self._timestamps, self._types
        sequences, controls = self._sequences, self._controls
        h_offsets, h_null, h_keys, h_values = self._h_offsets, self._h_null, self._h_keys, self._h_values
        want_headers = self.want_headers
        count = h_offsets[-1]
        n = 0
        for r in records:  # one pass with appends beats a comprehension per column here
            n += 1
            keys.append(r.key)
            values.append(r.value)
            offsets.append(r.offset)
            tss.append(r.timestamp)
            types.append(r.timestamp_type)
            sequences.append(r.sequence)
            controls.append(r.control is not None)
            if want_headers:
                hs = r.headers
                if hs:
                    for k, v in hs:
                        h_keys.append(k)
                        h_values.append(v)
                    count += len(hs)
                    h_null.append(False)
                else:
                    h_null.append(True)
                h_offsets.append(count)
        self.rows += n

    def keys(self) -> pa.Array:
        return pa.array(self._keys, KEY)

    def values(self) -> pa.Array:
        return pa.array(self._values, VALUE)

    def offsets(self) -> pa.Array:
        return pa.array(self._offsets, OFFSET)

    def timestamps_ms(self) -> pa.Array:
        return pa.array(self._timestamps, TIMESTAMP_MS)

    def timestamps_us(self, type_: pa.DataType) -> pa.Array:
        """The instants as a microsecond timestamp type (Spark's ``timestamp``): -1 ms is 1 ms before 1970."""
        return pa.array([t * 1000 for t in self._timestamps], pa.int64()).cast(type_)

    def timestamp_types(self) -> pa.Array:
        return pa.array([int(t) for t in self._types], TIMESTAMP_TYPE)

    def sequences(self) -> pa.Array:
        return pa.array(self._sequences, SEQUENCE)

    def controls(self) -> pa.Array:
        return pa.array(self._controls, pa.bool_())

    def headers(self, type_: pa.ListType, null_when_empty: bool) -> pa.Array:
        """The headers as ``type_`` (a list of :func:`header_struct`); a record without headers has an empty
        list, or null with ``null_when_empty``."""
        struct = pa.StructArray.from_arrays(
            [pa.array(self._h_keys, HEADER_KEY), pa.array(self._h_values, HEADER_VALUE)], fields=list(type_.value_type)
        )
        mask = pa.array(self._h_null, pa.bool_()) if null_when_empty else None
        return pa.ListArray.from_arrays(pa.array(self._h_offsets, pa.int32()), struct, type=type_, mask=mask)
