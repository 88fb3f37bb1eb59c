"""Every fact the inspector reads from the schema model, in one place.

This is the only module of :mod:`kcodec.tools.inspect` that reads the schema
model (:mod:`kcodec.codegen.schema`: plain dataclasses, no YAML, no emitters),
rebuilt from the data the generator wrote (``kcodec.generated.schema_set()``).
The walk itself asks :class:`SchemaModel` which fields an entity version has,
what kind of type each is, where constants and compression codecs sit, and what
enum values mean.

What the walk reads from the objects this module hands out (the interface such
a source has to provide): an entity version's ``name``, ``version``, ``fields``
and ``field(name)``; a resolved field's ``name``, ``type``, ``offset``, ``size``
and ``field`` (``const``, ``enum``, ``error``, ``derived`` with ``kind``,
``covers``, ``of``, ``algorithm``; ``compressed`` with ``contents``); an integer
type's ``name``, ``fixed``, ``width``, ``signed``, ``max_width``; a bits type's
``base`` and ``bits`` (``name``, ``low``, ``width``, ``kind``, ``enum``,
``reserved``, ``span``); a bytes type's ``prefix``, ``nullable``, ``name``,
``text``; an array type's ``prefix``, ``count_field``, ``element``.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any

from kcodec.codegen.schema.ir import INT_TYPES, ArrayType, BitsType, BytesType, EntityRef, Field, IntType, ScalarType
from kcodec.codegen.schema.resolve import ResolvedField, bit_type_text, resolve, type_text

__all__ = ["SchemaModel", "packaged_schemas", "with_records_from", "type_text", "bit_type_text", "int_type"]

#: (offset, width, signed, expected value) of a constant field at a fixed offset.
ConstProbe = tuple[int, int, bool, int]
#: (offset, width, low bit, bit count) of the compression codec id at a fixed offset.
CompressionProbe = tuple[int, int, int, int]


@lru_cache(maxsize=1)
def packaged_schemas():
    """The schemas kcodec's generated code was made from, without reading YAML."""
    import kcodec.generated

    return kcodec.generated.schema_set()


def with_records_from(records):
    """kcodec's schemas with ``records``' entities and enums over them: the log framing (batches, records,
    control record keys) stays kcodec's, the messages a package generated from a user's Kafka version
    defines (its internal records, any Kafka message) are read as that package has them."""
    own = packaged_schemas()
    return dataclasses.replace(own, entities={**own.entities, **records.entities}, enums={**own.enums, **records.enums})


def int_type(name: str) -> IntType:
    """An integer type by its schema name (``int16``, ``uvarint``): the framing Kafka puts around entities
    (compact lengths, tags, record types) is read with these."""
    return INT_TYPES[name]


def type_kind(t) -> str:
    """What the walk does with a field type: "int", "bits", "scalar", "bytes", "entity" or "array"."""
    if isinstance(t, IntType):
        return "int"
    if isinstance(t, ScalarType):
        return "scalar"
    if isinstance(t, BitsType):
        return "bits"
    if isinstance(t, BytesType):
        return "bytes"
    if isinstance(t, EntityRef):
        return "entity"
    if isinstance(t, ArrayType):
        return "array"
    raise TypeError(t)  # pragma: no cover - the loader allows nothing else


def plain_element(path: str, element) -> ResolvedField:
    """A resolved field for one element of an array of plain values (none in Kafka's formats, allowed
    by the schema language)."""
    return ResolvedField(Field(path, "", element, None), element, None, None)


def compression_path(rf) -> tuple[str, ...] | None:
    """The path of the field naming the compression codec of ``rf``'s bytes, when they are compressed."""
    comp = rf.field.compressed
    return comp.codec_path if comp is not None else None


class SchemaModel:
    """Resolved entity versions and the probes the walk needs, cached per entity version."""

    def __init__(self, schemas=None):
        self.schemas = schemas if schemas is not None else packaged_schemas()
        self._resolved: dict[tuple[str, int], Any] = {}
        self._probes: dict[tuple, Any] = {}

    def entity(self, name: str, version: int):
        """``name`` at ``version``: its fields with their fixed offsets and sizes."""
        key = (name, version)
        if key not in self._resolved:
            self._resolved[key] = resolve(self.schemas, self.schemas.entities[name], version)
        return self._resolved[key]

    def has(self, name: str) -> bool:
        return name in self.schemas.entities

    def versions(self, name: str) -> list[int]:
        return self.schemas.entities[name].versions

    def has_version(self, name: str, version: int) -> bool:
        return self.has(name) and version in self.versions(name)

    # ------------------------------------------------------------------ constants at fixed offsets

    def const_probe(self, name: str, version: int, base: int = 0, versioned_only: bool = False) -> ConstProbe | None:
        """The first constant field at a fixed offset, nested entities included; ``versioned_only``
        wants a ``const: version`` field."""
        key = (name, version, base, versioned_only)
        if key not in self._probes:
            self._probes[key] = self._find_const(name, version, base, versioned_only)
        return self._probes[key]

    def _find_const(self, name: str, version: int, base: int, versioned_only: bool) -> ConstProbe | None:
        for rf in self.entity(name, version).fields:
            if rf.offset is None:
                return None
            t = rf.type
            c = rf.field.const
            if c is not None and isinstance(t, IntType) and t.fixed and (c == "version" or not versioned_only):
                return base + rf.offset, t.width, t.signed, version if c == "version" else c
            if isinstance(t, EntityRef):
                found = self.const_probe(t.name, version, base + rf.offset, versioned_only)
                if found:
                    return found
        return None

    def magic_table(self, names: tuple[str, ...]) -> list[tuple[int, int, bool, int, str, int]]:
        """(offset, width, signed, value, entity, version) of the constant that tells each version of
        ``names`` apart, as Kafka's readers tell entries apart by their magic byte."""
        table = []
        for name in names:
            if not self.has(name):
                continue
            for v in self.versions(name):
                probe = self.const_probe(name, v)
                if probe:
                    table.append((*probe, name, v))
        return table

    def version_probe(self, name: str) -> ConstProbe | None:
        """Where an entity that carries its own version (a ``const: version`` field at a fixed offset,
        as a legacy message's magic) keeps it; probed at its first version that has one."""
        for v in self.versions(name):
            probe = self.const_probe(name, v, versioned_only=True)
            if probe:
                return probe
        return None

    # ------------------------------------------------------------------ compression

    def compression_probe(self, name: str, version: int, base: int = 0) -> CompressionProbe | None:
        """The compression codec id that compresses a region of the entity (nested entities included),
        when it sits at a fixed offset; a non-zero id means compressed."""
        ev = self.entity(name, version)
        for rf in ev.fields:
            path = compression_path(rf)
            if path is not None:
                holder = next((f for f in ev.fields if f.name == path[0]), None)
                if holder is None or holder.offset is None:
                    return None
                t = holder.type
                if isinstance(t, BitsType) and len(path) == 2:
                    bit = next((b for b in t.bits if b.name == path[1]), None)
                    if bit is not None:
                        return base + holder.offset, t.base.width, bit.low, bit.width
                elif len(path) == 1 and t.fixed:
                    return base + holder.offset, t.width, 0, 8 * t.width
                return None
            if isinstance(rf.type, EntityRef) and rf.offset is not None:
                found = self.compression_probe(rf.type.name, version, base + rf.offset)
                if found:
                    return found
        return None

    def compression_since(self, compression: str) -> int | None:
        """The first version that allows a compression codec (zstd: 2)."""
        for e in self.schemas.enums.values():
            for v in e.values:
                if v.name == compression and e.name == "compression_type":
                    return v.versions.low
        return None

    # ------------------------------------------------------------------ enums

    def enum(self, name: str):
        """An enum: its ``values`` (``name``, ``value``, ``versions``), ``values_at(version)`` and ``open``."""
        return self.schemas.enums[name]
