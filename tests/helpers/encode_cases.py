"""Inputs of the record writer the kernel and Python path tests share (tests/backends/test_kernel_*_writer.py):
valid batches drawn by Hypothesis, inputs each path refuses with one message, and valid inputs the kernel
leaves to the Python path."""

from __future__ import annotations

from collections import OrderedDict

from hypothesis import strategies as st

from kcodec.errors import KcodecError
from kcodec.records.encode import NewRecord
from kcodec.records.model import ControlRecord, Record, TimestampType

INT64_MAX = (1 << 63) - 1


def outcome(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except KcodecError as exc:
        return type(exc).__name__, str(exc)


# ---------------------------------------------------------------------------- generated valid inputs

headers_st = st.lists(st.tuples(st.text(max_size=6), st.one_of(st.none(), st.binary(max_size=8))), max_size=3).flatmap(
    lambda h: st.sampled_from([h, tuple(h)])
)


@st.composite
def batches(draw):
    n = draw(st.integers(1, 12))
    explicit_first = draw(st.booleans())
    first = draw(st.integers(0, 1 << 40)) if explicit_first else None
    if first is None:
        base_offset = draw(st.one_of(st.none(), st.integers(0, 1 << 40)))
    else:  # at most a small gap below the first offset: deltas stay in an int32
        base_offset = draw(st.one_of(st.none(), st.integers(max(0, first - 1000), first)))
    start = first if first is not None else (base_offset if base_offset is not None else 0)
    items, offset = [], start
    huge = draw(st.booleans())
    for i in range(n):
        explicit = i == 0 and explicit_first or i > 0 and draw(st.booleans())
        if i > 0:
            offset += 1 + (draw(st.integers(0, 1000)) if explicit else 0)
        key = draw(st.one_of(st.none(), st.binary(max_size=20)))
        value = draw(st.one_of(st.none(), st.binary(max_size=60)))
        headers = draw(headers_st)
        # a timestamp near INT64_MAX beside -1 would not fit a delta: such timestamps only without -1
        timestamp = draw(st.integers(0, INT64_MAX) if huge else st.one_of(st.just(-1), st.integers(0, 1 << 42)))
        form = draw(st.sampled_from(["new", "record", "dict"]))
        off = offset if explicit else None
        if form == "new":
            items.append(NewRecord(key, value, headers, timestamp, off))
        elif form == "record":
            # a Record always has its offset: the explicit ones only
            if off is None:
                items.append({"key": key, "value": value, "headers": headers, "timestamp": timestamp})
            else:
                items.append(Record(off, timestamp, TimestampType.CREATE_TIME, key, value, headers))
        else:
            d = {"key": key, "value": value, "timestamp": timestamp, "offset": off, "headers": headers}
            for name in draw(st.sets(st.sampled_from(["key", "value", "headers", "offset"]))):
                if d[name] in (None, (), []):
                    del d[name]  # absent keys take their defaults
            items.append(d)
    horizon = draw(st.one_of(st.none(), st.integers(0, 1 << 42))) if not huge else None
    return items, base_offset, horizon


# ---------------------------------------------------------------------------- inputs for the Python path


def _control_record():
    return Record(0, 1, TimestampType.CREATE_TIME, b"\0\0\0\0", b"", (), control=ControlRecord(1, 0, 0, 0))


# (records, encode_batch options): each refused, with the Python path's message
REFUSED = {
    "not a record": ([5], {}),
    "null header key": ([NewRecord(headers=[(None, b"v")])], {}),
    "header not a pair": ([NewRecord(headers=[("a",)])], {}),
    "header key bytes": ([NewRecord(headers=[(b"a", b"v")])], {}),
    "header value str": ([NewRecord(headers=[("a", "v")])], {}),
    "headers a str": ([NewRecord(headers="ab")], {}),
    "header key not UTF-8": ([NewRecord(headers=[("\ud800", b"v")])], {}),
    "negative timestamp": ([NewRecord(timestamp=-2)], {}),
    "timestamp a str": ([NewRecord(timestamp="1")], {}),
    "timestamp a bool": ([{"timestamp": True}], {}),
    "timestamp past int64": ([NewRecord(timestamp=1 << 63)], {}),
    "timestamp None in a dict": ([{"timestamp": None}], {}),
    "negative offset": ([NewRecord(offset=-1)], {}),
    "offset a float": ([NewRecord(offset=1.0)], {}),
    "offsets not increasing": ([NewRecord(offset=5), NewRecord(offset=5)], {}),
    "offset below base": ([NewRecord(offset=3)], {"base_offset": 10}),
    "offset delta past int32": ([NewRecord(offset=0), NewRecord(offset=1 << 31)], {}),
    "next offset past int64": ([NewRecord(offset=INT64_MAX), NewRecord()], {}),
    "timestamp delta past int64": ([NewRecord(timestamp=-1), NewRecord(timestamp=INT64_MAX)], {}),
    "control record": ([_control_record()], {}),
    "unknown dict key": ([{"value": b"v", "partition": 1}], {}),
    "non-str dict key": ([{1: b"v"}], {}),
    "key a str": ([NewRecord(key="k")], {}),
    "value an int": ([{"value": 5}], {}),
    "base offset a str": ([NewRecord()], {"base_offset": "0"}),
    "negative base offset": ([NewRecord()], {"base_offset": -1}),
    "records a dict": ({"value": b"v"}, {}),
}


class _Dict(dict):
    pass


# valid inputs the kernel leaves to the Python path, which converts them: the same bytes either way
CONVERTED = {
    "bytearray key": [NewRecord(key=bytearray(b"k"), value=memoryview(b"v"))],
    "header pairs as lists": [NewRecord(headers=[["a", b"1"]])],
    "header value bytearray": [NewRecord(headers=[("a", bytearray(b"1"))])],
    "headers empty str": [NewRecord(headers="")],
    "OrderedDict": [OrderedDict(value=b"v", timestamp=3)],
    "dict subclass": [_Dict(value=b"v")],
    "int subclass timestamp": [NewRecord(timestamp=TimestampType.CREATE_TIME)],
}
