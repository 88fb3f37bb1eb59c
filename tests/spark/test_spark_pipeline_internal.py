"""``kcodec pipeline`` on a source holding Kafka's internal topics beside a regular topic: the latest consumer
offsets and groups and the metadata records as the views give them, and the metadata image as tables equal
to ``kcodec metadata image --json`` of the same directory."""

from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import kcodec
from kcodec.cli import main
from tests.helpers.internal_logs import write_consumer_offsets
from tests.helpers.metadata_logs import write_metadata_dir
from tests.helpers.pipeline_runs import PipelineRuns


def _rows(path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(str(path)).to_pylist()


@pytest.fixture
def source(samples, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(samples / "orders-0", src / "orders-0")
    write_consumer_offsets(src)
    write_metadata_dir(src)
    return src


def test_pipeline_writes_the_internal_tables(spark, source, tmp_path, capsys, monkeypatch):
    runs = PipelineRuns(monkeypatch)
    dest = tmp_path / "tables"
    assert main(["pipeline", str(source), str(dest), "--master", "local[1]", "--no-sizes", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    written = {t["name"]: t for t in summary["internal_tables"]}
    image_names = {"topics", "partitions", "brokers", "controllers", "features", "configs", "client_quotas"}
    image_names |= {"acls", "scram_credentials", "delegation_tokens", "producer_ids", "problems"}
    assert set(written) == {"consumer_offsets", "groups", "metadata_records"} | {
        f"metadata_image/{n}" for n in image_names
    }  # no __transaction_state in the source: no transactions table
    for name, t in written.items():
        assert t["path"] == str(dest / name) and len(_rows(dest / name)) == t["rows"], name

    # the latest committed offsets and groups, as the library's view gives them
    def key(r):
        return (r["group"], r["topic"], r["partition"], r["committedOffset"], r["offset"], r["sourcePartition"])

    want = kcodec.read_internal_view(source, "consumerOffsets", latest=True).to_pylist()
    got = _rows(dest / "consumer_offsets")
    assert sorted(map(key, got)) == sorted(map(key, want)) and len(got) == 3  # g2/orders-0 deleted
    groups = kcodec.read_internal_view(source, "groups", latest=True).to_pylist()
    assert sorted(r["group"] for r in _rows(dest / "groups")) == sorted(r["group"] for r in groups)
    records = kcodec.read_internal_view(source, "metadata").to_pylist()
    assert sorted(r["record"] for r in _rows(dest / "metadata_records")) == sorted(r["record"] for r in records)

    # the image tables are what `kcodec metadata image --json` prints
    assert main(["metadata", "image", str(source / "__cluster_metadata-0"), "--json"]) == 0
    image = json.loads(capsys.readouterr().out)
    topics = {(t["topicId"], t["name"], t["partitions"]) for t in _rows(dest / "metadata_image/topics")}
    assert topics == {(i, t["name"], len(t["partitions"])) for i, t in image["topics"].items()}
    partitions = _rows(dest / "metadata_image/partitions")
    assert len(partitions) == sum(len(t["partitions"]) for t in image["topics"].values()) == 2
    for p in partitions:
        assert {k: p[k] for k in image["topics"][p["topicId"]]["partitions"][str(p["partitionId"])]} == (
            image["topics"][p["topicId"]]["partitions"][str(p["partitionId"])]
        )
    brokers = {b["brokerId"]: b["fenced"] for b in _rows(dest / "metadata_image/brokers")}
    assert brokers == {int(k): b["fenced"] for k, b in image["brokers"].items()}

    # the text summary of the same run (tests/helpers/pipeline_runs.py) names the tables
    runs.replay_next()
    assert main(["pipeline", str(source), str(dest), "--master", "local[1]", "--no-sizes"]) == 0
    out = capsys.readouterr().out
    assert "Kafka's internal topics:" in out
    assert f"{dest / 'metadata_image/topics'}" in out and "2 rows" in out


def test_turning_the_internal_tables_off(spark, source, tmp_path, capsys):
    off = tmp_path / "off"
    assert main(["pipeline", str(source), str(off), "--no-sizes", "--no-internal-tables", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["internal_tables"] == []
    assert not (off / "consumer_offsets").exists() and not (off / "metadata_image").exists()
