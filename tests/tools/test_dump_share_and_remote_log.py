"""``kcodec dump --share-group-state-decoder`` and ``--remote-log-metadata-decoder``: segments of
``__share_group_state`` and ``__remote_log_metadata`` written here with kcodec's encoders dump to the lines
Kafka's DumpLogSegments prints (coordinator key/payload JSON; the Java toString of RemoteLogMetadataSerde's
objects), per-record errors included, by option and by the partition directory's name; ``--json`` types them."""

from __future__ import annotations

import json
import struct
import uuid
from pathlib import Path

from kcodec.cli import main
from kcodec.commands.completion import describe
from kcodec.generated import codec
from kcodec.records.encode import NewRecord, encode_batch
from kcodec.runtime.varint import encode_uvarint

TS = 1700000000000
TOPIC_ID = uuid.UUID(int=5)  # Kafka's text: AAAAAAAAAAAAAAAAAAAABQ
SEGMENT_ID = uuid.UUID(int=7)  # AAAAAAAAAAAAAAAAAAAABw


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _segment(directory: Path, records: list[NewRecord]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "00000000000000000000.log"
    path.write_bytes(encode_batch(records))
    return path


def _record_tails(out: str) -> list[str]:
    return [line.split("headerKeys: [] ", 1)[1] for line in out.splitlines() if line.startswith("| offset:")]


# __share_group_state ------------------------------------------------------------------------------------


def _coordinator(rtype: int, entity: str, value: dict) -> bytes:
    return struct.pack(">h", rtype) + codec(entity, 0).build(value)


def _share_segment(directory: Path) -> Path:
    key = {"group_id": "sg", "topic_id": TOPIC_ID, "partition": 2}
    batch = {"first_offset": 0, "last_offset": 9, "delivery_state": 2, "delivery_count": 1}
    snapshot = {
        "snapshot_epoch": 3,
        "state_epoch": 1,
        "leader_epoch": 4,
        "start_offset": 0,
        "create_timestamp": TS,
        "write_timestamp": TS + 5,
        "state_batches": [batch],
    }
    update = {"snapshot_epoch": 3, "leader_epoch": 4, "start_offset": -1, "state_batches": [batch]}
    counted = dict(update, delivery_complete_count=10)  # Kafka 4.2's tagged field, printed only when set
    return _segment(
        directory,
        [
            NewRecord(
                key=_coordinator(0, "share_snapshot_key", key),
                value=_coordinator(0, "share_snapshot_value", snapshot),
                timestamp=TS,
            ),
            NewRecord(
                key=_coordinator(1, "share_update_key", key),
                value=_coordinator(0, "share_update_value", update),
                timestamp=TS,
            ),
            NewRecord(
                key=_coordinator(1, "share_update_key", key),
                value=_coordinator(0, "share_update_value", counted),
                timestamp=TS,
            ),
            NewRecord(key=_coordinator(0, "share_snapshot_key", key), value=None, timestamp=TS),
            NewRecord(key=struct.pack(">h", 7) + b"\x00\x01x", value=b"\x00\x00", timestamp=TS),
            # a snapshot value cut short inside its state batches
            NewRecord(
                key=_coordinator(0, "share_snapshot_key", key),
                value=_coordinator(0, "share_snapshot_value", snapshot)[:-10],
                timestamp=TS,
            ),
        ],
    )


_SHARE_KEY = '{"groupId":"sg","topicId":"AAAAAAAAAAAAAAAAAAAABQ","partition":2}'
_BATCH = '{"firstOffset":0,"lastOffset":9,"deliveryState":2,"deliveryCount":1}'
SHARE_EXPECTED = [
    f'key: {{"type":"0","data":{_SHARE_KEY}}} payload: {{"version":"0","data":{{"snapshotEpoch":3,"stateEpoch":1,'
    f'"leaderEpoch":4,"startOffset":0,"createTimestamp":1700000000000,"writeTimestamp":1700000000005,'
    f'"stateBatches":[{_BATCH}]}}}}',
    f'key: {{"type":"1","data":{_SHARE_KEY}}} payload: {{"version":"0","data":{{"snapshotEpoch":3,"leaderEpoch":4,'
    f'"startOffset":-1,"stateBatches":[{_BATCH}]}}}}',
    f'key: {{"type":"1","data":{_SHARE_KEY}}} payload: {{"version":"0","data":{{"snapshotEpoch":3,"leaderEpoch":4,'
    f'"startOffset":-1,"deliveryCompleteCount":10,"stateBatches":[{_BATCH}]}}}}',
    f'key: {{"type":"0","data":{_SHARE_KEY}}} payload: <DELETE>',
    "key: Unknown record type 7 at offset 4, skipping.",
]


def test_share_group_state_decoder_prints_kafkas_lines(tmp_path: Path, capsys) -> None:
    path = _share_segment(tmp_path / "copy")
    code, out, err = run(capsys, "dump", "--share-group-state-decoder", str(path))
    assert code == 0, err
    tails = _record_tails(out)
    assert tails[:5] == SHARE_EXPECTED
    # the damaged value is reported for its record, with the byte position and field, and the dump went on
    assert tails[5].startswith("key: Error at offset 5, skipping. ")
    assert "(at byte 39, field state_batches)" in tails[5]  # 2 (version) + 36 fixed + 1 (count): the batch


def test_a_share_group_state_directory_is_decoded_by_default(tmp_path: Path, capsys) -> None:
    path = _share_segment(tmp_path / "__share_group_state-3")
    code, out, _ = run(capsys, "dump", "--print-data-log", str(path))
    assert code == 0 and _record_tails(out)[:5] == SHARE_EXPECTED


def test_share_group_state_json_is_typed(tmp_path: Path, capsys) -> None:
    path = _share_segment(tmp_path / "copy")
    code, out, _ = run(capsys, "dump", "--share-group-state-decoder", "--json", str(path))
    assert code == 0
    records = json.loads(out.splitlines()[0])["records"]
    assert records[0]["recordName"] == "share_snapshot"
    assert records[0]["key"]["data"]["topicId"] == "AAAAAAAAAAAAAAAAAAAABQ"
    assert records[1]["value"] == {
        "version": 0,
        "data": {"snapshotEpoch": 3, "leaderEpoch": 4, "startOffset": -1, "stateBatches": [json.loads(_BATCH)]},
    }
    assert records[3]["value"] is None
    assert "unknown record type 7" in records[4]["decodeError"]
    assert "at byte 39, field state_batches" in records[5]["decodeError"]


# __remote_log_metadata ----------------------------------------------------------------------------------


def _framed(api_key: int, entity: str, value: dict, version: int = 0) -> bytes:
    return encode_uvarint(1) + encode_uvarint(api_key) + encode_uvarint(version) + codec(entity, 0).build(value)


_TIP = {"name": "orders", "id": TOPIC_ID, "partition": 3}
_SID = {"topic_id_partition": _TIP, "id": SEGMENT_ID}
_SEGMENT = {
    "remote_log_segment_id": _SID,
    "start_offset": 0,
    "end_offset": 99,
    "broker_id": 1,
    "max_timestamp_ms": TS,
    "event_timestamp_ms": TS + 1,
    "segment_leader_epochs": [{"leader_epoch": 5, "offset": 50}, {"leader_epoch": 0, "offset": 0}],
    "segment_size_in_bytes": 4096,
    "custom_metadata": None,
    "remote_log_segment_state": 0,
}


def _remote_segment(directory: Path) -> Path:
    update = {
        "remote_log_segment_id": _SID,
        "broker_id": 1,
        "event_timestamp_ms": TS + 2,
        "custom_metadata": b"abc",
        "remote_log_segment_state": 1,
    }
    delete = {
        "topic_id_partition": _TIP,
        "broker_id": 0,
        "event_timestamp_ms": TS + 3,
        "remote_partition_delete_state": 0,
    }
    snapshot = {k: v for k, v in _SEGMENT.items() if k != "remote_log_segment_id"}
    snapshot.update(segment_id=SEGMENT_ID, remote_log_segment_state=3, custom_metadata=b"")
    values = [
        _framed(0, "remote_segment_metadata", _SEGMENT),
        _framed(1, "remote_segment_update", update),
        _framed(2, "remote_partition_delete", delete),
        _framed(3, "remote_segment_snapshot", snapshot),
        _framed(0, "remote_segment_metadata", dict(_SEGMENT, segment_leader_epochs=[])),
        _framed(0, "remote_segment_metadata", dict(_SEGMENT, end_offset=-5)),
        _framed(2, "remote_partition_delete", dict(delete, remote_partition_delete_state=9)),
        encode_uvarint(1) + encode_uvarint(9) + encode_uvarint(0),  # an api key Kafka does not define
        _framed(0, "remote_segment_metadata", _SEGMENT)[:3] + b"\x00\x02",  # remote_log_segment_id cut
        encode_uvarint(1) + encode_uvarint(0) + encode_uvarint(4),  # a version Kafka does not define
        encode_uvarint(0) + encode_uvarint(0) + encode_uvarint(0),  # frame version 0 (KRaft's 2.8 preview)
    ]
    return _segment(directory, [NewRecord(key=None, value=v, timestamp=TS) for v in values])


_SEGMENT_ID_TEXT = "RemoteLogSegmentId{topicIdPartition=AAAAAAAAAAAAAAAAAAAABQ:orders-3, id=AAAAAAAAAAAAAAAAAAAABw}"
REMOTE_EXPECTED = [
    f"payload: RemoteLogSegmentMetadata{{remoteLogSegmentId={_SEGMENT_ID_TEXT}, startOffset=0, endOffset=99, "
    "brokerId=1, maxTimestampMs=1700000000000, eventTimestampMs=1700000000001, segmentLeaderEpochs={0=0, 5=50}, "
    "segmentSizeInBytes=4096, customMetadata=Optional.empty, state=COPY_SEGMENT_STARTED}",
    f"payload: RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={_SEGMENT_ID_TEXT}, "
    "customMetadata=Optional[CustomMetadata{3 bytes}], state=COPY_SEGMENT_FINISHED, eventTimestampMs=1700000000002, "
    "brokerId=1}",
    "payload: RemotePartitionDeleteMetadata{topicPartition=AAAAAAAAAAAAAAAAAAAABQ:orders-3, "
    "state=DELETE_PARTITION_MARKED, eventTimestampMs=1700000000003, brokerId=0}",
    "payload: RemoteLogSegmentMetadataSnapshot{segmentId=AAAAAAAAAAAAAAAAAAAABw, startOffset=0, endOffset=99, "
    "maxTimestampMs=1700000000000, segmentLeaderEpochs={0=0, 5=50}, segmentSizeInBytes=4096, "
    "customMetadata=Optional[CustomMetadata{0 bytes}], state=DELETE_SEGMENT_FINISHED}",
    "payload: Error at offset 4, skipping. segmentLeaderEpochs can not be null or empty",
    "payload: Error at offset 5, skipping. Unexpected end offset = -5. EndOffset for a remote segment cannot be "
    "less than startOffset = 0",
    "payload: Error at offset 6, skipping. null",
    "payload: Error at offset 7, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: "
    "Unknown metadata id 9",
    "payload: Error at offset 8, skipping. Failed to deserialize record with type 0",
    "payload: Error at offset 9, skipping. Failed to deserialize record with type 0",
    "payload: Error at offset 10, skipping. Could not deserialize metadata record with frame version 0. Note that "
    "upgrades from the preview release of KRaft in 2.8 to newer versions are not supported.",
]


def test_remote_log_metadata_decoder_prints_kafkas_lines(tmp_path: Path, capsys) -> None:
    path = _remote_segment(tmp_path / "copy")
    code, out, err = run(capsys, "dump", "--remote-log-metadata-decoder", str(path))
    assert code == 0, err
    assert _record_tails(out) == REMOTE_EXPECTED


def test_a_remote_log_metadata_directory_is_decoded_by_default(tmp_path: Path, capsys) -> None:
    path = _remote_segment(tmp_path / "__remote_log_metadata-49")
    code, out, _ = run(capsys, "dump", "--print-data-log", str(path))
    assert code == 0 and _record_tails(out) == REMOTE_EXPECTED


def test_remote_log_metadata_json_is_typed_with_positions(tmp_path: Path, capsys) -> None:
    path = _remote_segment(tmp_path / "copy")
    code, out, _ = run(capsys, "dump", "--remote-log-metadata-decoder", "--json", str(path))
    assert code == 0
    records = json.loads(out.splitlines()[0])["records"]
    first = records[0]
    assert first["recordName"] == "remote_log_segment_metadata_record" and first["key"] is None
    assert first["value"]["data"]["remoteLogSegmentId"] == {
        "topicIdPartition": {"name": "orders", "id": "AAAAAAAAAAAAAAAAAAAABQ", "partition": 3},
        "id": "AAAAAAAAAAAAAAAAAAAABw",
    }
    assert first["value"]["data"]["customMetadata"] is None
    assert records[1]["value"]["data"]["customMetadata"] == "YWJj"  # bytes as base64, as Kafka's JSON
    assert "unknown record type 9" in records[7]["decodeError"]
    damaged = records[8]["decodeError"]
    assert "field remote_log_segment_id.topic_id_partition.name" in damaged and "at byte 4" in damaged


def test_new_decoders_exclude_each_other_and_complete(tmp_path: Path, capsys) -> None:
    path = _remote_segment(tmp_path / "copy")
    code, _, err = run(capsys, "dump", "--remote-log-metadata-decoder", "--share-group-state-decoder", str(path))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--remote-log-metadata-decoder" in err
    from kcodec.cli import build_parser

    _, commands = describe(build_parser())
    dump = next(c for c in commands if c.name == "dump")
    names = {n for o in dump.options for n in o.names}
    assert {"--share-group-state-decoder", "--remote-log-metadata-decoder"} <= names
    code, out, _ = run(capsys, "completion", "bash")
    assert code == 0 and "--remote-log-metadata-decoder" in out and "--share-group-state-decoder" in out
