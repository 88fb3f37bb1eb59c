"""The stream reader's driver steps called directly, with the directory changed between them (issue
22, classes 2, 3 and 7): a partition directory that two listings miss is reported with its last known
end offset (failOnDataLoss=true fails, false logs once and goes on); one listing that misses it is no
loss; damage in a live segment neither stalls the tail nor escapes onCorrupt; a segment deleted after a
batch read was planned is kcodec's one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from pyspark.sql.streaming.datasource import ReadAllAvailable
from pyspark.sql.types import BinaryType, LongType, StructField, StructType

from kcodec.errors import KcodecError
from kcodec.log.writer import SegmentWriter
from kcodec.records.encode import encode_batch
from kcodec.spark.arrow import requested_columns
from kcodec.spark.options import ReadOptions
from kcodec.spark.planning import DataLossError, discover, plan
from kcodec.spark.read import CorruptSegmentError, read_split
from kcodec.spark.stream import KafkaSegmentsStreamReader

SCHEMA = StructType([StructField("offset", LongType()), StructField("value", BinaryType())])


def _batch(first: int, n: int) -> bytes:
    return encode_batch(
        [{"value": b"v%d" % o, "timestamp": 1000 + o} for o in range(first, first + n)], base_offset=first
    )


def _partition(root: Path, name: str, *batches: bytes) -> Path:
    with SegmentWriter(root / name, base_offset=0) as w:
        for b in batches:
            w.append(b)
    return root / name / f"{0:020d}.log"


def _reader(root: Path, **options) -> KafkaSegmentsStreamReader:
    return KafkaSegmentsStreamReader({"path": str(root), "startingOffsets": "earliest", **options}, SCHEMA)


def _read(reader, start, end) -> list[int]:
    return [o for p in reader.partitions(start, end) for rb in reader.read(p) for o in rb.to_pydict()["offset"]]


def _two_partitions_read(root: Path, **options):
    """orders-0 and orders-1 of 5 offsets each, and a reader whose first trigger reached their ends."""
    _partition(root, "orders-0", _batch(0, 5))
    _partition(root, "orders-1", _batch(0, 5))
    reader = _reader(root, **options)
    end = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    assert end == {"orders": {"0": 5, "1": 5}}
    return reader, end


def test_a_partition_directory_removed_mid_stream_fails_the_query(tmp_path):
    root = tmp_path / "logs"
    reader, end = _two_partitions_read(root)
    shutil.rmtree(root / "orders-1")
    with pytest.raises(DataLossError) as exc:
        reader.latestOffset(end, ReadAllAvailable())
    message = str(exc.value)
    assert "orders-1" in message and "last known end offset: 5" in message and "\n" not in message


def test_a_restarted_query_reports_a_partition_removed_while_it_was_down(tmp_path):
    root = tmp_path / "logs"
    _partition(root, "orders-0", _batch(0, 5))
    shutil.rmtree(_partition(root, "orders-1", _batch(0, 5)).parent)
    checkpointed = {"orders": {"0": 5, "1": 3}}  # what the checkpoint says was read
    with pytest.raises(DataLossError, match="orders-1 .*last known end offset: 3"):
        _reader(root).latestOffset(checkpointed, ReadAllAvailable())


def test_without_fail_on_data_loss_it_is_logged_once(tmp_path, capsys):
    root = tmp_path / "logs"
    reader, end = _two_partitions_read(root, failOnDataLoss="false")
    shutil.rmtree(root / "orders-1")
    again = reader.latestOffset(end, ReadAllAvailable())
    assert again == end
    reader.latestOffset(again, ReadAllAvailable())
    err = capsys.readouterr().err
    assert err.count("orders-1 is no longer under") == 1 and "failOnDataLoss=false" in err


def test_one_listing_that_misses_a_partition_is_no_loss(tmp_path, monkeypatch):
    reader, end = _two_partitions_read(tmp_path / "logs")
    real = reader._discover
    calls = []

    def racing():
        parts = real()
        calls.append(1)
        # the first listing of this trigger races a rename: orders-1 is not seen
        return [p for p in parts if p.partition != 1] if len(calls) == 1 else parts

    monkeypatch.setattr(reader, "_discover", racing)
    assert reader.latestOffset(end, ReadAllAvailable()) == end  # no loss reported, nothing skipped
    assert len(calls) == 2


@pytest.mark.parametrize("on_corrupt", ["fail", "skip"])
def test_damage_in_a_live_segment_goes_by_on_corrupt(tmp_path, on_corrupt, capsys):
    root = tmp_path / "logs"
    log = _partition(root, "orders-0", _batch(0, 3))
    reader = _reader(root, onCorrupt=on_corrupt)
    start = reader.initialOffset()
    bad = bytearray(_batch(3, 3))
    bad[16] = 9  # an unknown magic: damage, with a whole batch after it
    with open(log, "ab") as f:
        f.write(bytes(bad) + _batch(6, 3))
    end = reader.latestOffset(start, ReadAllAvailable())
    assert end == {"orders": {"0": 9}}  # the tail walked past the damage, not stalled at it
    if on_corrupt == "fail":
        with pytest.raises(CorruptSegmentError) as exc:
            _read(reader, start, end)
        assert str(log) in str(exc.value) and "\n" not in str(exc.value)
    else:
        assert _read(reader, start, end) == [0, 1, 2, 6, 7, 8]
        assert "onCorrupt=skip: skipped" in capsys.readouterr().err


def test_a_segment_deleted_after_a_batch_read_was_planned_is_one_line(tmp_path):
    root = tmp_path / "logs"
    log = _partition(root, "orders-0", _batch(0, 3))
    opts = ReadOptions.from_options({"path": str(root)})
    (split,) = plan(discover(str(root)), opts)
    log.unlink()
    with pytest.raises(KcodecError) as exc:
        list(read_split(split, opts, requested_columns(opts, SCHEMA)))
    assert isinstance(exc.value, FileNotFoundError)  # still what code catching that expects
    assert str(log) in str(exc.value) and "deleted after the read was planned" in str(exc.value)
