"""A decoded entity as the JSON Kafka's generated ``*JsonConverter.write`` prints, walked from the IR:
lowerCamel field names in schema order, only the fields of the version read, tagged fields only when they
differ from their defaults, int64 as numbers, bytes as base64, uuids as URL-safe base64 without padding."""

from __future__ import annotations

import base64
import json
from functools import cache
from typing import Any

from kcodec.codegen.schema import (
    ArrayType,
    BytesType,
    EntityRef,
    EntityVersion,
    ScalarType,
    SchemaSet,
    Type,
    default_value,
    resolve,
)
from kcodec.runtime.tagged import is_default
from kcodec.runtime.uuids import uuid_to_text

__all__ = ["camel", "kafka_json", "compact_json"]


@cache
def _schemas() -> SchemaSet:
    from kcodec.generated import schema_set

    return schema_set()


@cache
def _resolved(entity: str, version: int) -> EntityVersion:
    schemas = _schemas()
    return resolve(schemas, schemas.entities[entity], version)


def camel(name: str) -> str:
    """Kafka's JSON name of a field: ``leader_epoch`` -> ``leaderEpoch``, ``k_raft_version`` -> ``kRaftVersion``."""
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def kafka_json(entity: str, version: int, value: Any) -> dict:
    """``value`` (a parsed entity: a mapping) as Kafka's JSON object."""
    ev = _resolved(entity, version)
    present = {f.name: f for f in ev.fields}
    tagged = {f.name: f for f in ev.tagged}
    out: dict = {}
    for fld in ev.entity.fields:  # schema order, tagged fields in place, as Kafka's converters write them
        if fld.name in present:
            f = present[fld.name]
        elif fld.name in tagged:
            f = tagged[fld.name]
            if is_default(value[fld.name], default_value(ev, f)):
                continue
        else:
            continue
        out[camel(fld.name)] = _json_value(f.type, value[fld.name], version)
    return out


def _json_value(t: Type, v: Any, version: int) -> Any:
    if v is None:
        return None
    if isinstance(t, ScalarType):
        return uuid_to_text(v) if t.name == "uuid" else v
    if isinstance(t, BytesType):
        return v if t.text else base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(t, EntityRef):
        return kafka_json(t.name, version, v)
    if isinstance(t, ArrayType):
        return [_json_value(t.element, x, version) for x in v]
    return v  # integers (Kafka prints every integer as a JSON number)


def compact_json(obj: Any) -> str:
    """JSON as Jackson's ``toString`` prints it: no spaces, non-ASCII kept."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
