"""The compiled kernel's v0/v1 writer (encode_legacy_entries) against the writer's Python path.

``encode_batch`` and ``convert_batches`` at magic 0/1 hand the records to the kernel when it takes
them (the entries themselves, or a wrapper's inner message set given to the generated wrapper encoder
as an EncodedArray) and fall back to ``_normalize`` + ``values.legacy_entries`` otherwise; both must
give the same bytes and, for refused inputs, the same EncodeError."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcodec.generated.fast.kernel import active_backend
from kcodec.records import encode
from kcodec.records.encode import NewRecord, convert_batches, encode_batch
from kcodec.records.model import TimestampType
from kcodec.records.reader import read_batches
from tests.helpers.encode_cases import CONVERTED, INT64_MAX, REFUSED, batches, outcome

pytestmark = pytest.mark.skipif(active_backend() != "c", reason="needs the compiled kernel")

CODECS = ("none", "gzip", "snappy", "lz4")
APPEND_TIME = 1_800_000_000_000


def python_path(fn, *args, **kwargs):
    """``fn`` with the kernel's v0/v1 writer declining every input: the writer's Python path."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(encode, "kernel_legacy_entries", lambda *a: None)
        return fn(*args, **kwargs)


def taken_by_kernel(records, magic, base_offset=None, allow_lossy=True, append_time=None, relative=False) -> bool:
    written = encode.kernel_legacy_entries(records, base_offset, magic, append_time, relative, allow_lossy)
    return written is not None


def legacy_options(magic, codec, log_append, allow_lossy, base_offset=None) -> dict:
    options = dict(magic=magic, compression=codec, base_offset=base_offset, allow_lossy=allow_lossy)
    if log_append:
        options.update(timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=APPEND_TIME)
    return options


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches(), st.sampled_from([0, 1]), st.sampled_from(CODECS), st.booleans(), st.booleans())
def test_kernel_bytes_equal_python_bytes(batch, magic, codec, allow_lossy, log_append):
    items, base_offset, _horizon = batch
    log_append = log_append and magic == 1
    options = legacy_options(magic, codec, log_append, allow_lossy, base_offset)
    got = outcome(encode_batch, items, **options)
    assert got == python_path(outcome, encode_batch, items, **options)
    if allow_lossy:  # lossless inputs were refused above by both paths alike
        relative = magic == 1 and codec != "none"
        assert taken_by_kernel(items, magic, base_offset, True, APPEND_TIME if log_append else None, relative)
        assert isinstance(got, bytes)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", CODECS)
def test_lossless_records_are_taken_without_allow_lossy(magic, codec):
    items = [NewRecord(b"k", b"v" * 40, (), -1 if magic == 0 else 5), {"value": None}, NewRecord(offset=9)]
    for log_append in (False, True) if magic == 1 else (False,):
        options = legacy_options(magic, codec, log_append, False, 3)
        assert taken_by_kernel(items, magic, 3, False)
        assert encode_batch(items, **options) == python_path(encode_batch, items, **options)


LOSSY = {
    "headers": [NewRecord(b"k", b"v", [("h", b"1")])],
    "headers in a dict": [{"value": b"v", "headers": [("h", None)]}],
    "v0 timestamp": [NewRecord(value=b"v", timestamp=5)],
}


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("case", sorted(LOSSY))
def test_lossy_inputs_refused_or_dropped_alike(case, magic):
    records = LOSSY[case]
    refused = outcome(encode_batch, records, magic=magic)
    assert refused == python_path(outcome, encode_batch, records, magic=magic)
    if case != "v0 timestamp" or magic == 0:
        assert isinstance(refused, tuple) and refused[0] == "EncodeError"
        assert not taken_by_kernel(records, magic, allow_lossy=False)
    for codec in CODECS:
        dropped = encode_batch(records, magic=magic, compression=codec, allow_lossy=True)
        assert dropped == python_path(encode_batch, records, magic=magic, compression=codec, allow_lossy=True)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_v2_inputs_are_answered_alike(case, magic):
    """The v2 writer's refused inputs at magic 0/1 (lossy): errors with the Python path's message, or (a
    delta past an int32 or a header key v0/v1 never write) the same bytes."""
    records, options = REFUSED[case]
    options = {**options, "magic": magic, "allow_lossy": True}
    assert outcome(encode_batch, records, **options) == python_path(outcome, encode_batch, records, **options)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("case", sorted(CONVERTED))
def test_converted_inputs_take_the_python_path(case, magic):
    records = CONVERTED[case]
    assert not taken_by_kernel(records, magic)
    options = {"magic": magic, "allow_lossy": True, "compression": "gzip"}
    assert encode_batch(records, **options) == python_path(encode_batch, records, **options)


def test_edges_and_empty():
    for magic in (0, 1):
        at_max = [NewRecord(offset=INT64_MAX - 1), NewRecord()]
        assert taken_by_kernel(at_max, magic)
        assert encode_batch(at_max, magic=magic) == python_path(encode_batch, at_max, magic=magic)
        past = [NewRecord(offset=INT64_MAX), NewRecord()]
        assert outcome(encode_batch, past, magic=magic) == python_path(outcome, encode_batch, past, magic=magic)
        assert encode_batch([], magic=magic) == b"" == python_path(encode_batch, [], magic=magic)
    big_ts = [NewRecord(value=b"v", timestamp=INT64_MAX)]
    assert encode_batch(big_ts, magic=1, compression="lz4") == python_path(
        encode_batch, big_ts, magic=1, compression="lz4"
    )
    with pytest.raises(ValueError, match="magic 2"):
        encode._enc().legacy([NewRecord()], None, 2, None, False, True, NewRecord, encode.Record)


def _v2_source() -> bytes:
    records = [
        NewRecord(
            b"k%d" % i, None if i % 4 == 0 else b"v" * i, [("h", b"x")] if i % 3 == 0 else (), 1000 + i, 50 + 2 * i
        )
        for i in range(30)
    ]
    plain = encode_batch(records, base_offset=48, compression="snappy")
    appended = encode_batch(
        [NewRecord(r.key, r.value, r.headers, r.timestamp) for r in records[:5]],
        base_offset=200,
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        log_append_time=APPEND_TIME,
    )
    return plain + appended


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", CODECS)
def test_convert_batches_equal(magic, codec):
    source = list(read_batches(_v2_source()))
    for target in (magic, 1 - magic):
        down = convert_batches(source, magic=target, compression=codec, allow_lossy=True)
        assert down == python_path(convert_batches, source, magic=target, compression=codec, allow_lossy=True)
        # and back from v0/v1 to the other legacy magic
        again = list(read_batches(down))
        assert convert_batches(again, magic=magic, compression=codec, allow_lossy=True) == python_path(
            convert_batches, again, magic=magic, compression=codec, allow_lossy=True
        )


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("log_append", [False, True])
def test_aiokafka_reads_the_kernel_messages(magic, codec, log_append):
    from aiokafka.record.memory_records import MemoryRecords

    if log_append and magic == 0:
        pytest.skip("magic 0 has no timestamps")
    if codec == "lz4" and magic == 0:
        pytest.skip("aiokafka reads no v0 LZ4 (its broken KAFKA-3160 framing)")
    items = [
        NewRecord(b"k", b"v", [("a", b"1")], 1000 if magic else -1, 100),
        {"value": b"w" * 300, "timestamp": 999 if magic else -1},
        NewRecord(None, None, (), 1003 if magic else -1, 110),
    ]
    options = legacy_options(magic, codec, log_append, True)
    assert taken_by_kernel(items, magic, append_time=APPEND_TIME if log_append else None)
    records = MemoryRecords(encode_batch(items, **options))
    got = []
    while (batch := records.next_batch()) is not None:
        assert batch.validate_crc()
        got += [(r.offset, r.timestamp, r.key, r.value) for r in batch]
    stamps = [APPEND_TIME] * 3 if log_append else [1000, 999, 1003] if magic else [None] * 3
    assert got == [(100, stamps[0], b"k", b"v"), (101, stamps[1], None, b"w" * 300), (110, stamps[2], None, None)]
