"""A segment without a ``.index`` is cut at batch starts found by walking the
batch headers, so a large segment spreads over the cores like an indexed one."""

from __future__ import annotations

import random
import shutil

import pytest

from kcodec.log.writer import SegmentWriter
from kcodec.records.encode import encode_batch
from kcodec.records.reader import read_batches
from kcodec.spark.options import ReadOptions
from kcodec.spark.planning import discover, plan

RECORDS = sum(1 + b % 6 for b in range(80))


@pytest.fixture
def indexed(tmp_path):
    """Partition ``big-3``: two segments of batches of varied sizes and codecs, indexed densely."""
    d = tmp_path / "indexed" / "big-3"
    offset, rnd = 0, random.Random(3)
    with SegmentWriter(d, segment_bytes=50_000, index_interval_bytes=500) as w:
        for b in range(80):
            codec = ("none", "gzip", "lz4")[b % 3]
            recs = [{"value": rnd.randbytes(100 + 37 * (b % 9)), "timestamp": 1000 + b} for _ in range(1 + b % 6)]
            w.append(encode_batch(recs, base_offset=offset, compression=codec))
            offset += len(recs)
    return d


@pytest.fixture
def unindexed(indexed, tmp_path):
    """The same partition without its index files."""
    d = tmp_path / "unindexed" / "big-3"
    shutil.copytree(indexed, d)
    for f in d.glob("*index"):
        f.unlink()
    return d


def _check_cover(splits, segment_logs):
    """Per segment: contiguous ranges from 0 to the end, each starting at a batch, holding whole batches."""
    assert {s.log for s in splits} == {str(p) for p in segment_logs}
    for log in segment_logs:
        mine = [s for s in splits if s.log == str(log)]
        starts = {b.position for b in read_batches(log)}
        assert mine[0].start == 0 and mine[-1].end is None
        for a, b in zip(mine, mine[1:]):
            assert a.end == b.start and b.start in starts
        got = [bt.position for s in mine for bt in read_batches(log, start=s.start, end=s.end, strict=True)]
        assert got == sorted(starts)  # every batch once


def test_segment_without_index_is_cut_at_batch_starts(unindexed):
    logs = sorted(unindexed.glob("*.log"))
    assert len(logs) == 2 and not list(unindexed.glob("*.index"))
    splits = plan(discover(str(unindexed)), ReadOptions(str(unindexed), split_bytes=10_000))
    assert len([s for s in splits if s.log == str(logs[0])]) >= 5
    _check_cover(splits, logs)
    # minPartitions cuts finer too
    many = plan(discover(str(unindexed)), ReadOptions(str(unindexed), min_partitions=4))
    assert len(many) >= 2


def test_header_walk_stops_at_damage_and_at_the_ending_offset(unindexed):
    log = sorted(unindexed.glob("*.log"))[0]
    positions = [b.position for b in read_batches(log)]
    cut = positions[len(positions) // 2] + 5
    log.write_bytes(log.read_bytes()[:cut])  # the file ends inside a batch
    splits = [s for s in plan(discover(str(log)), ReadOptions(str(log), split_bytes=4_000))]
    assert len(splits) > 1 and splits[-1].end is None and all(s.start < cut for s in splits)
    for a, b in zip(splits, splits[1:]):
        assert a.end == b.start and b.start in positions
    opts = ReadOptions(str(log), split_bytes=2_000, ending_offset=20)
    ended = plan(discover(str(log)), opts)
    first_past = next(b.position for b in read_batches(log, strict=False) if b.base_offset >= 20)
    assert ended[-1].end is not None and ended[-1].end <= first_past


def test_spark_reads_the_same_rows_without_index(spark, indexed, unindexed):
    def rows(path):
        df = spark.read.format("kafka-segments").option("splitBytes", 10_000).load(str(path))
        return df.rdd.getNumPartitions(), sorted(tuple(r) for r in df.drop("segment").collect())

    n_without, without = rows(unindexed)
    n_with, with_index = rows(indexed)
    assert n_without > 4 and n_with > 4
    assert without == with_index and len(without) == RECORDS


def test_min_partitions_gives_whole_rounds_of_splits(tmp_path):
    """1.5 MB over 2 cores at 600 KB a split would be 3 splits, the last running alone after the
    other two; minPartitions=2 makes it 4 splits of about equal size instead."""
    d = tmp_path / "even-0"
    rnd = random.Random(5)
    with SegmentWriter(d) as w:
        for b in range(30):
            w.append(encode_batch([{"value": rnd.randbytes(50_000)}], base_offset=b))
    for f in d.glob("*index"):
        f.unlink()
    splits = plan(discover(str(d)), ReadOptions(str(d), split_bytes=600_000, min_partitions=2))
    assert len(splits) == 4
    size = (d / "00000000000000000000.log").stat().st_size
    lengths = [(s.end or size) - s.start for s in splits]
    assert min(lengths) >= max(lengths) / 2  # cut at the first batch start past each quarter
    _check_cover(splits, [d / "00000000000000000000.log"])


def test_min_partitions_on_a_small_input_gives_at_least_as_many_splits(tmp_path):
    """Spark's Kafka source cuts a partition's offset range for minPartitions however small it is; 747
    offsets in one 30 KB segment give at least the splits asked for, their offset ranges covering every
    offset once."""
    d = tmp_path / "small-0"
    with SegmentWriter(d) as w:
        for base in range(0, 747, 9):
            w.append(encode_batch([{"value": b"v%d" % i} for i in range(base, min(747, base + 9))], base_offset=base))
    parts = discover(str(d))
    assert len(plan(parts, ReadOptions(str(d)))) == 1
    for asked in (2, 4, 8, 32):
        splits = plan(parts, ReadOptions(str(d), min_partitions=asked))
        assert len(splits) >= asked
        ranges = sorted((s.start_offset, s.end_offset) for s in splits)
        assert ranges[0][0] == 0 and ranges[-1][1] == 747
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))  # no gap, no overlap
