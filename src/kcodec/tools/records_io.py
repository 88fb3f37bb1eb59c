"""JSON lines in and out of kcodec: what ``kcodec write`` reads.

One object per line: ``{"key": ..., "value": ..., "headers": [[k, v], ...] or
{k: v}, "timestamp": ms, "offset": n}`` (all optional). Keys, values and
header values are text in the chosen encoding (utf8, hex or base64); null is
null. A line holding a ``records`` list (what ``kcodec dump --json`` prints,
bytes as hex) contributes each of its records, so dump and write round-trip.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Iterator

from kcodec.errors import EncodeError

ENCODINGS = ("utf8", "hex", "base64")


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
    out = {
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


def read_json_records(
    lines: Iterable[str | bytes], encoding: str = "utf8", keep_offsets: bool = False, name: str = "input"
) -> Iterator[dict]:
    """Records (dicts for kcodec.encode_batch) from JSON lines (text, or bytes that must be UTF-8)."""
    for n, line in enumerate(lines, 1):
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
            records = obj["records"]
            if records is not None and not isinstance(records, list):
                raise EncodeError(f"{where}: records must be an array, not {_json_type(records)}")
            for j, rec in enumerate(records or []):
                if not isinstance(rec, dict):
                    raise EncodeError(f"{where} record {j}: a record must be a JSON object, not {_json_type(rec)}")
                if rec.get("control"):
                    continue  # control records are written by the broker, not replayed
                yield parse_record(rec, "hex", f"{where} record {j}", keep_offsets)
        else:
            yield parse_record(obj, encoding, where, keep_offsets)
