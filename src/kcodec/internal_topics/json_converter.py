"""A decoded entity as the JSON Kafka's generated ``*JsonConverter.write`` prints, walked from the IR:
lowerCamel field names in schema order, only the fields of the version read, tagged fields only when they
differ from their defaults, int64 as numbers, bytes as base64, uuids as URL-safe base64 without padding.
:func:`from_kafka_json` reads that JSON back into the value the codecs build (fields left out take their
defaults, as Kafka's ``*JsonConverter.read`` gives them)."""

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
from kcodec.errors import EncodeError
from kcodec.runtime.tagged import is_default
from kcodec.runtime.uuids import uuid_from_text, uuid_to_text

__all__ = ["camel", "kafka_json", "from_kafka_json", "compact_json"]


def _schemas() -> SchemaSet:
    from kcodec.internal_topics.registry import PACKAGED

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


def from_kafka_json(entity: str, version: int, obj: Any, schemas: SchemaSet | None = None, path: str = "") -> dict:
    """Kafka's JSON object of ``entity`` v``version`` as the value its codec builds: lowerCamel names,
    uuids as text, bytes as base64; a field left out takes its default. An EncodeError names the field
    (``topics[0].name``) whose JSON does not fit its type, and any name the version does not have."""
    schemas = schemas or _schemas()
    ev = _resolved(schemas, entity, version)
    where = path or f"{entity} v{version}"
    if not isinstance(obj, dict):
        raise EncodeError(f"{where}: a JSON object is expected, not {type(obj).__name__}")
    fields = (*ev.fields, *ev.tagged)
    unknown = sorted(set(obj) - {camel(f.name) for f in fields})
    if unknown:
        raise EncodeError(f"{where}: no field(s) {', '.join(unknown)} at version {version}")
    out: dict = {}
    for f in fields:
        key = camel(f.name)
        at = f"{path}.{key}" if path else key
        out[f.name] = _from_json(f.type, obj[key], version, schemas, at) if key in obj else default_value(ev, f)
    return out


def _from_json(t: Type, v: Any, version: int, schemas: SchemaSet, at: str) -> Any:
    if v is None:
        return None  # the codec refuses null where the field is not nullable, naming it
    if isinstance(t, EntityRef):
        return from_kafka_json(t.name, version, v, schemas, at)
    if isinstance(t, ArrayType):
        if not isinstance(v, list):
            raise EncodeError(f"{at}: a JSON array is expected")
        return [_from_json(t.element, x, version, schemas, f"{at}[{i}]") for i, x in enumerate(v)]
    try:
        if isinstance(t, BytesType):
            if not isinstance(v, str):
                raise ValueError("a string is expected" + ("" if t.text else " (base64)"))
            return v if t.text else base64.b64decode(v, validate=True)
        if isinstance(t, ScalarType) and t.name == "uuid":
            return uuid_from_text(v)
        if isinstance(t, ScalarType) and t.name == "bool":
            if not isinstance(v, bool):
                raise ValueError("true or false is expected")
            return v
        if isinstance(t, ScalarType):  # float64
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ValueError("a number is expected")
            return float(v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError("an integer is expected")
        return v
    except ValueError as exc:
        raise EncodeError(f"{at}: {exc}, not {json.dumps(v)[:40]}") from None


def compact_json(obj: Any) -> str:
    """JSON as Jackson's ``toString`` prints it: no spaces, non-ASCII kept."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
