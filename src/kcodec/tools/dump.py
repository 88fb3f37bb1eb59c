"""``kcodec dump``: batches and records printed as Kafka's DumpLogSegments
(kafka-dump-log.sh) prints them, so the output diffs against Kafka's tool,
or as NDJSON for scripts."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from kcodec.records.model import Batch, Record, TimestampType
from kcodec.tools.dump_decoders import STRING, DataDecoders

_SEGMENT_NAME = re.compile(r"^(\d{20})\.(log|checkpoint)$")


def _bool(b: bool) -> str:
    return "true" if b else "false"


def batch_line(batch: Batch) -> str:
    if batch.magic >= 2:
        horizon = (
            "OptionalLong.empty" if batch.delete_horizon_ms is None else f"OptionalLong[{batch.delete_horizon_ms}]"
        )
        head = (
            f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset} count: {batch.record_count} "
            f"baseSequence: {batch.base_sequence} lastSequence: {batch.last_sequence} "
            f"producerId: {batch.producer_id} producerEpoch: {batch.producer_epoch} "
            f"partitionLeaderEpoch: {batch.partition_leader_epoch} "
            f"isTransactional: {_bool(batch.is_transactional)} isControl: {_bool(batch.is_control)} "
            f"deleteHorizonMs: {horizon}"
        )
    else:
        head = f"offset: {batch.last_offset}"
    return (
        f"{head} position: {batch.position} {batch.timestamp_type.kafka_name}: {batch.max_timestamp} "
        f"size: {batch.size} magic: {batch.magic} compresscodec: {batch.compression} crc: {batch.crc} "
        f"isvalid: {_bool(batch.crc_valid)}"
    )


def record_line(
    batch: Batch, record: Record, print_data: bool, skip_metadata: bool = False, decoders: DataDecoders = STRING
) -> str:
    """One ``| offset: ...`` line. As DumpLogSegments, ``skip_metadata`` drops the metadata and with it the
    control-record part (a control record's line is then empty), and data is never printed for control
    batches; ``decoders`` turn key and value bytes into text (default: UTF-8, as Kafka's StringDecoder)."""
    parts = []
    if not skip_metadata:
        key_size = -1 if record.key is None else len(record.key)
        value_size = -1 if record.value is None else len(record.value)
        parts.append(
            f"offset: {record.offset} {batch.timestamp_type.kafka_name}: {record.timestamp} "
            f"keySize: {key_size} valueSize: {value_size}"
        )
        if batch.magic >= 2:
            parts.append(f"sequence: {record.sequence} headerKeys: [{','.join(k for k, _ in record.headers)}]")
        else:
            parts.append(f"isValid: {_bool(bool(record.crc_valid))} crc: {record.crc}}}")  # Kafka's stray brace
        if batch.is_control and record.control is not None:
            c = record.control
            if c.is_transaction_marker:
                parts.append(f"endTxnMarker: {c.name} coordinatorEpoch: {c.coordinator_epoch}")
            else:
                parts.append(f"controlType: {c.name}({c.type})")
    if print_data and not batch.is_control:
        if record.key is not None:
            parts.append(f"key: {decoders.key_text(record.key, record.offset)}")
        if record.value is not None:
            parts.append(f"payload: {decoders.value_text(record.value, record.offset)}")
    return "| " + " ".join(parts) if parts else ""


def _hex(b: bytes | None) -> str | None:
    return None if b is None else b.hex()


def record_json(record: Record) -> dict:
    out = {
        "offset": record.offset,
        "timestamp": record.timestamp,
        "timestampType": record.timestamp_type.kafka_name,
        "key": _hex(record.key),
        "value": _hex(record.value),
        "headers": [[k, _hex(v)] for k, v in record.headers],
        "sequence": record.sequence,
    }
    if record.crc is not None:
        out["crc"], out["crcValid"] = record.crc, record.crc_valid
    if record.control is not None:
        c = record.control
        out["control"] = {"type": c.type, "typeName": c.name, "version": c.version}
        if c.is_transaction_marker:
            out["control"].update(coordinatorEpoch=c.coordinator_epoch, valueVersion=c.marker_version)
    return out


def batch_json(batch: Batch, file: str | None = None) -> dict:
    out = {
        "file": file,
        "position": batch.position,
        "size": batch.size,
        "magic": batch.magic,
        "baseOffset": batch.base_offset,
        "lastOffset": batch.last_offset,
        "crc": batch.crc,
        "crcValid": batch.crc_valid,
        "compression": batch.compression,
        "timestampType": batch.timestamp_type.kafka_name,
        "maxTimestamp": batch.max_timestamp,
        "recordCount": batch.record_count,
    }
    if batch.magic >= 2:
        out.update(
            partitionLeaderEpoch=batch.partition_leader_epoch,
            baseTimestamp=batch.base_timestamp,
            producerId=batch.producer_id,
            producerEpoch=batch.producer_epoch,
            baseSequence=batch.base_sequence,
            isTransactional=batch.is_transactional,
            isControl=batch.is_control,
            deleteHorizonMs=batch.delete_horizon_ms,
        )
    out["records"] = [record_json(r) for r in batch.records]
    return out


def batch_ndjson(batch: Batch, file: str | None = None, records_per_piece: int = 4096) -> Iterator[str]:
    """``as_ndjson(batch_json(batch, file))`` in pieces, a few thousand records at a time: a batch can hold
    millions of records (a record-count bomb), which as one string would take gigabytes."""
    head = as_ndjson({**batch_json(replace(batch, records=()), file), "records": None})
    yield head[: -len("null}")] + "["
    piece: list[str] = []
    first = True
    for r in batch.records:
        piece.append(as_ndjson(record_json(r)))
        if len(piece) == records_per_piece:
            yield ("" if first else ",") + ",".join(piece)
            first, piece = False, []
    if piece:
        yield ("" if first else ",") + ",".join(piece)
    yield "]}"


def log_start_offset(path: Path) -> int | None:
    m = _SEGMENT_NAME.match(path.name)
    return int(m.group(1)) if m else None


@dataclass
class DumpResult:
    lines: list[str] = field(default_factory=list)  # what goes to stdout
    warnings: list[str] = field(default_factory=list)  # what goes to stderr


def dump_log_lines(
    path: Path,
    batches,
    deep: bool,
    print_data: bool,
    skip_metadata: bool = False,
    progress=None,
    non_consecutive: list | None = None,
    decoders: DataDecoders = STRING,
    report_tail: bool = True,
) -> Iterator[str]:
    """Kafka's dumpLog for one file, line by line; ``batches`` is a BatchReader.
    Pairs of non-consecutive record offsets are appended to ``non_consecutive``.
    ``report_tail=False`` leaves out the "invalid bytes at the end" line, as Kafka does under --max-bytes."""
    yield f"Dumping {path}"
    start = log_start_offset(path)
    if start is not None:
        yield f"Log starting offset: {start}"
    last = -1
    pairs = non_consecutive if non_consecutive is not None else []
    for batch in batches:
        if progress:
            progress(batch.position + batch.size)
        yield batch_line(batch)
        if deep or print_data:
            for r in batch.records:
                if last != -1 and r.offset != last + 1:
                    pairs.append((last, r.offset))
                last = r.offset
                yield record_line(batch, r, print_data, skip_metadata, decoders)
    if batches.partial_tail is not None and report_tail:
        yield f"Found {batches.partial_tail.size} invalid bytes at the end of {path.name}"


def as_ndjson(obj: dict) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


__all__ = [
    "batch_line",
    "record_line",
    "batch_json",
    "batch_ndjson",
    "record_json",
    "dump_log_lines",
    "as_ndjson",
    "TimestampType",
]
