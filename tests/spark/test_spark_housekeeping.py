"""The housekeeping views (view=producers | partitionTransactions | compaction) over a whole log directory:
the rows are what ``kcodec txn --json --transactions`` and ``kcodec compact --json`` print for the same
directory, one task per partition."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from kcodec.cli import main
from kcodec.spark.housekeeping_columns import HOUSEKEEPING_VIEWS
from tests.helpers.compact_logs import NOW, data, marker, write_partition
from tests.helpers.txn_logs import write_txn_log_dir

FORMAT = "kafka-segments"


def _cli(capsys, *argv) -> list[dict]:
    main([str(a) for a in argv])
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _rows(spark, path, view: str, **options) -> list[dict]:
    reader = spark.read.format(FORMAT).option("view", view)
    for k, v in options.items():
        reader = reader.option(k, str(v))
    df = reader.load(str(path))
    assert df.columns == [c.name for c in HOUSEKEEPING_VIEWS[view]]
    return [r.asDict() for r in df.collect()]


def _only(doc: dict, view: str) -> dict:
    return {c.name: doc.get(c.name) for c in HOUSEKEEPING_VIEWS[view]}


def _key(row: dict) -> tuple:
    return tuple(str(v) for v in row.values())


def test_housekeeping_views_equal_the_commands_json(spark, tmp_path, capsys):
    logs = write_txn_log_dir(tmp_path / "logs")  # orders-0, events-0, __transaction_state-0
    write_partition(  # a compacted topic: superseded, null-key, aborted and a tombstone
        logs / "users-0",
        [
            [data(0, [(b"a", b"1"), (b"b", None), (None, b"n")])],
            [data(3, [(b"a", b"2")], pid=7, epoch=0, seq=0, txn=True), marker("abort", 4, 7)],
            [data(5, [(b"a", b"3"), (b"c", b"1")])],
            [data(7, [(b"z", b"1")])],  # the active segment
        ],
    )

    txn = _cli(capsys, "txn", logs, "--json", "--transactions")
    parts = {(d["topic"], d["partition"]): d for d in txn if d["kind"] == "partition"}
    assert set(parts) == {("orders", 0), ("events", 0), ("users", 0)}
    where = {tp: {"topic": tp[0], "partition": tp[1]} for tp in parts}

    expected = [_only({**where[tp], **p}, "producers") for tp, d in parts.items() for p in d["producers"]]
    got = _rows(spark, logs, "producers")
    assert sorted(map(_key, got)) == sorted(map(_key, expected)) and len(got) == 9

    lso = {tp: {"lastStableOffset": d["lastStableOffset"]} for tp, d in parts.items()}
    by_name = {f"{t}-{p}": (t, p) for t, p in parts}
    expected = [
        _only({**where[tp], **t, **lso[tp]}, "partitionTransactions")
        for t in txn
        if t["kind"] == "transaction"
        for tp in [by_name[t["topicPartition"]]]
    ] + [
        _only({**where[tp], **t, "outcome": "open", "empty": False, **lso[tp]}, "partitionTransactions")
        for tp, d in parts.items()
        for t in d["open"]
    ]
    got = _rows(spark, logs, "partitionTransactions")
    assert sorted(map(_key, got)) == sorted(map(_key, expected))
    outcomes = sorted((r["topic"], r["outcome"], r["empty"]) for r in got)
    assert outcomes.count(("orders", "open", False)) == 4 and ("orders", "commit", True) in outcomes
    assert ("users", "abort", False) in outcomes

    compact = _cli(capsys, "compact", logs, "--json", "--now", NOW, "--delete-retention-ms", 1000)
    expected = [_only(d, "compaction") for d in compact]
    got = _rows(spark, logs, "compaction", cleanerTime=NOW, **{"delete.retention.ms": 1000})
    assert sorted(got, key=_key) == sorted(expected, key=_key)
    users = next(r for r in got if r["topic"] == "users")
    assert users["removed"] == {"superseded": 1, "null_key": 1, "aborted": 1, "tombstone": 0, "marker": 0}
    assert users["wouldClean"] is True and users["bytesAfter"] < users["bytesBefore"]
    assert {(r["topic"], r["partition"]) for r in got} == {*parts, ("__transaction_state", 0)}

    with pytest.raises(Exception, match="option delete.retention.ms applies to view compaction, not producers"):
        _rows(spark, logs, "producers", **{"delete.retention.ms": 1})
