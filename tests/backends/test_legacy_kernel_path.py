"""v0/v1 compressed wrappers: the Records the compiled kernel builds for a wrapper's message set are
exactly the general path's, and whatever the kernel does not take (damage, a truncated trailing
entry, mixed magics, a CRC that does not hold, a wrapper offset below the last inner one) is decided
by the general path, with its errors."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcodec.errors import KcodecError
from kcodec.generated.fast.kernel import compiled_kernel
from kcodec.records import decode
from kcodec.runtime.compression import compress
from tests.helpers.legacy import CODECS, entry, message

pytestmark = pytest.mark.skipif(compiled_kernel() is None, reason="the compiled kernel is not built here")

inner_messages = st.lists(
    st.tuples(
        st.sampled_from([0, 1, 1, 1]),  # mostly the wrapper's magic; sometimes not
        st.integers(0, 3),  # offset step
        st.integers(-1, 1 << 40),
        st.one_of(st.none(), st.binary(max_size=6)),
        st.one_of(st.none(), st.binary(max_size=12)),
        st.sampled_from([0, 0, 0, 8, 1]),  # attributes: plain, log append time bit, compressed (refused inside)
    ),
    min_size=0,
    max_size=6,
)


def decode_both(raw: bytes, verify_crc: bool):
    """decode_entry with the kernel's v0/v1 functions, then with the general path alone."""
    out = []
    f = decode.fast_decoders()
    saved = f.legacy_batches, f.legacy_inner
    try:
        for kernel in (saved, (None, None)):
            f.legacy_batches, f.legacy_inner = kernel
            try:
                batch = decode.decode_entry(raw, 100, verify_crc=verify_crc)
                out.append(("ok", batch))
            except KcodecError as exc:
                out.append(("error", type(exc).__name__, exc.message, exc.position, exc.field, exc.base_offset))
    finally:
        f.legacy_batches, f.legacy_inner = saved
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([0, 1]),
    st.sampled_from(sorted(CODECS)),
    inner_messages,
    st.one_of(st.integers(0, 12), st.just((1 << 63) - 1)),
    st.sampled_from([0, 8]),
    st.booleans(),
    st.data(),
)
def test_kernel_records_equal_general_path(wrapper_magic, codec_name, inner, wrapper_offset, ts_bit, verify, data):
    # inner offsets from 0, or from far below 0 (v1 offsets shifted past int64: Python's ints say so)
    stream, offset = b"", data.draw(st.sampled_from([0, 0, -(1 << 63)]))
    for magic, step, ts, key, value, attributes in inner:
        offset += step
        stream += entry(offset, message(magic, attributes, ts, key, value))
    damage = data.draw(st.sampled_from(["none", "none", "cut", "flip", "extend"]))
    if damage != "none" and stream:
        i = data.draw(st.integers(0, len(stream) - 1))
        if damage == "cut":
            stream = stream[:i]
        elif damage == "flip":
            stream = stream[:i] + bytes([stream[i] ^ data.draw(st.integers(1, 255))]) + stream[i + 1 :]
        else:
            stream += data.draw(st.binary(min_size=1, max_size=30))
    value = compress(codec_name, stream, magic=wrapper_magic)
    attributes = CODECS[codec_name] | (ts_bit if wrapper_magic == 1 else 0)
    raw = entry(wrapper_offset, message(wrapper_magic, attributes, 1234, None, value))
    fast, general = decode_both(raw, verify)
    assert fast == general


def test_relative_offsets_and_log_append_time(monkeypatch):
    stream = b"".join(entry(i, message(1, 0, 10 + i, b"k%d" % i, b"v")) for i in range(5))
    raw = entry(104, message(1, 1 | 8, 999, None, compress("gzip", stream, magic=1)))
    fast, general = decode_both(raw, True)
    assert fast == general
    batch = fast[1]
    monkeypatch.setattr(decode, "_inner_records", None)  # the kernel alone builds these Records
    assert decode.decode_entry(raw, 100) == batch
    assert [r.offset for r in batch.records] == [100, 101, 102, 103, 104]
    assert {r.timestamp for r in batch.records} == {999}  # LogAppendTime: the wrapper's
    assert all(r.crc_valid and r.magic == 1 for r in batch.records)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([0, 1]),
    st.integers(-1, 1 << 40),
    st.one_of(st.none(), st.binary(max_size=6)),
    st.one_of(st.none(), st.binary(max_size=12)),
    st.sampled_from([0, 8, 16, 6]),  # plain, log append time, an unused bit, codec 6 (unknown)
    st.booleans(),
    st.data(),
)
def test_uncompressed_message_equals_general_path(magic, ts, key, value, attributes, verify, data):
    """An uncompressed message is one Batch whose Record the kernel builds: the general path's."""
    raw = entry(7, message(magic, attributes, ts, key, value))
    if data.draw(st.booleans()):
        i = data.draw(st.integers(12, len(raw) - 1))
        raw = raw[:i] + bytes([raw[i] ^ data.draw(st.integers(1, 255))]) + raw[i + 1 :]
    fast, general = decode_both(raw, verify)
    assert fast == general
