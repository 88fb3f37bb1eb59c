"""The internal topics' views on the kafka-segments source (view=consumerOffsets | groups | transactions |
metadata): the same rows as kcodec.read_internal_view, Spark types as documented, latest=true across
segments and splits, topic-partition filters, onCorrupt on a damaged value, a path without the topic."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import kcodec
from kcodec.internal_topics.views import VIEWS
from tests.helpers.internal_logs import write_consumer_offsets, write_internal_topics

FORMAT = "kafka-segments"


def read(spark, path, **options):
    reader = spark.read.format(FORMAT)
    for k, v in options.items():
        reader = reader.option(k, str(v))
    return reader.load(str(path))


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    return write_internal_topics(tmp_path_factory.mktemp("internal"))


def _rows(df, *names) -> list[tuple]:
    rows = [tuple(r[n] for n in names) for r in df.collect()]
    return sorted(rows, key=lambda row: [(v is not None, v) for v in row])  # nulls first


def test_schemas_are_the_documented_columns(spark, logs) -> None:
    for view, columns in VIEWS.items():
        df = read(spark, logs, view=view)
        assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [(c.name, c.spark) for c in columns]


@pytest.mark.parametrize("view", ["consumerOffsets", "groups", "transactions", "metadata"])
def test_rows_are_the_librarys(spark, logs, view) -> None:
    df = read(spark, logs, view=view, splitBytes=64)  # tiny splits: several per segment where it can
    expected = kcodec.read_internal_view(logs, view)
    got = df.toArrow() if hasattr(df, "toArrow") else None
    names = expected.schema.names
    if got is None:
        pytest.skip("DataFrame.toArrow needs PySpark 4")
    key = ["sourcePartition", "offset"] + (["snapshotEndOffset"] if view == "metadata" else [])

    def ordered(rows):
        return sorted(rows, key=lambda r: tuple(-1 if r[k] is None else r[k] for k in key))

    assert ordered(got.select(names).to_pylist()) == ordered(expected.to_pylist())


def test_consumer_offsets_latest_across_segments(spark, logs) -> None:
    df = read(spark, logs, view="consumerOffsets", latest="true", splitBytes=64)
    assert _rows(df, "group", "topic", "partition", "committedOffset", "offset") == [
        ("g1", "orders", 0, 10, 4),
        ("g1", "orders", 1, 7, 1),
        ("g3", "payments", 2, 42, 0),
    ]
    # every record, and a filter on the topic's partitions
    assert read(spark, logs, view="consumerOffsets").count() == 6
    only = read(spark, logs, view="consumerOffsets", assign='{"__consumer_offsets":[1]}')
    assert _rows(only, "group", "committedOffset") == [("g3", 42)]


def test_groups_members_are_typed(spark, logs) -> None:
    (g1,) = read(spark, logs, view="groups").where("group = 'g1'").collect()
    m1 = g1["members"][0]
    assert m1["subscribedTopics"] == ["orders", "payments"]
    assert [(tp["topic"], tp["partitions"]) for tp in m1["assignedPartitions"]] == [("orders", [0, 1])]
    assert g1["generation"] == 7 and g1["protocolType"] == "consumer" and g1["groupType"] == "classic"


def test_groups_kip848_consumer_groups_across_splits(spark, logs) -> None:
    # tiny splits: the group's member records sit in other splits than its epoch records
    df = read(spark, logs, view="groups", splitBytes=64).where("groupType = 'consumer' AND group = 'cg'")
    rows = sorted(df.collect(), key=lambda r: r["offset"])
    assert [(r["generation"], [m["memberId"] for m in r["members"]]) for r in rows] == [(5, ["c1", "c2"]), (6, ["c1"])]
    latest = read(spark, logs, view="groups", latest="true", splitBytes=64)
    assert _rows(latest, "group", "groupType", "generation") == [
        ("cg", "consumer", 6),
        ("connect-1", "classic", 7),
        ("g1", "classic", 7),
    ]
    ((c1,),) = [r["members"] for r in latest.where("group = 'cg'").collect()]
    assert (c1["memberEpoch"], c1["serverAssignor"]) == (5, "uniform")
    assert [(tp["topic"], tp["partitions"]) for tp in c1["assignedPartitions"]] == [("orders", [0, 1])]


def test_transactions_latest(spark, logs) -> None:
    df = read(spark, logs, view="transactions", latest="true")
    assert _rows(df, "transactionalId", "state", "previousProducerId") == [("tx1", "CompleteCommit", 999)]
    assert _rows(read(spark, logs, view="transactions"), "transactionalId", "state") == [
        ("tx1", "CompleteCommit"),
        ("tx1", "Ongoing"),
        ("tx2", None),
        ("tx2", "Empty"),
    ]


def test_metadata_log_and_snapshot(spark, logs) -> None:
    df = read(spark, logs, view="metadata", includeControlRecords="true")
    rows = _rows(df, "type", "snapshotEndOffset", "isControl")
    assert ("TOPIC_RECORD", 2, False) in rows and ("TOPIC_RECORD", None, False) in rows
    assert ("SNAPSHOT_HEADER", 2, True) in rows and ("LEADER_CHANGE", None, True) in rows
    (remove,) = df.where("type = 'REMOVE_TOPIC_RECORD'").collect()
    assert json.loads(remove["record"]) == {"topicId": "AAAAAAAAAAAAAAAAAAASNA"}
    # the offset options bound the log, not the snapshot
    bounded = read(spark, logs, view="metadata", startingOffset=3)
    assert _rows(bounded, "type", "snapshotEndOffset") == [
        ("FEATURE_LEVEL_RECORD", 2),
        ("REMOVE_TOPIC_RECORD", None),
        ("TOPIC_RECORD", 2),
    ]


def test_on_corrupt_with_a_damaged_value(spark, tmp_path) -> None:
    write_consumer_offsets(tmp_path, damaged=True)
    with pytest.raises(Exception, match=r"offset_commit at offset 7 does not decode \(value\)"):
        read(spark, tmp_path, view="consumerOffsets", latest="true").collect()
    reports = tmp_path / "reports"
    df = read(spark, tmp_path, view="consumerOffsets", latest="true", onCorrupt="skip", corruptReportPath=reports)
    assert _rows(df, "group", "committedOffset") == [("g1", 7), ("g1", 10), ("g3", 42)]
    (report,) = [json.loads(line) for f in reports.iterdir() for line in f.read_text().splitlines()]
    assert report["kind"] == "internal_record" and report["baseOffset"] == 4 and "offset 7" in report["error"]


def test_views_ask_for_their_topic(spark, logs) -> None:
    with pytest.raises(Exception, match=r"view transactions reads __transaction_state, but .* holds no partition"):
        read(spark, logs / "__consumer_offsets-0", view="transactions").collect()
    with pytest.raises(Exception, match="option latest applies to view consumerOffsets, groups or transactions"):
        _ = read(spark, logs, view="metadata", latest="true").schema
    with pytest.raises(Exception, match="option view must be one of records, batches, consumerOffsets"):
        _ = read(spark, logs, view="offsets").schema
    # a segment outside its directory reads with the topic named
    seg = sorted((logs / "__transaction_state-0").glob("*.log"))[0]
    assert read(spark, seg, view="transactions", topic="__transaction_state").count() == 2


@pytest.mark.parametrize("option", ["isolationLevel", "kafka.isolation.level"])
def test_read_committed_drops_aborted_offset_commits(spark, tmp_path, option) -> None:
    from tests.helpers.internal_logs import write_transactional_commits

    write_transactional_commits(tmp_path)
    assert _rows(read(spark, tmp_path, view="consumerOffsets"), "committedOffset") == [(100,), (200,)]
    for latest in ("false", "true"):
        df = read(spark, tmp_path, view="consumerOffsets", latest=latest, **{option: "read_committed"})
        assert _rows(df, "partition", "committedOffset") == [(1, 200)]
