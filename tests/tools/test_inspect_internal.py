"""``kcodec inspect`` on Kafka's internal topics: a record's key and value read through their registry's
framing (coordinator record type and value version, the metadata frame, KRaft control records), and the
flexible-version wire format annotated field by field: compact lengths, uuids, nullable structs' markers,
and tagged sections down into each tagged field, unknown tags and damaged sections marked where they are."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.generated import codec
from kcodec.records.encode import NewRecord, encode_batch, encode_control_batch
from kcodec.tools.inspect import BAD, OK, WARN, Span, inspect_bytes
from tests.helpers.coordinator_logs import coordinator_segment, streams_member
from tests.helpers.spans import assert_tiles

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "public"


def _entry(data: bytes, registry: str | None = "consumer_offsets") -> Span:
    spans = inspect_bytes(data, registry=registry)
    assert len(spans) == 1
    return spans[0]


def _found(span: Span, path: str) -> Span:
    found = span.find(path)
    assert found is not None, f"no span {path!r}"
    return found


def _one_record(key: bytes, value: bytes | None) -> bytes:
    return encode_batch([NewRecord(key=key, value=value, timestamp=1)])


GROUP_KEY = struct.pack(">h", 3) + codec("consumer_group_metadata_key", 0).build({"group_id": "g"})


def _group_metadata(tagged: list) -> bytes:
    value = codec("consumer_group_metadata_value", 0).build({"epoch": 4, "metadata_hash": 0, "_unknown_tags": tagged})
    return _one_record(GROUP_KEY, b"\x00\x00" + value)


def test_group_records_are_read_down_into_their_tagged_fields(tmp_path: Path) -> None:
    data = coordinator_segment(tmp_path / "copy").read_bytes()
    span = _entry(data)
    assert_tiles(span, 0, len(data))  # every byte in exactly one leaf, framing included
    assert _found(span, "records[0].key.data.record_type").value == 3
    assert _found(span, "records[0].key.data.group_id").value == "g1"
    hash_span = _found(span, "records[0].value.data.metadata_hash")  # tag 0 of the tagged section
    assert hash_span.value == 77 and hash_span.end - hash_span.start == 8
    assert "tag 0: metadata_hash" in _found(span, "records[0].value.data._tagged_fields[0].tag").notes
    classic = "records[1].value.data.classic_member_metadata"
    assert _found(span, f"{classic}.present").value == 1  # a tagged nullable struct has its presence marker
    assert _found(span, f"{classic}.session_timeout_ms").value == 45000
    assert _found(span, f"{classic}.supported_protocols[0].name").value == "range"
    compact = _found(span, "records[1].value.data.rack_id.length")
    assert compact.type == "compact uvarint" and compact.value == 3  # "r1": length + 1
    topic_id = _found(span, "records[2].value.data.assigned_partitions[0].topic_id")
    assert topic_id.value == "AAAAAAAAAAAAAAAAAAAAAQ" and topic_id.end - topic_id.start == 16
    endpoint = _found(span, "records[7].value.data.user_endpoint")
    assert _found(span, "records[7].value.data.user_endpoint.present").value == 1  # a nullable struct's marker
    assert _found(span, "records[7].value.data.user_endpoint.port").value == 8080 and endpoint.status == OK
    assert _found(span, "records[8].value").display == "null"  # the tombstone
    unknown = _found(span, "records[9].key.data.(unread)")
    assert unknown.status == WARN and "unknown record type 99" in unknown.notes[0]
    cut = _found(span, "records[10].value.data.epoch")
    assert cut.status == BAD and "truncated" in cut.notes[0]
    assert _found(span, "records[11].value.data.assignment_epoch").value == 9  # the walk went on
    assert span.status == BAD  # the cut record only


def test_unknown_tags_are_kept_and_misordered_tags_marked() -> None:
    data = _group_metadata([(5, b"\xaa\xbb")])
    span = _entry(data)
    assert_tiles(span, 0, len(data))
    kept = _found(span, "records[0].value.data._tagged_fields[0].data")
    assert kept.raw == b"\xaa\xbb" and kept.status == WARN and "unknown tag 5" in kept.display
    assert span.status == WARN
    # tag 5 then tag 0: the builder refuses that, so the section is written by hand
    section = b"\x02" + b"\x05\x00" + b"\x00\x08" + struct.pack(">q", 1)
    span = _entry(_one_record(GROUP_KEY, b"\x00\x00" + b"\x00\x00\x00\x04" + section))
    order = _found(span, "records[0].value.data._tagged_fields[1].tag")
    assert order.status == BAD and "must ascend" in order.notes[0]
    assert _found(span, "records[0].value.data.metadata_hash").value == 1
    # a payload longer than the bytes left
    span = _entry(_one_record(GROUP_KEY, b"\x00\x00" + b"\x00\x00\x00\x04" + b"\x01\x00\x09" + bytes(8)))
    size = _found(span, "records[0].value.data._tagged_fields[0].size")
    assert size.status == BAD and "truncated" in size.notes[-1]


def test_a_null_struct_behind_its_marker() -> None:
    member = {**streams_member(), "user_endpoint": None}
    key = struct.pack(">h", 19) + codec("streams_group_member_metadata_key", 0).build(
        {"group_id": "g", "member_id": "m"}
    )
    value = b"\x00\x00" + codec("streams_group_member_metadata_value", 0).build(member)
    span = _entry(_one_record(key, value))
    endpoint = _found(span, "records[0].value.data.user_endpoint")
    assert endpoint.display == "null" and _found(span, "records[0].value.data.user_endpoint.present").value == -1


def test_kraft_control_record_values_are_read() -> None:
    leader_change = codec("leader_change_message", 0).build(
        {"version": 0, "leader_id": 2, "voters": [{"voter_id": 2}], "granting_voters": [{"voter_id": 2}]}
    )
    data = encode_control_batch("leader_change", value=leader_change)
    span = _entry(data, registry="cluster_metadata")
    assert span.status == OK
    assert _found(span, "records[0].key.data.type").display == "leader_change (2)"
    assert _found(span, "records[0].value.data.leader_id").value == 2
    assert "read as leader_change_message v0" in _found(span, "records[0].value.data").notes
    assert_tiles(span, 0, len(data))


def test_metadata_records_are_read_through_their_frame() -> None:
    data = (VECTORS / "pub_segment_cluster_metadata_jamestjw.bin").read_bytes()
    spans = inspect_bytes(data, registry="cluster_metadata")
    assert all(s.status == OK for s in spans)
    first = spans[0]
    assert [_found(first, f"records[0].value.data.{f}").value for f in ("frame_version", "api_key", "version")] == [
        1,
        12,
        0,
    ]
    assert _found(first, "records[0].value.data.name").value == "metadata.version"
    assert _found(first, "records[0].value.data.feature_level").value == 20


def test_inspect_command_reads_an_internal_topic(tmp_path: Path, capsys) -> None:
    path = coordinator_segment(tmp_path / "__consumer_offsets-4")
    assert main(["inspect", "--records", str(path)]) == 1  # the cut record is damage
    out = capsys.readouterr().out
    assert "records[0].value.data.metadata_hash <int64> = 77" in out
    assert "[tag 0: classic_member_metadata]" in out
    copy = tmp_path / "elsewhere" / path.name
    copy.parent.mkdir()
    copy.write_bytes(path.read_bytes())
    assert main(["inspect", "--records", str(copy)]) == 0  # not an internal topic's directory: opaque bytes
    assert "metadata_hash" not in capsys.readouterr().out
    assert main(["inspect", "--records", "--offsets-decoder", str(copy)]) == 1
    assert "metadata_hash <int64> = 77" in capsys.readouterr().out
    with pytest.raises(SystemExit) as usage:
        main(["inspect", "--offsets-decoder", "--cluster-metadata-decoder", str(copy)])
    assert usage.value.code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1
