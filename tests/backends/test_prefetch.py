"""Compressed batches inflated ahead on another core (kcodec.records.prefetch) against the walk without it:
``read_batches`` (Records) and ``read_arrow`` (Arrow columns) give the same values, and on damaged bytes (cut,
flipped, a compressed stream broken, a decompression bomb past the limit) the same error at the same place
after the same batches; threads end with the walk (also an abandoned one), none start for an uncompressed log,
one usable core or ``KCODEC_PREFETCH=0``, and a forked child never waits for its parent's."""

from __future__ import annotations

import os
import threading
import time
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcodec.errors import DecompressionLimitError, KcodecError
from kcodec.generated.fast.kernel import compiled_kernel
from kcodec.records import prefetch
from kcodec.records.encode import encode_batch
from kcodec.records.framing import V2_CRC_OFFSET, V2_CRC_START, V2_RECORDS_OFFSET
from kcodec.records.model import Batch
from kcodec.records.reader import read_batches
from tests.helpers.log_strategies import CODECS, cut_logs, flipped_logs, logs

kernel = compiled_kernel()
pytestmark = pytest.mark.skipif(
    kernel is None or getattr(kernel, "segment_columns", None) is None, reason="the compiled kernel is not built here"
)
COMPRESSED = CODECS[1:]


@pytest.fixture(autouse=True)
def two_cores():
    """Prefetch on whatever this machine has (it is off on one core), for batches of any size (the logs here are
    small) and, by default, of every codec (test_the_default_inflates_ahead_only_gzip has the real default)."""
    with (
        mock.patch.object(prefetch, "usable_cores", lambda: 2),
        mock.patch.dict(os.environ, {prefetch.ENV: ""}),
        mock.patch.object(prefetch, "MIN_STORED", 0),
        mock.patch.object(prefetch, "DEFAULT_CODECS", frozenset(COMPRESSED)),
    ):
        yield


def records_outcome(data, **options):
    """Every batch read_batches yields (its fields, the records as tuples) and how it ends (the partial tail,
    or the error with everything said about it)."""
    got = []
    try:
        with read_batches(data, **options) as batches:
            for batch in batches:
                fields = {name: getattr(batch, name) for name in Batch.__slots__}
                fields["records"] = [tuple(r) for r in batch.records]
                got.append(tuple(sorted(fields.items())))
            return got, "end", batches.partial_tail, [(r.start, r.end, r.reason) for r in batches.refused]
    except KcodecError as exc:
        return got, "error", type(exc), exc.position, exc.field, exc.base_offset, str(exc)


def arrow_outcome(data, **options):
    from kcodec.records import columnar

    try:
        return "table", columnar.read_arrow(data, **options).to_pylist()
    except KcodecError as exc:
        return "error", type(exc), exc.position, exc.field, exc.base_offset, str(exc)


def assert_same(data, **options) -> None:
    for outcome in (records_outcome, arrow_outcome) if _has_arrow() else (records_outcome,):
        assert outcome(data, prefetch=True, **options) == outcome(data, prefetch=False, **options)


def _has_arrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def big_log(codec: str, batches: int = 12, records: int = 40) -> bytes:
    """Batches large enough that several are inflated ahead while one is decoded."""
    return b"".join(
        encode_batch(
            [{"key": b"k%d" % i, "value": bytes([i % 251]) * 300 + b"%d" % i} for i in range(records)],
            compression=codec,
            base_offset=n * records,
        )
        for n in range(batches)
    )


SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(logs, st.booleans())
def test_valid_logs_read_the_same(data, verify_crc):
    assert_same(data, verify_crc=verify_crc)


@SETTINGS
@given(flipped_logs, st.booleans())
def test_flipped_bytes_read_the_same_or_fail_the_same(data, verify_crc):
    assert_same(data, verify_crc=verify_crc)


@SETTINGS
@given(cut_logs)
def test_cut_logs_read_the_same_or_fail_the_same(data):
    assert_same(data, verify_crc=False)
    assert_same(data, verify_crc=False, strict=True)


@pytest.mark.parametrize("codec", COMPRESSED)
def test_inflated_ahead_is_what_the_walk_takes(codec):
    """The prefetched records are really used (not every batch falling back to the walk's own decompressor),
    and the values are the same."""
    data = big_log(codec)
    given_back = []
    real = prefetch.Inflater.__call__

    def spy(self, position):
        got = real(self, position)
        given_back.append(got is not None)
        return got

    with mock.patch.object(prefetch.Inflater, "__call__", spy):
        assert_same(data)
    assert sum(given_back) >= 12  # each batch of the Records walk, and again of the Arrow one


@pytest.mark.parametrize("codec", COMPRESSED)
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_a_broken_stream_fails_where_it_fails_without_prefetch(codec, where):
    """A compressed stream broken inside (its CRC recomputed, so only inflating finds it) raises the same error
    at that batch, after the same good batches, CRC checked or not."""
    from kcodec.runtime.crc import crc32c

    data = bytearray(big_log(codec, batches=8))
    sizes, p = [], 0
    while p < len(data):
        size = 12 + int.from_bytes(data[p + 8 : p + 12], "big")
        sizes.append((p, size))
        p += size
    at, size = sizes[{"first": 0, "middle": 4, "last": 7}[where]]
    for k in range(at + V2_RECORDS_OFFSET + size // 3, at + size - 8, 7):
        data[k] ^= 0x5A
    data[at + V2_CRC_OFFSET : at + V2_CRC_START] = crc32c(bytes(data[at + V2_CRC_START : at + size])).to_bytes(4, "big")
    data = bytes(data)
    for verify_crc in (True, False):
        got = records_outcome(data, verify_crc=verify_crc, prefetch=True)
        assert got[1] == "error" and got[3] >= at  # it fails, at the broken batch
        assert len(got[0]) == sizes.index((at, size))
        assert_same(data, verify_crc=verify_crc)


@pytest.mark.parametrize("codec", COMPRESSED)
def test_the_decompressed_size_limit_holds(codec):
    data = big_log(codec, batches=6)
    limit = 40 * 310 - 1  # below one batch's records
    got = records_outcome(data, max_decompressed_size=limit, prefetch=True)
    assert got[1] == "error" and got[2] is DecompressionLimitError and got[0] == []
    assert_same(data, max_decompressed_size=limit)
    refused = records_outcome(data, max_decompressed_size=limit, on_refused=lambda r: None, prefetch=True)
    assert refused[1] == "end" and len(refused[3]) == 6
    assert_same(data, max_decompressed_size=limit, on_refused=lambda r: None)


def inflate_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "kcodec-inflate"]


def no_inflate_threads_within(seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while inflate_threads():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_threads_end_with_the_walk_and_with_an_abandoned_one():
    data = big_log("gzip", batches=20)
    assert len(list(read_batches(data))) == 20
    assert no_inflate_threads_within(5.0)
    walk = iter(read_batches(data))
    next(walk)  # a loop that breaks out
    assert 1 <= len(inflate_threads()) <= prefetch.WORKERS
    del walk  # closed as it is collected: its jobs dropped, its threads told to end
    assert no_inflate_threads_within(5.0)
    with read_batches(data) as reader:
        next(iter(reader))
    assert no_inflate_threads_within(5.0)


def test_an_abandoned_walk_still_referenced_neither_piles_up_work_nor_keeps_threads():
    data = big_log("zstd", batches=30)
    walk = iter(read_batches(data))
    next(walk)
    started = []
    real = prefetch.Inflater._inflate
    with mock.patch.object(prefetch.Inflater, "_inflate", lambda self, job: started.append(1) or real(self, job)):
        time.sleep(0.2)
    assert len(started) <= prefetch.AHEAD_BATCHES
    assert no_inflate_threads_within(prefetch.IDLE_SECONDS + 5.0)  # idle workers end on their own
    assert len(list(walk)) == 29  # and the walk goes on where it was


def test_no_threads_for_an_uncompressed_log_one_core_or_the_switch(monkeypatch):
    started = []
    real_start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self.name) or real_start(self))
    list(read_batches(big_log("none")))
    assert "kcodec-inflate" not in started
    with mock.patch.object(prefetch, "usable_cores", lambda: 1):
        assert not prefetch.wanted() and not prefetch.wanted(True)
        list(read_batches(big_log("lz4")))
    with mock.patch.dict(os.environ, {prefetch.ENV: "0"}):
        assert not prefetch.wanted() and prefetch.wanted(True)
        list(read_batches(big_log("lz4")))
    with mock.patch.dict(os.environ, {prefetch.ENV: "on"}):
        assert prefetch.wanted() and not prefetch.wanted(False)
    assert prefetch.wanted()
    list(read_batches(big_log("lz4"), prefetch=False))
    assert "kcodec-inflate" not in started
    list(read_batches(big_log("lz4")))
    assert "kcodec-inflate" in started


def test_the_kernel_takes_inflated_records_only_for_the_same_entry():
    """What an Inflater gives for another entry's bytes (a window read again that differs) is not used."""
    data = big_log("lz4", batches=3)
    first = 12 + int.from_bytes(data[8:12], "big")
    other = bytearray(data[:first])
    other[-1] ^= 1

    def lying(position):
        return bytes(other), b"\x00" * 100

    lying.min_stored = 0  # type: ignore[attr-defined]

    from kcodec.records import columnar

    run = columnar.segment_run(False, 1 << 30, 1 << 30, None)
    honest = run(data, 0)
    with mock.patch.object(columnar, "RUN_BYTES", 1 << 30):
        lied = columnar.segment_run(False, 1 << 30, 1 << 30, None, ahead=mock.Mock(over=lambda view, base: lying))
        assert lied(data, 0)[0].equals(honest[0])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_inflates_on_its_own_thread():
    data = big_log("gzip", batches=6)
    ahead = prefetch.Inflater(1 << 30)
    ahead.over(data, 0)
    assert ahead(0) is not None  # jobs queued and a worker started in the parent
    pid = os.fork()
    if pid == 0:  # the child: no worker threads; asking must not wait for one
        try:
            first = 12 + int.from_bytes(data[8:12], "big")
            os._exit(0 if ahead(first) is None else 3)
        except BaseException:
            os._exit(4)
    _, status = os.waitpid(pid, 0)
    ahead.close()
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_header_key_that_is_not_utf8_is_walked_again_with_the_gil():
    """The Arrow walk decodes a batch's records without the GIL when it inflates ahead; a header key that is
    not UTF-8 (replaced as Kafka's Java client reads it, which needs Python's decoder) makes it walk that
    batch again with the GIL: the same table as without."""
    from kcodec.runtime.crc import crc32c

    good = encode_batch([{"value": b"v", "headers": [("ab", b"x")]}] * 3, base_offset=5)
    data = bytearray(good.replace(b"ab", b"\xff\xfe"))
    data[V2_CRC_OFFSET:V2_CRC_START] = crc32c(bytes(data[V2_CRC_START:])).to_bytes(4, "big")
    data = bytes(data) + big_log("snappy", batches=2)
    got = arrow_outcome(data, prefetch=True)
    assert got[0] == "table" and got[1][0]["headers"][0]["key"] == "\ufffd\ufffd"
    assert_same(data)


def test_small_batches_are_inflated_where_they_are_decoded():
    """Below MIN_STORED compressed bytes a batch is not handed to a thread: the kernel does not ask for it and no
    thread starts; a batch above it is."""
    data = big_log("zstd", batches=4)
    asked = []
    real = prefetch.Inflater.__call__

    def spy(self, position):
        asked.append(position)
        return real(self, position)

    smallest = min(len(encode_batch([{"value": b"x"}], compression="zstd")), 100)
    with mock.patch.object(prefetch.Inflater, "__call__", spy):
        with mock.patch.object(prefetch, "MIN_STORED", len(data)):
            assert_same(data)
        assert asked == [] and no_inflate_threads_within(5.0)
        with mock.patch.object(prefetch, "MIN_STORED", smallest):
            assert_same(data)
        assert len(asked) >= 4


def test_without_a_thread_to_be_had_the_walk_inflates_every_batch_itself(monkeypatch):
    def refused(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refused)
    data = big_log("gzip", batches=6)
    assert_same(data)
    assert not inflate_threads()


def test_the_default_inflates_ahead_only_gzip(monkeypatch):
    """By default only gzip batches go to a worker (prefetch.DEFAULT_CODECS: the codec whose inflating gains from a
    second thread on the machines measured); prefetch=True or KCODEC_PREFETCH=1 hands over every codec."""
    monkeypatch.setattr(prefetch, "DEFAULT_CODECS", frozenset({"gzip"}))
    started = []
    real_start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self.name) or real_start(self))
    list(read_batches(big_log("lz4")))
    assert "kcodec-inflate" not in started
    list(read_batches(big_log("gzip")))
    assert started.count("kcodec-inflate") == 1
    list(read_batches(big_log("lz4"), prefetch=True))
    assert started.count("kcodec-inflate") == 2
    with mock.patch.dict(os.environ, {prefetch.ENV: "1"}):
        list(read_batches(big_log("zstd")))
    assert started.count("kcodec-inflate") == 3
