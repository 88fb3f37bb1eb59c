"""A decoded entity as the JSON Kafka's generated ``*JsonConverter.write`` prints, walked from the IR:
lowerCamel field names in schema order, only the fields of the version read, tagged fields only when they
differ from their defaults, int64 as numbers, bytes as base64, uuids as URL-safe base64 without padding."""

from __future__ import annotations

import base64
import json
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


def _schemas() -> SchemaSet:
    from kcodec.records.internal import PACKAGED

    return PACKAGED.schema_set()


_RESOLVED: dict[tuple[int, str, int], EntityVersion] = {}


def _resolved(schemas: SchemaSet, entity: str, version: int) -> EntityVersion:
    key = (id(schemas), entity, version)  # a SchemaSet lives as long as the package it came from
    if key not in _RESOLVED:
        _RESOLVED[key] = resolve(schemas, schemas.entities[entity], version)
    return _RESOLVED[key]


def camel(name: str) -> str:
    """Kafka's JSON name of a field: ``leader_epoch`` -> ``leaderEpoch``, ``k_raft_version`` -> ``kRaftVersion``."""
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def kafka_json(entity: str, version: int, value: Any, schemas: SchemaSet | None = None) -> dict:
    """``value`` (a parsed entity: a mapping) as Kafka's JSON object; ``schemas``: the IR of the codecs
    that parsed it (default: kcodec's own)."""
    schemas = schemas or _schemas()
    ev = _resolved(schemas, entity, version)
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
        out[camel(fld.name)] = _json_value(f.type, value[fld.name], version, schemas)
    return out


def _json_value(t: Type, v: Any, version: int, schemas: SchemaSet) -> Any:
    if v is None:
        return None
    if isinstance(t, ScalarType):
        return uuid_to_text(v) if t.name == "uuid" else v
    if isinstance(t, BytesType):
        return v if t.text else base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(t, EntityRef):
        return kafka_json(t.name, version, v, schemas)
    if isinstance(t, ArrayType):
        return [_json_value(t.element, x, version, schemas) for x in v]
    return v  # integers (Kafka prints every integer as a JSON number)


def compact_json(obj: Any) -> str:
    """JSON as Jackson's ``toString`` prints it: no spaces, non-ASCII kept."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
