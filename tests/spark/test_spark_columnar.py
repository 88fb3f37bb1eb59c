"""The records view's Arrow batches come from the kernel's columns; built from Record objects instead
(the path without the kernel) they are the same table, through the same Spark mapping, on every magic
and codec, with the read options applied and on damaged input under onCorrupt=skip."""

from __future__ import annotations

import pytest

pytest.importorskip("pyarrow")

from kcodec.records import columnar
from kcodec.records.encode import encode_batch, encode_control_batch
from kcodec.records.framing import V2_CRC_START, V2_RECORDS_OFFSET
from kcodec.records.model import TimestampType

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
PID = 77


def _records(n: int, first: int, magic: int) -> list[dict]:
    out = []
    for i in range(first, first + n):
        r = {"offset": i, "key": None if i % 5 == 0 else b"k%d" % i, "value": None if i % 7 == 0 else b"v" * (i % 40)}
        if magic:
            r["timestamp"] = 1_700_000_000_000 + i
        if magic == 2 and i % 3:
            r["headers"] = [("h", b"x%d" % i), ("e", None)] if i % 2 else [("only", b"")]
        out.append(r)
    return out


def _segment(magic: int, codec: str) -> bytes:
    """Plain batches, a transaction that aborts and one that commits (v2), a LogAppendTime batch."""
    parts, offset = [], 0
    for n in (10, 25, 1, 40):
        parts.append(encode_batch(_records(n, offset, magic), magic=magic, compression=codec, base_offset=offset))
        offset += n
    if magic == 2:
        for kind in ("ABORT", "COMMIT"):
            recs = _records(12, offset, 2)
            parts.append(
                encode_batch(
                    recs,
                    compression=codec,
                    base_offset=offset,
                    producer_id=PID,
                    producer_epoch=0,
                    base_sequence=offset,
                    transactional=True,
                )
            )
            offset += 12
            parts.append(encode_control_batch(kind, producer_id=PID, producer_epoch=0, offset=offset))
            offset += 1
        parts.append(
            encode_batch(
                _records(8, offset, 2),
                compression=codec,
                base_offset=offset,
                timestamp_type=TimestampType.LOG_APPEND_TIME,
                log_append_time=1_800_000_000_000,
            )
        )
        offset += 8
    if magic == 1:
        parts.append(encode_batch(_records(6, offset, 1), magic=1, compression=codec, base_offset=offset))
    return b"".join(parts)


def _damaged(data: bytes, magic: int) -> bytes:
    """The second entry's last byte flipped: its CRC fails (onCorrupt=skip skips it alone)."""
    size = int.from_bytes(data[8:12], "big") + 12
    second = int.from_bytes(data[size + 8 : size + 12], "big") + 12
    out = bytearray(data)
    out[size + second - 1] ^= 0xFF
    assert magic != 2 or size + second - 1 >= size + max(V2_CRC_START, V2_RECORDS_OFFSET) - 1
    return bytes(out)


def _rows(path, **options):
    from kcodec.spark.arrow import RECORD_COLUMNS
    from kcodec.spark.options import ReadOptions
    from kcodec.spark.planning import discover, plan
    from kcodec.spark.read import read_split

    opts = ReadOptions(str(path), **options)
    cols = [(c, True) for c in RECORD_COLUMNS]
    batches = [rb for split in plan(discover(str(path)), opts) for rb in read_split(split, opts, cols)]
    return batches


def _three(monkeypatch, path, **options):
    """(tables read through the kernel's runs of many batches, through the kernel one Kafka batch at a time,
    from Record objects), and how many batches and runs the kernel built on the first read."""
    import pyarrow as pa

    built = []
    compiled, segment_run = columnar._compiled_v2, columnar.segment_run

    def counting(*args):
        got = compiled(*args)
        built.append(got is not None)
        return got

    def counting_runs(*args, **kwargs):
        run = segment_run(*args, **kwargs)

        def counted(data, position):
            got = run(data, position)
            built.append(got[0] is not None)
            return got

        return None if run is None else counted

    with monkeypatch.context() as m:
        m.setattr(columnar, "_compiled_v2", counting)
        m.setattr(columnar, "segment_run", counting_runs)
        runs = _rows(path, **options)
    with monkeypatch.context() as m:
        m.setattr(columnar, "segment_run", lambda *args, **kwargs: None)
        per_batch = _rows(path, **options)
    with monkeypatch.context() as m:
        m.setattr(columnar, "_compiled_v2", lambda *args: None)
        m.setattr(columnar, "segment_run", lambda *args, **kwargs: None)
        slow = _rows(path, **options)
    schema = runs[0].schema if runs else None
    return tuple(pa.Table.from_batches(t, schema) for t in (runs, per_batch, slow)) + (sum(built),)


def _both(monkeypatch, path, **options):
    """(kernel-built tables, Record-built), and how many batches and runs the kernel built; the kernel's
    runs and its batch-at-a-time path give the same table."""
    runs, per_batch, slow, built = _three(monkeypatch, path, **options)
    assert runs.equals(per_batch), options
    return runs, slow, built


OPTION_SETS = [
    {},
    {"include_control": True},
    {"read_committed": True},
    {"starting_offset": 5, "ending_offset": 60, "max_rows": 7},
    {"verify_crc": False},
]


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("codec", CODECS)
def test_kernel_columns_equal_record_columns(tmp_path, monkeypatch, magic, codec):
    if codec == "zstd" and magic < 2:
        pytest.skip("zstd needs magic 2")
    part = tmp_path / "t-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(_segment(magic, codec))
    for options in OPTION_SETS:
        fast, slow, kernel_batches = _both(monkeypatch, part, **options)
        assert fast.num_rows > 0
        assert fast.equals(slow), options
        assert (kernel_batches > 0) == (magic == 2 and columnar.fast_decoders().kernel is not None)
        if options.get("read_committed"):  # the aborted transaction's records are gone, the committed kept
            offsets = fast.column("offset").to_pylist()
            assert 76 not in offsets and 89 in offsets if magic == 2 else True


@pytest.mark.parametrize("magic,codec", [(2, "none"), (2, "zstd"), (2, "gzip"), (1, "lz4"), (0, "none")])
def test_damaged_input_under_skip_is_the_same(tmp_path, monkeypatch, capsys, magic, codec):
    part = tmp_path / "t-0"
    part.mkdir()
    good = _segment(magic, codec)
    (part / "00000000000000000000.log").write_bytes(_damaged(good, magic) + good[:30])  # and a partial tail
    fast, slow, _ = _both(monkeypatch, part, on_corrupt="skip", include_control=True)
    assert fast.equals(slow)
    second = 1 if magic < 2 and codec == "none" else 10  # the damaged entry's first offset
    assert second not in fast.column("offset").to_pylist() and 0 in fast.column("offset").to_pylist()
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "onCorrupt=skip: skipped" in line]
    assert len(lines) == 6 and lines[0:2] == lines[2:4] == lines[4:6]  # the damaged batch and the tail, in each read


def test_timestamps_past_spark_are_left_out_alike(tmp_path, monkeypatch, capsys):
    part = tmp_path / "t-0"
    part.mkdir()
    recs = _records(5, 0, 2)
    recs[2]["timestamp"] = 2**62  # past what Spark's microsecond timestamp holds
    (part / "00000000000000000000.log").write_bytes(encode_batch(recs, compression="lz4", base_offset=0))
    fast, slow, kernel_batches = _both(monkeypatch, part, on_corrupt="skip")
    assert fast.equals(slow) and fast.column("offset").to_pylist() == [0, 1, 3, 4]
    assert capsys.readouterr().err.count("left out 1 record(s)") == 3  # in each of the three reads
    from kcodec.spark.read import OutOfRangeError

    with pytest.raises(OutOfRangeError, match="timestamp 4611686018427387904 ms"):
        _rows(part)


def test_one_kafka_batch_of_many_records_becomes_arrow_batches_of_max_rows(tmp_path):
    """One Kafka batch of 100 k records (a record-count bomb holds 9 M, legal) is sliced into Arrow batches
    of at most maxRowsPerBatch rows: the JVM never receives one Arrow batch the size of a Kafka batch."""
    from tests.helpers.bombs import bomb

    d = tmp_path / "bomb-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(bomb(100_000))
    batches = _rows(d, max_rows=30_000)
    assert [rb.num_rows for rb in batches] == [30_000, 30_000, 30_000, 10_000]
    offsets = [o for rb in batches for o in rb.column("offset").to_pylist()]
    assert offsets == list(range(100_000))


def _size_broken(data: bytes) -> bytes:
    """The third entry's size field made larger than the input: framing that cannot be trusted."""
    at = 0
    for _ in range(2):
        at += int.from_bytes(data[at + 8 : at + 12], "big") + 12
    out = bytearray(data)
    out[at + 8 : at + 12] = (len(data) * 2).to_bytes(4, "big")
    return bytes(out)


@pytest.mark.parametrize("resync", [False, True])
@pytest.mark.parametrize("damage", [_damaged, lambda data, magic: _size_broken(data)])
def test_runs_skip_damage_as_batch_at_a_time(tmp_path, monkeypatch, capsys, resync, damage):
    """onCorrupt=skip over damage inside what would be a run, reading on at the next entry (a stream's
    split: resync) or not: the same rows and the same report whether the kernel decodes runs or batches."""
    import dataclasses

    import pyarrow as pa

    from kcodec.spark import read
    from kcodec.spark.arrow import RECORD_COLUMNS
    from kcodec.spark.options import ReadOptions
    from kcodec.spark.planning import discover, plan

    part = tmp_path / "t-0"
    part.mkdir()
    good = _segment(2, "none")
    (part / "00000000000000000000.log").write_bytes(damage(good, 2) + good)
    opts = ReadOptions(str(part), on_corrupt="skip", include_control=True)
    cols = [(c, True) for c in RECORD_COLUMNS]
    splits = [dataclasses.replace(s, resync=resync) for s in plan(discover(str(part)), opts)]
    tables, reports = [], []
    for runs in (True, False):
        with monkeypatch.context() as m:
            if not runs:
                m.setattr(columnar, "segment_run", lambda *args, **kwargs: None)
            batches = [rb for s in splits for rb in read.read_split(s, opts, cols)]
        tables.append(pa.Table.from_batches(batches))
        reports.append(capsys.readouterr().err)
    assert tables[0].equals(tables[1]) and tables[0].num_rows > 0
    assert reports[0] == reports[1] and "onCorrupt=skip: skipped" in reports[0]


def test_damage_inside_a_run_fails_and_crc_unchecked_reads_alike(tmp_path, monkeypatch):
    """onCorrupt=fail: a batch whose CRC fails amid a run raises what the batch-at-a-time path raises; with
    verifyCrc=false it is read, its crcValid false, alike."""
    from kcodec.spark.read import CorruptSegmentError

    part = tmp_path / "t-0"
    part.mkdir()
    data = bytearray(_segment(2, "none"))
    first = int.from_bytes(data[8:12], "big") + 12
    data[data.index(b"vvvvvvvv", first)] = ord("w")  # a value byte of the second batch: its CRC fails, it decodes
    (part / "00000000000000000000.log").write_bytes(bytes(data))
    errors = []
    for runs in (True, False):
        with monkeypatch.context() as m:
            if not runs:
                m.setattr(columnar, "segment_run", lambda *args, **kwargs: None)
            with pytest.raises(CorruptSegmentError) as got:
                _rows(part)
        errors.append((str(got.value), got.value.position, got.value.base_offset, got.value.cause_kind))
    assert errors[0] == errors[1] and "crc" in errors[0][0].lower()
    runs, per_batch, slow, _ = _three(monkeypatch, part, verify_crc=False)
    assert runs.equals(per_batch) and runs.equals(slow)
    valid = runs.column("crcValid").to_pylist()
    assert False in valid and True in valid
