"""Spark's Kafka sink vocabulary on kafka-segments: the topic option and column, the producer's
``kafka.*`` settings, Kafka's default partitioner, and Spark's four save modes."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from kcodec.log.partition import list_partitions
from kcodec.records.reader import read_batches
from tests.helpers.spark_expected import partition_batches

FORMAT = "kafka-segments"


def _records(root):
    return {
        (p.topic, p.partition): [(r.key, r.value) for b, _ in partition_batches(p.path) for r in b.records]
        for p in list_partitions(root)
    }


def test_keyed_rows_land_where_the_java_producer_puts_them(spark, tmp_path):
    oracle = pytest.importorskip("kafka.partitioner.default")
    keys = [f"user-{i}".encode() for i in range(300)]
    df = spark.createDataFrame([(k, b"v" + k) for k in keys], "key binary, value binary").repartition(3)
    out = tmp_path / "keyed"
    df.write.format(FORMAT).option("topic", "t").option("numPartitions", 6).save(str(out))
    got = _records(out)
    assert sum(len(v) for v in got.values()) == 300
    for (topic, partition), recs in got.items():
        assert topic == "t"
        for key, _ in recs:
            assert partition == (oracle.murmur2(key) & 0x7FFFFFFF) % 6
    assert len(got) == 6
    # a second job takes the count from the directories (no numPartitions): the same key, the same partition
    more = spark.createDataFrame([(keys[0], b"again")], "key binary, value binary")
    more.write.format(FORMAT).mode("append").option("topic", "t").save(str(out))
    target = (oracle.murmur2(keys[0]) & 0x7FFFFFFF) % 6
    assert _records(out)[("t", target)][-1] == (keys[0], b"again")


def test_keyless_rows_fill_a_batch_per_partition_in_turn(spark, tmp_path):
    df = spark.createDataFrame([(b"%d" % i,) for i in range(23)], "value binary").coalesce(1)
    out = tmp_path / "keyless"
    df.write.format(FORMAT).option("topic", "t").option("numPartitions", 3).option("recordsPerBatch", 5).save(str(out))
    got = _records(out)
    # one task (index 0) starts at partition 0; every 5 records (one batch) it moves to the next partition
    want: dict = {}
    for i in range(23):
        want.setdefault(("t", (i // 5) % 3), []).append((None, b"%d" % i))
    assert got == want


def test_rows_naming_no_partition_need_a_count(spark, tmp_path):
    df = spark.createDataFrame([(b"k", b"v")], "key binary, value binary")
    with pytest.raises(Exception, match="numPartitions"):
        df.write.format(FORMAT).option("topic", "t").save(str(tmp_path / "none"))
    assert not (tmp_path / "none").exists()


def test_topic_option_overrides_the_column_and_a_missing_topic_fails(spark, tmp_path):
    df = spark.createDataFrame([(b"v", "col")], "value binary, topic string")
    out = tmp_path / "topics"
    df.write.format(FORMAT).option("topic", "opt").option("partition", 0).save(str(out))
    assert sorted(os.listdir(out)) == ["opt-0"]
    with pytest.raises(Exception, match="topic option .* or a 'topic' column"):
        df.select("value").write.format(FORMAT).option("partition", 0).save(str(tmp_path / "no-topic"))


def test_producer_settings_shape_the_batches(spark, tmp_path):
    rows = [(b"k%d" % i, b"x" * (20 + i % 7)) for i in range(200)]
    df = spark.createDataFrame(rows, "key binary, value binary").coalesce(1)
    out = tmp_path / "zstd"
    (
        df.write.format(FORMAT)
        .option("topic", "t")
        .option("partition", 0)
        .option("kafka.compression.type", "zstd")
        .option("kafka.compression.zstd.level", 7)
        .option("kafka.bootstrap.servers", "ignored:9092")  # means nothing for files
        .option("kafka.acks", "all")
        .save(str(out))
    )
    batches = [b for b, _ in partition_batches(out / "t-0")]
    assert {b.compression for b in batches} == {"zstd"}
    assert [(r.key, r.value) for b in batches for r in b.records] == rows

    sized = tmp_path / "sized"
    limit = 512
    (
        df.write.format(FORMAT)
        .option("topic", "t")
        .option("partition", 0)
        .option("kafka.batch.size", limit)
        .option("kafka.linger.ms", 5)
        .save(str(sized))
    )
    raw = b"".join(p.read_bytes() for p in sorted((sized / "t-0").glob("*.log")))
    sizes = [len(e) for _, e in read_batches(raw).entries()]
    assert all(s <= limit for s in sizes) and len(sizes) > 5
    # each batch was closed because the next record would not fit: a batch plus ~40 bytes passes the limit
    assert all(s > limit - 60 for s in sizes[:-1])
    assert [(r.key, r.value) for b, _ in partition_batches(sized / "t-0") for r in b.records] == rows


@pytest.mark.parametrize(
    "name,value,message",
    [
        ("kafka.compresion.type", "gzip", "did you mean kafka.compression.type"),
        ("recordsPerBach", "5", "did you mean recordsPerBatch"),
        ("kafka.key.serializer", "x", "ByteArraySerializer"),
        ("kafka.partitioner.class", "x", "Java partitioner"),
        ("kafka.compression.type", "brotli", "compression.type must be one of"),
    ],
)
def test_bad_write_options_fail_at_save(spark, tmp_path, name, value, message):
    df = spark.createDataFrame([(b"v",)], "value binary")
    with pytest.raises(Exception, match=message):
        df.write.format(FORMAT).option("topic", "t").option("partition", 0).option(name, value).save(
            str(tmp_path / "x")
        )
    assert not (tmp_path / "x").exists()


def test_save_modes_as_spark_file_sources(spark, tmp_path):
    df = spark.createDataFrame([(b"a",), (b"b",)], "value binary").coalesce(1)
    w = lambda: df.write.format(FORMAT).option("topic", "t").option("partition", 0)  # noqa: E731
    out = tmp_path / "modes"
    w().save(str(out))  # ErrorIfExists, Spark's default, on a new path: written
    assert _records(out) == {("t", 0): [(None, b"a"), (None, b"b")]}
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(Exception, match="already exists .*ErrorIfExists"):
        w().save(str(out))
    with pytest.raises(Exception, match="already exists"):
        w().mode("errorifexists").save(str(out))
    w().mode("ignore").save(str(out))  # exists: nothing happens
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    w().save(str(out), mode="append")
    assert len(_records(out)[("t", 0)]) == 4
    w().mode("overwrite").save(str(out))
    assert len(_records(out)[("t", 0)]) == 2
    fresh = tmp_path / "fresh"
    w().mode("ignore").save(str(fresh))  # a new path: written
    assert _records(fresh) == {("t", 0): [(None, b"a"), (None, b"b")]}
