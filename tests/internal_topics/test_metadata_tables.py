"""The metadata image as tables (kcodec.internal_topics.metadata.tables): the rows are the image's JSON, every field of
the image has its column, and replaying a long log holds the image and one batch, not the log."""

from __future__ import annotations

import dataclasses
import tracemalloc
from pathlib import Path

from kcodec.internal_topics.metadata import image as mi
from kcodec.internal_topics.metadata.replay import replay_metadata
from kcodec.internal_topics.metadata.tables import IMAGE_TABLES, image_tables
from kcodec.records import decode
from kcodec.records.encode import NewRecord, encode_batch
from kcodec.runtime.uuids import uuid_to_text
from tests.helpers.metadata_logs import ORDERS, metadata_value, write_metadata_dir

# table -> the image dataclass whose fields its rows carry (the others are flattened maps)
ROW_CLASSES = {
    "partitions": mi.PartitionImage,
    "brokers": mi.BrokerImage,
    "controllers": mi.ControllerImage,
    "acls": mi.AclEntry,
    "scram_credentials": mi.ScramCredential,
    "delegation_tokens": mi.DelegationToken,
    "producer_ids": mi.ProducerIdsBlock,
    "problems": mi.ImageProblem,
}


def test_every_field_of_the_image_has_a_column() -> None:
    for name, cls in ROW_CLASSES.items():
        columns = set(IMAGE_TABLES[name][1].names)
        fields = {mi.camel(f.name) for f in dataclasses.fields(cls)}
        assert fields <= columns, (name, fields - columns)


def test_tables_hold_the_image_of_the_synthetic_log(tmp_path: Path) -> None:
    image = replay_metadata(write_metadata_dir(tmp_path)).as_dict()
    tables = {n: t.to_pylist() for n, t in image_tables(image).items()}
    assert set(tables) == set(IMAGE_TABLES)
    assert sorted((t["name"], t["partitions"]) for t in tables["topics"]) == [("committed", 0), ("orders", 2)]
    orders = sorted((p for p in tables["partitions"] if p["topic"] == "orders"), key=lambda p: p["partitionId"])
    assert [(p["leader"], p["isr"], p["replicas"], p["leaderEpoch"]) for p in orders] == [
        (2, [2], [1, 2], 1),
        (2, [2, 1], [2, 1], 0),
    ]
    want = image["topics"][orders[0]["topicId"]]["partitions"]["0"]
    assert {k: orders[0][k] for k in want} == want
    assert {(b["brokerId"], b["fenced"]) for b in tables["brokers"]} == {(1, True), (2, False)}
    assert tables["brokers"][0]["endpoints"][0]["host"].startswith("b")
    assert tables["brokers"][0]["features"] == [{"name": "metadata.version", "minSupported": 1, "maxSupported": 20}]
    assert [c["controllerId"] for c in tables["controllers"]] == [3000]
    assert tables["features"] == [{"name": "metadata.version", "level": 20}]
    assert tables["configs"] == []  # retention.ms was set, then removed
    assert tables["client_quotas"] == [{"entity": "user=alice", "key": "producer_byte_rate", "value": 1024.0}]
    assert tables["producer_ids"] == [{"brokerId": 2, "brokerEpoch": 11, "nextProducerId": 5000}]
    assert [p["record"] for p in tables["problems"]] == ["begin_transaction_record"]  # the open transaction
    assert orders[0]["topicId"] == uuid_to_text(ORDERS)  # Kafka's base64 ids, as the JSON


def _config_log(root: Path, batches: int) -> Path:
    """``batches`` batches of 100 changes to one config key: a long log, a one-config image."""
    d = root / "__cluster_metadata-0"
    d.mkdir(parents=True)
    config = {"resource_type": 2, "resource_name": "orders", "name": "retention.ms"}
    with open(d / "00000000000000000000.log", "wb") as out:
        for b in range(batches):
            records = [
                NewRecord(value=metadata_value("config_record", config | {"value": str(b * 100 + i)}))
                for i in range(100)
            ]
            out.write(encode_batch(records, base_offset=b * 100))
    return d


def test_replaying_a_long_log_holds_one_batch_at_a_time(tmp_path: Path, monkeypatch) -> None:
    # the reader decodes v2 batches in runs of about V2_RUN_BYTES (1 MiB), each held until it is read: a run
    # of 8 KiB (two of these batches) lets logs of a few hundred kB tell a bounded replay from one that keeps
    # what it read
    monkeypatch.setattr(decode, "V2_RUN_BYTES", 8 << 10)
    replay_metadata(write_metadata_dir(tmp_path / "warm"))  # imports and codec caches, before measuring
    sizes, peaks = [], []
    for batches in (20, 80):  # 2,000 and 8,000 config changes
        d = _config_log(tmp_path / str(batches), batches)
        sizes.append((d / "00000000000000000000.log").stat().st_size)
        tracemalloc.start()
        try:
            image = replay_metadata(d)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        last = batches * 100 - 1
        assert image.configs == {"TOPIC": {"orders": {"retention.ms": str(last)}}} and image.offset == last
        peaks.append(peak)
    # one batch at a time the peak grows by about the log's own bytes (1.0-1.1 measured; construct's
    # reference cycles wait for the collector); every batch's records kept, it grew 7 times as fast
    growth = (peaks[1] - peaks[0]) / (sizes[1] - sizes[0])
    assert growth < 2, (peaks, sizes)
