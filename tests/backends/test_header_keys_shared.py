"""Text fields the compiled kernel decodes (header keys): the same short ASCII bytes give the same str object,
record after record and batch after batch (the kernel's ``text_of``), and every key, of any bytes (invalid
UTF-8 replaced, non-ASCII, empty, past the shared length, many keys meeting in one slot), equals what the
pure-Python decoders give. Headers come out as tuples the garbage collector does not follow."""

from __future__ import annotations

import gc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcodec.generated.fast.kernel import compiled_kernel
from kcodec.records import decode
from kcodec.records.reader import read_batches
from tests.helpers.batches import batch, record, vint

kernel = compiled_kernel()
pytestmark = pytest.mark.skipif(kernel is None, reason="the compiled kernel is not built here")


def header(key: bytes, value: bytes | None) -> bytes:
    return vint(len(key)) + key + (vint(-1) if value is None else vint(len(value)) + value)


def entry(keys: list[bytes], base_offset: int = 0) -> bytes:
    """A v2 batch of one record per key, each with that key as its one header (and a second, fixed one)."""
    records = b"".join(
        record(key=None, value=b"v", headers=vint(2) + header(k, b"x%d" % i) + header(b"trace-id", None), delta=i)
        for i, k in enumerate(keys)
    )
    return batch(records, len(keys), base_offset=base_offset)


def python_records(data: bytes) -> list:
    f = decode.fast_decoders()
    saved = f.project, f.lazy
    f.project = f.lazy = None
    try:
        return list(decode.decode_entry(data, verify_crc=False).records)
    finally:
        f.project, f.lazy = saved


keys = st.lists(
    st.binary(max_size=70)  # any bytes: invalid UTF-8 too, and lengths past the 64 the kernel shares
    | st.text(max_size=70).map(str.encode)
    | st.sampled_from([b"", b"h", b"trace-id", b"content-type", b"\xff\xfe", "ключ".encode()]),
    min_size=1,
    max_size=30,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(keys)
def test_header_keys_equal_the_python_path(ks):
    data = entry(ks)
    compiled = list(decode.decode_entry(data, verify_crc=False).records)
    assert type(decode.decode_entry(data).records).__name__ == "LazyRecords"
    assert compiled == python_records(data)
    again = list(decode.decode_entry(data, verify_crc=False).records)  # from the shared strs this time
    assert again == compiled
    assert [r.headers[0][0] for r in again] == [k.decode("utf-8", "replace") for k in ks]


def test_many_distinct_keys_meeting_in_slots_each_read_right():
    ks = [b"key-%05d" % i for i in range(3000)]  # far more than the slots: they replace one another
    for _ in range(2):
        got = [r.headers[0][0] for r in decode.decode_entry(entry(ks)).records]
        assert got == [k.decode() for k in ks]


def test_the_same_key_bytes_give_the_same_str_across_records_and_batches():
    data = entry([b"content-type"] * 3, 0) + entry([b"content-type"] * 2, 3)
    records = [r for b in read_batches(data) for r in b.records]
    first = records[0].headers[0][0]
    assert first == "content-type"
    assert all(r.headers[0][0] is first for r in records)
    assert all(r.headers[1][0] is records[0].headers[1][0] for r in records)
    odd = [r.headers[0][0] for r in decode.decode_entry(entry([b"\xffab", b"\xffab"])).records]
    assert odd == ["\ufffdab", "\ufffdab"]  # replaced, as Kafka's Java client reads it (not shared: not ASCII)


def test_headers_are_not_followed_by_the_garbage_collector():
    r = decode.decode_entry(entry([b"k1", b"k2"])).records[1]
    assert r.headers == (("k2", b"x1"), ("trace-id", None))
    assert not gc.is_tracked(r.headers) and not any(gc.is_tracked(h) for h in r.headers)
    assert not gc.is_tracked(r)
