"""The packaged schemas, loaded once per process (on first import), with every entity version they define
(tests parametrize over them); the kitchen-sink set is tests.helpers.paths.SINK."""

from __future__ import annotations

from pathlib import Path

import kcodec.schemas
from kcodec.codegen import load_schemas
from kcodec.codegen.schema import ArrayType, EntityRef, default_value, resolve, resolve_all

SCHEMA_DIR = Path(kcodec.schemas.__path__[0])
SCHEMAS = load_schemas(SCHEMA_DIR)
ENTITY_VERSIONS = [(ev.name, ev.version) for ev in resolve_all(SCHEMAS)]


def as_tuple(entity, version, value):
    """A value dict of the packaged schemas as the fast encoder's tuple (nested entities too)."""
    ev = resolve(SCHEMAS, SCHEMAS.entities[entity], version)
    out = []
    for f in (*ev.fields, *ev.tagged, *ev.absent):  # the fast values' order (EntityVersion.value_names)
        if f.name not in value and f.field.default is not None or f in ev.tagged and f.name not in value:
            out.append(default_value(ev, f, tuples=True))
            continue
        v = value.get(f.name)
        t = f.type
        if f.field.compressed and f.field.compressed.contents is not None and isinstance(v, list):
            t = f.field.compressed.contents
        if isinstance(t, EntityRef) and v is not None:
            v = as_tuple(t.name, version, v)
        elif isinstance(t, ArrayType) and isinstance(t.element, EntityRef) and v is not None:
            v = [as_tuple(t.element.name, version, x) for x in v]
        out.append(v)
    if ev.flexible:
        out.append(value.get("_unknown_tags", []))
    return tuple(out)
