"""Kafka's rules for topic names and partitions hold at the edge, before a name from data becomes a
path; Kafka-valid topics that start with ``_`` or ``.`` are partitions like any other, and only
kcodec's and Spark's own entries are recognised, by exact name (issue 22, class 1)."""

from __future__ import annotations

import json

import pytest

from kcodec.log.commit import COMMIT_RECORD, CommitRecordError, read_record
from kcodec.log.fs import LocalFS
from kcodec.log.names import (
    MAX_PARTITION,
    BadNameError,
    check_partition,
    check_topic,
    is_partition_dir_name,
    partition_dir_name,
)
from kcodec.log.partition import list_partitions
from kcodec.log.writer import SegmentWriter
from kcodec.records.encode import encode_batch


@pytest.mark.parametrize("topic", ["orders", "a.b_c-D9", "_schemas", "__consumer_offsets", ".x", "x" * 249])
def test_kafka_valid_topics_pass(topic):
    assert check_topic(topic) == topic
    assert partition_dir_name(topic, 3) == f"{topic}-3"


@pytest.mark.parametrize(
    "topic", ["", ".", "..", "../x", "../../../victim", "a/b", "a\\b", "x" * 250, "caf\u00e9", "a b", "a\x00b", None, 5]
)
def test_topics_kafka_refuses_are_refused(topic):
    with pytest.raises(BadNameError) as exc:
        partition_dir_name(topic, 0)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("partition", [-1, MAX_PARTITION + 1, 2**31, 2**63, True, 1.0, "0", None])
def test_partitions_out_of_range_are_refused(partition):
    with pytest.raises(BadNameError):
        check_partition(partition)


def test_partition_below_num_partitions():
    assert check_partition(MAX_PARTITION) == MAX_PARTITION
    assert check_partition(5, 6) == 5
    with pytest.raises(BadNameError, match="numPartitions=6"):
        check_partition(6, 6, "orders")


def _segment(directory, values):
    with SegmentWriter(directory, base_offset=0) as w:
        w.append(encode_batch([{"value": v} for v in values], base_offset=0))


def test_underscore_and_dot_topics_are_visible(tmp_path):
    for name in ("_schemas-0", "_confluent-metrics-2", ".hidden-1", "__consumer_offsets-7", "orders-0"):
        _segment(tmp_path / name, [b"v"])
    # kcodec's own entries and Spark's, by exact name; directories being deleted
    for own in ("_kcodec_staging", "_temporary", "_spark_metadata", "orders-1.abc-delete"):
        (tmp_path / own).mkdir()
    (tmp_path / "_SUCCESS").write_bytes(b"")
    found = sorted((p.topic, p.partition) for p in list_partitions(tmp_path))
    assert found == [
        (".hidden", 1),
        ("__consumer_offsets", 7),
        ("_confluent-metrics", 2),
        ("_schemas", 0),
        ("orders", 0),
    ]
    assert not is_partition_dir_name("_kcodec_commit")
    assert is_partition_dir_name("_kcodec_commit-0")  # a Kafka-valid topic, not kcodec's record


@pytest.mark.parametrize("partitions", [["a/b-0"], ["../../victim-0"], [".."]])
def test_a_commit_record_naming_no_partition_is_refused(tmp_path, partitions):
    (tmp_path / COMMIT_RECORD).write_text(json.dumps({"job": "j1", "overwrite": True, "partitions": partitions}))
    with pytest.raises(CommitRecordError, match="no path under"):
        read_record(LocalFS(), str(tmp_path))


def test_a_commit_record_with_a_path_as_job_is_refused(tmp_path):
    (tmp_path / COMMIT_RECORD).write_text(json.dumps({"job": "../x", "overwrite": False, "partitions": ["t-0"]}))
    with pytest.raises(CommitRecordError, match="job id"):
        read_record(LocalFS(), str(tmp_path))
