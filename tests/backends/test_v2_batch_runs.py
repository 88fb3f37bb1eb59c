"""The compiled kernel's v2 batch walk (``v2_batches``, through ``decode.v2_run``: a run of v2 data batches
decoded into kcodec Batches in one call) against the per-entry path it replaces (``decode_entry`` on each
entry): ``read_batches`` gives the same batches (every field, every record) on valid logs of every codec mixed
with control batches and v1 entries, from bytes (records read in place), a bytearray and a file (entries
copied), and on damaged bytes (cut, flipped, CRC broken, with and without ``verify_crc``) the same batches
before the same error (kind, position, field, message, batch offset)."""

from __future__ import annotations

import dataclasses
import pickle
import sys
from contextlib import contextmanager
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcodec.errors import KcodecError
from kcodec.generated.fast.kernel import compiled_kernel
from kcodec.records import decode, reader
from kcodec.records.encode import encode_batch, encode_control_batch
from kcodec.records.model import Batch, CrcPending, TimestampType
from kcodec.records.reader import read_batches
from kcodec.runtime.crc import crc32c
from tests.helpers.log_strategies import CODECS, cut_logs, flipped_logs, logs

kernel = compiled_kernel()
pytestmark = pytest.mark.skipif(
    kernel is None or getattr(kernel, "v2_batches", None) is None, reason="the compiled kernel is not built here"
)


@contextmanager
def per_entry_path():
    """read_batches as it was: every v2 entry decoded on its own by decode_entry (no kernel runs)."""
    with mock.patch.object(reader, "v2_run", lambda *args: None):
        yield


def outcome(data, **options):
    """Every batch read_batches yields (as plain fields, the records as a list) and how it ends: the reader's
    partial tail, or what it raises (everything said about it)."""
    got = []
    try:
        with read_batches(data, **options) as batches:
            for batch in batches:
                got.append(batch_fields(batch))
            return got, "end", batches.partial_tail
    except KcodecError as exc:
        return got, "error", type(exc), exc.position, exc.field, exc.base_offset, str(exc)


def batch_fields(batch: Batch) -> tuple:
    fields = {name: getattr(batch, name) for name in Batch.__slots__}
    fields["records"] = [tuple(r) for r in batch.records]
    return tuple(sorted(fields.items()))


def assert_same(data, **options) -> None:
    new = outcome(data, **options)
    with per_entry_path():
        old = outcome(data, **options)
    assert new == old


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(logs, st.booleans(), st.sampled_from([1, 150, decode.V2_RUN_BYTES]))
def test_valid_logs_give_the_same_batches(data, verify_crc, run_bytes):
    with mock.patch.object(decode, "V2_RUN_BYTES", run_bytes):  # runs of one batch, of a few, of all
        assert_same(data, verify_crc=verify_crc)
        assert_same(bytearray(data), verify_crc=verify_crc)  # not bytes: every entry copied


@SETTINGS
@given(flipped_logs, st.booleans())
def test_flipped_bytes_give_the_same_batches_or_error(data, verify_crc):
    assert_same(data, verify_crc=verify_crc)


@SETTINGS
@given(cut_logs, st.booleans())
def test_cut_logs_give_the_same_batches_or_error(data, verify_crc):
    assert_same(data, verify_crc=verify_crc)
    assert_same(data, verify_crc=verify_crc, strict=True)


@SETTINGS
@given(logs, st.data())
def test_limits_and_ranges_give_the_same_batches_or_error(data, draw):
    options = {
        "max_batch_size": draw.draw(st.sampled_from([reader.DEFAULT_MAX_BATCH_SIZE, 60, 120, 200])),
        "max_decompressed_size": draw.draw(st.sampled_from([None, 1, 40, 400])),
        "start": draw.draw(st.integers(0, len(data))),
    }
    assert_same(data, **options)


@pytest.mark.parametrize("codec", CODECS)
def test_a_broken_crc_is_raised_when_verified_and_computed_when_read_if_not(codec):
    good = encode_batch([{"key": b"k", "value": b"v" * 20}] * 3, compression=codec, base_offset=10)
    broken = bytearray(good)
    broken[17] ^= 0x01  # the stored CRC
    data = good + bytes(broken)
    assert_same(data, verify_crc=True)
    assert_same(data, verify_crc=False)
    assert outcome(data, verify_crc=True)[1] == "error"
    first, second = read_batches(data, verify_crc=False)
    assert first.crc_valid is True and first.computed_crc == first.crc
    assert second.crc_valid is False
    assert second.computed_crc == crc32c(memoryview(good)[21:]) != second.crc


def test_a_crc_left_for_later_reads_as_computed_everywhere():
    """The CRC fields of a batch read without verify_crc are computed when first read, by any way of reading
    them: either attribute, equality, repr, pickling, dataclasses.replace."""
    good = encode_batch([{"value": b"v"}] * 2, compression="lz4", base_offset=4)
    broken = bytearray(good)
    broken[17] ^= 0x01
    for data in (good, bytes(broken)):
        with per_entry_path():
            (expected,) = read_batches(data, verify_crc=False)
        for read in (
            lambda b: b.crc_valid,
            lambda b: b.computed_crc,
            lambda b: b == expected,
            repr,
            lambda b: pickle.loads(pickle.dumps(b)),
            dataclasses.replace,
        ):
            (batch,) = read_batches(data, verify_crc=False)
            first = read(batch)
            assert batch == expected and repr(batch) == repr(expected)
            assert (batch.crc_valid, batch.computed_crc) == (expected.crc_valid, expected.computed_crc)
            if read is repr:
                assert first == repr(expected)
            elif read is not dataclasses.replace and not isinstance(first, (bool, int)):
                assert first == expected


def test_batches_come_from_kernel_runs_and_stop_where_the_kernel_stops():
    """The walk really runs: consecutive v2 data batches come out of one kernel call; a control batch or a v1
    message ends a run and is decoded on its own, and a new run follows."""
    data_batches = [encode_batch([{"value": b"v%d" % i}], base_offset=i, compression=CODECS[i]) for i in range(5)]
    marker = encode_control_batch("commit", producer_id=7, producer_epoch=1, offset=5)
    v1 = encode_batch([{"value": b"old"}], magic=1, base_offset=6)
    data = b"".join(data_batches[:3]) + marker + v1 + b"".join(data_batches[3:])
    runs = []
    real = decode.v2_run

    def counted(*args):
        found = real(*args)
        runs.append(len(found[0]))
        return found

    with mock.patch.object(reader, "v2_run", counted):
        batches = list(read_batches(data))
    assert [b.base_offset for b in batches] == [0, 1, 2, 5, 6, 3, 4]
    assert [n for n in runs if n] == [3, 2]
    assert_same(data)


def test_runs_end_after_about_run_bytes():
    batches = [encode_batch([{"value": b"x" * 40}] * 2, base_offset=2 * i) for i in range(6)]
    data = b"".join(batches)
    records_size = len(batches[0]) - 61
    with mock.patch.object(decode, "V2_RUN_BYTES", 2 * records_size):
        found, taken = decode.v2_run(memoryview(data), 0, data, False, 1 << 20, 1 << 20)
    assert len(found) == 2 and taken == 2 * len(batches[0])


def test_records_of_caller_bytes_are_read_in_place_and_a_file_is_copied(tmp_path):
    data = b"".join(
        encode_batch([{"key": b"k", "value": b"x" * 50}] * 10, compression=c, base_offset=10 * i)
        for i, c in enumerate(CODECS * 2)
    )
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data + data[:30])  # a partial entry at the end
    assert outcome(path)[0] == outcome(data)[0]
    assert_same(path)
    assert_same(path, verify_crc=False)
    before = sys.getrefcount(data)
    kept = list(read_batches(data, verify_crc=False))  # uncompressed records and pending CRCs hold the bytes
    assert sys.getrefcount(data) - before == 2 * 2 + 8  # 2 uncompressed: records and CRC; 8 others: the CRC
    del kept
    assert sys.getrefcount(data) == before
    copied = bytearray(data)
    kept = list(read_batches(copied, verify_crc=False))
    assert len(kept) == 10 and sys.getrefcount(copied) == 2


def test_the_kernel_refuses_a_batch_class_it_does_not_fill():
    class Other:
        __slots__ = ("position",)

    with pytest.raises(TypeError, match="slots"):
        kernel.v2_batches(
            b"", 0, 0, 0, None, crc32c, False, CrcPending, 1, 1, 1, 1, ("none",), Other, tuple,
            (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME), (2, 3, 4, 5, 6),
        )  # fmt: skip
