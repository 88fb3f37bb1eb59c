"""Writing with the kafka-segments data source: proper partition directories
in every magic and codec, read back identically; append, overwrite, kept
offsets; a failed job leaves nothing half-written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from kcodec.log.index_check import check_indexes
from kcodec.log.names import parse_segment_name
from kcodec.log.partition import list_partitions
from kcodec.records.reader import read_batches
from tests.helpers.spark_expected import partition_batches

FORMAT = "kafka-segments"
COMBINATIONS = (
    [(0, c) for c in ("none", "gzip", "snappy", "lz4")]
    + [(1, c) for c in ("none", "gzip", "snappy", "lz4")]
    + [(2, c) for c in ("none", "gzip", "snappy", "lz4", "zstd")]
)
SCHEMA = (
    "key binary, value binary, topic string, partition int, timestamp timestamp, "
    "headers array<struct<key: string, value: binary>>"
)
BASE_TS = 1_735_689_600_000


def _rows(n: int = 240):
    """Rows for two topics x two partitions, in the order they must be written."""
    from datetime import datetime, timezone

    out = []
    for i in range(n):
        topic, partition = ("a", "b")[i % 2], (i // 2) % 2
        ts = datetime.fromtimestamp((BASE_TS + 7 * i) / 1000, tz=timezone.utc)
        key = None if i % 11 == 0 else f"k{i % 13}".encode()
        value = None if i % 17 == 0 else (b"value %d " % i) * (1 + i % 5)
        headers = [("h", b"%d" % i), ("n", None)] if i % 3 == 0 else []
        out.append((key, value, topic, partition, ts, headers))
    return out


@pytest.fixture(scope="module")
def source(spark):
    # one Spark partition: the order of rows within each topic-partition is the order above
    return spark.createDataFrame(_rows(), SCHEMA).coalesce(1)


def _expected(magic: int):
    """(topic, partition) -> [(offset, key, value, timestamp ms, headers)] as written at ``magic``."""
    out: dict = {}
    for key, value, topic, partition, ts, headers in _rows():
        recs = out.setdefault((topic, partition), [])
        ms = int(round(ts.timestamp() * 1000))
        hs = tuple(headers) if magic == 2 else ()
        out[(topic, partition)].append((len(recs), key, value, ms if magic > 0 else -1, hs))
    return out


def _on_disk(root: Path):
    out = {}
    for part in list_partitions(root):
        out[(part.topic, part.partition)] = [
            (r.offset, r.key, r.value, r.timestamp, tuple(r.headers))
            for b, _ in partition_batches(part.path)
            for r in b.records
        ]
    return out


def _assert_proper_partition_dirs(root: Path, magic: int, codec: str) -> None:
    assert sorted(os.listdir(root)) == ["a-0", "a-1", "b-0", "b-1"]  # no staging left behind
    for part in list_partitions(root):
        logs = sorted(part.path.glob("*.log"))
        assert len(logs) > 1  # rolled at segmentBytes
        for log in logs:
            base = parse_segment_name(log).base_offset
            batches = list(read_batches(log, strict=True))
            assert batches[0].base_offset == base  # named by base offset
            assert {(b.magic, b.compression) for b in batches} == {(magic, codec)}
            assert log.with_suffix(".index").exists() and log.with_suffix(".timeindex").exists()
        assert check_indexes(part.path) == []


@pytest.mark.parametrize("magic,codec", COMBINATIONS, ids=[f"v{m}-{c}" for m, c in COMBINATIONS])
def test_write_read_round_trip(spark, source, tmp_path, magic, codec):
    out = tmp_path / "out"
    (
        source.write.format(FORMAT)
        .mode("append")
        .option("magic", magic)
        .option("compression", codec)
        .option("recordsPerBatch", 9)
        .option("segmentBytes", 1500)
        .option("indexIntervalBytes", 300)
        .save(str(out))
    )
    _assert_proper_partition_dirs(out, magic, codec)
    assert _on_disk(out) == _expected(magic)
    # and Spark reads back what it wrote
    back = spark.read.format(FORMAT).load(str(out))
    got = sorted(
        (r.topic, r.partition, r.offset, r.key, r.value)
        for r in back.select("topic", "partition", "offset", "key", "value").collect()
    )
    want = sorted((t, p, o, k, v) for (t, p), recs in _expected(magic).items() for o, k, v, _, _ in recs)
    assert got == want


def test_append_continues_offsets_and_overwrite_replaces(spark, source, tmp_path):
    out = tmp_path / "out"
    source.write.format(FORMAT).mode("append").option("compression", "zstd").save(str(out))
    source.write.format(FORMAT).mode("append").option("magic", 1).option("compression", "gzip").save(str(out))
    disk = _on_disk(out)
    first = _expected(2)
    for tp, recs in first.items():
        assert [r[0] for r in disk[tp]] == list(range(2 * len(recs)))
        assert [r[1:3] for r in disk[tp]] == [r[1:3] for r in recs] * 2
    counts = {
        (r.magic, r.compression): r["count"]
        for r in spark.read.format(FORMAT).load(str(out)).groupBy("magic", "compression").count().collect()
    }
    assert counts == {(2, "zstd"): 240, (1, "gzip"): 240}
    source.where("topic = 'a'").write.format(FORMAT).mode("overwrite").option("topic", "c").save(str(out))
    assert sorted(os.listdir(out)) == ["c-0", "c-1"]
    assert sum(len(v) for v in _on_disk(out).values()) == 120


def test_keep_offsets(spark, tmp_path):
    rows = [(b"v%d" % o, o) for o in (5, 6, 9, 20, 21, 40)]
    df = spark.createDataFrame(rows, "value binary, offset bigint").coalesce(1)
    out = tmp_path / "kept"
    (
        df.write.format(FORMAT)
        .mode("append")
        .option("topic", "t")
        .option("partition", 0)
        .option("keepOffsets", "true")
        .option("recordsPerBatch", 4)
        .save(str(out))
    )
    disk = _on_disk(out)
    assert [(r[0], r[2]) for r in disk[("t", 0)]] == [(o, v) for v, o in rows]
    assert sorted(p.name for p in (out / "t-0").glob("*.log")) == ["00000000000000000005.log"]
    # kept offsets below what the partition already holds are refused, and nothing changes
    with pytest.raises(Exception, match="already holds offsets"):
        (
            df.write.format(FORMAT)
            .mode("append")
            .option("topic", "t")
            .option("partition", 0)
            .option("keepOffsets", "true")
            .save(str(out))
        )
    assert _on_disk(out) == disk and sorted(os.listdir(out)) == ["t-0"]


def test_failed_job_leaves_nothing(spark, source, tmp_path):
    from pyspark.sql import functions as F

    out = tmp_path / "out"
    source.write.format(FORMAT).mode("append").save(str(out))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    # a timestamp Kafka refuses (negative, not -1) in one row makes its task fail
    bad = source.withColumn(
        "timestamp", F.when(F.col("value").isNull(), F.lit(-5).cast("timestamp")).otherwise(F.col("timestamp"))
    )
    with pytest.raises(Exception, match="negative timestamp"):
        bad.write.format(FORMAT).mode("append").save(str(out))
    with pytest.raises(Exception, match="negative timestamp"):
        bad.write.format(FORMAT).mode("overwrite").save(str(out))
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(os.listdir(out)) == ["a-0", "a-1", "b-0", "b-1"]
    fresh = tmp_path / "fresh"
    with pytest.raises(Exception, match="negative timestamp"):
        bad.write.format(FORMAT).mode("append").save(str(fresh))
    assert not fresh.exists() or list(fresh.iterdir()) == []


def test_names_kafka_refuses_fail_the_write_and_underscore_topics_are_read(spark, tmp_path):
    """A topic from the rows becomes a directory only as Kafka allows it; Kafka-valid topics starting
    with '_' are read like any other (issue 22)."""
    out = tmp_path / "deep" / "out"
    bad = spark.createDataFrame([("../../victim", 0, b"v")], "topic string, partition int, value binary")
    with pytest.raises(Exception, match=r"cannot be written: topic '\.\./\.\./victim' has characters Kafka"):
        bad.write.format(FORMAT).mode("overwrite").save(str(out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep"] and not (tmp_path / "victim-0").exists()
    good = spark.createDataFrame([("_schemas", 0, b"s"), ("t", 0, b"t")], "topic string, partition int, value binary")
    good.write.format(FORMAT).mode("append").save(str(out))
    rows = spark.read.format(FORMAT).load(str(out)).select("topic", "partition", "value").collect()
    assert sorted((r.topic, r.partition, bytes(r.value)) for r in rows) == [("_schemas", 0, b"s"), ("t", 0, b"t")]


def test_write_needs_the_right_columns(spark, source, tmp_path):
    with pytest.raises(Exception, match="'value' column"):
        source.select("key", "topic").write.format(FORMAT).mode("append").save(str(tmp_path / "x"))
    with pytest.raises(Exception, match="zstd needs magic 2"):
        source.write.format(FORMAT).mode("append").option("magic", 1).option("compression", "zstd").save(
            str(tmp_path / "x")
        )


def test_read_write_read_keeps_records(spark, samples, tmp_path):
    """A table read from segments, written back keeping offsets, reads the same (data records)."""
    df = spark.read.format(FORMAT).load(str(samples / "orders-0"))
    out = tmp_path / "copy"
    df.write.format(FORMAT).mode("overwrite").option("keepOffsets", "true").option("compression", "snappy").save(
        str(out)
    )
    cols = ["topic", "partition", "offset", "key", "value", "timestamp", "headers"]
    assert sorted(spark.read.format(FORMAT).load(str(out)).select(*cols).collect()) == sorted(
        df.select(*cols).collect()
    )


def test_overwrite_of_the_path_the_job_reads_is_refused(spark, source, tmp_path):
    out = tmp_path / "out"
    source.write.format(FORMAT).mode("append").save(str(out))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    df = spark.read.format(FORMAT).load(str(out))
    # through a symlink too: paths compare resolved
    link = tmp_path / "link"
    link.symlink_to(out)
    for target in (out, link):
        with pytest.raises(Exception, match="overwrite of .* refused: the job reads it"):
            df.write.format(FORMAT).mode("overwrite").save(str(target))
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(os.listdir(out)) == ["a-0", "a-1", "b-0", "b-1"]
    df.write.format(FORMAT).mode("overwrite").save(str(tmp_path / "elsewhere"))  # another path is fine
    assert _on_disk(tmp_path / "elsewhere") == _on_disk(out)
