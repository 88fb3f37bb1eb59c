"""The compiled kernel's lazy Records (``lazy_record_v2``: every record checked when the batch is decoded,
each built when it is read) against its eager projection and against the pure-Python decoders: the same
Records, and on damaged bytes the same error (kind, position, field, message); and Record's fields read
through the kernel's member descriptors as through the item getters."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcodec.errors import KcodecError
from kcodec.generated import codec
from kcodec.generated.fast.kernel import compiled_kernel
from kcodec.records import decode
from kcodec.records.model import Record, TimestampType
from kcodec.records.projection import as_tuple, constant, field, plus, record_plan
from tests.helpers.batches import batch, record, vint

kernel = compiled_kernel()
decode.fast_decoders()  # what makes LazyRecords a Sequence and Record's fields slots
pytestmark = pytest.mark.skipif(kernel is None, reason="the compiled kernel is not built here")


def plan(base_offset: int = 100, base_ts: int = 1_700_000_000_000) -> tuple:
    return record_plan(
        offset=plus(3, base_offset),
        timestamp=plus(2, base_ts),
        timestamp_type=constant(TimestampType.CREATE_TIME),
        key=field(4),
        value=field(5),
        headers=as_tuple(6),
        sequence=constant(-1),
        control=constant(None),
        crc=constant(None),
        crc_valid=constant(None),
        magic=constant(2),
    )


headers = st.lists(
    st.fixed_dictionaries({"key": st.text(max_size=4), "value": st.none() | st.binary(max_size=4)}), max_size=3
)
records = st.lists(
    st.fixed_dictionaries(
        {
            "attributes": st.just(0),
            "timestamp_delta": st.integers(-(2**40), 2**40),
            "offset_delta": st.integers(0, 2**31 - 1),
            "key": st.none() | st.binary(max_size=8),
            "value": st.none() | st.binary(max_size=16),
            "headers": headers,
        }
    ),
    max_size=12,
)


def outcome(fn):
    try:
        return ("ok", fn())
    except KcodecError as exc:
        return ("error", type(exc).__name__, exc.position, exc.field, exc.message)


def eager(raw: bytes, end: int, count: int, p: tuple = plan()):
    return kernel.project_record_v2(raw, 0, end, count, Record, p)


def lazy(raw: bytes, end: int, count: int, p: tuple = plan()):
    items, stop = kernel.lazy_record_v2(raw, 0, end, count, Record, p)
    return list(items), stop


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, st.data())
def test_lazy_equals_eager_on_values_and_damage(values, data):
    raw = b"".join(codec("record", 2).build(v) for v in values)
    n = len(values)
    items, stop = kernel.lazy_record_v2(raw, 0, len(raw), n, Record, plan())
    expected, expected_stop = eager(raw, len(raw), n)
    assert stop == expected_stop == len(raw)
    assert isinstance(items, Sequence) and len(items) == n
    assert items == expected and list(items) == expected and not (items != expected)
    assert [items[i] for i in range(-n, n)] == expected + expected
    assert items[1:-1:2] == expected[1:-1:2] and items[::-1] == expected[::-1]
    assert repr(items) == repr(expected)
    assert pickle.loads(pickle.dumps(items)) == expected and copy.deepcopy(items) == expected
    for _ in range(3):  # cut, flipped or extended, and a count that may lie: the eager projection's error
        i = data.draw(st.integers(0, max(0, len(raw) - 1)))
        kind = data.draw(st.sampled_from(["cut", "flip", "extend"]))
        if kind == "cut":
            bad = raw[:i]
        elif kind == "flip" and raw:
            bad = raw[:i] + bytes([raw[i] ^ data.draw(st.integers(1, 255))]) + raw[i + 1 :]
        else:
            bad = raw + data.draw(st.binary(max_size=8))
        end = data.draw(st.integers(0, len(bad)))
        count = data.draw(st.integers(0, n + 2))
        assert outcome(lambda: lazy(bad, end, count)) == outcome(lambda: eager(bad, end, count))


def test_lazy_index_errors_and_offsets_past_int64():
    raw = codec("record", 2).build(
        {"attributes": 0, "timestamp_delta": 0, "offset_delta": 5, "key": b"k", "value": None, "headers": []}
    )
    items, _ = kernel.lazy_record_v2(raw, 0, len(raw), 1, Record, plan())
    with pytest.raises(IndexError):
        items[1]
    with pytest.raises(IndexError):
        items[-2]
    with pytest.raises(TypeError):
        items["0"]
    with pytest.raises(TypeError):
        hash(items)
    near = plan(base_offset=2**63 - 3)  # 5 past it: the sum no int64 holds
    assert outcome(lambda: lazy(raw, len(raw), 1, near)) == outcome(lambda: eager(raw, len(raw), 1, near))
    assert outcome(lambda: lazy(raw, len(raw), 1, near))[0] == "error"


def test_lazy_takes_only_bytes():
    """Another buffer (one that could change under the records) gets the eager list."""
    raw = codec("record", 2).build(
        {"attributes": 0, "timestamp_delta": 0, "offset_delta": 0, "key": b"k", "value": b"v", "headers": []}
    )
    items, _ = kernel.lazy_record_v2(bytearray(raw), 0, len(raw), 1, Record, plan())
    assert type(items) is list and items == eager(raw, len(raw), 1)[0]


# ---------------------------------------------------------------------------- the whole batch, both paths


@pytest.fixture
def python_path(monkeypatch):
    """decode_entry on the pure-Python decoders (the general path), in this process."""
    f = decode.fast_decoders()

    def use_python():
        monkeypatch.setattr(f, "project", None)
        monkeypatch.setattr(f, "lazy", None)

    return use_python


def _batches():
    one = record(key=b"key", value=b"value", headers=vint(1) + vint(1) + b"h" + vint(2) + b"hv")
    plain = b"".join(record(key=b"k%d" % i, value=None if i % 2 else b"v" * i, delta=i) for i in range(5))
    return [batch(one, 1, base_offset=42), batch(plain, 5, base_offset=7), batch(one + plain[:-1], 2)]


def _entry_outcome(entry: bytes):
    try:
        b = decode.decode_entry(entry, 1000, verify_crc=False)
        return ("ok", list(b.records), b.last_offset, b.records_size)
    except KcodecError as exc:
        return ("error", type(exc).__name__, exc.position, exc.field, exc.message, exc.base_offset)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_batches()), st.data())
def test_decode_entry_equals_the_python_path_on_damage(entry, data):
    """A batch damaged at one byte of its records (the CRC not checked): the kernel's lazy records and the
    Python decoders give the same Records or raise the same error at the same byte."""
    i = data.draw(st.integers(61, len(entry) - 1))
    bad = entry[:i] + bytes([entry[i] ^ data.draw(st.integers(1, 255))]) + entry[i + 1 :]
    f = decode.fast_decoders()
    compiled = _entry_outcome(bad)
    saved = f.project, f.lazy
    f.project = f.lazy = None
    try:
        python = _entry_outcome(bad)
    finally:
        f.project, f.lazy = saved
    assert compiled == python


def test_decode_entry_records_are_lazy_and_equal(python_path):
    entry = _batches()[1]
    b = decode.decode_entry(entry)
    assert type(b.records).__name__ == "LazyRecords" and isinstance(b.records, Sequence)
    python_path()
    expected = decode.decode_entry(entry)
    assert type(expected.records) is list
    assert b == expected and b.records == expected.records
    assert pickle.loads(pickle.dumps(b)) == expected


# ---------------------------------------------------------------------------- Record's fields as slots


def test_record_fields_read_as_member_descriptors():
    decode.fast_decoders()  # installs them
    r = Record(5, 6, TimestampType.CREATE_TIME, b"k", None, [("h", b"v")], 3)
    assert type(Record.__dict__["offset"]).__name__ == "member_descriptor"
    assert (r.offset, r.timestamp, r.timestamp_type, r.key, r.value, r.headers) == (
        5,
        6,
        TimestampType.CREATE_TIME,
        b"k",
        None,
        (("h", b"v"),),
    )
    assert (r.sequence, r.control, r.crc, r.crc_valid, r.magic) == (3, None, None, None, 2)
    assert Record.offset.__doc__ == "Absolute offset."
    with pytest.raises(AttributeError):
        r.offset = 1  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(r)) == r and copy.copy(r).key == b"k"
    assert r.replace(key=b"x").key == b"x" and r == tuple(r)
    assert repr(r).startswith("Record(offset=5, timestamp=6,")
    for _ in range(3):  # specialised reads after warm-up read the same
        assert [x.offset for x in (r, r.replace(offset=9))] == [5, 9]


def test_projected_records_are_untracked_unless_they_hold_a_tracked_object():
    import gc

    raw = codec("record", 2).build(
        {"attributes": 0, "timestamp_delta": 0, "offset_delta": 0, "key": b"k", "value": b"v", "headers": []}
    )
    (r,), _ = eager(raw, len(raw), 1)
    assert not gc.is_tracked(r) and r.headers == ()
    tracked = [1]
    p = plan()[:5] + (("c", tracked),) + plan()[6:]  # a constant is the caller's: never followed
    (r,), _ = eager(raw, len(raw), 1, p)
    assert r.headers is tracked
    p = plan()[:9] + (("f", 6),) + plan()[10:]  # headers as the decoder's list in crc_valid's place
    (r,), _ = eager(raw, len(raw), 1, p)
    assert gc.is_tracked(r) and r.crc_valid == []


def test_lazily_built_records_move_fields_and_are_tracked_as_the_eager_ones():
    """Records built when read take the decoded key, value and headers themselves (no second reference is
    left behind), and are tracked by the garbage collector exactly when the eager projection's are: only
    when they hold a tracked object. A plan that reads one field twice, or as a list, is built as before."""
    import gc
    import sys

    raw = codec("record", 2).build(
        {"attributes": 0, "timestamp_delta": 0, "offset_delta": 0, "key": b"k" * 9, "value": b"v" * 9, "headers": []}
    )
    tracked = [1]
    plans = [
        plan(),
        plan()[:5] + (("c", tracked),) + plan()[6:],  # a constant is the caller's: never followed
        plan()[:9] + (("f", 6),) + plan()[10:],  # headers in two places: the general path
        plan()[:8] + (("f", 4),) + plan()[9:],  # the key in two places
        plan()[:5] + (("f", 6),) + plan()[6:],  # the headers field as the decoder's list
    ]
    for p in plans:
        ((r,), _), (lazy_items, _) = eager(raw, len(raw), 1, p), kernel.lazy_record_v2(raw, 0, len(raw), 1, Record, p)
        (built,) = list(lazy_items)
        assert built == r and type(built) is Record
        assert gc.is_tracked(built) == gc.is_tracked(r)
        assert sys.getrefcount(built.key) == sys.getrefcount(r.key)
    assert gc.is_tracked(built) and built.headers == []  # the last plan: the decoder's list, a container


def test_header_count_that_outruns_its_bytes():
    """A record whose header count outruns its bytes fails alike (count_outruns in both walks)."""
    bad = record(headers=vint(3) + vint(1) + b"h" + vint(-1))
    got = outcome(lambda: lazy(bad, len(bad), 1))
    assert got[0] == "error" and got == outcome(lambda: eager(bad, len(bad), 1))


def test_a_plan_of_more_sums_than_fields_is_built_eagerly():
    """The lazy walk checks each record's sums from a list of at most 16 (one a field); a plan with more
    (none of kcodec's) gets the eager projection's list, equal item for item."""
    raw = b"".join(
        codec("record", 2).build(
            {"attributes": 0, "timestamp_delta": i, "offset_delta": i, "key": b"k", "value": None, "headers": []}
        )
        for i in range(3)
    )
    many = tuple(plus(3, i) for i in range(17))
    items, stop = kernel.lazy_record_v2(raw, 0, len(raw), 3, tuple, many)
    assert type(items) is list and stop == len(raw)
    assert items == kernel.project_record_v2(raw, 0, len(raw), 3, tuple, many)[0]
    assert items[2] == tuple(2 + i for i in range(17))
    few = tuple(plus(3, i) for i in range(16))
    lazy_items, _ = kernel.lazy_record_v2(raw, 0, len(raw), 3, tuple, few)
    assert type(lazy_items).__name__ == "LazyRecords" and list(lazy_items) == [t[:16] for t in items]
