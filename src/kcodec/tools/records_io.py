"""JSON lines in and out of kcodec: what ``kcodec write`` reads.

One object per line: ``{"key": ..., "value": ..., "headers": [[k, v], ...] or
{k: v}, "timestamp": ms, "offset": n}`` (all optional). Keys, values and
header values are text in the chosen encoding (utf8, hex or base64); null is
null. A line holding a ``records`` list (what ``kcodec dump --json`` prints,
bytes as hex unless its ``bytesEncoding`` names another) is one :class:`DumpedBatch`: its records with the batch's
producer id, epoch and base sequence, transactional flag, partition leader
epoch and, for a control batch, its COMMIT/ABORT (or KRaft) record, so dump
and write round-trip without turning an aborted transaction into a committed one;
and its magic, compression, LogAppendTime and delete horizon, which ``kcodec write``
keeps unless told otherwise.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kcodec.errors import EncodeError

ENCODINGS = ("utf8", "hex", "base64")
DUMP_ENCODING = "hex"  # how kcodec dump --json writes bytes unless --bytes-encoding says otherwise


def encode_bytes(data: bytes | None, encoding: str, where: str) -> str | None:
    """``data`` as JSON text in one of ENCODINGS, the inverse of what ``kcodec write`` reads; bytes that
    are not UTF-8 are refused under utf8 (a replacement character would not read back as them)."""
    if data is None:
        return None
    if encoding == "hex":
        return data.hex()
    if encoding == "base64":
        return base64.b64encode(data).decode("ascii")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EncodeError(
            f"{where} is not UTF-8 (byte 0x{data[exc.start]:02x} at {exc.start}): "
            "--bytes-encoding hex or base64 keeps any bytes"
        ) from None


# RecordBatch.NO_PRODUCER_ID / NO_PRODUCER_EPOCH / NO_SEQUENCE / NO_PARTITION_LEADER_EPOCH
_NONE = -1


@dataclass
class ControlRecord:
    """The record of a control batch: its type name, offset, timestamp and what its value holds."""

    type_name: str
    offset: int | None
    timestamp: int
    coordinator_epoch: int = 0
    value: bytes | None = None


@dataclass
class DumpedBatch:
    """One batch line of ``kcodec dump --json``: written back as one batch."""

    where: str
    records: list[dict] = field(default_factory=list)
    producer_id: int = _NONE
    producer_epoch: int = _NONE
    base_sequence: int = _NONE
    transactional: bool = False
    partition_leader_epoch: int = _NONE
    control: ControlRecord | None = None
    magic: int | None = None  # the format and codec it was written in (None: the writer's defaults)
    compression: str | None = None
    log_append_time: int | None = None  # its maxTimestamp, when its timestamps are LogAppendTime
    delete_horizon_ms: int | None = None

    @property
    def keeps_producer_state(self) -> bool:
        return (
            self.transactional
            or self.control is not None
            or (self.producer_id, self.producer_epoch, self.base_sequence) != (_NONE, _NONE, _NONE)
        )


def _decode(text, encoding: str, where: str) -> bytes | None:
    if text is None:
        return None
    if not isinstance(text, str):
        raise EncodeError(f"{where} must be a string or null, not {type(text).__name__}")
    try:
        if encoding == "hex":
            return bytes.fromhex(text)
        if encoding == "base64":
            return base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error):
        raise EncodeError(f"{where} is not valid {encoding}") from None
    return _utf8(text, where)


def _utf8(text: str, where: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:  # JSON's \ud800 escapes give lone surrogates, which UTF-8 cannot hold
        raise EncodeError(
            f"{where} holds {text[exc.start]!r} at character {exc.start}, a lone surrogate that UTF-8 cannot encode"
        ) from None


def _headers(value, encoding: str, where: str) -> list[tuple[str, bytes | None]]:
    if value is None:
        return []
    if not isinstance(value, (dict, list)):
        raise EncodeError(
            f"{where}: headers must be a list of [key, value] pairs or an object, not {_json_type(value)}"
        )
    items = value.items() if isinstance(value, dict) else value
    out = []
    for i, item in enumerate(items):
        try:
            key, val = item
        except (TypeError, ValueError):
            raise EncodeError(f"{where} header {i} must be a [key, value] pair") from None
        if not isinstance(key, str):
            raise EncodeError(f"{where} header {i} key must be a string")
        _utf8(key, f"{where} header {i} key")
        out.append((key, _decode(val, encoding, f"{where} header {key!r}")))
    return out


def _json_type(value) -> str:
    """The JSON name of a parsed value's type, as the user wrote it."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def parse_record(obj: dict, encoding: str, where: str, keep_offsets: bool) -> dict:
    if not isinstance(obj, dict):
        raise EncodeError(f"{where}: a record must be a JSON object, not {_json_type(obj)}")
    unknown = set(obj) - {
        "key",
        "value",
        "headers",
        "timestamp",
        "offset",
        "timestampType",
        "sequence",
        "crc",
        "crcValid",
        "control",
    }
    if unknown:
        raise EncodeError(f"{where}: unknown field(s) {sorted(unknown)}")
    out: dict[str, object] = {
        "key": _decode(obj.get("key"), encoding, f"{where} key"),
        "value": _decode(obj.get("value"), encoding, f"{where} value"),
        "headers": _headers(obj.get("headers"), encoding, where),
    }
    ts = obj.get("timestamp")
    if ts is not None:
        if not isinstance(ts, int) or isinstance(ts, bool):
            raise EncodeError(f"{where}: timestamp must be an integer (epoch ms)")
        out["timestamp"] = ts
    if keep_offsets and obj.get("offset") is not None:
        out["offset"] = obj["offset"]
    return out


def _int_field(obj: dict, name: str, where: str, default: int = _NONE) -> int:
    value = obj.get(name, default)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise EncodeError(f"{where}: {name} must be an integer")
    return value


def _control_record(rec: dict, where: str, encoding: str) -> ControlRecord:
    control = rec["control"]
    if not isinstance(control, dict) or not isinstance(control.get("typeName"), str):
        raise EncodeError(f"{where}: a control record needs control.typeName")
    ts = rec.get("timestamp", _NONE)
    if not isinstance(ts, int) or isinstance(ts, bool):
        raise EncodeError(f"{where}: timestamp must be an integer (epoch ms)")
    offset = rec.get("offset")
    if offset is not None and (not isinstance(offset, int) or isinstance(offset, bool)):
        raise EncodeError(f"{where}: offset must be an integer")
    return ControlRecord(
        type_name=control["typeName"],
        offset=offset,
        timestamp=ts,
        coordinator_epoch=_int_field(control, "coordinatorEpoch", where, 0),
        value=_decode(rec.get("value"), encoding, f"{where} value"),
    )


def parse_dumped_batch(obj: dict, where: str, keep_offsets: bool) -> DumpedBatch:
    """A batch line of ``kcodec dump --json`` with the state a re-write must keep."""
    from kcodec.records.model import TimestampType  # not at import: the command line's parser imports this module

    records = obj["records"] or []
    encoding = obj.get("bytesEncoding", DUMP_ENCODING)
    if encoding not in ENCODINGS:
        raise EncodeError(f"{where}: bytesEncoding must be one of {', '.join(ENCODINGS)}, not {encoding!r}")
    if not isinstance(records, list):
        raise EncodeError(f"{where}: records must be an array, not {_json_type(records)}")
    transactional = obj.get("isTransactional", False)
    if not isinstance(transactional, bool):
        raise EncodeError(f"{where}: isTransactional must be true or false")
    magic = obj.get("magic")
    if magic is not None and (type(magic) is not int or magic not in (0, 1, 2)):
        raise EncodeError(f"{where}: magic must be 0, 1 or 2, not {magic!r}")
    compression = obj.get("compression")
    if compression is not None and not isinstance(compression, str):
        raise EncodeError(f"{where}: compression must be a codec name, not {_json_type(compression)}")
    log_append = obj.get("timestampType") == TimestampType.LOG_APPEND_TIME.kafka_name
    batch = DumpedBatch(
        where,
        producer_id=_int_field(obj, "producerId", where),
        producer_epoch=_int_field(obj, "producerEpoch", where),
        base_sequence=_int_field(obj, "baseSequence", where),
        transactional=transactional,
        partition_leader_epoch=_int_field(obj, "partitionLeaderEpoch", where),
        magic=magic,
        compression=compression,
        log_append_time=_int_field(obj, "maxTimestamp", where) if log_append else None,
        delete_horizon_ms=None if obj.get("deleteHorizonMs") is None else _int_field(obj, "deleteHorizonMs", where),
    )
    for j, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise EncodeError(f"{where} record {j}: a record must be a JSON object, not {_json_type(rec)}")
        if rec.get("control"):
            if obj.get("isControl") is not True or len(records) != 1:
                raise EncodeError(f"{where} record {j}: a control record belongs alone in a control batch")
            batch.control = _control_record(rec, f"{where} record {j}", encoding)
        else:
            batch.records.append(parse_record(rec, encoding, f"{where} record {j}", keep_offsets))
    if obj.get("isControl") is True and batch.control is None:
        raise EncodeError(f"{where}: a control batch without its control record cannot be written back")
    return batch


def read_json_records(
    lines: Iterable[str | bytes],
    encoding: str = "utf8",
    keep_offsets: bool = False,
    name: str = "input",
    first_line: int = 1,
) -> Iterator[dict | DumpedBatch]:
    """Records (dicts for kcodec.encode_batch) from JSON lines (text, or bytes that must be UTF-8), and
    :class:`DumpedBatch` for each batch line of ``kcodec dump --json``; errors name the line, counted
    from ``first_line``."""
    for n, line in enumerate(lines, first_line):
        where = f"{name} line {n}"
        if isinstance(line, (bytes, bytearray)):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise EncodeError(
                    f"{where}: not UTF-8 (byte 0x{line[exc.start]:02x} at column {exc.start + 1})"
                ) from None
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EncodeError(f"{where}: not JSON ({exc.msg})") from None
        except RecursionError:
            raise EncodeError(f"{where}: JSON nested too deeply") from None
        if isinstance(obj, dict) and "records" in obj:  # a batch from `kcodec dump --json`
            if obj.get("partialBatch"):
                continue
            yield parse_dumped_batch(obj, where, keep_offsets)
        else:
            yield parse_record(obj, encoding, where, keep_offsets)
