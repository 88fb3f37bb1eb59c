"""The IR as plain Python literals and back.

The generator prints :func:`to_data` into ``generated/schema.py``; :func:`from_data` rebuilds the
same :class:`SchemaSet` from it, so tools read the schemas without YAML or the generator.
"""

from __future__ import annotations

from typing import Any

from .ir import (
    INT_TYPES,
    SCALAR_TYPES,
    ArrayType,
    Bit,
    BitsType,
    BytesType,
    Compression,
    Default,
    Derived,
    Entity,
    EntityRef,
    Enum,
    EnumValue,
    Field,
    SchemaSet,
    Type,
)
from .versions import VersionRange


def to_data(schemas: SchemaSet) -> dict:
    """Literals only (dicts, lists, strings, ints, bools, None), in a stable order."""
    return {
        # pairs, not a dict: pprint can wrap a pair whose path is long (schemas/internal/...)
        "sources": [list(item) for item in sorted(schemas.sources.items())],
        "enums": [_enum(schemas.enums[n]) for n in sorted(schemas.enums)],
        "entities": [_entity(schemas.entities[n]) for n in sorted(schemas.entities)],
        "registries": {n: schemas.registries[n] for n in sorted(schemas.registries)},
    }


def from_data(data: dict) -> SchemaSet:
    schemas = SchemaSet()
    schemas.sources.update(dict(data["sources"]))
    schemas.registries.update(data.get("registries", {}))
    for e in data["enums"]:
        values = tuple(
            EnumValue(v["name"], v["value"], v["doc"], VersionRange.parse(v["versions"])) for v in e["values"]
        )
        schemas.enums[e["name"]] = Enum(e["name"], e["doc"], values, e["open"], e["error"], e["file"])
    for e in data["entities"]:
        fields = tuple(_field_from(f) for f in e["fields"])
        schemas.entities[e["name"]] = Entity(
            e["name"],
            e["doc"],
            VersionRange.parse(e["valid_versions"]),
            fields,
            e["file"],
            VersionRange.parse(e.get("flexible_versions", "none")),
            e.get("owner"),
        )
    return schemas


def _enum(e: Enum) -> dict:
    return {
        "name": e.name,
        "doc": e.doc,
        "open": e.open,
        "error": e.error,
        "file": e.file,
        "values": [{"name": v.name, "value": v.value, "doc": v.doc, "versions": str(v.versions)} for v in e.values],
    }


def _entity(e: Entity) -> dict:
    out = {
        "name": e.name,
        "doc": e.doc,
        "valid_versions": str(e.valid_versions),
        "file": e.file,
        "fields": [_field(f) for f in e.fields],
    }
    if not e.flexible_versions.empty:  # keys only where used: schemas without them print as before
        out["flexible_versions"] = str(e.flexible_versions)
    if e.owner is not None:
        out["owner"] = e.owner
    return out


def _field(f: Field) -> dict:
    out: dict[str, Any] = {"name": f.name, "doc": f.doc, "type": _type(f.type), "versions": str(f.versions)}
    if f.enum is not None:
        out["enum"] = f.enum
    if f.const is not None:
        out["const"] = f.const
    if f.error != "corrupt":
        out["error"] = f.error
    if f.derived is not None:
        d = f.derived
        out["derived"] = {
            k: v
            for k, v in (("kind", d.kind), ("covers", d.covers), ("of", d.of), ("algorithm", d.algorithm))
            if v is not None
        }
    if f.compressed is not None:
        c = f.compressed
        out["compressed"] = {"codec": ".".join(c.codec_path)}
        if c.contents is not None:
            out["compressed"]["contents"] = _type(c.contents)
        if c.versions is not None:
            out["compressed"]["versions"] = str(c.versions)
    if f.nullable_versions is not None:
        out["nullable_versions"] = str(f.nullable_versions)
    if not f.flexible:
        out["flexible"] = False
    if f.tag is not None:
        out["tag"] = f.tag
        out["tagged_versions"] = str(f.tagged_versions)
    if f.default is not None:
        out["default"] = f.default.value
    return out


def _field_from(f: dict) -> Field:
    derived = Derived(**f["derived"]) if "derived" in f else None
    compressed = None
    if "compressed" in f:
        c = f["compressed"]
        contents = _type_from(c["contents"]) if "contents" in c else None
        versions = VersionRange.parse(c["versions"]) if "versions" in c else None
        compressed = Compression(tuple(c["codec"].split(".")), contents, versions)
    return Field(
        f["name"],
        f["doc"],
        _type_from(f["type"]),
        VersionRange.parse(f["versions"]),
        f.get("enum"),
        f.get("const"),
        f.get("error", "corrupt"),
        derived,
        compressed,
        VersionRange.parse(f["nullable_versions"]) if "nullable_versions" in f else None,
        f.get("flexible", True),
        f.get("tag"),
        VersionRange.parse(f["tagged_versions"]) if "tagged_versions" in f else None,
        Default(f["default"]) if "default" in f else None,
    )


def _type(t: Type) -> str | dict:
    """An integer type by name; every other type a one-key dict naming its kind."""
    if isinstance(t, BitsType):
        return {
            "bits": t.base.name,
            "groups": [
                {
                    "name": b.name,
                    "low": b.low,
                    "width": b.width,
                    "doc": b.doc,
                    "versions": str(b.versions),
                    "enum": b.enum,
                    "reserved": b.reserved,
                }
                for b in t.bits
            ],
        }
    if isinstance(t, BytesType):
        return {"bytes": t.prefix.name if t.prefix else None, "nullable": t.nullable, "text": t.text}
    if isinstance(t, EntityRef):
        return {"entity": t.name, "nullable": True} if t.nullable else {"entity": t.name}
    if isinstance(t, ArrayType):
        out: dict[str, object] = {
            "array": _type(t.element),
            "prefix": t.prefix.name if t.prefix else None,
            "count": t.count_field,
        }
        if t.nullable:
            out["nullable"] = True
        return out
    return t.name  # integers and scalars (bool, float64, uuid) by name


def _type_from(t: str | dict) -> Type:
    if isinstance(t, str):
        return INT_TYPES[t] if t in INT_TYPES else SCALAR_TYPES[t]
    if "bits" in t:
        return BitsType(
            INT_TYPES[t["bits"]],
            tuple(
                Bit(
                    b["name"],
                    b["low"],
                    b["width"],
                    b["doc"],
                    VersionRange.parse(b["versions"]),
                    b["enum"],
                    b["reserved"],
                )
                for b in t["groups"]
            ),
        )
    if "bytes" in t:
        return BytesType(INT_TYPES[t["bytes"]] if t["bytes"] else None, t["nullable"], t["text"])
    if "entity" in t:
        return EntityRef(t["entity"], t.get("nullable", False))
    prefix = INT_TYPES[t["prefix"]] if t["prefix"] else None
    return ArrayType(_type_from(t["array"]), prefix, t["count"], t.get("nullable", False))
