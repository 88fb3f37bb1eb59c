"""The broker's validation of a producer's request (kcodec.records.log_validator), scenario by scenario
after Kafka's LogValidatorTest (storage/src/test/java/.../log/LogValidatorTest.java at 1eb7644): each
test names the LogValidatorTest case it ports, with the outcome Kafka's test asserts, in kcodec's words.
The requests are built by kcodec's encoder (and patched where a scenario needs a broken batch)."""

from __future__ import annotations

import struct

import pytest

from kcodec.records.broker_releases import broker_release
from kcodec.records.encode import encode_batch
from kcodec.records.framing import V2_CRC_OFFSET, V2_CRC_START, V2_RECORDS_COUNT_OFFSET, V2_RECORDS_OFFSET
from kcodec.records.log_validator import RequestRefused, split_requests, topic_config, validate_request
from kcodec.records.model import TimestampType
from kcodec.records.reader import read_batches
from kcodec.runtime.crc import crc32c

NOW = 1_700_000_000_000
LEO = 1234  # the log end offset every request is appended at


def records(n: int = 3, *, ts: int = NOW, key: bool = True) -> list[dict]:
    return [{"key": b"k%d" % i if key else None, "value": b"value-%d" % i, "timestamp": ts + i} for i in range(n)]


def validate(request: bytes, kafka: str = "4.0", *config: str, now: int = NOW, leo: int = LEO, epoch: int = 7):
    release = broker_release(kafka)
    return validate_request(
        request, log_end_offset=leo, release=release, config=topic_config(release, config), now=now, leader_epoch=epoch
    )


def refused(request: bytes, kafka: str = "4.0", *config: str, now: int = NOW):
    with pytest.raises(RequestRefused) as caught:
        validate(request, kafka, *config, now=now)
    return caught.value.refusal


def stored_offsets(result) -> list[int]:
    return [r.offset for b in read_batches(result.stored, strict=True) for r in b.records]


def patch_v2(raw: bytes, *, count: int | None = None, last_offset_delta: int | None = None) -> bytes:
    """A v2 batch with its count / lastOffsetDelta overwritten and its CRC made to hold again."""
    out = bytearray(raw)
    if count is not None:
        struct.pack_into(">i", out, V2_RECORDS_COUNT_OFFSET, count)
    if last_offset_delta is not None:
        struct.pack_into(">i", out, 23, last_offset_delta)  # lastOffsetDelta: after attributes (21..22)
    struct.pack_into(">I", out, V2_CRC_OFFSET, crc32c(bytes(out[V2_CRC_START:])))
    return bytes(out)


# ---- offset assignment ------------------------------------------------------------------------------


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_absolute_offset_assignment_v0(compression):
    """testAbsoluteOffsetAssignmentNonCompressed / Compressed: magic 0 gets offsets LEO.. (a compressed
    v0 set is always rebuilt: its inner offsets are absolute)."""
    result = validate(
        encode_batch(records(), magic=0, compression=compression, allow_lossy=True),
        "0.10",
        "message.format.version=0.8.2",
    )
    assert stored_offsets(result) == [LEO, LEO + 1, LEO + 2]
    assert result.in_place is (compression == "none")


@pytest.mark.parametrize("magic", [1, 2])
@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_relative_offset_assignment(magic, compression):
    """testRelativeOffsetAssignment{NonCompressed,Compressed}V{1,2}: in place, offsets from LEO, and a
    compressed payload byte-identical to the producer's."""
    request = encode_batch(records(), magic=magic, compression=compression)
    result = validate(request, "3.9", f"message.format.version={'0.10.2' if magic == 1 else '3.0'}")
    assert result.in_place
    assert stored_offsets(result) == [LEO, LEO + 1, LEO + 2]
    assert (result.first_offset, result.last_offset) == (LEO, LEO + 2)
    if magic == 2:
        assert result.stored[V2_RECORDS_OFFSET:] == request[V2_RECORDS_OFFSET:]
        batch = result.batches[0]
        assert batch.partition_leader_epoch == 7 and batch.max_timestamp == NOW + 2
    if magic == 1 and compression != "none":
        # only the wrapper's offset changed (to the last offset): CRC, timestamp and compressed value are the producer's
        assert result.stored[8:] == request[8:]
        assert result.batches[0].base_offset == LEO and result.batches[0].last_offset == LEO + 2


def test_non_sequential_inner_offsets_are_rebuilt():
    """testValidationOfBatchesWithNonSequentialInnerOffsets: an older client's v1 set with inner offsets
    0, 2, 4 is rebuilt (not refused), with offsets LEO..LEO+2."""
    recs = [dict(r, offset=o) for r, o in zip(records(), (0, 2, 4))]
    request = encode_batch(recs, magic=1, compression="gzip", base_offset=0)
    result = validate(request, "2.8", "message.format.version=0.10.2")
    assert not result.in_place
    assert stored_offsets(result) == [LEO, LEO + 1, LEO + 2]
    assert any("not 0..n-1" in why for why in result.explain)


@pytest.mark.parametrize(
    ("source", "target", "kafka", "compression"),
    [
        (0, 1, "0.10", "none"),  # testOffsetAssignmentAfterUpConversionV0ToV1NonCompressed
        (0, 1, "0.10", "gzip"),  # ...V0ToV1Compressed
        (0, 2, "2.8", "none"),  # ...V0ToV2NonCompressed
        (0, 2, "2.8", "gzip"),  # ...V0ToV2Compressed
        (1, 2, "2.8", "none"),  # ...V1ToV2NonCompressed
        (1, 2, "2.8", "gzip"),  # ...V1ToV2Compressed
        (1, 0, "0.10", "none"),  # testOffsetAssignmentAfterDownConversionV1ToV0NonCompressed
        (1, 0, "0.10", "gzip"),  # ...V1ToV0Compressed
        (2, 1, "2.8", "none"),  # ...V2ToV1NonCompressed
        (2, 1, "2.8", "gzip"),  # ...V2ToV1Compressed
        (2, 0, "2.8", "none"),  # ...V2ToV0NonCompressed
        (2, 0, "2.8", "gzip"),  # ...V2ToV0Compressed
    ],
)
def test_offset_assignment_after_conversion(source, target, kafka, compression):
    """Up- and down-conversion: the records rebuilt in the topic's format, offsets from LEO; v0 keeps
    no timestamps, v1/v2 keep the producer's (v0 gives -1)."""
    version = {0: "0.8.2", 1: "0.10.2", 2: "2.8"}[target]
    request = encode_batch(records(), magic=source, compression=compression, allow_lossy=True)
    result = validate(request, kafka, f"message.format.version={version}")
    assert not result.in_place
    stored = list(read_batches(result.stored, strict=True))
    assert {b.magic for b in stored} == {target}
    assert [r.offset for b in stored for r in b.records] == [LEO, LEO + 1, LEO + 2]
    assert {b.compression for b in stored} == {compression}
    timestamps = [r.timestamp for b in stored for r in b.records]
    if target == 0:
        assert timestamps == [-1, -1, -1] and result.max_timestamp == -1
    elif source == 0:
        assert timestamps == [-1, -1, -1]
    else:
        assert timestamps == [NOW, NOW + 1, NOW + 2] and result.max_timestamp == NOW + 2


def test_create_time_up_conversion_v1_to_v2():
    """testCreateTimeUpConversionV1ToV2: a v1 gzip set to v2 keeps CreateTime and each timestamp; the
    max timestamp's offset is the batch's last offset."""
    result = validate(encode_batch(records(), magic=1, compression="gzip"), "3.9")
    batch = result.batches[0]
    assert batch.magic == 2 and batch.timestamp_type is TimestampType.CREATE_TIME
    assert (result.max_timestamp, result.offset_of_max_timestamp) == (NOW + 2, LEO + 2)


@pytest.mark.parametrize(("flag", "error_text"), [("transactional", "Transactional"), ("idempotent", "Idempotent")])
def test_down_conversion_of_producer_state_is_refused(flag, error_text):
    """testDownConversionOf{Transactional,Idempotent}RecordsNotPermitted: UNSUPPORTED_FOR_MESSAGE_FORMAT."""
    request = encode_batch(
        records(), producer_id=11, producer_epoch=0, base_sequence=0, transactional=flag == "transactional"
    )
    refusal = refused(request, "2.8", "message.format.version=0.10.2")
    assert (refusal.error, refusal.code) == ("UNSUPPORTED_FOR_MESSAGE_FORMAT", 43)
    assert error_text in refusal.message


# ---- compression ------------------------------------------------------------------------------------


def test_different_codec_causes_recompression():
    """testDifferentCodecCausesRecompression: gzip from the producer, compression.type=lz4: rebuilt as lz4."""
    result = validate(encode_batch(records(), compression="gzip"), "4.0", "compression.type=lz4")
    assert not result.in_place and result.batches[0].compression == "lz4"
    assert stored_offsets(result) == [LEO, LEO + 1, LEO + 2]


def test_different_level_does_not_cause_recompression():
    """testDifferentLevelDoesNotCauseRecompression: the codec decides, not the level: a gzip level 1
    batch on a gzip topic is kept as sent."""
    request = encode_batch(records(50), compression="gzip", compression_level=1)
    result = validate(request, "4.0", "compression.type=gzip")
    assert result.in_place and result.stored[V2_RECORDS_OFFSET:] == request[V2_RECORDS_OFFSET:]


@pytest.mark.parametrize("topic", ["producer", "gzip", "uncompressed"])
def test_recompression_by_topic_compression(topic):
    """checkRecompression / checkCompressed / checkNonCompressed: the stored codec is the topic's
    compression.type (the producer's under producer)."""
    result = validate(encode_batch(records(), compression="snappy"), "3.9", f"compression.type={topic}")
    want = {"producer": "snappy", "gzip": "gzip", "uncompressed": "none"}[topic]
    assert result.batches[0].compression == want and result.in_place is (topic == "producer")


def test_zstd_before_2_1_is_unsupported():
    """testZStdCompressedWithUnavailableIBPVersion: UNSUPPORTED_COMPRESSION_TYPE before Kafka 2.1."""
    request = encode_batch(records(), compression="zstd")
    assert refused(request, "2.0").error == "UNSUPPORTED_COMPRESSION_TYPE"
    assert validate(request, "2.1").in_place
    with pytest.raises(ValueError, match="ZStandard"):
        topic_config(broker_release("2.0"), ["compression.type=zstd"])


def test_kafka_0_8_rewrites_every_compressed_set():
    """0.8's assignOffsets: a compressed set is decompressed and rewritten with absolute inner offsets."""
    result = validate(encode_batch(records(), magic=0, compression="gzip", allow_lossy=True), "0.8.2")
    assert not result.in_place and "absolute" in result.explain[-1]
    assert stored_offsets(result) == [LEO, LEO + 1, LEO + 2]


# ---- batch rules ------------------------------------------------------------------------------------


def test_only_one_batch_per_v2_request():
    """checkOnlyOneBatch: two v2 batches (or two compressed sets) in one request are INVALID_RECORD."""
    two = encode_batch(records()) + encode_batch(records())
    assert refused(two).error == "INVALID_RECORD"
    two_sets = encode_batch(records(), magic=1, compression="gzip") * 2
    assert "more than one batch" in refused(two_sets, "2.8").message


def test_several_uncompressed_legacy_messages_form_one_request():
    """checkAllowMultiBatch: an uncompressed v0/v1 message set is one request of many entries."""
    request = encode_batch(records(4), magic=1)
    assert len(list(split_requests(request))) == 1
    result = validate(request, "0.10")
    assert result.in_place and stored_offsets(result) == [LEO, LEO + 1, LEO + 2, LEO + 3]
    assert len(list(split_requests(request + encode_batch(records(), compression="gzip")))) == 2


def test_batch_without_records_not_allowed():
    """testBatchWithoutRecordsNotAllowed: an empty v2 batch is INVALID_RECORD."""
    assert refused(encode_batch([])).error == "INVALID_RECORD"


def test_mismatched_magic_in_one_request():
    """checkMismatchMagic: entries of different magic in one request are INVALID_RECORD."""
    request = encode_batch(records(1), magic=1) + encode_batch(records(1), magic=0, allow_lossy=True)
    assert refused(request, "0.10").error == "INVALID_RECORD"


def test_record_batch_with_count_overrides():
    """testRecordBatchWithCountOverrides: count and lastOffsetDelta that agree with the records pass."""
    request = patch_v2(encode_batch(records()), count=3, last_offset_delta=2)
    assert stored_offsets(validate(request)) == [LEO, LEO + 1, LEO + 2]


@pytest.mark.parametrize(("delta", "count"), [(0, 3), (15, 3), (-3, 3), (5, 6), (1, 2)])
def test_inconsistent_or_unmatched_counts(delta, count):
    """testInconsistentCountAndOffset / testUnmatchedNumberOfRecords: INVALID_RECORD."""
    request = patch_v2(encode_batch(records()), count=count, last_offset_delta=delta)
    assert refused(request).error == "INVALID_RECORD"


def test_non_increasing_offsets_in_a_client_batch():
    """testNonIncreasingOffsetRecordBatchHasMetricsLogged: records at offsets 0, 2, 3 whose batch was given
    last offset 2 (so base offset -1, lastOffsetDelta 3) hold 3 records for a range of 4: INVALID_RECORD."""
    recs = [dict(r, offset=o) for r, o in zip(records(), (0, 2, 3))]
    request = bytearray(encode_batch(recs, base_offset=0))
    struct.pack_into(">q", request, 0, -1)  # baseOffset, outside the CRC
    refusal = refused(bytes(request), "3.9", "compression.type=gzip")
    assert refusal.error == "INVALID_RECORD" and "count" in refusal.message


def test_control_records_not_allowed_from_clients():
    """testControlRecordsNotAllowedFromClients: INVALID_RECORD."""
    from kcodec.records.encode import encode_control_batch

    marker = encode_control_batch("commit", producer_id=5, producer_epoch=0)
    assert refused(marker).error == "INVALID_RECORD"


def test_invalid_sequence():
    """checkInvalidSequence: a producer id with base sequence -1 is INVALID_RECORD."""
    request = bytearray(encode_batch(records(), producer_id=9, producer_epoch=0, base_sequence=0))
    struct.pack_into(">i", request, 53, -1)  # baseSequence
    assert refused(patch_v2(bytes(request))).error == "INVALID_RECORD"


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_invalid_checksum(magic):
    """checkInvalidChecksum: a flipped byte is CORRUPT_MESSAGE (code 2)."""
    request = bytearray(encode_batch(records(1), magic=magic, allow_lossy=True))
    request[-1] ^= 0xFF
    refusal = refused(bytes(request), "0.10" if magic < 2 else "4.0")
    assert (refusal.error, refusal.code) == ("CORRUPT_MESSAGE", 2)


def test_no_key_compacted_topic():
    """checkNoKeyCompactedTopic: a record without a key on a compacted topic is INVALID_RECORD, with the
    record's index among the per-record errors."""
    recs = records()
    recs[1]["key"] = None
    refusal = refused(encode_batch(recs), "4.0", "cleanup.policy=compact")
    assert refusal.error == "INVALID_RECORD" and [i for i, _ in refusal.record_errors] == [1]


# ---- timestamps -------------------------------------------------------------------------------------


@pytest.mark.parametrize("magic", [1, 2])
@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_invalid_create_time(magic, compression):
    """testInvalidCreateTime{NonCompressed,Compressed}V{1,2}: a timestamp past the bound is INVALID_TIMESTAMP
    (code 32) with the record's index."""
    request = encode_batch(records(ts=NOW - 10_000), magic=magic, compression=compression)
    bound = "message.timestamp.before.max.ms=5000"
    refusal = refused(
        request, "3.9", bound, "message.format.version=0.10.2" if magic == 1 else "compression.type=producer"
    )
    assert (refusal.error, refusal.code) == ("INVALID_TIMESTAMP", 32)
    assert refusal.record_errors and refusal.record_errors[0][0] == 0


def test_record_with_past_timestamp_is_rejected():
    """testRecordWithPastTimestampIsRejected: before.max.ms bounds the past."""
    bound = "message.timestamp.before.max.ms=60000"
    assert refused(encode_batch(records(1, ts=NOW - 60_001)), "3.6", bound).error == "INVALID_TIMESTAMP"
    assert validate(encode_batch(records(1, ts=NOW - 60_000)), "3.6", bound).in_place


def test_record_with_future_timestamp_is_rejected():
    """testRecordWithFutureTimestampIsRejected: after.max.ms bounds the future; its default is one hour
    from 4.0 (KIP-1030) and unbounded before."""
    future = encode_batch(records(1, ts=NOW + 3_600_001))
    assert refused(future, "4.0").error == "INVALID_TIMESTAMP"
    assert validate(future, "3.9").in_place
    assert validate(future, "4.0", "message.timestamp.after.max.ms=7200000").in_place


def test_timestamp_difference_before_3_6():
    """Before KIP-937 one config bounds both sides; 3.6 and later refuse it in favour of before/after."""
    request = encode_batch(records(1, ts=NOW + 2000))
    assert refused(request, "2.8", "message.timestamp.difference.max.ms=1000").error == "INVALID_TIMESTAMP"
    with pytest.raises(ValueError, match="KIP-937"):
        topic_config(broker_release("3.6"), ["message.timestamp.difference.max.ms=1000"])


def test_invalid_timestamp_exception_has_batch_index():
    """testInvalidTimestampExceptionHasBatchIndex: the per-record error names the bad record's index."""
    recs = records()
    recs[2]["timestamp"] = NOW - 10_000_000
    refusal = refused(encode_batch(recs), "4.0", "message.timestamp.before.max.ms=1000")
    assert [i for i, _ in refusal.record_errors] == [2]


def test_invalid_record_exception_has_batch_index():
    """testInvalidRecordExceptionHasBatchIndex: INVALID_RECORD's per-record errors name each index."""
    recs = records(4)
    recs[0]["key"] = recs[3]["key"] = None
    refusal = refused(encode_batch(recs, compression="gzip"), "4.0", "cleanup.policy=compact")
    assert [i for i, _ in refusal.record_errors] == [0, 3]


def test_batch_with_invalid_records_and_invalid_timestamp():
    """testBatchWithInvalidRecordsAndInvalidTimestamp: both kinds of error listed, the answer is
    INVALID_TIMESTAMP."""
    recs = records(2)
    recs[0]["key"] = None
    recs[1]["timestamp"] = NOW - 10_000_000
    refusal = refused(encode_batch(recs), "4.0", "cleanup.policy=compact", "message.timestamp.before.max.ms=1000")
    assert refusal.error == "INVALID_TIMESTAMP" and len(refusal.record_errors) == 2


@pytest.mark.parametrize("compression", ["none", "gzip"])
@pytest.mark.parametrize("magic", [1, 2])
def test_log_append_time(compression, magic):
    """checkLogAppendTime{NonCompressed,WithoutRecompression}: LogAppendTime stamps ``now`` into the header;
    a compressed payload stays the producer's; the offset of the max timestamp is the first (loose v1) or
    the last (a v2 batch or compressed set) offset."""
    request = encode_batch(records(), magic=magic, compression=compression)
    config = ["message.timestamp.type=LogAppendTime"]
    if magic == 1:
        config.append("message.format.version=0.10.2")
    result = validate(request, "3.9", *config)
    assert result.in_place and result.log_append_time == NOW and result.max_timestamp == NOW
    assert all(b.timestamp_type is TimestampType.LOG_APPEND_TIME for b in result.batches)
    assert {r.timestamp for b in result.batches for r in b.records} == {NOW}
    loose = magic == 1 and compression == "none"
    assert result.offset_of_max_timestamp == (LEO if loose else LEO + 2)
    if magic == 2:
        assert result.stored[V2_RECORDS_OFFSET:] == request[V2_RECORDS_OFFSET:]


def test_log_append_time_with_recompression():
    """checkLogAppendTimeWithRecompression: rebuilt records carry the append time too."""
    request = encode_batch(records(), compression="gzip")
    result = validate(request, "3.9", "message.timestamp.type=LogAppendTime", "compression.type=lz4")
    assert not result.in_place and result.batches[0].timestamp_type is TimestampType.LOG_APPEND_TIME
    assert result.batches[0].max_timestamp == NOW


def test_producer_log_append_time_is_refused():
    """validateTimestamp: a producer may not send LogAppendTime batches to a LogAppendTime topic (under
    CreateTime its records' timestamps are checked as any others)."""
    request = encode_batch(records(), timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=NOW)
    assert refused(request, "4.0", "message.timestamp.type=LogAppendTime").error == "INVALID_TIMESTAMP"
    assert validate(request, "4.0").in_place


# ---- sizes, formats, releases -----------------------------------------------------------------------


def test_max_message_bytes_by_release():
    """max.message.bytes: 1000012 by default before 1.1, 1048588 from 1.1 (KAFKA-4203)."""
    request = encode_batch([{"key": None, "value": b"x" * 1_020_000, "timestamp": NOW}])
    assert refused(request, "1.0").error == "MESSAGE_TOO_LARGE"
    assert validate(request, "1.1").in_place
    assert refused(request, "4.0", "max.message.bytes=1000").code == 10


def test_max_message_bytes_after_a_rebuild():
    """The size is checked again after a rebuild: a batch that only fits compressed is refused once the
    topic stores it uncompressed."""
    request = encode_batch([{"key": None, "value": b"a" * 5000, "timestamp": NOW}], compression="gzip")
    refusal = refused(request, "4.0", "compression.type=uncompressed", "max.message.bytes=2000")
    assert refusal.error == "MESSAGE_TOO_LARGE" and "rebuild" in refusal.rule


def test_segment_bytes_bounds_the_request():
    """A request larger than segment.bytes is RECORD_LIST_TOO_LARGE (18)."""
    refusal = refused(encode_batch(records(20)), "4.0", "segment.bytes=100")
    assert (refusal.error, refusal.code) == ("RECORD_LIST_TOO_LARGE", 18)


def test_4_0_always_writes_v2():
    """From 4.0 the stored magic is always 2: message.format.version is gone, v0/v1 requests are up-converted."""
    with pytest.raises(ValueError, match="removed in 4.0"):
        topic_config(broker_release("4.0"), ["message.format.version=0.10.2"])
    result = validate(encode_batch(records(), magic=1), "4.1")
    assert result.batches[0].magic == 2 and not result.in_place


def test_v2_base_offset_must_be_zero_from_a_client():
    """4.x: a client's v2 batch with base offset != 0 is INVALID_RECORD."""
    assert refused(encode_batch(records(), base_offset=5)).error == "INVALID_RECORD"


def test_headers_cannot_be_converted_below_v2():
    """MemoryRecordsBuilder refuses headers below v2; the broker answers UNKNOWN_SERVER_ERROR."""
    recs = records(1)
    recs[0]["headers"] = [["h", b"v"]]
    assert refused(encode_batch(recs), "2.8", "message.format.version=0.10.2").code == -1


def test_unknown_release_and_config():
    with pytest.raises(ValueError, match="older than"):
        broker_release("0.7.2")
    with pytest.raises(ValueError, match="not a Kafka version"):
        broker_release("four")
    with pytest.raises(ValueError, match="not a config"):
        topic_config(broker_release("4.0"), ["retention.ms=5"])
    assert broker_release("current") is broker_release("99.0")


@pytest.mark.parametrize(
    ("magic", "compression", "config", "want"),
    [
        (2, "none", [], (NOW + 5, LEO + 2)),  # a v2 batch answers with its last offset
        (1, "none", ["message.format.version=0.10.2"], (NOW + 5, LEO + 1)),  # a loose v1 message with its own
        (1, "gzip", ["message.format.version=0.10.2"], (NOW + 5, LEO + 2)),  # a compressed set with its last
        (2, "gzip", ["compression.type=lz4"], (NOW + 5, LEO + 2)),  # rebuilt v2: the builder's last offset
        (2, "none", ["message.format.version=0.10.2"], (NOW + 5, LEO + 1)),  # rebuilt loose v1: the record's
    ],
)
def test_offset_of_max_timestamp(magic, compression, config, want):
    """ValidationResult's shallowOffsetOfMaxTimestamp, as 4.0 reports it (the max in the middle)."""
    recs = records()
    recs[1]["timestamp"] = NOW + 5
    result = validate(encode_batch(recs, magic=magic, compression=compression), "3.9", *config)
    assert (result.max_timestamp, result.offset_of_max_timestamp) == want


def test_offset_of_max_timestamp_without_timestamps():
    """No timestamp: -1, except a compressed set kept in place, which answers with its last offset."""
    recs = [dict(r, timestamp=-1) for r in records()]
    assert validate(encode_batch(recs, compression="gzip"), "3.9").offset_of_max_timestamp == LEO + 2
    assert validate(encode_batch(recs), "3.9", "compression.type=gzip").offset_of_max_timestamp == -1
    v0 = validate(encode_batch(recs, magic=0), "0.10", "message.format.version=0.9")
    assert (v0.max_timestamp, v0.offset_of_max_timestamp) == (-1, -1)
