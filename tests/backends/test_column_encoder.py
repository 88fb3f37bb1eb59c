"""The compiled kernel's column encoder (kcodec.records.arrow_encode) against encode_batch: the same
batch bytes from Arrow columns (binary or string, nulls, sliced arrays, headers, row selections,
batches written in parts) as from NewRecords; rows the Python writer refuses come back as None and
encode_batch words the error; murmur2 over a column matches kcodec.records.partitioner."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcodec.errors import EncodeError
from kcodec.records.arrow_encode import ArrowRows, encode_rows, kernel, new_records, partitions_for_keys
from kcodec.records.encode import NewRecord, encode_batch, encode_v2_written
from kcodec.records.partitioner import murmur2_python, partition_for_key, to_positive
from kcodec.records.sizing import v2_fixed_size_of
from tests.helpers.murmur2 import JAVA_CASES

pa = pytest.importorskip("pyarrow")
pytestmark = pytest.mark.skipif(kernel() is None, reason="the compiled kernel is not built here")

HEADER_VALUES = {False: pa.binary(), True: pa.string()}


def headers_type(text: bool):
    return pa.list_(pa.struct([("key", pa.string()), ("value", HEADER_VALUES[text])]))


blob = st.binary(max_size=40)
text = st.text(max_size=12)
header = st.tuples(text, st.none() | blob)
row = st.fixed_dictionaries(
    {
        "key": st.none() | blob,
        "value": st.none() | blob,
        "ts": st.none() | st.integers(-1000, 1 << 50),  # microseconds; -1000..-1 floor to -1 ms
        "headers": st.none() | st.lists(header, max_size=3),
    }
)


def arrays(rows, key_text: bool, value_text: bool, header_text: bool, pad: int):
    """The rows as Arrow arrays, each sliced past ``pad`` leading rows of other data."""

    def as_type(b, as_text):
        return None if b is None else (b.decode("latin-1") if as_text else b)

    def col(values, typ):
        filler = [values[0]] * pad if values else []
        return pa.array(filler + values, typ).slice(pad)

    keys = col([as_type(r["key"], key_text) for r in rows], pa.string() if key_text else pa.binary())
    values = col([as_type(r["value"], value_text) for r in rows], pa.string() if value_text else pa.binary())
    ts = col([r["ts"] for r in rows], pa.int64())
    hs = col(
        [
            None if r["headers"] is None else [{"key": k, "value": as_type(v, header_text)} for k, v in r["headers"]]
            for r in rows
        ],
        headers_type(header_text),
    )
    return ArrowRows(keys, values, ts, hs)


def expected_record(r, key_text, value_text, header_text, offset=None):
    def b(x, as_text):
        return None if x is None else (x.decode("latin-1").encode("utf-8") if as_text else x)

    hs = tuple((k, b(v, header_text)) for k, v in r["headers"] or ())
    ts = -1 if r["ts"] is None else r["ts"] // 1000
    return NewRecord(b(r["key"], key_text), b(r["value"], value_text), hs, ts, offset)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(row, min_size=1, max_size=12),
    kinds=st.tuples(st.booleans(), st.booleans(), st.booleans()),
    pad=st.integers(0, 3),
    pick=st.data(),
    base=st.integers(0, 1 << 40),
    wide=st.booleans(),
)
def test_columns_encode_as_encode_batch(rows, kinds, pad, pick, base, wide):
    cols = arrays(rows, *kinds, pad)
    chosen = sorted(pick.draw(st.sets(st.integers(0, len(rows) - 1), min_size=1)))
    selection = pa.array(chosen, pa.int64() if wide else pa.int32())
    want = encode_batch([expected_record(rows[i], *kinds) for i in chosen], base_offset=base)
    assert encode_v2_written(encode_rows(cols, selection, base_offset=base)) == want
    # a contiguous range, and the same batch written in two parts
    whole = encode_batch([expected_record(r, *kinds) for r in rows], base_offset=base)
    assert encode_v2_written(encode_rows(cols, (0, len(rows)), base_offset=base)) == whole
    cut = pick.draw(st.integers(1, len(rows)))
    first = encode_rows(cols, (0, cut), base_offset=base)
    rest = encode_rows(
        cols, (cut, len(rows) - cut), base_offset=base, previous_offset=first[3], base_timestamp=first[4]
    )
    if rest[1]:
        first = (first[0] + rest[0], first[1] + rest[1], base, rest[3], first[4], max(first[5], rest[5]))
    assert encode_v2_written(first) == whole
    # new_records (the writer's Python path) reads the same rows
    assert encode_batch(new_records(cols, selection), base_offset=base) == want


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=8), gaps=st.lists(st.integers(1, 1000), min_size=8, max_size=8))
def test_kept_offsets_as_encode_batch(rows, gaps):
    offsets, at = [], 17
    for g in gaps[: len(rows)]:
        offsets.append(at)
        at += g
    cols = arrays(rows, False, True, False, 0)
    cols.offset = pa.array(offsets, pa.int64())
    want = encode_batch([expected_record(r, False, True, False, o) for r, o in zip(rows, offsets, strict=True)])
    written = encode_rows(cols, (0, len(rows)))
    assert written[2] == offsets[0] and written[3] == offsets[-1]
    assert encode_v2_written(written, compression="gzip") == encode_batch(
        new_records(cols, (0, len(rows))), compression="gzip"
    )
    assert encode_v2_written(written) == want


def refused(cols, n):
    """The kernel leaves the rows to the Python writer, whose error is returned."""
    assert encode_rows(cols, (0, n), base_offset=0) is None
    with pytest.raises(EncodeError) as err:
        encode_batch(new_records(cols, (0, n)), base_offset=0)
    return str(err.value)


def test_rows_the_python_writer_refuses():
    values = pa.array([b"a", b"b"])
    null_key = pa.array([[{"key": "k", "value": b"1"}], [{"key": None, "value": b"2"}]], headers_type(False))
    assert "null header key" in refused(ArrowRows(value=values, headers=null_key), 2)
    old = pa.array([1000, -2000], pa.int64())  # -2 ms: before the epoch, not Kafka's -1
    assert "Invalid negative timestamp -2" in refused(ArrowRows(value=values, timestamp_us=old), 2)
    backwards = ArrowRows(value=values, offset=pa.array([5, 5], pa.int64()))
    assert encode_rows(backwards, (0, 2)) is None
    with pytest.raises(EncodeError):
        encode_batch(new_records(backwards, (0, 2)))
    null_header = pa.array([[None]], headers_type(False))
    assert encode_rows(ArrowRows(value=values.slice(0, 1), headers=null_header), (0, 1), base_offset=0) is None
    with pytest.raises(EncodeError, match="null header"):
        new_records(ArrowRows(value=values.slice(0, 1), headers=null_header), (0, 1))


def test_bad_buffers_and_rows_are_errors_not_crashes():
    k = kernel()
    values = pa.array([b"ab", b"c"])
    valid, offsets, data = values.buffers()
    with pytest.raises(ValueError, match="out of bounds"):
        k.encode_columns_v2(None, (None, offsets, b"x", 0, 2), None, None, None, (0, 2), 0, None, None)
    with pytest.raises(ValueError):
        k.encode_columns_v2(None, (None, offsets, data, 1, 5), None, None, None, (0, 1), 0, None, None)
    with pytest.raises(IndexError):
        encode_rows(ArrowRows(value=values), pa.array([0, 2], pa.int64()), base_offset=0)


@pytest.mark.parametrize("n", [1, 3, 12, 100])
def test_partitions_for_keys_match_the_partitioner(n):
    import random

    rng = random.Random(n)
    keys = list(JAVA_CASES) + [bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 64))) for _ in range(2000)]
    keys += [b""]
    column = pa.array([b"pad", None] + keys, pa.binary()).slice(1)
    got = partitions_for_keys(column, n).to_pylist()
    assert got == [-1] + [partition_for_key(key, n) for key in keys]
    assert got == [-1] + [to_positive(murmur2_python(key)) % n for key in keys]  # the kernel's against Python's
    text = pa.array([f"user-{i}-é" for i in range(500)])
    assert partitions_for_keys(text, n).to_pylist() == [partition_for_key(s.encode(), n) for s in text.to_pylist()]


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=10), pad=st.integers(0, 2))
def test_row_sizes_as_the_python_rules(rows, pad):
    from kcodec.spark.write_rows import row_sizes

    cols = arrays(rows, False, False, False, pad)
    payload, fixed, millis = row_sizes(cols, len(rows))
    for i, r in enumerate(rows):
        rec = expected_record(r, False, False, False)
        hs = rec.headers
        assert payload[i] == len(rec.key or b"") + len(rec.value or b"") + sum(
            len(hk) + len(hv or b"") for hk, hv in hs
        )
        assert fixed[i] == v2_fixed_size_of(rec.key, rec.value, hs)
        assert millis[i] == rec.timestamp


@settings(max_examples=80, deadline=None)
@given(
    sizes=st.lists(
        st.tuples(st.integers(0, 3000), st.integers(0, 3000), st.integers(-1, 10**6)), min_size=1, max_size=40
    ),
    pick=st.data(),
    rules=st.tuples(st.integers(1, 12), st.integers(1, 20000), st.none() | st.integers(-100, 20000)),
)
def test_cut_run_kernel_as_python(sizes, pick, rules):
    """The batch rules in the kernel (cut_run) and in Python (without the kernel) cut alike."""
    from array import array

    from kcodec.spark import write_rows

    columns = tuple(array("q", c) for c in zip(*sizes, strict=True))
    chosen = sorted(pick.draw(st.sets(st.integers(0, len(sizes) - 1), min_size=1)))
    selection = pick.draw(st.sampled_from([(0, len(sizes)), pa.array(chosen, pa.int64())]))
    state = (pick.draw(st.integers(0, 3)), pick.draw(st.integers(0, 100)), 0, -1)
    compiled = write_rows.cut_run(columns, selection, 0, state, *rules)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(write_rows, "kernel", lambda: None)
        assert write_rows.cut_run(columns, selection, 0, state, *rules) == compiled


@pytest.mark.parametrize("typ", ["large_binary", "binary_view", "large_string", "string_view"])
def test_other_arrow_layouts_are_read_as_binary(typ):
    t = getattr(pa, typ)()
    raw = [b"ab", None, b"", b"c\xc3\xa9"]
    values = pa.array(raw if "binary" in typ else [None if v is None else v.decode() for v in raw], t)
    keys = pa.array([None, b"k", b"kk", None], pa.large_binary())
    got = encode_v2_written(encode_rows(ArrowRows(key=keys, value=values), (0, 4), base_offset=3))
    want = encode_batch([NewRecord(k, v) for k, v in zip(keys.to_pylist(), raw, strict=True)], base_offset=3)
    assert got == want
