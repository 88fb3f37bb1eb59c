"""Decoded values as JSON text, exact: a decimal prints its own digits as a JSON number (never through a
float), bytes print as base64 (as Protobuf's JSON mapping does), timestamps, dates and times in ISO 8601,
UUIDs as text; floats that JSON cannot hold (NaN, infinities) as strings."""

from __future__ import annotations

import base64
import datetime
import json
import math
import uuid
from decimal import Decimal
from typing import Any

__all__ = ["value_json", "jsonable"]


def jsonable(value: Any) -> Any:
    """The value with every leaf JSON holds as-is (Decimal stays Decimal: :func:`value_json` prints it)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _write(value: Any, out: list[str]) -> None:
    if isinstance(value, dict):
        out.append("{")
        for n, (k, v) in enumerate(value.items()):
            out.append("," if n else "")
            out.append(json.dumps(k, ensure_ascii=False))
            out.append(":")
            _write(v, out)
        out.append("}")
    elif isinstance(value, list):
        out.append("[")
        for n, v in enumerate(value):
            out.append("," if n else "")
            _write(v, out)
        out.append("]")
    elif isinstance(value, Decimal):
        out.append(format(value, "f") if value.is_finite() else json.dumps(str(value)))  # 0.00000000, not 0E-8
    else:
        out.append(json.dumps(value, ensure_ascii=False))


def value_json(value: Any) -> str:
    """Compact JSON text of a decoded value (see the module's doc)."""
    out: list[str] = []
    _write(jsonable(value), out)
    return "".join(out)
