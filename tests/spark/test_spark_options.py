"""Spark's Kafka source options on the kafka-segments reader: the same names
with the same meaning, so that ``format("kafka")`` becomes
``format("kafka-segments")`` plus a path; unknown names fail at load(); and
the data source is found with no register call."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from kcodec.log.partition import list_partitions
from kcodec.spark.options import OptionError
from tests.helpers.spark_expected import COLUMNS, expected_rows, partition_batches, sort_key, spark_rows

from .conftest import REPO

FORMAT = "kafka-segments"


def reader(spark, **options):
    r = spark.read.format(FORMAT)
    for k, v in options.items():
        r = r.option(k, v if isinstance(v, str) else json.dumps(v) if isinstance(v, dict) else str(v))
    return r


def read(spark, path, **options):
    return reader(spark, **options).load(str(path))


def offsets(df) -> list[int]:
    return sorted(r.offset for r in df.select("offset").collect())


def every_partition(samples, value) -> dict:
    """Spark's per-partition JSON naming every partition of samples/data with ``value``."""
    out: dict = {}
    for part in list_partitions(samples):
        out.setdefault(part.topic, {})[str(part.partition)] = value
    return out


# ----------------------------------------------------------------------------- names


def test_misspelled_option_fails_at_load_naming_the_closest(spark, samples):
    for name, closest in (
        ("startingOfsets", "startingOffsets"),
        ("kafka.isolation.levle", "kafka.isolation.level"),
        ("includeHeader", "includeHeaders"),
        ("verifyCRCs", "verifyCrc"),
    ):
        with pytest.raises(OptionError, match=f"unknown option .*did you mean {closest}") as info:
            reader(spark, **{name: "1"}).load(str(samples))  # load() alone: no action runs
        # checked in the driver (kcodec.spark.loadcheck): kcodec's one line, not a worker's traceback
        assert "\n" not in str(info.value) and "Traceback" not in str(info.value)
    with pytest.raises(Exception, match="unknown option 'frobnicate'"):
        reader(spark, frobnicate="1").load(str(samples))


def test_spark_connection_options_are_accepted_and_consumer_only_ones_refused(spark, samples):
    part = samples / "orders-1"
    df = read(
        spark,
        part,
        **{
            "kafka.bootstrap.servers": "127.0.0.1:9092",
            "kafka.security.protocol": "SSL",
            "maxOffsetsPerTrigger": 10,  # streaming only: ignored by a batch read, as in Spark
            "groupIdPrefix": "x",
        },
    )
    assert df.count() == 500
    with pytest.raises(Exception, match="kafka.auto.offset.reset is not supported .*startingOffsets"):
        read(spark, part, **{"kafka.auto.offset.reset": "earliest"})


# ----------------------------------------------------------------------------- isolation, headers


def test_kafka_isolation_level(spark, samples):
    part = samples / "orders-0"
    assert read(spark, part).count() == 600
    assert read(spark, part, **{"kafka.isolation.level": "read_uncommitted"}).count() == 600
    assert read(spark, part, **{"kafka.isolation.level": "read_committed"}).count() == 580
    assert read(spark, part, isolationLevel="read_committed").count() == 580
    both = {"kafka.isolation.level": "read_committed", "isolationLevel": "read_committed"}
    assert read(spark, part, **both).count() == 580
    with pytest.raises(Exception, match="disagree"):
        read(spark, part, **{"kafka.isolation.level": "read_committed", "isolationLevel": "read_uncommitted"})
    with pytest.raises(Exception, match="kafka.isolation.level must be one of"):
        read(spark, part, **{"kafka.isolation.level": "serializable"})


def test_include_headers_given_gives_sparks_kafka_schema(spark, samples):
    """Spark's Kafka source has 7 columns, 8 with includeHeaders=true; a job moved from it to kafka-segments
    that names includeHeaders gets exactly those, in that order. Not given: kcodec's batch columns too."""
    spark_kafka = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
    df = read(spark, samples, includeHeaders="false")
    assert [f.name for f in df.schema.fields] == spark_kafka
    assert [f.simpleString() for f in df.schema.fields][4:] == [
        "offset:bigint",
        "timestamp:timestamp",
        "timestampType:int",
    ]
    assert [f.name for f in read(spark, samples, includeHeaders="true").schema.fields] == [*spark_kafka, "headers"]
    assert [f.name for f in read(spark, samples).schema.fields] == list(COLUMNS)
    want = sorted(expected_rows(samples), key=sort_key)
    got = sorted(df.collect(), key=lambda r: (r.topic, r.partition, r.offset))
    assert [(bytes(r.value), r.topic, r.partition, r.offset) for r in got] == [(w[1], w[2], w[3], w[4]) for w in want]
    with pytest.raises(Exception, match="includeHeaders=false"):
        reader(spark, includeHeaders="false").schema(
            "value binary, headers array<struct<key:string,value:binary>>"
        ).load(str(samples)).collect()


# ----------------------------------------------------------------------------- which partitions


def test_subscribe_pattern_and_assign_filter_the_partitions_found(spark, samples):
    def keys(df):
        return sorted({(r.topic, r.partition) for r in df.select("topic", "partition").collect()})

    assert keys(read(spark, samples, subscribe="orders")) == [("orders", 0), ("orders", 1)]
    assert keys(read(spark, samples, subscribe=" clicks , legacy,nosuch")) == [("clicks", 0), ("legacy", 0)]
    assert keys(read(spark, samples, subscribePattern="o.*")) == [("orders", 0), ("orders", 1)]
    assert keys(read(spark, samples, subscribePattern="rders")) == []  # the whole name matches, as in Java
    assert keys(read(spark, samples, assign={"orders": [1], "legacy": [0]})) == [("legacy", 0), ("orders", 1)]
    assert read(spark, samples, subscribe="nosuch").count() == 0
    want = [r for r in expected_rows(samples) if r[2] == "orders" and r[3] == 1]
    assert sorted(spark_rows(read(spark, samples, assign={"orders": [1]})), key=sort_key) == sorted(want, key=sort_key)
    with pytest.raises(Exception, match="only one of subscribe, subscribePattern, assign"):
        read(spark, samples, subscribe="orders", assign={"orders": [1]})
    with pytest.raises(Exception, match="assign names orders-7, not found"):
        read(spark, samples, assign={"orders": [7]}).collect()
    with pytest.raises(Exception, match="option assign must be JSON"):
        read(spark, samples, assign="orders-1")


# ----------------------------------------------------------------------------- offsets


def test_starting_and_ending_offsets(spark, samples):
    orders1 = samples / "orders-1"  # three segments, bases 0, 200, 400; offsets 0..499
    got = offsets(read(spark, orders1, startingOffsets={"orders": {"1": 230}}, endingOffsets={"orders": {"1": 431}}))
    assert got == list(range(230, 431))
    assert offsets(read(spark, orders1, startingOffsets="earliest", endingOffsets="latest")) == list(range(500))
    assert offsets(read(spark, orders1, startingOffsets={"orders": {"1": -2}}, endingOffsets={"orders": {"1": 7}})) == (
        list(range(7))
    )
    assert offsets(
        read(spark, orders1, startingOffsets={"orders": {"1": 480}}, endingOffsets={"orders": {"1": -1}})
    ) == (list(range(480, 500)))
    # across partitions: every partition read is named, -2 / -1 for the ones that are not bounded
    start = every_partition(samples, -2)
    start["orders"]["1"] = 450
    end = every_partition(samples, -1)
    end["orders"]["0"] = 5
    df = read(spark, samples, subscribe="orders", startingOffsets={"orders": start["orders"]})
    assert df.where("partition = 1").count() == 50 and df.where("partition = 0").count() == 600
    df = read(spark, samples, startingOffsets=start, endingOffsets=end)
    assert offsets(df.where("topic = 'orders' and partition = 1")) == list(range(450, 500))
    assert offsets(df.where("topic = 'orders' and partition = 0")) == list(range(5))
    assert df.where("topic = 'clicks'").count() == read(spark, samples / "clicks-0").count()


def test_offsets_refused_as_spark_refuses_them(spark, samples):
    orders1 = samples / "orders-1"
    for options, message in (
        ({"endingOffsets": "earliest"}, "endingOffsets can't be earliest for batch queries"),
        ({"endingOffsets": {"orders": {"1": -2}}}, "endingOffsets for orders-1 can't be earliest"),
        ({"startingOffsets": "{not json"}, "startingOffsets must be JSON"),
        (
            {"startingOffsets": {"orders": {"1": 9}}, "endingOffsets": {"orders": {"1": 3}}},
            "starting offset 9 of orders-1 is past its ending offset 3",
        ),
        (
            {"startingOffsets": {"orders": {"1": 9}}, "endingOffsets": {"orders": {"0": 30}}},
            "name different partitions",
        ),
    ):
        with pytest.raises(Exception, match=message):
            read(spark, orders1, **options)
    # a start at latest is a stream's (load() cannot tell a stream from a batch): refused when the batch runs
    for start, message in (
        ("latest", "startingOffsets can't be latest for batch queries"),
        ({"orders": {"1": -1}}, "startingOffsets for orders-1 can't be latest"),
    ):
        with pytest.raises(Exception, match=message):
            read(spark, orders1, startingOffsets=start).collect()
    # specific offsets must name every partition read (Spark's rule), which a path alone makes all of them
    with pytest.raises(Exception, match="startingOffsets must name every partition read"):
        read(spark, samples, startingOffsets={"orders": {"1": 10}}).collect()


def test_fail_on_data_loss(spark, samples, tmp_path):
    orders1 = samples / "orders-1"
    with pytest.raises(Exception, match="DataLossError.*startingOffsets 600 of orders-1 is past its latest offset 500"):
        read(spark, orders1, startingOffsets={"orders": {"1": 600}}).collect()
    assert read(spark, orders1, startingOffsets={"orders": {"1": 600}}, failOnDataLoss="false").count() == 0
    with pytest.raises(Exception, match="endingOffsets 900 of orders-1 is past its latest offset 500"):
        read(spark, orders1, endingOffsets={"orders": {"1": 900}}).collect()
    assert offsets(read(spark, orders1, endingOffsets={"orders": {"1": 900}}, failOnDataLoss="false")) == list(
        range(500)
    )
    # retention deleted the first segment: offsets 0..199 are gone
    part = shutil.copytree(orders1, tmp_path / "orders-1")
    for f in part.glob("00000000000000000000.*"):
        f.unlink()
    with pytest.raises(Exception, match="startingOffsets 100 of orders-1 is before its earliest offset 200"):
        read(spark, part, startingOffsets={"orders": {"1": 100}}).collect()
    assert offsets(read(spark, part, startingOffsets={"orders": {"1": 100}}, failOnDataLoss="false")) == list(
        range(200, 500)
    )


# ----------------------------------------------------------------------------- timestamps


def _list_offsets(path, timestamp: int) -> int | None:
    """Kafka's ListOffsets for ``timestamp``, with the plain reader: the first record at or after it."""
    batches = [b for b, _ in partition_batches(path) if not b.is_control]
    first = next((b for b in batches if b.max_timestamp >= timestamp), None)
    if first is None:
        return None
    return next(r.offset for r in first.records if r.timestamp >= timestamp)


def _stamps(path) -> list[int]:
    return sorted(r.timestamp for b, _ in partition_batches(path) if not b.is_control for r in b.records)


def test_timestamps(spark, samples):
    orders1 = samples / "orders-1"
    stamps = _stamps(orders1)
    t1, t2 = stamps[len(stamps) // 4] + 1, stamps[3 * len(stamps) // 4] + 1
    a, b = _list_offsets(orders1, t1), _list_offsets(orders1, t2)
    assert 0 < a < b < 500
    assert offsets(read(spark, orders1, startingTimestamp=t1)) == list(range(a, 500))
    assert offsets(read(spark, orders1, startingTimestamp=t1, endingTimestamp=t2)) == list(range(a, b))
    by_ts = read(
        spark,
        orders1,
        startingOffsetsByTimestamp={"orders": {"1": t1}},
        endingOffsetsByTimestamp={"orders": {"1": t2}},
    )
    assert offsets(by_ts) == list(range(a, b))
    # an ending timestamp past every record: the latest offset, as in Spark
    assert offsets(read(spark, orders1, endingTimestamp=4_000_000_000_000)) == list(range(500))
    # Spark's preference: startingTimestamp over startingOffsetsByTimestamp over startingOffsets
    both = read(spark, orders1, startingTimestamp=t2, startingOffsets={"orders": {"1": 3}})
    assert offsets(both) == list(range(b, 500))
    # no record at or after the starting timestamp: an error, or nothing with the strategy 'latest'
    with pytest.raises(Exception, match="no record of orders-1 has a timestamp at or after 4000000000000"):
        read(spark, orders1, startingTimestamp=4_000_000_000_000).collect()
    late = read(spark, orders1, startingTimestamp=4_000_000_000_000, startingOffsetsByTimestampStrategy="latest")
    assert late.count() == 0
    with pytest.raises(Exception, match="startingOffsetsByTimestampStrategy must be one of error, latest"):
        read(spark, orders1, startingOffsetsByTimestampStrategy="earliest")
    with pytest.raises(Exception, match="startingOffsetsByTimestamp must name every partition read"):
        read(spark, samples, startingOffsetsByTimestamp={"orders": {"1": t1}}).collect()


# ----------------------------------------------------------------------------- partitions of the job


def test_max_records_per_partition(spark, samples):
    from kcodec.spark.options import ReadOptions
    from kcodec.spark.planning import discover, plan

    path = str(samples / "orders-1")
    assert len(plan(discover(path), ReadOptions(path))) == 3  # one per segment
    splits = plan(discover(path), ReadOptions.from_options({"path": path, "maxRecordsPerPartition": "50"}))
    assert len(splits) == 10
    assert all(s.end_offset - s.start_offset <= 50 for s in splits)
    df = read(spark, samples, maxRecordsPerPartition=50)
    assert df.rdd.getNumPartitions() >= 10
    assert sorted(spark_rows(df), key=sort_key) == sorted(expected_rows(samples), key=sort_key)
    start = read(spark, path, maxRecordsPerPartition=64, startingOffsets={"orders": {"1": 130}})
    assert offsets(start) == list(range(130, 500))
    with pytest.raises(Exception, match="maxRecordsPerPartition must be >= 1"):
        read(spark, path, maxRecordsPerPartition=0)
    with pytest.raises(Exception, match="minPartitions must be >= 1"):
        read(spark, path, minPartitions=0)


# ----------------------------------------------------------------------------- registration


def test_format_found_in_a_fresh_session_without_register(tmp_path):
    """A plain PySpark script in this environment (the README's install: ``make setup``, an editable
    install) reads and writes ``format("kafka-segments")`` with no kcodec import: PySpark's lookup finds
    ``pyspark_kafka_segments`` (src/spark_plugin is a path entry of the editable install), and the
    kcodec-spark.pth start-up hook gives the driver Spark's default save mode and one-line option errors."""
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java")
    out = tmp_path / "copy"
    script = textwrap.dedent(
        f"""
        import sys
        from pyspark.sql import SparkSession
        spark = (
            SparkSession.builder.master("local[1]").appName("no-register")
            .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
            .config("spark.ui.enabled", "false").getOrCreate()
        )
        df = spark.read.format("kafka-segments").load({str(REPO / "samples" / "data" / "orders-1")!r})
        print("ROWS", df.count())
        rows = df.select("key", "value").write.format("kafka-segments").option("topic", "copy").option("partition", 0)
        rows.save({str(out)!r})  # Spark's default mode, errorifexists, on a new path
        try:
            rows.save({str(out)!r})
        except Exception as exc:
            print("AGAIN", type(exc).__name__, str(exc).splitlines()[0])
        try:
            spark.read.format("kafka-segments").option("verifyCRCs", "true").load({str(out)!r})
        except Exception as exc:
            print("OPTION", type(exc).__name__, len(str(exc).splitlines()))
        print("IMPORTED", "kcodec" in sys.modules)
        spark.stop()
        """
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KCODEC_SPARK_HOOKS")}
    env.update(PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ROWS 500" in proc.stdout
    assert "AGAIN PathExistsError" in proc.stdout and "already exists (save mode ErrorIfExists" in proc.stdout
    assert "OPTION OptionError 1" in proc.stdout
    assert "IMPORTED True" in proc.stdout  # by the hooks, once PySpark's modules were imported
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["copy-0"]
