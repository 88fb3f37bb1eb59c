"""What a broker does with one Produce request's records for one partition (Kafka's
``UnifiedLog.analyzeAndValidateRecords`` then ``LogValidator.validateMessagesAndAssignOffsets``), by
release: the batches checked, offsets assigned from the log end offset, and either the producer's bytes
kept with only their header changed (in-place assignment) or the records rebuilt (another codec, another
magic, magic 0, inner offsets an old client got wrong). A refusal is a :class:`Refusal` with Kafka's error
code; nothing of a refused request is stored.

The rules that differ between releases come from :mod:`kcodec.records.broker_releases`; producer-state
checks (sequences, epochs, duplicates) come after this step, in :mod:`kcodec.log.broker_append`."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from kcodec.errors import DecodeError, EncodeError, KcodecError, record_corrupt_message
from kcodec.generated.enums import COMPRESSION_TYPE
from kcodec.generated.kafka_enums import PRODUCE_ERROR
from kcodec.records.broker_releases import LONG_MAX, BrokerRelease
from kcodec.records.decode import decode_entry, decode_entry_header
from kcodec.records.encode import encode_batch
from kcodec.records.framing import (
    LEGACY_ATTRIBUTES_OFFSET,
    LEGACY_COMPRESSION_MASK,
    LEGACY_CRC_OFFSET,
    LEGACY_CRC_START,
    LEGACY_TIMESTAMP_TYPE_MASK,
    LEGACY_V1_TIMESTAMP_OFFSET,
    MAGIC_OFFSET,
    MIN_LEGACY_RECORD_SIZE,
    V2_ATTRIBUTES_LOW_BYTE,
    V2_CRC_OFFSET,
    V2_CRC_START,
    V2_MAX_TIMESTAMP_OFFSET,
    V2_PARTITION_LEADER_EPOCH_OFFSET,
    V2_TIMESTAMP_TYPE_MASK,
)
from kcodec.records.model import Batch, TimestampType
from kcodec.records.reader import read_batches
from kcodec.runtime.crc import crc32, crc32c

__all__ = [
    "DEFAULT_SEGMENT_BYTES",
    "Refusal",
    "RequestRefused",
    "TopicConfig",
    "Validated",
    "split_requests",
    "topic_config",
    "validate_request",
]

DEFAULT_SEGMENT_BYTES = 1 << 30  # segment.bytes' default, every release
_NO_TIMESTAMP = -1
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_CODEC_NAMES = {"uncompressed": "none", "none": "none", **{n: n for n in COMPRESSION_TYPE if n != "none"}}


# ----------------------------------------------------------------------------- topic configs


@dataclass(frozen=True)
class TopicConfig:
    """The topic configs the append path reads. ``None`` where the release's default applies."""

    compression_type: str = "producer"
    format_version: str | None = None
    timestamp_type: TimestampType = TimestampType.CREATE_TIME
    timestamp_before_max_ms: int = LONG_MAX
    timestamp_after_max_ms: int | None = None
    timestamp_difference_max_ms: int = LONG_MAX
    max_message_bytes: int | None = None
    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    compacted: bool = False


def _int_config(key: str, value: str, low: int, high: int) -> int:
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{key}={value}: not an integer") from None
    if not low <= number <= high:
        raise ValueError(f"{key}={value}: must be in [{low}, {high}]")
    return number


def topic_config(release: BrokerRelease, pairs: list[str] | tuple[str, ...] = ()) -> TopicConfig:
    """Parse ``--topic-config KEY=VALUE`` pairs into a :class:`TopicConfig` for ``release``; a key the
    release does not have (or kcodec append does not model) is a ValueError naming it."""
    config = TopicConfig()
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key, value = key.strip(), value.strip()
        if not sep:
            raise ValueError(f"--topic-config {pair!r}: expected KEY=VALUE")
        if key == "compression.type":
            if value not in ("producer", *_CODEC_NAMES):
                raise ValueError(f"compression.type={value}: one of producer, uncompressed, {', '.join(_CODEC_NAMES)}")
            if value == "zstd" and not release.zstd:
                raise ValueError(f"compression.type=zstd: Kafka {release.name} has no ZStandard (from 2.1)")
            config = replace(config, compression_type=value if value == "producer" else _CODEC_NAMES[value])
        elif key == "message.format.version":
            if not release.magic_from_format_version:
                raise ValueError(
                    f"message.format.version: Kafka {release.name} "
                    + ("stores magic 0 only" if release.newest_magic == 0 else "always writes v2 (removed in 4.0)")
                )
            from kcodec.records.broker_releases import format_version_magic

            format_version_magic(value)  # refuses what is not a version
            config = replace(config, format_version=value)
        elif key == "message.timestamp.type":
            if release.timestamp_bounds == "none":
                raise ValueError(f"message.timestamp.type: Kafka {release.name} has no timestamps (from 0.10)")
            names = {"CreateTime": TimestampType.CREATE_TIME, "LogAppendTime": TimestampType.LOG_APPEND_TIME}
            if value not in names:
                raise ValueError(f"message.timestamp.type={value}: CreateTime or LogAppendTime")
            config = replace(config, timestamp_type=names[value])
        elif key == "message.timestamp.difference.max.ms":
            if release.timestamp_bounds != "difference":
                raise ValueError(
                    f"{key}: Kafka {release.name} "
                    + (
                        "has no timestamps"
                        if release.timestamp_bounds == "none"
                        else "bounds timestamps with message.timestamp.before.max.ms / after.max.ms (KIP-937)"
                    )
                )
            config = replace(config, timestamp_difference_max_ms=_int_config(key, value, 0, LONG_MAX))
        elif key in ("message.timestamp.before.max.ms", "message.timestamp.after.max.ms"):
            if release.timestamp_bounds != "before_after":
                raise ValueError(f"{key}: new in Kafka 3.6 (KIP-937); Kafka {release.name} does not have it")
            number = _int_config(key, value, 0, LONG_MAX)
            if "before" in key:
                config = replace(config, timestamp_before_max_ms=number)
            else:
                config = replace(config, timestamp_after_max_ms=number)
        elif key == "max.message.bytes":
            config = replace(config, max_message_bytes=_int_config(key, value, 0, (1 << 31) - 1))
        elif key == "segment.bytes":
            config = replace(config, segment_bytes=_int_config(key, value, MIN_LEGACY_RECORD_SIZE, (1 << 31) - 1))
        elif key == "cleanup.policy":
            policies = {p.strip() for p in value.split(",")}
            if not policies <= {"delete", "compact"}:
                raise ValueError(f"cleanup.policy={value}: delete, compact or both")
            config = replace(config, compacted="compact" in policies)
        else:
            raise ValueError(
                f"--topic-config {key}: not a config kcodec append models (compression.type, "
                "message.format.version, message.timestamp.type, message.timestamp.difference.max.ms, "
                "message.timestamp.before.max.ms, message.timestamp.after.max.ms, max.message.bytes, "
                "segment.bytes, cleanup.policy)"
            )
    return config


# ----------------------------------------------------------------------------- outcomes


@dataclass
class Refusal:
    """Kafka's answer to a refused request: its error code and name, the message, and (INVALID_RECORD,
    INVALID_TIMESTAMP) the per-record errors as (index in the batch, message), as ProduceResponse v8+
    carries them."""

    error: str
    message: str
    record_errors: list[tuple[int, str]] = field(default_factory=list)
    rule: str = ""

    @property
    def code(self) -> int:
        return PRODUCE_ERROR[self.error.lower()]


class RequestRefused(Exception):
    """Raised inside validation; carries the :class:`Refusal`."""

    def __init__(self, error: str, message: str, rule: str, record_errors: list[tuple[int, str]] | None = None):
        super().__init__(message)
        self.refusal = Refusal(error, message, record_errors or [], rule)


@dataclass
class Validated:
    """A request the validator accepted: the bytes to store, the offsets assigned, the timestamps Kafka
    reports, and which path it took (``in_place``: the producer's bytes with a new header; otherwise the
    records were rebuilt) with the rules behind each decision (``explain``)."""

    stored: bytes
    batches: list[Batch]
    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    log_append_time: int
    in_place: bool
    explain: list[str]


# ----------------------------------------------------------------------------- the request


def split_requests(source) -> Iterator[bytes]:
    """A file of producer batches (bytes, a path read with pread, or a binary stream) as the requests a
    producer would send, one at a time: every v2 batch and every compressed v0/v1 wrapper alone; a run of
    uncompressed v0/v1 messages of one magic together (an old producer's message set). A torn or damaged
    entry raises the reader's error when the walk gets there."""
    run: list[bytes] = []
    run_magic = None
    for _, raw in read_batches(source, strict=True, verify_crc=False).entries():
        magic = raw[MAGIC_OFFSET]
        loose_legacy = magic < 2 and not raw[LEGACY_ATTRIBUTES_OFFSET] & LEGACY_COMPRESSION_MASK
        if run and not (loose_legacy and magic == run_magic):
            yield b"".join(run)
            run = []
        if not loose_legacy:
            yield raw  # a request of its own: answered before the next entry is read
            continue
        run.append(raw)
        run_magic = magic
    if run:
        yield b"".join(run)


def _refuse(error: str, message: str, rule: str, errors: list[tuple[int, str]] | None = None) -> RequestRefused:
    return RequestRefused(error, message, rule, errors)


def _decode_request(request: bytes, release: BrokerRelease, config: TopicConfig, explain: list[str]):
    """analyzeAndValidateRecords: each entry checked (magic known to the release, client v2 base offset 0,
    size, CRC, codec) and decoded; returns the (raw bytes, batch) of each entry and the source codec."""
    max_bytes = config.max_message_bytes if config.max_message_bytes is not None else release.max_message_bytes
    entries: list[tuple[bytes, Batch]] = []
    source = "none"
    try:
        framing = list(read_batches(request, strict=True, verify_crc=False).entries())
    except KcodecError as exc:
        raise _refuse("CORRUPT_MESSAGE", f"the request's records cannot be framed: {exc}", "record framing") from None
    for position, raw in framing:
        magic = raw[MAGIC_OFFSET]
        if magic > release.newest_magic:
            raise _refuse(
                "CORRUPT_MESSAGE",
                f"magic {magic} is unknown to Kafka {release.name} (it reads magic 0 to {release.newest_magic})",
                "known magic",
            )
        base_offset = _I64.unpack_from(raw, 0)[0]
        if release.client_base_offset_zero and magic == 2 and base_offset != 0:
            raise _refuse(
                "INVALID_RECORD",
                f"The baseOffset of the record batch in the append should be 0, but it is {base_offset}",
                "client v2 batches start at base offset 0",
            )
        if len(raw) > max_bytes:
            raise _refuse(
                "MESSAGE_TOO_LARGE",
                f"The record batch size in the append is {len(raw)} bytes which exceeds the maximum configured "
                f"value of {max_bytes}.",
                "max.message.bytes",
            )
        try:  # the CRC first, as analyzeAndValidateRecords checks it before anything reads the records
            decode_entry_header(raw, position, verify_crc=True)
        except DecodeError as exc:
            raise _refuse("CORRUPT_MESSAGE", f"the batch's CRC does not hold: {exc}", "batch CRC") from None
        try:
            batch = decode_entry(raw, position, verify_crc=False)
        except DecodeError as exc:  # the CRC holds: the record iterators' InvalidRecordException
            raise _refuse("INVALID_RECORD", f"the batch's records do not read: {exc}", "records readable") from None
        if batch.compression == "zstd" and not release.zstd:
            raise _refuse(
                "UNSUPPORTED_COMPRESSION_TYPE",
                f"Kafka {release.name} does not accept ZStandard compression (from 2.1, KIP-110)",
                "zstd needs 2.1",
            )
        if batch.compression != "none":
            source = batch.compression
        entries.append((raw, batch))
    if not entries:
        raise _refuse("INVALID_RECORD", "Record batch has no batches at all", "at least one batch")
    explain.append(f"source codec {source} (the last compressed batch's)")
    return entries, source


def _check_batch(first: Batch, batch: Batch, to_magic: int, release: BrokerRelease) -> None:
    """LogValidator.validateBatch for a client's batch."""
    if batch.magic != first.magic:
        raise _refuse(
            "INVALID_RECORD",
            f"Batch magic {batch.magic} is not the same as the first batch's magic byte {first.magic}",
            "one magic per request",
        )
    if batch.magic >= 2:
        from_offsets = batch.last_offset - batch.base_offset + 1
        if from_offsets <= 0:
            raise _refuse(
                "INVALID_RECORD",
                f"Batch has an invalid offset range: [{batch.base_offset}, {batch.last_offset}]",
                "v2 offset range",
            )
        if batch.record_count <= 0:
            raise _refuse(
                "INVALID_RECORD", f"Invalid reported count for record batch: {batch.record_count}", "v2 record count"
            )
        if from_offsets != batch.record_count:
            raise _refuse(
                "INVALID_RECORD",
                f"Inconsistent batch offset range [{batch.base_offset}, {batch.last_offset}] and count of records "
                f"{batch.record_count}",
                "v2 count == lastOffsetDelta + 1",
            )
    if batch.is_control:
        raise _refuse("INVALID_RECORD", "Clients are not allowed to write control records", "no client control batches")
    if batch.producer_id >= 0 and batch.base_sequence < 0:
        raise _refuse(
            "INVALID_RECORD",
            f"Invalid sequence number {batch.base_sequence} in record batch with producerId {batch.producer_id}",
            "a producer id needs a sequence",
        )
    if batch.is_transactional and to_magic < 2:
        raise _refuse(
            "UNSUPPORTED_FOR_MESSAGE_FORMAT",
            f"Transactional records cannot be used with magic version {to_magic}",
            "transactions need v2",
        )
    if batch.producer_id >= 0 and to_magic < 2:
        raise _refuse(
            "UNSUPPORTED_FOR_MESSAGE_FORMAT",
            f"Idempotent records cannot be used with magic version {to_magic}",
            "idempotence needs v2",
        )


def _record_errors(batch: Batch, release: BrokerRelease, config: TopicConfig, now: int) -> list[tuple[int, str, bool]]:
    """LogValidator.validateRecord for each record: (index, message, is a timestamp error)."""
    errors: list[tuple[int, str, bool]] = []
    after = config.timestamp_after_max_ms
    if after is None:
        after = release.timestamp_after_max_ms
    before = config.timestamp_before_max_ms
    if release.timestamp_bounds == "difference":
        before = after = config.timestamp_difference_max_ms
    for index, record in enumerate(batch.records):
        if record.magic != batch.magic:
            errors.append((index, f"Record's magic {record.magic} does not match outer magic {batch.magic}", False))
            continue
        if batch.magic <= 1 and batch.compression != "none" and record.crc_valid is False:
            raise _refuse(
                "CORRUPT_MESSAGE",
                f"{record_corrupt_message(record.crc or 0, None)} at inner message {index} of the compressed set",
                "inner CRC of a compressed v0/v1 set",
            )
        if config.compacted and record.key is None:
            errors.append((index, "Compacted topic cannot accept message without key", False))
            continue
        if release.timestamp_bounds == "none":
            continue
        if config.timestamp_type is TimestampType.CREATE_TIME and record.timestamp != _NO_TIMESTAMP:
            if now - record.timestamp > before or record.timestamp - now > after:
                low = now - before if before != LONG_MAX else "-inf"
                high = now + after if after != LONG_MAX else "+inf"
                errors.append(
                    (
                        index,
                        f"Timestamp {record.timestamp} of message with offset {record.offset} is out of range. "
                        f"The timestamp should be within [{low}, {high}]",
                        True,
                    )
                )
        elif batch.timestamp_type is TimestampType.LOG_APPEND_TIME:
            errors.append(
                (
                    index,
                    "Invalid timestamp type in message. Producer should not set timestamp type to LogAppendTime.",
                    True,
                )
            )
    return errors


def _raise_record_errors(errors: list[tuple[int, str, bool]]) -> None:
    """LogValidator.processRecordErrors: the whole batch fails."""
    if not errors:
        return
    listed = [(i, m) for i, m, _ in errors]
    if any(ts for _, _, ts in errors):
        raise _refuse(
            "INVALID_TIMESTAMP",
            "One or more records have been rejected due to invalid timestamp",
            "timestamp bounds",
            listed,
        )
    raise _refuse(
        "INVALID_RECORD",
        f"One or more records have been rejected due to {len(errors)} record errors in total, and only showing "
        f"the first three errors at most: {[m for _, m in listed[:3]]}",
        "record rules",
        listed,
    )


# ----------------------------------------------------------------------------- header edits (in place)


def _set_v2_header(raw: bytes, base_offset: int, ts_type: TimestampType, max_ts: int, leader_epoch: int) -> bytes:
    """DefaultRecordBatch.setLastOffset / setMaxTimestamp / setPartitionLeaderEpoch: the base offset and
    the leader epoch sit outside the CRC; the CRC-32C is recomputed only when the timestamp type or the
    max timestamp changed."""
    out = bytearray(raw)
    _I64.pack_into(out, 0, base_offset)
    _I32.pack_into(out, V2_PARTITION_LEADER_EPOCH_OFFSET, leader_epoch)
    is_lat = bool(out[V2_ATTRIBUTES_LOW_BYTE] & V2_TIMESTAMP_TYPE_MASK)
    want_lat = ts_type is TimestampType.LOG_APPEND_TIME
    if is_lat != want_lat or _I64.unpack_from(out, V2_MAX_TIMESTAMP_OFFSET)[0] != max_ts:
        out[V2_ATTRIBUTES_LOW_BYTE] = (out[V2_ATTRIBUTES_LOW_BYTE] & ~V2_TIMESTAMP_TYPE_MASK) | (
            V2_TIMESTAMP_TYPE_MASK if want_lat else 0
        )
        _I64.pack_into(out, V2_MAX_TIMESTAMP_OFFSET, max_ts)
        _U32.pack_into(out, V2_CRC_OFFSET, crc32c(memoryview(out)[V2_CRC_START:]))
    return bytes(out)


def _set_legacy_header(raw: bytes, offset: int, ts_type: TimestampType | None, timestamp: int) -> bytes:
    """AbstractLegacyRecordBatch.setLastOffset / setMaxTimestamp: the entry's offset (outside the CRC);
    for magic 1, the timestamp and its type bit, with the CRC-32 recomputed when they changed."""
    out = bytearray(raw)
    _I64.pack_into(out, 0, offset)
    if ts_type is not None:
        is_lat = bool(out[LEGACY_ATTRIBUTES_OFFSET] & LEGACY_TIMESTAMP_TYPE_MASK)
        want_lat = ts_type is TimestampType.LOG_APPEND_TIME
        if is_lat != want_lat or _I64.unpack_from(out, LEGACY_V1_TIMESTAMP_OFFSET)[0] != timestamp:
            out[LEGACY_ATTRIBUTES_OFFSET] = (out[LEGACY_ATTRIBUTES_OFFSET] & ~LEGACY_TIMESTAMP_TYPE_MASK) | (
                LEGACY_TIMESTAMP_TYPE_MASK if want_lat else 0
            )
            _I64.pack_into(out, LEGACY_V1_TIMESTAMP_OFFSET, timestamp)
            _U32.pack_into(out, LEGACY_CRC_OFFSET, crc32(memoryview(out)[LEGACY_CRC_START:]))
    return bytes(out)


# ----------------------------------------------------------------------------- validation


def validate_request(
    request: bytes,
    *,
    log_end_offset: int,
    release: BrokerRelease,
    config: TopicConfig,
    now: int,
    leader_epoch: int = 0,
) -> Validated:
    """Validate one Produce request's records for a partition whose next offset is ``log_end_offset``,
    at time ``now`` (ms), as Kafka ``release`` with ``config``. Raises :class:`RequestRefused`."""
    explain: list[str] = []
    entries, source = _decode_request(request, release, config, explain)
    target = source if config.compression_type == "producer" else config.compression_type
    if config.compression_type == "producer":
        explain.append(f"target codec {target} (compression.type=producer keeps the producer's)")
    else:
        explain.append(f"target codec {target} (compression.type={config.compression_type})")
    to_magic = release.magic_for(config.format_version)
    if config.format_version and release.magic_from_format_version:
        explain.append(f"target magic {to_magic} (message.format.version={config.format_version})")
    else:
        explain.append(f"target magic {to_magic} (the newest this release writes)")
    ts_type = config.timestamp_type if to_magic > 0 else TimestampType.NO_TIMESTAMP_TYPE
    first = entries[0][1]
    if first.magic >= 2 or source != "none":
        if len(entries) > 1:
            raise _refuse(
                "INVALID_RECORD",
                "Compressed outer record has more than one batch",
                "one batch per v2 or compressed request",
            )
    for _, batch in entries:
        _check_batch(first, batch, to_magic, release)
        _raise_record_errors(_record_errors(batch, release, config, now))
    records = [r for _, b in entries for r in b.records]

    in_place, why = _in_place(entries, source, target, to_magic, release)
    explain.append(why)
    lat = now if ts_type is TimestampType.LOG_APPEND_TIME else _NO_TIMESTAMP
    if in_place:
        stored, result = _assign_in_place(entries, log_end_offset, ts_type, now, leader_epoch, to_magic)
    else:
        stored, result = _rebuild(records, first, log_end_offset, to_magic, target, ts_type, now, leader_epoch)
        max_bytes = config.max_message_bytes if config.max_message_bytes is not None else release.max_message_bytes
        for batch in result:
            if batch.size > max_bytes:
                raise _refuse(
                    "MESSAGE_TOO_LARGE",
                    f"Message batch size is {batch.size} bytes in append to partition which exceeds the maximum "
                    f"configured size of {max_bytes}.",
                    "max.message.bytes after a rebuild",
                )
    if len(stored) > config.segment_bytes:
        raise _refuse(
            "RECORD_LIST_TOO_LARGE",
            f"Message batch size is {len(stored)} bytes in append, which exceeds the maximum configured segment "
            f"size of {config.segment_bytes}.",
            "segment.bytes",
        )
    compressed_path = not (source == "none" and target == "none")
    max_ts, offset_of_max = _max_timestamp(result, ts_type, now, in_place, compressed_path, log_end_offset)
    return Validated(
        stored=stored,
        batches=result,
        first_offset=log_end_offset,
        last_offset=result[-1].last_offset,
        max_timestamp=max_ts,
        offset_of_max_timestamp=offset_of_max,
        log_append_time=lat,
        in_place=in_place,
        explain=explain,
    )


def _in_place(entries, source: str, target: str, to_magic: int, release: BrokerRelease) -> tuple[bool, str]:
    """The choice between assigning offsets in the producer's bytes and rebuilding them."""
    first = entries[0][1]
    if source == "none" and target == "none":
        if all(b.magic == to_magic for _, b in entries):
            return True, f"in place: uncompressed and already magic {to_magic} (assignOffsetsNonCompressed)"
        return False, f"rebuilt: magic {first.magic} converted to {to_magic} (convertAndAssignOffsetsNonCompressed)"
    if release.inner_offsets == "absolute":
        return False, f"rebuilt: Kafka {release.name} rewrites every compressed set with absolute inner offsets"
    if source != target:
        return False, f"rebuilt: codec {source} differs from the target {target} (recompressed)"
    if first.magic != to_magic:
        return False, f"rebuilt: magic {first.magic} converted to {to_magic}"
    if to_magic == 0:
        return False, "rebuilt: magic 0 has absolute inner offsets, which must be rewritten"
    if first.magic == 1:
        inner = [r.offset for r in first.records]
        if inner != list(range(len(inner))):
            return False, "rebuilt: the inner offsets are not 0..n-1 (an older client's), so they are rewritten"
    return True, f"in place: same codec {source} and magic {to_magic}; only the header changes"


def _assign_in_place(
    entries, leo: int, ts_type: TimestampType, now: int, leader_epoch: int, to_magic: int
) -> tuple[bytes, list[Batch]]:
    out: list[bytes] = []
    batches: list[Batch] = []
    offset = leo
    for raw, batch in entries:
        count = len(batch.records)
        last = offset + count - 1
        if batch.magic >= 2:
            record_max = max((r.timestamp for r in batch.records), default=_NO_TIMESTAMP)
            max_ts = now if ts_type is TimestampType.LOG_APPEND_TIME else record_max
            new = _set_v2_header(raw, offset, ts_type, max_ts, leader_epoch)
        elif batch.magic == 1:
            if batch.compression != "none":
                record_max = max((r.timestamp for r in batch.records), default=_NO_TIMESTAMP)
            else:
                record_max = batch.records[0].timestamp
            max_ts = now if ts_type is TimestampType.LOG_APPEND_TIME else record_max
            new = _set_legacy_header(raw, last, ts_type, max_ts)
        else:
            new = _set_legacy_header(raw, last, None, _NO_TIMESTAMP)
        out.append(new)
        batches.append(decode_entry(new, 0))
        offset = last + 1
    return b"".join(out), batches


def _rebuild(records, first: Batch, leo: int, to_magic: int, target: str, ts_type, now: int, leader_epoch: int):
    """buildRecordsAndAssignOffsets / convertAndAssignOffsetsNonCompressed: the records re-encoded from the
    log end offset in the target magic and codec, with the first batch's producer fields."""
    if to_magic < 2 and any(r.headers for r in records):
        raise _refuse(
            "UNKNOWN_SERVER_ERROR",
            f"Magic v{to_magic} does not support record headers",
            "headers need v2 (MemoryRecordsBuilder throws, the broker answers UNKNOWN_SERVER_ERROR)",
        )
    renumbered = [r.replace(offset=leo + i) for i, r in enumerate(records)]
    lat = ts_type is TimestampType.LOG_APPEND_TIME
    options: dict = {}
    if to_magic == 2:
        options = {
            "producer_id": first.producer_id,
            "producer_epoch": first.producer_epoch,
            "base_sequence": first.base_sequence,
            "transactional": first.is_transactional,
            "partition_leader_epoch": leader_epoch,
        }
    try:
        stored = encode_batch(
            renumbered,
            magic=to_magic,
            compression=target,
            base_offset=leo,
            timestamp_type=TimestampType.CREATE_TIME if ts_type is TimestampType.NO_TIMESTAMP_TYPE else ts_type,
            log_append_time=now if lat else None,
            allow_lossy=to_magic == 0,  # magic 0 has no timestamps: the builder drops them
            **options,
        )
    except EncodeError as exc:
        raise _refuse("UNKNOWN_SERVER_ERROR", f"the records cannot be rebuilt: {exc}", "rebuild") from None
    batches = list(read_batches(stored, strict=True))
    return stored, batches


def _max_timestamp(
    batches: list[Batch], ts_type, now: int, in_place: bool, compressed_path: bool, leo: int
) -> tuple[int, int]:
    """The max timestamp and the offset 4.0's ValidationResult reports for it (the shallow offset): a
    compressed set kept in place answers with its last offset; in place uncompressed, the last offset of
    the batch holding the max (a loose v0/v1 message's own; the first under LogAppendTime at v1); rebuilt,
    MemoryRecordsBuilder.info (a v2 batch or a compressed set: its last offset). -1 for no timestamp."""
    last = batches[-1].last_offset
    if ts_type is TimestampType.NO_TIMESTAMP_TYPE:
        return _NO_TIMESTAMP, -1
    best, at = _NO_TIMESTAMP, -1
    for batch in batches:
        batch_max = max((r.timestamp for r in batch.records), default=_NO_TIMESTAMP)
        if batch_max > best:
            best = batch_max
            at = (
                batch.last_offset
                if batch.magic >= 2 or batch.compression != "none"
                else next(r.offset for r in batch.records if r.timestamp == batch_max)
            )
    if in_place and compressed_path:
        return (now if ts_type is TimestampType.LOG_APPEND_TIME else best), last
    shallow = batches[0].magic >= 2 or batches[0].compression != "none"
    if ts_type is TimestampType.LOG_APPEND_TIME:
        return now, last if shallow else leo
    return best, at
