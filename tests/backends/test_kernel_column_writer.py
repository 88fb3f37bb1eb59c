"""The compiled kernel's v2 writer from Arrow columns (encode_record_columns_v2, through
``encode_batch(RecordColumns(...))``) against the same rows written by the row writer."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcodec.errors import EncodeError
from kcodec.generated.fast.kernel import compiled_kernel
from kcodec.records import encode
from kcodec.records.encode import encode_batch
from kcodec.records.reader import read_batches
from kcodec.records.record_columns import RecordColumns

from .test_kernel_record_writer import outcome, python_path

pytestmark = pytest.mark.skipif(compiled_kernel() is None, reason="needs the compiled kernel")

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def rows_of(keys, values, timestamps, headers):
    return [
        {"key": k, "value": v, "timestamp": -1 if t is None else t, "headers": h or ()}
        for k, v, t, h in zip(keys, values, timestamps, headers)
    ]


row_st = st.tuples(
    st.one_of(st.none(), st.binary(max_size=12)),
    st.one_of(st.none(), st.binary(max_size=40)),
    st.one_of(st.none(), st.just(-1), st.integers(0, 1 << 42)),
    st.one_of(st.none(), st.lists(st.tuples(st.text(max_size=4), st.one_of(st.none(), st.binary(max_size=4))))),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(row_st, min_size=1, max_size=15),
    st.integers(0, 3),
    st.sampled_from(CODECS),
    st.one_of(st.none(), st.integers(0, 1 << 40)),
    st.one_of(st.none(), st.integers(0, 1 << 42)),
    st.booleans(),
)
def test_columns_equal_rows(rows, cut, codec, base_offset, horizon, chunked):
    keys, values, stamps, headers = (list(c) for c in zip(*rows))
    # a sliced array: the kernel must respect the array offset
    pad = [None] * cut
    key_array = pa.array(pad + keys, pa.binary()).slice(cut)
    value_array = pa.array(pad + values, pa.binary()).slice(cut)
    ts_array = pa.array(pad + stamps, pa.int64()).slice(cut)
    if chunked and len(rows) > 1:
        key_array = pa.chunked_array([key_array[:1], key_array[1:]])
    columns = RecordColumns(key_array, value_array, ts_array, headers)
    options = dict(compression=codec, base_offset=base_offset, delete_horizon_ms=horizon)
    assert encode._kernel_records(columns, base_offset, horizon) is not None
    got = encode_batch(columns, **options)
    assert got == python_path(encode_batch, columns, **options)
    assert got == encode_batch(rows_of(keys, values, stamps, headers), **options)


def test_strings_large_binary_and_timestamp_types():
    keys = pa.array(["k", None, "ü"], pa.large_string())
    values = pa.array([b"1", b"", None], pa.large_binary())
    stamps = pa.array([1_000, None, 3_000], pa.timestamp("ms", tz="UTC"))
    rows = [
        {"key": b"k", "value": b"1", "timestamp": 1_000},
        {"value": b""},
        {"key": "ü".encode(), "timestamp": 3_000},
    ]
    assert encode_batch(RecordColumns(keys, values, stamps)) == encode_batch(rows)
    only_values = RecordColumns(values=pa.array([b"a", b"b"]), timestamps=pa.array([5, 6], pa.int32()))
    assert encode_batch(only_values, base_offset=9) == encode_batch(
        [{"value": b"a", "timestamp": 5}, {"value": b"b", "timestamp": 6}], base_offset=9
    )
    assert [r.offset for b in read_batches(encode_batch(only_values, base_offset=9)) for r in b.records] == [9, 10]


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_magics_take_the_rows(magic):
    columns = RecordColumns(pa.array([b"k", None]), pa.array([b"v", b"w"]))
    assert encode_batch(columns, magic=magic, compression="gzip") == encode_batch(
        [{"key": b"k", "value": b"v"}, {"value": b"w"}], magic=magic, compression="gzip"
    )


# rows the kernel leaves to the row writer: the same EncodeError as rows
REFUSED = {
    "negative timestamp": dict(values=pa.array([b"v"]), timestamps=pa.array([-5], pa.int64())),
    "null header key": dict(values=pa.array([b"v"]), headers=[[(None, b"x")]]),
    "header value str": dict(values=pa.array([b"v"]), headers=[[("h", "x")]]),
    "timestamp delta": dict(values=pa.array([b"v", b"w"]), timestamps=pa.array([-1, (1 << 63) - 1], pa.int64())),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_rows_keep_their_messages(case):
    columns = RecordColumns(**REFUSED[case])
    assert encode._kernel_records(columns, None, None) is None
    got = outcome(encode_batch, columns)
    assert got[0] == "EncodeError"
    assert got == outcome(encode_batch, list(columns))


@pytest.mark.parametrize("base_offset", [-1, 1 << 63, "0"])
def test_bad_base_offset(base_offset):
    columns = RecordColumns(values=pa.array([b"v"]))
    got = outcome(encode_batch, columns, base_offset=base_offset)
    assert got[0] == "EncodeError" and got == outcome(encode_batch, list(columns), base_offset=base_offset)


def test_bad_columns_are_refused():
    with pytest.raises(EncodeError, match="differ in length: keys 2, values 1"):
        RecordColumns(pa.array([b"a", b"b"]), pa.array([b"v"]))
    with pytest.raises(EncodeError, match="binary or string array, not int64"):
        RecordColumns(values=pa.array([1]))
    with pytest.raises(EncodeError, match="integer or timestamp array"):
        RecordColumns(values=pa.array([b"v"]), timestamps=pa.array([1.5]))
    with pytest.raises(EncodeError, match="at least one of"):
        RecordColumns()
    with pytest.raises(EncodeError, match="pyarrow array"):
        RecordColumns(values=[b"v"])


def test_kernel_checks_the_buffers():
    kernel = compiled_kernel()
    array = pa.array([b"ab", b"c"])
    _, offsets, data = array.buffers()
    with pytest.raises(ValueError, match="too short for 5 rows"):
        kernel.encode_record_columns_v2(5, None, (0, None, offsets, data), None, None, 0, None)
    bad_offsets = pa.py_buffer(bytes([0, 0, 0, 0, 9, 0, 0, 0, 3, 0, 0, 0]))
    with pytest.raises(ValueError, match="row 0 has offsets 0..9 outside its 3 data bytes"):
        kernel.encode_record_columns_v2(2, None, (0, None, bad_offsets, data), None, None, 0, None)
