"""The metadata image as tables (kcodec.internal_topics.metadata.tables): the rows are the image's JSON, every field of
the image has its column, and replaying a long log holds the image and one batch, not the log."""

from __future__ import annotations

import dataclasses
import tracemalloc
from pathlib import Path

from kcodec.internal_topics.metadata import image as mi
from kcodec.internal_topics.metadata.replay import replay_metadata
from kcodec.internal_topics.metadata.tables import IMAGE_TABLES, image_tables
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


def test_replaying_a_long_log_holds_one_batch_at_a_time(tmp_path: Path) -> None:
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    config = {"resource_type": 2, "resource_name": "orders", "name": "retention.ms"}
    with open(d / "00000000000000000000.log", "wb") as out:
        for b in range(400):  # 40,000 config changes to one key: a long log, a one-config image
            records = [
                NewRecord(value=metadata_value("config_record", config | {"value": str(b * 100 + i)}))
                for i in range(100)
            ]
            out.write(encode_batch(records, base_offset=b * 100))
    size = (d / "00000000000000000000.log").stat().st_size
    replay_metadata(write_metadata_dir(tmp_path / "warm"))  # imports and codec caches, before measuring
    tracemalloc.start()
    try:
        image = replay_metadata(d)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert image.configs == {"TOPIC": {"orders": {"retention.ms": "39999"}}} and image.offset == 39_999
    # the decoded records of the whole log would take tens of times its size (construct containers per
    # field); one batch at a time stays near it (construct's reference cycles wait for the collector)
    assert peak < 2 * size, (peak, size)
