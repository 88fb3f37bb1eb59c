"""The compiled kernel's v2 record writer (encode_records_v2) against the writer's Python path.

``encode_batch`` and ``convert_batches`` hand v2 records to the kernel when it takes them and fall
back to ``_normalize`` + ``values.v2_batch`` otherwise; both must give the same bytes and, for bad
inputs, the same EncodeError."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcodec.errors import EncodeError
from kcodec.generated.fast.kernel import active_backend
from kcodec.records import encode
from kcodec.records.encode import NewRecord, convert_batches, encode_batch
from kcodec.records.model import Record, TimestampType
from kcodec.records.reader import read_batches
from kcodec.runtime.encoded import EncodedArray
from tests.helpers.encode_cases import CONVERTED, INT64_MAX, REFUSED, batches, outcome

pytestmark = pytest.mark.skipif(active_backend() != "c", reason="needs the compiled kernel")

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def python_path(fn, *args, **kwargs):
    """``fn`` with the kernel writer declining every input: the writer's Python path."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(encode, "kernel_v2_records", lambda *a: None)
        return fn(*args, **kwargs)


def taken_by_kernel(records, base_offset=None, delete_horizon_ms=None) -> bool:
    return encode.kernel_v2_records(records, base_offset, delete_horizon_ms) is not None


# ---------------------------------------------------------------------------- generated valid inputs


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches(), st.sampled_from(CODECS), st.booleans(), st.sampled_from(["list", "tuple"]))
def test_kernel_bytes_equal_python_bytes(batch, codec, log_append, container):
    items, base_offset, horizon = batch
    items = list(items) if container == "list" else tuple(items)
    options = dict(compression=codec, base_offset=base_offset, delete_horizon_ms=horizon)
    if log_append:
        options.update(timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=1_700_000_000_000)
    assert taken_by_kernel(items, base_offset, horizon)
    assert encode_batch(items, **options) == python_path(encode_batch, items, **options)


@pytest.mark.parametrize("codec", CODECS)
def test_producer_fields_and_levels(codec):
    items = [NewRecord(b"k%d" % i, b"v" * i, [("h", b"%d" % i)], 1000 + i) for i in range(50)]
    level = {"gzip": 1, "lz4": 12, "zstd": 7}.get(codec)
    options = dict(
        compression=codec,
        compression_level=level,
        base_offset=7,
        producer_id=42,
        producer_epoch=3,
        base_sequence=9,
        transactional=True,
        partition_leader_epoch=5,
    )
    assert encode_batch(items, **options) == python_path(encode_batch, items, **options)


@pytest.mark.parametrize("codec", CODECS)
def test_convert_batches_equal(codec):
    source = encode_batch(
        [NewRecord(b"a", b"1", [("h", None)], 5, 10), NewRecord(None, b"2", (), -1, 15), {"value": b"3"}],
        base_offset=3,
        compression="lz4",
    ) + encode_batch([NewRecord(b"x", b"y", (), 9)], magic=1, base_offset=20)
    batches = list(read_batches(source))
    got = convert_batches(batches, magic=2, compression=codec)
    assert got == python_path(convert_batches, batches, magic=2, compression=codec)
    assert [[(r.offset, r.key, r.value) for r in b.records] for b in read_batches(got)] == [
        [(10, b"a", b"1"), (15, None, b"2"), (16, None, b"3")],
        [(20, b"x", b"y")],
    ]


# ---------------------------------------------------------------------------- inputs for the Python path


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_inputs_keep_their_messages(case):
    records, options = REFUSED[case]
    got = outcome(encode_batch, records, **options)
    assert isinstance(got, tuple) and got[0] == "EncodeError", got
    assert got == python_path(outcome, encode_batch, records, **options)
    if type(records) in (list, tuple):
        assert not taken_by_kernel(records, options.get("base_offset"), options.get("delete_horizon_ms"))


@pytest.mark.parametrize("case", sorted(CONVERTED))
def test_converted_inputs_take_the_python_path(case):
    records = CONVERTED[case]
    assert not taken_by_kernel(records)
    assert encode_batch(records) == python_path(encode_batch, records)


# the kernel's edges: deltas and offsets at the ends of their ranges
EDGES = {
    "horizon delta at int64 min": ([NewRecord(timestamp=-1)], {"delete_horizon_ms": INT64_MAX}),
    "timestamps 0 and int64 max": ([NewRecord(timestamp=INT64_MAX), NewRecord(timestamp=0)], {}),
    "offset at int64 max": ([NewRecord(offset=INT64_MAX)], {}),
    "offset delta at int32 max": ([NewRecord(offset=0), NewRecord(offset=(1 << 31) - 1)], {}),
    "base offset below the first": ([NewRecord(offset=5), {"offset": 9}, NewRecord()], {"base_offset": 2}),
}


@pytest.mark.parametrize("case", sorted(EDGES))
def test_edges_equal(case):
    records, options = EDGES[case]
    assert taken_by_kernel(records, options.get("base_offset"), options.get("delete_horizon_ms"))
    assert encode_batch(records, **options) == python_path(encode_batch, records, **options)


def test_generator_and_empty_inputs():
    assert encode_batch(NewRecord(value=b"%d" % i) for i in range(3)) == encode_batch(
        [NewRecord(value=b"%d" % i) for i in range(3)]
    )
    assert not taken_by_kernel([])
    assert encode_batch([]) == python_path(encode_batch, [])


# ---------------------------------------------------------------------------- oracles and backends


@pytest.mark.parametrize("codec", CODECS)
def test_aiokafka_reads_the_kernel_batch(codec):
    from aiokafka.record.memory_records import MemoryRecords

    items = [
        NewRecord(b"k", b"v", [("a", b"1"), ("b", None)], 1000, 100),
        {"value": b"w" * 300, "timestamp": 999},
        Record(110, 1003, TimestampType.CREATE_TIME, None, None, ()),
    ]
    assert taken_by_kernel(items)
    batch = MemoryRecords(encode_batch(items, compression=codec)).next_batch()
    assert batch.base_offset == 100 and batch.last_offset_delta == 10
    assert batch.max_timestamp == 1003
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in batch] == [
        (100, 1000, b"k", b"v", [("a", b"1"), ("b", None)]),
        (101, 999, None, b"w" * 300, []),
        (110, 1003, None, None, []),
    ]


def test_encoded_array_in_the_python_and_c_encoders():
    from kcodec.generated.fast import record as fast_record

    headers = [("a", b"1"), ("b", None)]
    encoded = EncodedArray(fast_record._record_header.encode_record_header_v2_array(headers), 2)
    full = (None, 0, 5, 1, b"k", b"v", headers)
    given_encoded = (None, 0, 5, 1, b"k", b"v", encoded)
    kernel_bytes = fast_record.encode_record_v2(full)
    assert fast_record.encode_record_v2(given_encoded) == kernel_bytes
    code = (  # the fast Python encoder: no kernel
        "from kcodec.runtime.encoded import EncodedArray\n"
        "from kcodec.generated.fast import record\n"
        "h = [('a', b'1'), ('b', None)]\n"
        "e = EncodedArray(record._record_header.encode_record_header_v2_array(h), 2)\n"
        "print(record.encode_record_v2((None, 0, 5, 1, b'k', b'v', e)).hex())\n"
    )
    env = dict(os.environ, KCODEC_BACKEND="python")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert bytes.fromhex(out.stdout.strip()) == kernel_bytes
    with pytest.raises(TypeError):
        EncodedArray(bytearray(b""), 0)


def test_python_backend_writes_the_same_batches():
    """KCODEC_BACKEND=python: no kernel writer, the Python path, the same bytes."""
    code = (
        "from kcodec.records import encode\n"
        "from kcodec.records.encode import NewRecord, encode_batch\n"
        "assert encode._enc().records is None\n"
        "items = [NewRecord(b'k', b'v', [('h', b'1')], 5, 3), {'value': b'x', 'timestamp': 9}]\n"
        "print(','.join(encode_batch(items, compression=c).hex() for c in "
        "('none', 'gzip', 'snappy', 'lz4', 'zstd')))\n"
    )
    env = dict(os.environ, KCODEC_BACKEND="python")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    items = [NewRecord(b"k", b"v", [("h", b"1")], 5, 3), {"value": b"x", "timestamp": 9}]
    assert taken_by_kernel(items)
    assert out.stdout.strip() == ",".join(encode_batch(items, compression=c).hex() for c in CODECS)


def test_kernel_refuses_a_class_without_the_slots():
    from kcodec.generated.fast.kernel import compiled_kernel

    class NotNewRecord:
        pass

    with pytest.raises(TypeError, match="has no slot key"):
        compiled_kernel().encode_records_v2([], None, None, NotNewRecord, Record)
    with pytest.raises(EncodeError):
        encode_batch([NewRecord(offset=True)])
