"""The compiled kernel's segment pass (``segment_columns``: a run of v2 data batches decoded into one set of
Arrow columns in one call) against the per-entry path it replaces: ``read_arrow`` / ``iter_arrow`` give the
same table (schema and values) on valid segments of every codec mixed with control batches and v1 entries,
and on damaged bytes (cut, flipped, CRC broken, with and without ``verify_crc``) the same table or the same
error (kind, position, field, message, batch offset)."""

from __future__ import annotations

from contextlib import contextmanager
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

from kcodec.errors import KcodecError  # noqa: E402
from kcodec.generated.fast.kernel import compiled_kernel  # noqa: E402
from kcodec.records import columnar  # noqa: E402
from kcodec.records.encode import encode_batch, encode_control_batch  # noqa: E402
from kcodec.records.model import TimestampType  # noqa: E402
from tests.helpers.log_strategies import CODECS, cut_logs, flipped_logs, logs  # noqa: E402

kernel = compiled_kernel()
pytestmark = pytest.mark.skipif(
    kernel is None or getattr(kernel, "segment_columns", None) is None, reason="the compiled kernel is not built here"
)


@contextmanager
def per_entry_path():
    """iter_arrow / read_arrow as they were: every entry decoded on its own (no kernel runs)."""
    with mock.patch.object(columnar, "segment_run", lambda *args, **kwargs: None):
        yield


def outcome(data, **options):
    """The table read_arrow makes of ``data``, or what it raises (everything said about it)."""
    try:
        return "table", columnar.read_arrow(data, **options)
    except KcodecError as exc:
        return "error", type(exc), exc.position, exc.field, exc.base_offset, str(exc)
    except Exception as exc:
        return "other", type(exc), str(exc)


def assert_same(data, **options) -> None:
    new = outcome(data, **options)
    with per_entry_path():
        old = outcome(data, **options)
    if old[0] == "table" and new[0] == "table":
        assert new[1].schema.equals(old[1].schema, check_metadata=True)
        assert new[1].equals(old[1]), (new[1].to_pylist(), old[1].to_pylist())
    else:
        assert new == old


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(logs, st.booleans(), st.sampled_from([1, 150, columnar.RUN_BYTES]))
def test_valid_segments_give_the_same_table(data, verify_crc, run_bytes):
    with mock.patch.object(columnar, "RUN_BYTES", run_bytes):  # runs of one batch, of a few, of all
        assert_same(data, verify_crc=verify_crc)


@SETTINGS
@given(logs, st.data())
def test_offset_windows_give_the_same_table(data, draw):
    start = draw.draw(st.none() | st.integers(0, 2**40))
    end = draw.draw(st.none() | st.integers(0, 2**41))
    assert_same(data, start_offset=start, end_offset=end, verify_crc=False)


@SETTINGS
@given(flipped_logs, st.booleans())
def test_flipped_bytes_give_the_same_table_or_error(data, verify_crc):
    assert_same(data, verify_crc=verify_crc)


@SETTINGS
@given(cut_logs, st.booleans())
def test_cut_segments_give_the_same_table_or_error(data, verify_crc):
    assert_same(data, verify_crc=verify_crc)
    assert_same(data, verify_crc=verify_crc, strict=True)


@pytest.mark.parametrize("codec", CODECS)
def test_a_broken_crc_is_raised_when_verified_and_read_when_not(codec):
    good = encode_batch([{"key": b"k", "value": b"v" * 20}] * 3, compression=codec, base_offset=10)
    broken = bytearray(good)
    broken[-1] ^= 0x01  # the last byte: under the CRC
    data = good + bytes(broken)
    assert_same(data, verify_crc=True)
    assert_same(data, verify_crc=False)
    assert outcome(data, verify_crc=True)[0] == "error"


def test_one_kernel_run_per_stretch_of_data_batches():
    """The pass really runs: consecutive v2 data batches come out as one RecordBatch, and an entry it
    does not take (a control batch, a v1 message) ends a run, is read on its own, and a new run follows."""
    data_batches = [encode_batch([{"value": b"v%d" % i}], base_offset=i, compression=CODECS[i]) for i in range(5)]
    marker = encode_control_batch("commit", producer_id=7, producer_epoch=1, offset=5)
    v1 = encode_batch([{"value": b"old"}], magic=1, base_offset=6)
    data = b"".join(data_batches[:3]) + marker + v1 + b"".join(data_batches[3:])
    sizes = [rb.num_rows for rb in columnar.iter_arrow(data)]
    assert sizes == [3, 1, 1, 2]
    with per_entry_path():
        assert [rb.num_rows for rb in columnar.iter_arrow(data)] == [1, 1, 1, 1, 1, 1, 1]
    assert_same(data)


def test_runs_end_after_about_run_bytes_and_the_next_takes_on():
    """A run holds about RUN_BYTES of batches; the next run starts at the batch after it (no entry of a
    valid segment goes to the per-entry path for that)."""
    batches = [encode_batch([{"value": b"x" * 40}] * 2, base_offset=2 * i) for i in range(6)]
    data = b"".join(batches)
    with mock.patch.object(columnar, "RUN_BYTES", 2 * len(batches[0])):
        assert [rb.num_rows for rb in columnar.iter_arrow(data)] == [4, 4, 4]
    taken = []
    real = columnar.segment_run

    def counted(*args, **kwargs):
        run = real(*args, **kwargs)

        def counting(data, position):
            made, size, full = run(data, position)
            taken.append((size, full))
            return made, size, full

        return counting

    with mock.patch.object(columnar, "RUN_BYTES", 1), mock.patch.object(columnar, "segment_run", counted):
        assert [rb.num_rows for rb in columnar.iter_arrow(data)] == [2] * 6
    assert taken == [(len(b), True) for b in batches[:-1]] + [(len(batches[-1]), False)]


def test_a_file_reads_as_its_bytes(tmp_path):
    data = b"".join(
        encode_batch([{"key": b"k", "value": b"x" * 50}] * 10, compression=c, base_offset=10 * i)
        for i, c in enumerate(CODECS * 4)
    )
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data + data[:30])  # a partial entry at the end
    table = columnar.read_arrow(path)
    assert table.equals(columnar.read_arrow(data))
    assert table.column("batchPosition").to_pylist()[10] == len(encode_batch([{"key": b"k", "value": b"x" * 50}] * 10))
    assert_same(path)


def test_batch_columns_are_the_batches():
    """Offsets, timestamps (LogAppendTime: the append time), sequences and positions from the batch headers."""
    first = encode_batch(
        [{"value": b"a", "timestamp": 5}, {"value": b"b", "timestamp": 9}],
        base_offset=100,
        producer_id=3,
        producer_epoch=0,
        base_sequence=40,
    )
    second = encode_batch(
        [{"value": b"c", "timestamp": 7}],
        base_offset=102,
        compression="zstd",
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        log_append_time=1000,
    )
    table = columnar.read_arrow(first + second)
    assert table.column("offset").to_pylist() == [100, 101, 102]
    assert table.column("timestamp").cast(pa.int64()).to_pylist() == [5, 9, 1000]
    assert table.column("timestampType").to_pylist() == [0, 0, 1]
    assert table.column("sequence").to_pylist() == [40, 41, -1]
    assert table.column("batchPosition").to_pylist() == [0, 0, len(first)]
    assert table.column("isControl").to_pylist() == [False] * 3


def _big_segment(seed: int, codec: str) -> bytes:
    """Batches whose columns take blocks of hundreds of KB (what the kernel's pool of column memory keeps)."""
    import random

    rng = random.Random(seed)
    batches = []
    for b in range(6):
        recs = [
            {
                "key": None if rng.random() < 0.1 else rng.randbytes(rng.randrange(20)),
                "value": None if rng.random() < 0.05 else rng.randbytes(rng.randrange(300)),
                "headers": [(f"h{j}", rng.randbytes(j)) for j in range(rng.randrange(3))],
                "timestamp": 1_700_000_000_000 + i,
            }
            for i in range(2500)
        ]
        batches.append(encode_batch(recs, compression=codec, base_offset=2500 * b, base_sequence=-1))
    return b"".join(batches)


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_column_memory_is_reused_only_once_released(codec):
    """The kernel keeps released column blocks for the next decode (buffers.c's pool): a table still held
    keeps its values while other segments (valid, damaged, of other sizes) are decoded and released, and
    each of those reads as the per-entry path reads it."""
    held_bytes = _big_segment(0, codec)
    held = columnar.read_arrow(held_bytes)
    with per_entry_path():
        expected = columnar.read_arrow(held_bytes)
    assert held.equals(expected)
    for seed in range(1, 4):
        data = _big_segment(seed, codec)
        cut = data[: len(data) * 2 // 3]  # a run that ends inside a batch
        flipped = bytearray(data)
        flipped[len(data) // 2] ^= 0x55  # damage in the middle of a run: its columns are taken back
        for variant in (data, cut, bytes(flipped), data[: len(data) // 5]):
            assert_same(variant, verify_crc=False)
            assert_same(variant)
    assert held.equals(expected)


def test_a_run_whose_first_batch_is_unlike_the_rest():
    """The kernel sizes a run's key and header columns from its first batch: batches after it with far more
    (or fewer) key and header bytes per record read the same."""
    first = encode_batch([{"value": b"v"}], base_offset=0)
    heavy = encode_batch(
        [{"key": b"k" * 50, "value": b"x", "headers": [("h", b"y" * 30)] * 3} for _ in range(3000)], base_offset=1
    )
    light = encode_batch([{"key": b"", "value": None}] * 500, base_offset=3001)
    for data in (first + heavy + light, heavy + first + light, light + heavy):
        assert_same(data)


def test_an_entry_cut_by_the_read_window_goes_to_the_next_run(tmp_path):
    """A file is read in windows: a run stops at the entry the window cuts, and the next run takes it from a
    window read from there (never the per-entry path), also when a run ends at about RUN_BYTES."""
    from kcodec.records import reader, source

    batches = [encode_batch([{"value": b"x" * (30 + i)}] * 3, base_offset=3 * i) for i in range(40)]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(batches))
    window = int(len(batches[0]) * 2.5)  # every window ends inside an entry
    per_entry = []
    real = columnar._columns_compiled
    with (
        mock.patch.object(source, "WINDOW", window),
        mock.patch.object(reader, "WINDOW", window),
        mock.patch.object(columnar, "_columns_compiled", lambda *args: per_entry.append(args) or real(*args)),
    ):
        for run_bytes in (columnar.RUN_BYTES, window):
            with mock.patch.object(columnar, "RUN_BYTES", run_bytes):
                table = columnar.read_arrow(path)
            assert table.equals(columnar.read_arrow(b"".join(batches)))
            assert table.column("offset").to_pylist() == list(range(120))
    assert per_entry == []
