"""Structured Streaming into a Delta table (``kcodec.spark.lakehouse.stream``): the samples streamed in two
availableNow runs (the second after new segments arrive, from a fresh checkpoint reading every offset) hold
kcodec's records exactly once, read back by delta-rs and DuckDB; a batch id committed again, and the first
checkpoint resumed over offsets the table holds, commit nothing; a second stream into DEST fails in one
line."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("deltalake")
pytest.importorskip("duckdb")

from kcodec.cli import main
from kcodec.log.lock import OutputLockedError
from kcodec.spark.lakehouse.run import run_lock
from kcodec.spark.lakehouse.state import OFFSETS_KEY, STREAM_KEY
from kcodec.spark.lakehouse.stream import foreach_batch_committer, stream_to_table
from tests.helpers.lakehouse import delta_rows, duckdb_rows, split_copy
from tests.helpers.spark_expected import expected_rows


def test_stream_into_delta_exactly_once(spark, samples, tmp_path, capsys):
    from deltalake import DeltaTable

    src, dest, checkpoint = tmp_path / "src", tmp_path / "dest", tmp_path / "checkpoint"
    add_the_rest = split_copy(samples, src)
    first = stream_to_table(src, dest, table_format="delta", checkpoint=checkpoint, spark=spark, timeout=300)
    assert [r.committed for r in first] == [True]
    assert first[0].rows == len(expected_rows(src))

    # new segments, and a second stream with a checkpoint of its own: it reads every offset from the
    # earliest, and commits only those the table does not hold
    add_the_rest()
    fresh = tmp_path / "fresh"
    second = stream_to_table(src, dest, table_format="delta", checkpoint=fresh, spark=spark, timeout=300)
    want = sorted(expected_rows(src), key=lambda r: (r[2], r[3], r[4]))
    assert [r.committed for r in second] == [True] and second[0].rows == len(want) - first[0].rows
    assert {tp: r["from"] for tp, r in second[0].as_dict()["read"].items()} == first[0].as_dict()["next_offsets"]
    table = DeltaTable(str(dest / "records"))
    assert delta_rows(dest) == want
    assert duckdb_rows([u.removeprefix("file://") for u in table.file_uris()], hive=True) == want

    # the commit stores the batch id and the next offsets; the same batch id again commits nothing
    last = table.history()[0]
    batch = json.loads(last[STREAM_KEY])["batch"]
    assert json.loads(last[OFFSETS_KEY]) == {
        t: {str(p): max(r[4] for r in want if (r[2], r[3]) == (t, p)) + 1 for p in {r[3] for r in want if r[2] == t}}
        for t in {r[2] for r in want}
    }
    version = table.version()
    committer = foreach_batch_committer(dest, table_format="delta", checkpoint=fresh)
    replay = committer(spark.read.format("kafka-segments").load(str(src)), batch)
    assert not replay.committed
    assert DeltaTable(str(dest / "records")).version() == version and delta_rows(dest) == want

    # the command's form, resuming the first checkpoint: its micro-batch reads the new segments, which the
    # table already holds, so it commits nothing
    assert main(["pipeline", str(src), str(dest), "--table-format", "delta", "--stream", str(checkpoint)]) == 0
    assert "nothing new since the last commit: committed nothing" in capsys.readouterr().out
    assert DeltaTable(str(dest / "records")).version() == version and delta_rows(dest) == want

    # two streams into one DEST: the second fails at once, one line naming the first
    held = run_lock(str(dest)).acquire()
    try:
        with pytest.raises(OutputLockedError, match=r"is locked: another writer \(process \d+\)") as err:
            stream_to_table(src, dest, table_format="delta", checkpoint=tmp_path / "other", spark=spark)
        assert "\n" not in str(err.value)
    finally:
        held.release()
