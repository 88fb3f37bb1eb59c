"""Layout tables: where each field of an entity version sits.

Generated modules fill these in from the schemas so tools (``kcodec layout``,
inspectors) can print layouts without loading the generator.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import asdict, dataclass
from functools import cache


@dataclass(frozen=True)
class FieldLayout:
    """One field (or one bit group of a field) of an entity version."""

    name: str  # schema path: "crc", "attributes.compression"
    offset: int | None  # byte offset from the entity start; None when it depends on the value
    size: int | None  # bytes; None when variable
    type: str  # schema type, e.g. "int32", "varint", "bytes (int32 length, nullable)"
    versions: str  # the field's version range in Kafka's notation
    doc: str
    note: str = ""  # derived / const / compression facts, e.g. "crc32c of 21..end"
    bits: str | None = None  # "0-2" for a bit group

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class EntityLayout:
    """The layout of one entity at one version."""

    entity: str
    version: int
    doc: str
    fields: tuple[FieldLayout, ...]
    min_overhead: int  # bytes with empty payloads (nested entities and arrays count 0)
    max_overhead: int  # the same, with every varint at its widest
    fixed_size: int | None  # the whole entity, when nothing in it varies

    @property
    def overhead(self) -> int | None:
        return self.min_overhead if self.min_overhead == self.max_overhead else None

    def field(self, name: str) -> FieldLayout:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    def as_dict(self) -> dict:
        return {
            "entity": self.entity,
            "version": self.version,
            "doc": self.doc,
            "min_overhead": self.min_overhead,
            "max_overhead": self.max_overhead,
            "fixed_size": self.fixed_size,
            "fields": [f.as_dict() for f in self.fields],
        }


@cache
def _positions_class(name: str, fields: tuple[str, ...]) -> type:
    # a flexible version's ``_unknown_tags`` is read as ``unknown_tags`` (a namedtuple field cannot start with
    # an underscore); any other name Python refuses becomes ``_<position>``
    names = [n.lstrip("_") if n.startswith("_") and n.lstrip("_") not in fields else n for n in fields]
    return namedtuple(name, names, rename=True)


def field_positions(name: str, fields: tuple[str, ...]):
    """Each field's position in a fast decoder's values, by name: ``at.base_offset`` is where
    ``decode_record_batch_v2`` puts the base offset (the values stay plain tuples, as the compiled kernel
    returns them). A generated module makes one per entity version (``AT_RECORD_BATCH_V2``)."""
    return _positions_class(name, fields)(*range(len(fields)))
