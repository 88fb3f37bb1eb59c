"""kcodec.read_internal_view: the internal topics' views as typed Arrow tables, over logs written with kcodec's
own encoders (tests/helpers/internal_logs.py): columns and types, latest=true as compaction keeps a partition across
segments, metadata from a .checkpoint snapshot and the log, onCorrupt on a damaged value, a path holding no
partition of the view's topic."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

pytest.importorskip("pyarrow")

import pyarrow as pa

import kcodec
from kcodec.errors import DecodeError
from kcodec.internal_topics.tables import NoInternalTopicError
from kcodec.internal_topics.views import VIEWS, ViewRows
from tests.helpers.internal_logs import T0, TOPIC_ID, write_consumer_offsets, write_internal_topics


def _ts(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    return write_internal_topics(tmp_path_factory.mktemp("logs"))


def test_every_view_has_the_documented_arrow_types(logs) -> None:
    for view, columns in VIEWS.items():
        table = kcodec.read_internal_view(logs, view)
        assert table.schema.names == [c.name for c in columns]
        assert [f.type for f in table.schema] == [c.arrow for c in columns]
    offsets = kcodec.read_internal_view(logs, "consumerOffsets").schema
    assert offsets.field("commitTimestamp").type == pa.timestamp("us", tz="UTC")
    assert offsets.field("committedOffset").type == pa.int64() and offsets.field("partition").type == pa.int32()


def test_consumer_offsets_every_record(logs) -> None:
    rows = kcodec.read_internal_view(logs, "consumerOffsets").to_pylist()
    got = [(r["sourcePartition"], r["offset"], r["group"], r["partition"], r["committedOffset"]) for r in rows]
    # the group metadata record (offset 3) and the record of an unknown type (offset 6) are not offsets
    assert got == [
        (0, 0, "g1", 0, 5),
        (0, 1, "g1", 1, 7),
        (0, 2, "g2", 0, 3),
        (0, 4, "g1", 0, 10),
        (0, 5, "g2", 0, None),
        (1, 0, "g3", 2, 42),
    ]
    first, v1, no_epoch, recommit, tombstone = rows[:5]
    assert (first["leaderEpoch"], first["metadata"], first["version"], first["isTombstone"]) == (4, "m", 3, False)
    assert first["commitTimestamp"] == _ts(T0) and first["expireTimestamp"] is None
    assert first["timestamp"] == _ts(T0) and first["topic"] == "orders"
    assert v1["version"] == 1 and v1["leaderEpoch"] is None and v1["expireTimestamp"] == _ts(T0 + 1000)
    assert no_epoch["leaderEpoch"] is None and recommit["version"] == 4
    assert tombstone["isTombstone"] and tombstone["version"] is None and tombstone["metadata"] is None


def test_latest_keeps_the_last_value_per_key_across_segments(logs) -> None:
    p0 = logs / "__consumer_offsets-0"
    assert len([f for f in p0.iterdir() if f.suffix == ".log"]) == 2  # the re-commit and tombstone are in segment 2
    rows = kcodec.read_internal_view(logs, "consumerOffsets", latest=True).to_pylist()
    got = sorted((r["group"], r["topic"], r["partition"], r["committedOffset"], r["offset"]) for r in rows)
    # g1/orders-0 re-committed (10 at offset 4 replaces 5), g2/orders-0 deleted by its tombstone
    assert got == [("g1", "orders", 0, 10, 4), ("g1", "orders", 1, 7, 1), ("g3", "payments", 2, 42, 0)]
    assert not any(r["isTombstone"] for r in rows)
    # a partition directory alone reads that partition
    alone = kcodec.read_internal_view(p0, "consumerOffsets", latest=True)
    assert sorted(alone.column("group").to_pylist()) == ["g1", "g1"]


def test_groups_decode_the_nested_consumer_protocol(logs) -> None:
    rows = {r["group"]: r for r in kcodec.read_internal_view(logs, "groups").to_pylist()}
    g1 = rows["g1"]
    assert (g1["protocolType"], g1["generation"], g1["protocol"], g1["leader"]) == ("consumer", 7, "range", "m1")
    assert g1["stateTimestamp"] == _ts(T0 + 5) and g1["version"] == 3 and g1["offset"] == 3
    m1, m2 = g1["members"]
    assert (m1["memberId"], m1["clientId"], m1["clientHost"]) == ("m1", "client-m1", "/127.0.0.1")
    assert (m1["rebalanceTimeoutMs"], m1["sessionTimeoutMs"], m1["groupInstanceId"]) == (300000, 45000, None)
    assert m1["subscribedTopics"] == ["orders", "payments"]
    assert m1["ownedPartitions"] == [{"topic": "orders", "topicId": None, "partitions": [0]}]
    assert m1["assignedPartitions"] == [{"topic": "orders", "topicId": None, "partitions": [0, 1]}]
    assert m1["assignmentUserData"] == b"ud" and m1["subscription"] is None and m1["assignment"] is None
    # a subscription that is not the consumer protocol keeps its bytes; the assignment still decodes
    assert m2["subscribedTopics"] is None and m2["subscription"] == b"\x00"
    assert m2["assignedPartitions"] == [{"topic": "orders", "topicId": None, "partitions": [0, 1]}]
    # a connect group's members are not decoded as the consumer protocol
    (w1,) = rows["connect-1"]["members"]
    assert w1["subscribedTopics"] is None and w1["subscription"] == b"\x00\x01raw"
    assert g1["groupType"] == "classic" and g1["members"][0]["memberEpoch"] is None


def _orders(*partitions: int) -> list[dict]:
    return [{"topic": "orders", "topicId": str(TOPIC_ID), "partitions": list(partitions)}]


def test_groups_hold_kip848_consumer_groups_with_their_members(logs) -> None:
    rows = [r for r in kcodec.read_internal_view(logs, "groups").to_pylist() if r["groupType"] == "consumer"]
    got = [(r["offset"], r["group"], r["generation"], r["isTombstone"]) for r in rows]
    assert got == [(5, "cg", 5, False), (11, "cg", 6, False), (12, "cg-gone", 1, False), (13, "cg-gone", None, True)]
    epoch5, epoch6 = rows[0], rows[1]
    assert (epoch5["protocolType"], epoch5["protocol"], epoch5["leader"], epoch5["version"]) == (
        "consumer",
        None,
        None,
        0,
    )
    # at its epoch record the members' metadata is read, their assignments (written after it) not yet
    c1, c2 = epoch5["members"]
    assert (c1["memberId"], c1["clientId"], c1["rackId"], c1["serverAssignor"]) == (
        "c1",
        "client-c1",
        "rack-a",
        "uniform",
    )
    assert (c1["subscribedTopics"], c1["rebalanceTimeoutMs"], c1["sessionTimeoutMs"]) == (["orders"], 300000, None)
    assert c1["assignedPartitions"] is None and c1["memberEpoch"] is None and c2["memberId"] == "c2"
    # at epoch 6 c2 has left (its tombstones) and c1's assignment is read, topic named by the type 4 record
    (c1,) = epoch6["members"]
    assert (c1["memberEpoch"], c1["assignedPartitions"], c1["partitionsPendingRevocation"]) == (5, _orders(0, 1), [])
    assert rows[3]["members"] is None


def test_groups_latest_keeps_each_groups_last_state(logs) -> None:
    rows = {r["group"]: r for r in kcodec.read_internal_view(logs, "groups", latest=True).to_pylist()}
    assert sorted(rows) == ["cg", "connect-1", "g1"]  # cg-gone deleted by its tombstone
    cg = rows["cg"]
    assert (cg["groupType"], cg["generation"], cg["offset"]) == ("consumer", 6, 11)
    assert [(m["memberId"], m["memberEpoch"], m["assignedPartitions"]) for m in cg["members"]] == [
        ("c1", 5, _orders(0, 1))
    ]


def test_consumer_group_members_follow_their_records() -> None:
    from kcodec.records.model import Record, TimestampType
    from tests.helpers.internal_logs import consumer_group_records, member_key

    rows = ViewRows("groups", latest=True)
    records = consumer_group_records("cg", 3, {"a": [0], "b": [1]}, pending=[2])
    records.append({"key": member_key(8, "cg", "a"), "value": None})  # a's assignment alone is deleted
    for offset, r in enumerate(records):
        rows.add(Record(offset, T0, TimestampType.CREATE_TIME, r["key"], r["value"]), partition=0)
    (row,) = rows.take()
    a, b = row["members"]
    assert a["clientId"] == "client-a" and a.get("assignedPartitions") is None
    # no partition metadata record in this read: the topic is known by its id only
    pending = [{"topic": None, "topicId": str(TOPIC_ID), "partitions": [2]}]
    assert (b["memberEpoch"], b["partitionsPendingRevocation"]) == (3, pending)


def test_transactions_states_and_latest(logs) -> None:
    rows = kcodec.read_internal_view(logs, "transactions").to_pylist()
    assert [(r["transactionalId"], r["state"], r["isTombstone"]) for r in rows] == [
        ("tx1", "Ongoing", False),
        ("tx2", "Empty", False),
        ("tx1", "CompleteCommit", False),
        ("tx2", None, True),
    ]
    ongoing = rows[0]
    assert ongoing["version"] == 0 and ongoing["previousProducerId"] is None
    assert ongoing["clientTransactionVersion"] == 0  # tagged in v1 only: v0 reads the default
    assert ongoing["partitions"] == [{"topic": "orders", "partitions": [0, 1]}]
    assert (ongoing["producerId"], ongoing["producerEpoch"], ongoing["timeoutMs"]) == (1000, 2, 60000)
    assert ongoing["startTimestamp"] == _ts(T0) and ongoing["lastUpdateTimestamp"] == _ts(T0 + 10)
    (last,) = kcodec.read_internal_view(logs, "transactions", latest=True).to_pylist()
    assert (last["transactionalId"], last["state"], last["previousProducerId"]) == ("tx1", "CompleteCommit", 999)
    assert last["partitions"] is None and last["clientTransactionVersion"] == 2


def test_metadata_from_the_snapshot_then_the_log(logs) -> None:
    rows = kcodec.read_internal_view(logs, "metadata").to_pylist()
    got = [(r["snapshotEndOffset"], r["offset"], r["type"], r["typeId"], r["version"]) for r in rows]
    assert got == [
        (2, 1, "FEATURE_LEVEL_RECORD", 12, 0),
        (2, 2, "TOPIC_RECORD", 2, 0),
        (None, 0, "TOPIC_RECORD", 2, 0),
        (None, 1, "PARTITION_RECORD", 3, 0),
        (None, 3, "REMOVE_TOPIC_RECORD", 9, 0),
    ]
    assert rows[0]["snapshotEpoch"] == 1 and rows[0]["segment"].endswith("00000000000000000002-0000000001.checkpoint")
    assert json.loads(rows[1]["record"]) == {"name": "orders", "topicId": "AAAAAAAAAAAAAAAAAAASNA"}
    assert json.loads(rows[3]["record"])["replicas"] == [1]
    with_control = kcodec.read_internal_view(logs, "metadata", include_control=True).to_pylist()
    control = [(r["type"], r["isControl"]) for r in with_control if r["isControl"]]
    assert control == [("SNAPSHOT_HEADER", True), ("SNAPSHOT_FOOTER", True), ("LEADER_CHANGE", True)]


def test_a_damaged_value_fails_or_is_skipped_and_reported(tmp_path) -> None:
    write_consumer_offsets(tmp_path, damaged=True)
    with pytest.raises(DecodeError) as caught:
        kcodec.read_internal_view(tmp_path, "consumerOffsets")
    err = caught.value
    assert err.kind == "internal_record" and err.field == "value" and err.base_offset == 4
    assert "offset 7" in str(err) and "__consumer_offsets-0" in str(err)
    skipped: list[dict] = []
    table = kcodec.read_internal_view(tmp_path, "consumerOffsets", on_corrupt="skip", on_skip=skipped.append)
    assert table.num_rows == 6 and "g9" not in table.column("group").to_pylist()
    assert [(s["offset"], s["kind"]) for s in skipped] == [(7, "internal_record")]
    # the other view of the same topic does not read offset commits: nothing to skip
    assert kcodec.read_internal_view(tmp_path, "groups").num_rows == 6  # 2 classic, 4 consumer-group records


def test_a_path_without_the_views_topic_says_so(logs, tmp_path) -> None:
    with pytest.raises(NoInternalTopicError, match=r"reads __transaction_state, but .* holds no partition of it"):
        kcodec.read_internal_view(logs / "__consumer_offsets-0", "transactions")
    with pytest.raises(ValueError, match="unknown view"):
        kcodec.read_internal_view(logs, "offsets")
    with pytest.raises(ValueError, match="latest"):
        kcodec.read_internal_view(logs, "metadata", latest=True)
    with pytest.raises(FileNotFoundError):
        kcodec.read_internal_view(tmp_path / "missing", "groups")


def test_rows_of_a_record_stream() -> None:
    """ViewRows alone: latest forgets a key at its tombstone and brings it back at a later value."""
    from kcodec.records.model import Record, TimestampType
    from tests.helpers.internal_logs import offset_key, offset_value

    rows = ViewRows("consumerOffsets", latest=True)
    k = offset_key("g", "t", 0)
    for offset, value in enumerate([offset_value(3, 1), None, offset_value(3, 2)]):
        rows.add(Record(offset, T0, TimestampType.CREATE_TIME, k, value), partition=0)
    (row,) = rows.take()
    assert (row["committedOffset"], row["offset"]) == (2, 2)


def test_the_docs_list_every_views_columns() -> None:
    from tests.helpers.docs import page

    doc = page("internal-topics.md")
    for view, columns in VIEWS.items():
        section = doc.split(f"`view={view}` (", 1)[1].split("\n\n", 2)[1]  # the table after the heading
        documented = [line.split("|")[1:3] for line in section.splitlines()[2:]]
        assert [name.strip(" `") for name, _ in documented] == [c.name for c in columns], view
        for (_, spark_type), c in zip(documented, columns):
            assert spark_type.strip() in (f"`{c.spark}`", "`array<struct<...>>` (below)"), (view, c.name)


def test_read_committed_drops_an_aborted_transactions_offset_commits(tmp_path) -> None:
    from tests.helpers.internal_logs import write_transactional_commits

    p = write_transactional_commits(tmp_path)
    assert [f.stat().st_size > 0 for f in p.glob("*.txnindex")] == [True]  # the abort's entry
    every = kcodec.read_internal_view(tmp_path, "consumerOffsets")
    assert sorted(every.column("committedOffset").to_pylist()) == [100, 200]
    committed = kcodec.read_internal_view(tmp_path, "consumerOffsets", isolation_level="read_committed", latest=True)
    assert [(r["partition"], r["committedOffset"]) for r in committed.to_pylist()] == [(1, 200)]
