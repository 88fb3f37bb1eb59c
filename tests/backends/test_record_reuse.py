"""Records and v0/v1 Batches freed through the compiled kernel's deallocators (``reuse_records``,
``reuse_batches``) and built again in the freed ones: every Record or Batch the kernel builds in a reused one
holds its own values; those made in Python, by subclasses, in reference cycles or nested deep are freed as
before; the classes keep their API."""

from __future__ import annotations

import dataclasses
import gc
import pickle
import weakref

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcodec.generated.fast.kernel import compiled_kernel
from kcodec.records import decode
from kcodec.records.encode import encode_batch
from kcodec.records.model import Batch, Record, TimestampType
from kcodec.records.reader import read_batches

kernel = compiled_kernel()
decode.fast_decoders()  # what gives Record the kernel's deallocator
pytestmark = pytest.mark.skipif(kernel is None, reason="the compiled kernel is not built here")

values = st.lists(
    st.tuples(
        st.none() | st.binary(max_size=8),
        st.none() | st.binary(max_size=24),
        st.lists(st.tuples(st.text(max_size=3), st.none() | st.binary(max_size=4)), max_size=2),
    ),
    min_size=1,
    max_size=40,
)


def as_python(items: list) -> list[tuple]:
    return [(10 + i, 1000 + i, k, v, tuple(h)) for i, (k, v, h) in enumerate(items)]


@settings(max_examples=60, deadline=None)
@given(values, st.sampled_from(["none", "lz4"]))
def test_records_built_in_freed_ones_hold_their_own_values(items, compression):
    data = encode_batch(
        [{"key": k, "value": v, "headers": h, "timestamp": 1000 + i} for i, (k, v, h) in enumerate(items)],
        compression=compression,
        base_offset=10,
    )
    batch = decode.decode_entry(data)
    seen = []
    for _ in range(2):  # the second pass builds every record in one the first pass freed
        for r in batch.records:  # each record is freed when the next one is bound
            seen.append((r.offset, r.timestamp, r.key, r.value, r.headers))
    assert seen == as_python(items) * 2
    kept = list(batch.records)  # held at once: none shares its storage with another
    assert len({id(r) for r in kept}) == len(kept)
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in kept] == as_python(items)
    assert all(type(r) is Record and len(r) == len(Record._fields) for r in kept)


def test_a_reused_record_is_a_fresh_one():
    batch = decode.decode_entry(encode_batch([{"key": b"k", "value": b"v"}] * 3, base_offset=5))
    first = batch.records[0]
    address = id(first)
    del first
    again = batch.records[1]  # built in the freed one
    assert id(again) == address
    assert again == Record(6, -1, TimestampType.CREATE_TIME, b"k", b"v")
    assert not gc.is_tracked(again) and pickle.loads(pickle.dumps(again)) == again
    assert again.replace(key=None).key is None and hash(again) == hash(tuple(again))


def test_a_record_with_headers_is_untracked_and_reused():
    """The kernel builds headers untracked, so the Record holding them is too, and freed straight into the
    kept ones (no trashcan: nothing in it can nest Records)."""
    batch = decode.decode_entry(encode_batch([{"key": b"k", "value": b"v", "headers": [("h", b"1")]}] * 3))
    first = batch.records[0]
    assert not gc.is_tracked(first) and not gc.is_tracked(first.headers)
    address = id(first)
    del first
    again = batch.records[2]
    assert id(again) == address and again.offset == 2 and again.headers == (("h", b"1"),)
    tracked = Record(1, 2, TimestampType.CREATE_TIME, None, None, (), -1, [])  # Python's, holding a list
    assert gc.is_tracked(tracked)
    del tracked  # freed through the trashcan path


def test_more_freed_records_than_kept_ones_are_freed():
    """A thousand and more Records freed together (a listed batch, a v1 wrapper's records): the kernel keeps
    some to build again and frees the rest; reading them over and over does not grow memory."""
    import tracemalloc

    batch = decode.decode_entry(encode_batch([{"key": b"k", "value": b"v" * 20}] * 3000))
    for _ in range(2):  # the kept ones filled
        kept = list(batch.records)
        del kept
    tracemalloc.start()
    try:
        after = []
        for _ in range(6):
            kept = list(batch.records)
            assert kept[2999].offset == 2999 and kept[0].value == b"v" * 20
            del kept
            after.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    assert after[0] < 3000 * 64  # at most the kept ones (traced once built while tracing), not all 3000
    assert after[-1] - after[0] < 16 * 1024  # and nothing more round after round


def test_records_made_in_python_and_by_subclasses_are_freed():
    class Tagged(Record):
        __slots__ = ()

    before = len(gc.get_objects())
    for i in range(2000):
        Record(i, i, TimestampType.CREATE_TIME, None, b"x" * (i % 7), (("h", None),))
        t = Tagged(i, i, TimestampType.CREATE_TIME, None, None)
        assert t.offset == i and type(t) is Tagged
        del t
    gc.collect()
    assert len(gc.get_objects()) - before < 100  # nothing kept alive by either deallocator


class _Watched:
    """A weakly referenceable object, kept alive only through the cycle."""


def test_a_record_in_a_reference_cycle_is_collected():
    box: list = [_Watched()]
    r = Record(1, 2, TimestampType.CREATE_TIME, None, None, (), -1, box)  # control holds the list
    box.append(r)
    watched = weakref.ref(box[0])
    del r, box
    gc.collect()
    assert watched() is None


def test_records_nested_deep_are_freed_without_exhausting_the_stack():
    r = None
    for i in range(200_000):
        r = Record(i, 0, TimestampType.CREATE_TIME, None, None, (), -1, r)
    del r  # the trashcan frees the chain a level at a time
    gc.collect()


def test_reuse_records_is_for_record_alone():
    kernel.reuse_records(Record, len(Record._fields))  # again: nothing changes

    class Other(tuple):
        __slots__ = ()

    with pytest.raises(TypeError, match="reuse_records"):
        kernel.reuse_records(Other, 2)
    with pytest.raises(TypeError, match="reuse_records"):
        kernel.reuse_records(Record, 3)


def legacy_log(n: int, magic: int = 1) -> bytes:
    """n uncompressed v0/v1 messages: a batch of its own each, which the kernel fills in freed Batches."""
    return b"".join(
        encode_batch(
            [{"key": b"k%d" % i, "value": b"v" * i, "timestamp": 5000 + i if magic else -1}], magic=magic, base_offset=i
        )
        for i in range(n)
    )


@pytest.mark.parametrize("magic", [0, 1])
def test_batches_filled_in_freed_ones_hold_their_own_values(magic):
    data = legacy_log(50, magic)
    first = [(b.base_offset, b.size, b.crc, b.max_timestamp, list(b.records)) for b in read_batches(data)]
    kept = list(read_batches(data))  # the second read fills Batches the first one freed
    assert [(b.base_offset, b.size, b.crc, b.max_timestamp, list(b.records)) for b in kept] == first
    assert len({id(b) for b in kept}) == len(kept) and all(gc.is_tracked(b) for b in kept)
    assert [b.records[0].value for b in kept] == [b"v" * i for i in range(50)]
    assert pickle.loads(pickle.dumps(kept)) == kept
    assert dataclasses.replace(kept[3], records=[]).base_offset == 3


def test_batches_made_in_python_and_by_subclasses_are_freed():
    @dataclasses.dataclass(slots=True)
    class Noted(Batch):
        note: str = ""

    before = len(gc.get_objects())
    for _ in range(200):
        for b in read_batches(legacy_log(5)):
            n = Noted(**{f.name: getattr(b, f.name) for f in dataclasses.fields(Batch)}, note="x")
            assert n.note == "x" and n.records == b.records
            del n
        decode.decode_entry(encode_batch([{"value": b"v"}]))  # a v2 Batch, made in Python
    gc.collect()
    assert len(gc.get_objects()) - before < 100


def test_reuse_batches_is_for_batch_alone():
    kernel.reuse_batches(Batch, decode.LEGACY_RUN_MAX)  # again: nothing changes

    class Loose:
        pass

    with pytest.raises(TypeError, match="reuse_batches"):
        kernel.reuse_batches(Loose, 1)
    with pytest.raises(TypeError, match="reuse_batches"):
        kernel.reuse_batches(Batch, 3)
