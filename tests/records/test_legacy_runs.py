"""Runs of uncompressed v0/v1 messages decoded by the compiled kernel (decode.legacy_run, used by the
reader) yield exactly what decoding entry by entry in Python yields: every Batch field (values and
types), every Record, the error raised (kind, message, position, field), the partial tail, where
reading stopped; over generated logs with mixed magics, null/empty/large keys and values, LogAppendTime,
a compressed wrapper in the middle, a flipped byte and every truncation of the last entry; from bytes
and from files read in small windows, with start/end, strict and verify_crc."""

from __future__ import annotations

import dataclasses
import struct
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcodec.errors import KcodecError
from kcodec.generated.fast.kernel import compiled_kernel
from kcodec.records import decode, source
from kcodec.records.model import Batch, Record
from kcodec.records.reader import read_batches
from kcodec.runtime.compression import compress
from tests.helpers.legacy import CODECS, entry, message

pytestmark = pytest.mark.skipif(compiled_kernel() is None, reason="the compiled kernel is not built here")


def typed(value):
    """A value with the type of every part: True and 1 are not the same field value."""
    if isinstance(value, Record):
        return ("Record", tuple(typed(v) for v in value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(typed(v) for v in value))
    return (type(value).__name__, value)


def batch_fields(batch: Batch) -> tuple:
    return tuple((f.name, typed(getattr(batch, f.name))) for f in dataclasses.fields(Batch))


def walk(src, **options) -> tuple:
    """Everything a reader reports: batches field by field, the error, partial tail, where it stopped."""
    reader = read_batches(src, **options)
    out: list = []
    try:
        for batch in reader:
            out.append(batch_fields(batch))
    except KcodecError as exc:
        out.append(("error", type(exc).__name__, exc.message, exc.position, exc.field, exc.base_offset))
    return tuple(out), reader.partial_tail, reader.bytes_read, reader.shrank_to


def both(src, **options) -> tuple[tuple, tuple]:
    """The reader as it is (kernel runs), then with the kernel's v0/v1 functions gone (Python, entry by entry)."""
    f = decode.fast_decoders()
    fast = walk(src, **options)
    saved = f.legacy_batches, f.legacy_inner
    f.legacy_batches, f.legacy_inner = None, None
    try:
        general = walk(src, **options)
    finally:
        f.legacy_batches, f.legacy_inner = saved
    return fast, general


payloads = st.one_of(st.none(), st.just(b""), st.binary(max_size=8), st.binary(min_size=300, max_size=600))
messages = st.tuples(
    st.sampled_from([0, 1, 1]),
    st.integers(0, 3),  # offset step
    st.sampled_from([-1, 0, 1 << 40]),
    payloads,
    payloads,
    st.sampled_from([0, 0, 8, 16]),  # plain, LogAppendTime (v1), an unused bit
)


def build_log(items, wrapper_at: int | None, codec: str) -> tuple[bytes, list[int]]:
    """The log, and where each entry starts."""
    log, starts, offset = b"", [], 0
    for i, (magic, step, ts, key, value, attributes) in enumerate(items):
        offset += step
        if i == wrapper_at:
            inner = b"".join(entry(k, message(magic, 0, ts, key, value)) for k in range(3))
            starts.append(len(log))
            wrapped = compress(codec, inner, magic=magic)
            log += entry(offset + (2 if magic == 1 else 0), message(magic, CODECS[codec], ts, None, wrapped))
            continue
        starts.append(len(log))
        log += entry(offset, message(magic, attributes, ts, key, value))
    return log, starts


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(messages, min_size=1, max_size=8),
    st.one_of(st.none(), st.integers(0, 7)),
    st.sampled_from(sorted(CODECS)),
    st.sampled_from(["none", "none", "flip", "cut"]),
    st.booleans(),
    st.booleans(),
    st.data(),
)
def test_runs_equal_entry_by_entry(items, wrapper_at, codec, damage, verify, strict, data):
    log, starts = build_log(items, wrapper_at, codec)
    if damage == "flip":
        i = data.draw(st.integers(0, len(log) - 1))
        log = log[:i] + bytes([log[i] ^ data.draw(st.integers(1, 255))]) + log[i + 1 :]
    elif damage == "cut":
        log = log[: data.draw(st.integers(starts[-1], len(log) - 1))]
    start = data.draw(st.sampled_from([0] + starts))
    end = data.draw(st.sampled_from([None, None, len(log) // 2, len(log) + 5]))
    options = dict(verify_crc=verify, strict=strict, start=start, end=end)
    fast, general = both(log, **options)
    assert fast == general


def test_every_truncation_of_the_last_entry(tmp_path, monkeypatch):
    items = [(m, 1, ts, k, v, a) for m in (0, 1) for ts, k, v, a in ((5, b"k", b"v" * 40, 0), (-1, None, b"", 8))]
    log, starts = build_log(items, None, "gzip")
    monkeypatch.setattr(source, "WINDOW", 64)  # files in windows smaller than an entry or two
    for cut in range(starts[-1], len(log) + 1):
        path = tmp_path / "log"
        path.write_bytes(log[:cut])
        for src in (log[:cut], path, bytearray(log[:cut])):
            fast, general = both(src)
            assert fast == general, (cut, type(src))
            assert fast[0][-1][0] != "error"  # a partial last entry is a tail, not an error
            assert fast[1] == (None if cut == len(log) else general[1])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(messages, min_size=1, max_size=12),
    st.one_of(st.none(), st.integers(0, 11)),
    st.sampled_from([40, 97, 4096]),
)
def test_files_in_windows(tmp_path_factory, monkeypatch, items, wrapper_at, window):
    log, _ = build_log(items, wrapper_at, "lz4")
    path = tmp_path_factory.mktemp("w") / "log"
    path.write_bytes(log)
    monkeypatch.setattr(source, "WINDOW", window)
    fast, general = both(path)
    assert fast == general
    assert fast == both(log)[0]


def test_kernel_batches_are_the_general_paths():
    """Field by field, with types: positions, sizes, CRCs, timestamp types, the dataclass defaults."""
    log = b"".join(
        [
            entry(3, message(0, 0, 0, b"key", b"value")),
            entry(4, message(1, 8, 77, None, None)),
            entry(5, message(1, 0, -1, b"", b"x" * 1000)),
        ]
    )
    found = decode.legacy_run(log, 1000, 1 << 30)
    assert found is not None
    batches, taken = found
    assert taken == len(log) and len(batches) == 3
    f = decode.fast_decoders()
    saved = f.legacy_batches
    f.legacy_batches = None
    try:
        pos, general = 0, []
        for b in batches:
            general.append(decode.decode_entry(log[pos : pos + b.size], 1000 + pos))
            pos += b.size
    finally:
        f.legacy_batches = saved
    assert [batch_fields(b) for b in batches] == [batch_fields(b) for b in general]
    assert [b.position for b in batches] == [1000, 1000 + batches[0].size, 1000 + batches[0].size + batches[1].size]
    assert batches[1].timestamp_type.kafka_name == "LogAppendTime" and batches[1].records[0].value is None


def test_runs_stop_at_what_they_cannot_finish():
    good = entry(0, message(1, 0, 1, b"k", b"v"))
    wrapper = entry(1, message(1, CODECS["gzip"], 1, None, compress("gzip", good, magic=1)))
    bad_crc = bytearray(good)
    bad_crc[-1] ^= 1
    for stopper in (wrapper, bytes(bad_crc), good[:-1], b"\x00" * 8 + struct.pack(">i", 13) + b"\x01" * 13):
        batches, taken = decode.legacy_run(good + good + stopper + good, 0, 1 << 30)
        assert len(batches) == 2 and taken == 2 * len(good)
    assert decode.legacy_run(good * 3, 0, len(good) - 13)[0] == []  # a size past max_batch_size
    assert len(decode.legacy_run(good * 3, 0, 1 << 30, 2)[0]) == 2  # the count limit


def test_a_batch_layout_that_leaves_a_slot_unset_is_refused():
    kernel = compiled_kernel()
    batch_type, names, constants = decode._legacy_batch_layout()
    good = entry(0, message(1, 0, 1, b"k", b"v"))
    timestamp_types = decode._TIMESTAMP_TYPES
    with pytest.raises(TypeError, match="slots"):
        kernel.legacy_batches(
            good, 0, len(good), 0, 1, 1 << 30, (batch_type, names, constants[1:]), Record, timestamp_types
        )
    with pytest.raises(TypeError, match="field 0"):
        kernel.legacy_batches(
            good, 0, len(good), 0, 1, 1 << 30, (batch_type, names[::-1], constants), Record, timestamp_types
        )


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 3), st.binary(min_size=0, max_size=3000), st.data())
def test_the_kernels_crc32_is_zlibs_at_every_length_and_alignment(pad, value, data):
    """The kernel's CRC-32 (carry-less multiplication over 16-byte blocks where the CPU has it, a table for the
    rest) agrees with zlib's: a message whose zlib CRC holds is taken, one with any bit flipped is not."""
    raw = b"\x00" * pad + entry(1, message(1, 0, 5, None, value))
    view = memoryview(raw)[pad:]
    assert len(decode.legacy_run(view, 0, 1 << 30)[0]) == 1
    i = data.draw(st.integers(16, len(view) - 1))  # the CRC field, then what it covers
    flipped = bytearray(view)
    flipped[i] ^= 1 << data.draw(st.integers(0, 7))
    assert decode.legacy_run(bytes(flipped), 0, 1 << 30)[0] == []


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=5000), st.integers(0, 15))
def test_the_kernels_crc32_function_is_zlibs(data, skip):
    """The kernel's crc32 (a wrapper's CRC over its whole compressed value) is zlib.crc32, at any alignment."""
    crc32 = compiled_kernel().crc32
    assert crc32(data) == zlib.crc32(data)
    assert crc32(memoryview(data)[skip:]) == zlib.crc32(data[skip:])
