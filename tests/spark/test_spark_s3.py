"""kafka-segments on S3 (moto's server on 127.0.0.1): partition directories read
through ``s3a://`` with the endpoint and credentials as options, a partition
directory written there, and a Kafka tiered-storage layout read back."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from kcodec.log.fs import storage_options
from kcodec.spark.planning import discover
from tests.helpers.s3server import kafka_uuid, start_server, tiered_name
from tests.helpers.spark_expected import expected_rows, sort_key, spark_rows

FORMAT = "kafka-segments"
COLS = ["topic", "partition", "offset", "key", "value", "timestamp", "headers"]


@pytest.fixture(scope="module")
def s3():
    server, s3 = start_server()
    try:
        yield s3
    finally:
        server.stop()


def _without_segment(rows):
    return sorted((r[:18] for r in rows), key=lambda r: (r[2] or "", r[3], r[4]))


def test_read_and_write_partition_directories_on_s3(spark, samples, s3):
    bucket = s3.bucket("kcodec-spark")
    for part in sorted(p for p in samples.iterdir() if p.is_dir()):
        s3.upload(part, f"{bucket}/logs/{part.name}")
    df = spark.read.format(FORMAT).options(**s3.options()).load(f"s3a://{bucket}/logs")
    got = spark_rows(df)
    assert all(r[18].startswith(f"s3a://{bucket}/logs/") for r in got)  # the segment column: the object's URI
    assert _without_segment(got) == _without_segment(expected_rows(samples))

    out = f"s3a://{bucket}/copy"
    df.write.format(FORMAT).mode("append").options(**s3.options()).option("keepOffsets", "true").save(out)
    back = spark.read.format(FORMAT).options(**s3.options()).load(out)
    assert sorted(back.select(*COLS).collect()) == sorted(df.select(*COLS).collect())
    names = {i.path.rsplit("/", 1)[-1] for i in s3.fs().get_file_info(_selector(f"{bucket}/copy"))}
    assert names == {"orders-0", "orders-1", "clicks-0", "legacy-0"}


def _selector(path):
    from pyarrow import fs as pafs

    return pafs.FileSelector(path, recursive=False)


def test_tiered_storage_layout_on_s3(spark, samples, s3, capsys):
    bucket = s3.bucket("kcodec-tiered")
    topic_dir = f"{bucket}/tiered/orders-0-{kafka_uuid()}"
    stale_id = kafka_uuid()
    first = sorted((samples / "orders-0").glob("*.log"))[0]
    # an earlier, torn upload of the first segment, then the whole partition: the newest copy wins
    with s3.fs().open_output_stream(f"{topic_dir}/{tiered_name(first.name, stale_id)}") as out:
        out.write(first.read_bytes()[:100])
    _upload_newer(s3, samples / "orders-0", topic_dir, f"{topic_dir}/{tiered_name(first.name, stale_id)}")
    df = spark.read.format(FORMAT).options(**s3.options()).load(f"s3a://{bucket}/tiered")
    want = sorted(expected_rows(samples / "orders-0" / ".."), key=sort_key)
    want = [r for r in want if (r[2], r[3]) == ("orders", 0)]
    got = df.select(*COLS).collect()
    assert len(got) == len(want)
    assert sorted((r["offset"], r["key"], r["value"]) for r in got) == [
        (r[4], r[0], r[1]) for r in sorted(want, key=lambda r: r[4])
    ]
    assert {(r["topic"], r["partition"]) for r in got} == {("orders", 0)}
    # the planner (which runs in a Spark worker process, its stderr not ours) reports the older copy
    parts = discover(f"s3a://{bucket}/tiered", storage=storage_options(s3.options()))
    assert [(p.topic, p.partition, p.skipped) for p in parts] == [("orders", 0, [tiered_name(first.name, stale_id)])]
    assert f"skipped s3a://{topic_dir}/{tiered_name(first.name, stale_id)}: an older tiered-storage copy" in (
        capsys.readouterr().err
    )


def _upload_newer(s3, local, key, older):
    """Upload ``local``'s segments in the tiered layout under ``key`` with modification
    times after ``older``'s (S3 keeps whole seconds: re-upload until it is later)."""
    fs = s3.fs()
    ids: dict[str, str] = {}
    older_mtime = fs.get_file_info(older).mtime
    for _ in range(50):  # bounded: a few seconds at most
        s3.upload(local, key, lambda n: tiered_name(n, ids.setdefault(n.split(".", 1)[0], kafka_uuid())))
        log = tiered_name(sorted(local.glob("*.log"))[0].name, ids[sorted(local.glob("*.log"))[0].stem])
        if fs.get_file_info(f"{key}/{log}").mtime > older_mtime:
            return
        time.sleep(0.2)
    raise AssertionError("the S3 server never gave a later modification time")
