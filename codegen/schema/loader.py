"""Load schemas/*.yaml into the IR, validating as we go.

Every error is a :class:`kcodec.errors.SchemaError` naming the file, the
entity and the field, so a broken schema points at the line to fix.

The only module that reads YAML, and it imports PyYAML when it loads: tools
that only need the IR rebuild it from ``kcodec.generated.schema_set()``.
"""

from __future__ import annotations

import hashlib
import keyword
import re
from pathlib import Path
from typing import TypeGuard

from kcodec.errors import SchemaError

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
    IntType,
    ScalarType,
    SchemaSet,
    Type,
)
from .versions import MAX_VERSION_SPAN, VersionRange

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_ENTITY_KEYS = {"entity", "doc", "valid_versions", "fields", "flexible_versions", "structs"}
_STRUCT_KEYS = {"name", "doc", "fields"}
_FIELD_KEYS = {
    "name",
    "type",
    "doc",
    "versions",
    "prefix",
    "nullable",
    "count",
    "enum",
    "const",
    "error",
    "derived",
    "compressed",
    "bits",
    "nullable_versions",
    "flexible",
    "tag",
    "tagged_versions",
    "default",
    "fields",
    "struct",
}
_BIT_KEYS = {"name", "bits", "doc", "enum", "reserved", "versions"}
_ENUM_KEYS = {"doc", "values", "open", "error"}
_ERROR_KINDS = {"corrupt", "compression", "magic"}
_PREFIX_TYPES = {"int16", "int32", "varint", "uvarint"}
_CRC_ALGORITHMS = {"crc32", "crc32c"}


class _Ctx:
    """Where we are, so errors can say it."""

    def __init__(self, file: str, entity: str | None = None, field: str | None = None, structs: dict | None = None):
        self.file, self.entity, self.field = file, entity, field
        self.structs: dict[str, str] = {} if structs is None else structs  # this file's struct name -> entity

    def at(self, field: str) -> _Ctx:
        return _Ctx(self.file, self.entity, field, self.structs)

    def error(self, message: str) -> SchemaError:
        return SchemaError(message, file=self.file, entity=self.entity, field=self.field)


def load_schemas(directory: str | Path) -> SchemaSet:
    """Read every ``*.yaml`` file of ``directory`` into a validated :class:`SchemaSet`."""
    directory = Path(directory)
    if not directory.is_dir():
        raise SchemaError(f"schema directory {directory} does not exist")
    files = sorted(directory.rglob("*.yaml"))  # subfolders group Kafka's internal topics (schemas/internal/)
    if not files:
        raise SchemaError(f"no *.yaml schema files in {directory}")
    import yaml  # the `generate` extra: only reading schema files needs it

    schemas = SchemaSet()
    raw_entities: list[tuple[_Ctx, dict]] = []
    raw_registries: list[tuple[_Ctx, object]] = []
    for path in files:
        data = path.read_bytes()
        name = path.relative_to(directory).as_posix()
        schemas.sources[name] = hashlib.sha256(data).hexdigest()
        ctx = _Ctx(name)
        try:
            doc = yaml.safe_load(data)
        except yaml.YAMLError as exc:
            raise ctx.error(f"not valid YAML: {str(exc).splitlines()[0]}") from None
        if not isinstance(doc, dict):
            raise ctx.error("a schema file must be a mapping with 'entity' or 'enums'")
        if "enums" in doc:
            if set(doc) != {"enums"}:
                raise ctx.error("a file with 'enums' holds nothing else")
            _load_enums(ctx, doc["enums"], schemas)
        elif "entity" in doc:
            raw_entities.append((ctx, doc))
        elif "registries" in doc:
            if set(doc) != {"registries"}:
                raise ctx.error("a file with 'registries' holds nothing else")
            raw_registries.append((ctx, doc["registries"]))
        else:
            raise ctx.error("a schema file must define an 'entity', 'enums' or 'registries'")
    for ctx, doc in raw_entities:
        entity = _load_entity(ctx, doc, schemas)
        if entity.name in schemas.entities:
            raise ctx.error(f"entity {entity.name!r} is also defined in {schemas.entities[entity.name].file}")
        schemas.entities[entity.name] = entity
    for entity in list(schemas.entities.values()):
        _check_references(entity, schemas)
    for ctx, registries in raw_registries:
        _load_registries(ctx, registries, schemas)
    return schemas


# ---------------------------------------------------------------------------- registries

_FRAMINGS = {"coordinator", "metadata", "control"}
_REGISTRY_KEYS = {"doc", "framing", "topics", "records"}
_RECORD_KEYS = {"type", "name", "key", "value", "doc"}


def _load_registries(ctx: _Ctx, spec: object, schemas: SchemaSet) -> None:
    """How each internal topic frames its records (record type -> entities), kept as plain data."""
    if not isinstance(spec, dict):
        raise ctx.error("'registries' maps registry names to {doc, framing, topics, records}")
    for name, reg in spec.items():
        rctx = _Ctx(ctx.file, f"registry {name}")
        if not isinstance(name, str) or not _NAME.match(name):
            raise rctx.error("registry names are lower_snake_case")
        if name in schemas.registries:
            raise rctx.error(f"registry {name!r} is defined twice")
        if not isinstance(reg, dict):
            raise rctx.error("a registry is a mapping")
        _no_unknown_keys(rctx, reg, _REGISTRY_KEYS)
        framing = reg.get("framing")
        if not _one_of(framing, _FRAMINGS):
            raise rctx.error(f"'framing' must be one of {sorted(_FRAMINGS)}")
        topics = reg.get("topics", [])
        if not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
            raise rctx.error("'topics' is a list of topic names")
        records, seen = [], set()
        for item in reg.get("records") or []:
            if not isinstance(item, dict):
                raise rctx.error("each record is {type, name, key?, value, doc?}")
            _no_unknown_keys(rctx, item, _RECORD_KEYS)
            rtype, rname = item.get("type"), item.get("name")
            ictx = rctx.at(str(rname))
            if not isinstance(rtype, int) or isinstance(rtype, bool) or rtype < 0 or rtype in seen:
                raise ictx.error("'type' is a non-negative integer, unique in its registry")
            seen.add(rtype)
            if not isinstance(rname, str) or not _NAME.match(rname):
                raise ictx.error("record names are lower_snake_case")
            if ("key" in item) != (framing == "coordinator"):
                raise ictx.error("coordinator records name a 'key' entity; other framings have none")
            for role in ("key", "value"):
                if role in item and item[role] not in schemas.entities:
                    raise ictx.error(f"{role} {item[role]!r} is not an entity")
            if "value" not in item:
                raise ictx.error("each record names its 'value' entity")
            records.append({k: item[k] for k in ("type", "name", "key", "value") if k in item})
        schemas.registries[name] = {
            "doc": _doc(rctx, reg),
            "framing": framing,
            "topics": list(topics),
            "records": sorted(records, key=lambda r: r["type"]),
            "file": ctx.file,
        }


# ---------------------------------------------------------------------------- enums


def _load_enums(ctx: _Ctx, enums: object, schemas: SchemaSet) -> None:
    if not isinstance(enums, dict):
        raise ctx.error("'enums' must map enum names to definitions")
    for name, spec in enums.items():
        ectx = _Ctx(ctx.file, f"enum {name}")
        if not isinstance(name, str) or not _NAME.match(name):
            raise ectx.error("enum names are lower_snake_case")
        if name in schemas.enums:
            raise ectx.error(f"enum {name!r} is defined twice")
        if not isinstance(spec, dict):
            raise ectx.error("an enum is a mapping with 'doc' and 'values'")
        _no_unknown_keys(ectx, spec, _ENUM_KEYS)
        doc = _doc(ectx, spec)
        error = spec.get("error", "corrupt")
        if not _one_of(error, _ERROR_KINDS):
            raise ectx.error(f"'error' must be one of {sorted(_ERROR_KINDS)}")
        values = spec.get("values")
        if not isinstance(values, list) or not values:
            raise ectx.error("'values' must be a non-empty list")
        seen_names, seen_values, out = set(), set(), []
        for item in values:
            if not isinstance(item, dict) or set(item) - {"name", "value", "doc", "versions"}:
                raise ectx.error(f"enum value {item!r} must be {{name, value, doc, versions?}}")
            vname, value = item.get("name"), item.get("value")
            vctx = ectx.at(str(vname))
            if not isinstance(vname, str) or not _NAME.match(vname):
                raise vctx.error("enum value names are lower_snake_case")
            if not isinstance(value, int) or isinstance(value, bool):
                raise vctx.error("enum 'value' must be an integer")
            if vname in seen_names or value in seen_values:
                raise vctx.error("enum value names and numbers must be unique")
            seen_names.add(vname)
            seen_values.add(value)
            out.append(EnumValue(vname, value, _doc(vctx, item), _versions(vctx, item.get("versions", "0+"))))
        schemas.enums[name] = Enum(name, doc, tuple(out), bool(spec.get("open", False)), error, ctx.file)


# ---------------------------------------------------------------------------- entities


def _load_entity(ctx: _Ctx, doc: dict, schemas: SchemaSet, named_by_file: bool = True) -> Entity:
    name = doc.get("entity")
    ctx = _Ctx(ctx.file, str(name))
    _no_unknown_keys(ctx, doc, _ENTITY_KEYS)
    if not isinstance(name, str) or not _NAME.match(name):
        raise ctx.error("entity names are lower_snake_case")
    if keyword.iskeyword(name):  # the entity's module is imported by its name
        raise ctx.error(f"entity name {name!r} is a Python keyword: rename it")
    if named_by_file and Path(ctx.file).stem != name:
        raise ctx.error(f"entity {name!r} must live in {name}.yaml")
    valid = _versions(ctx, doc.get("valid_versions"), what="valid_versions")
    if valid.high is None or valid.empty:
        raise ctx.error('valid_versions must be a closed range such as "0-1"')
    if valid.high - valid.low + 1 > MAX_VERSION_SPAN:
        raise ctx.error(
            f"valid_versions {valid} spans {valid.high - valid.low + 1} versions: at most {MAX_VERSION_SPAN} "
            "(one codec is generated per version)"
        )
    flexible = _versions(ctx, doc.get("flexible_versions", "none"), what="flexible_versions")
    if not flexible.fits(valid):
        raise ctx.error(f"flexible_versions {flexible} fall outside valid_versions {valid}")
    shared = doc.get("structs", [])
    if not isinstance(shared, list):
        raise ctx.error("'structs' is a list of {name, doc, fields}")
    for spec in shared:  # names first: shared structs may refer to each other
        sname = spec.get("name") if isinstance(spec, dict) else None
        _register_struct(ctx, sname, name)
    structs: list[Entity] = []
    for spec in shared:
        sctx = _Ctx(ctx.file, f"{name} struct {spec.get('name')}", structs=ctx.structs)
        _no_unknown_keys(sctx, spec, _STRUCT_KEYS)
        fields = _load_fields(sctx, spec.get("fields"), valid, flexible, schemas, structs, name)
        structs.append(Entity(ctx.structs[spec["name"]], _doc(sctx, spec), valid, fields, ctx.file, flexible, name))
    fields = _load_fields(ctx, doc.get("fields"), valid, flexible, schemas, structs, name)
    entity = Entity(name, _doc(ctx, doc), valid, fields, ctx.file, flexible)
    for e in [entity, *structs]:
        ectx = _Ctx(ctx.file, e.name, structs=ctx.structs)
        if e.name in schemas.entities:
            raise ectx.error(f"{e.name!r} is also defined in {schemas.entities[e.name].file}")
        _check_fields(ectx, e, schemas)
        if e is not entity:
            schemas.entities[e.name] = e
    return entity


def load_entity_spec(file: str, doc: dict, schemas: SchemaSet) -> Entity:
    """One entity given as the dict a schema file holds (another front-end, Kafka's JSON, translates into
    it), validated as a YAML file is and added to ``schemas`` with its structs; nothing is added when it
    is refused. References to other entities are checked by :func:`check_references` once all are in."""
    before = set(schemas.entities)
    try:
        entity = _load_entity(_Ctx(file), doc, schemas, named_by_file=False)
        if entity.name in schemas.entities:
            other = schemas.entities[entity.name].file
            raise _Ctx(file, entity.name).error(f"entity {entity.name!r} is also defined in {other}")
    except SchemaError:
        for name in set(schemas.entities) - before:
            del schemas.entities[name]
        raise
    schemas.entities[entity.name] = entity
    return entity


def check_references(entity: Entity, schemas: SchemaSet) -> None:
    """Every entity ``entity``'s fields name exists, at every version the field has."""
    _check_references(entity, schemas)


def _register_struct(ctx: _Ctx, sname: object, owner: str) -> str:
    """A struct of this file: its entity name is OWNER__STRUCT, so files can reuse Kafka's struct names."""
    if not isinstance(sname, str) or not _NAME.match(sname):
        raise ctx.error(f"struct names are lower_snake_case, not {sname!r}")
    if sname in ctx.structs:
        raise ctx.error(f"struct {sname!r} is defined twice in this file")
    ctx.structs[sname] = f"{owner}__{sname}"
    return ctx.structs[sname]


def _load_fields(
    ctx: _Ctx,
    fields_spec: object,
    valid: VersionRange,
    flexible: VersionRange,
    schemas: SchemaSet,
    structs: list[Entity],
    owner: str,
) -> tuple[Field, ...]:
    if not isinstance(fields_spec, list) or not fields_spec and flexible.empty:
        # only a flexible entity may be empty (Kafka's NoOpRecord): its tagged section is still there
        raise ctx.error("'fields' must be a non-empty list (empty only with flexible_versions)")
    fields: list[Field] = []
    for spec in fields_spec:
        fname = spec.get("name") if isinstance(spec, dict) else None
        fctx = ctx.at(str(fname))
        if not isinstance(spec, dict):
            raise fctx.error("a field is a mapping")
        if "fields" in spec:  # an inline struct: loaded as an entity of its own, named after the field
            spec = _inline_struct(fctx, spec, valid, flexible, schemas, structs, owner)
        elif "struct" in spec:
            raise fctx.error("'struct' names the inline struct a field defines with 'fields'")
        fields.append(_load_field(fctx, spec, valid, flexible, schemas))
    names = [f.name for f in fields]
    for n in names:
        if names.count(n) > 1:
            raise ctx.at(n).error("field names must be unique")
    tags: dict[int, str] = {}
    for f in fields:
        if f.tag is not None:
            if f.tag in tags:
                raise ctx.at(f.name).error(f"tag {f.tag} is also {tags[f.tag]}'s")
            tags[f.tag] = f.name
    return tuple(fields)


def _inline_struct(
    ctx: _Ctx,
    spec: dict,
    valid: VersionRange,
    flexible: VersionRange,
    schemas: SchemaSet,
    structs: list[Entity],
    owner: str,
) -> dict:
    if spec.get("type") not in ("struct", "[]struct"):
        raise ctx.error("a field with 'fields' has type struct or \"[]struct\"")
    sname = spec.get("struct", spec.get("name"))
    full = _register_struct(ctx, sname, owner)
    sctx = _Ctx(ctx.file, f"{owner} struct {sname}", structs=ctx.structs)
    fields = _load_fields(sctx, spec["fields"], valid, flexible, schemas, structs, owner)
    structs.append(Entity(full, _doc(ctx, spec), valid, fields, ctx.file, flexible, owner))
    out = {k: v for k, v in spec.items() if k not in ("fields", "struct")}
    out["type"] = spec["type"].replace("struct", sname)
    return out


def _load_field(ctx: _Ctx, spec: dict, valid: VersionRange, flexible: VersionRange, schemas: SchemaSet) -> Field:
    _no_unknown_keys(ctx, spec, _FIELD_KEYS)
    name = spec.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ctx.error("field names are lower_snake_case")
    versions = _versions(ctx, spec.get("versions", str(valid)))
    if not versions.fits(valid):
        raise ctx.error(f"versions {versions} fall outside valid_versions {valid}")
    nullable_versions = None
    if "nullable_versions" in spec:
        if "nullable" in spec:
            raise ctx.error("'nullable' (every version) and 'nullable_versions' exclude each other")
        nullable_versions = _versions(ctx, spec["nullable_versions"], what="nullable_versions")
        if not nullable_versions.fits(versions):
            raise ctx.error(f"nullable_versions {nullable_versions} fall outside the field's versions {versions}")
        spec = {**spec, "nullable": not nullable_versions.empty}
        del spec["nullable_versions"]
    ftype = _parse_type(ctx, spec.get("type"), spec, schemas, top=True)
    if "bits" in spec:
        if not isinstance(ftype, IntType) or not ftype.fixed or not ftype.signed and ftype.name != "uint32":
            raise ctx.error("'bits' needs a fixed-width integer type")
        ftype = BitsType(ftype, _load_bits(ctx, spec["bits"], ftype, versions, valid, schemas))
    enum = spec.get("enum")
    if enum is not None:
        if not isinstance(ftype, IntType):
            raise ctx.error("'enum' applies to integer fields (use it per bit inside 'bits')")
        _enum_ref(ctx, enum, schemas)
    const = spec.get("const")
    if const is not None:
        if not isinstance(ftype, IntType):
            raise ctx.error("'const' applies to integer fields")
        if not (const == "version" or isinstance(const, int) and not isinstance(const, bool)):
            raise ctx.error("'const' is an integer or the word 'version'")
    error = spec.get("error", "corrupt")
    if "error" in spec and const is None:
        raise ctx.error("'error' (the decode error kind when the value is wrong) applies to const fields")
    if not _one_of(error, _ERROR_KINDS):
        raise ctx.error(f"'error' must be one of {sorted(_ERROR_KINDS)}")
    derived = _load_derived(ctx, spec.get("derived"), ftype) if "derived" in spec else None
    if derived and const is not None:
        raise ctx.error("a field is either derived or const, not both")
    compressed = None
    if "compressed" in spec:
        c = spec["compressed"]
        if not isinstance(c, dict) or "codec" not in c or set(c) - {"codec", "contents", "versions"}:
            raise ctx.error("'compressed' is {codec: FIELD.PATH, contents: TYPE?, versions: RANGE?}")
        contents = None
        if "contents" in c:
            contents = _parse_type(ctx, c["contents"], {}, schemas, top=False)
            if not isinstance(contents, ArrayType) or not contents.greedy:
                raise ctx.error(
                    "compressed 'contents' must be an array type such as \"[]entity\" "
                    "(it runs to the end of the stream)"
                )
        if not isinstance(c["codec"], str) or not all(_NAME.match(p) for p in c["codec"].split(".")):
            raise ctx.error("compressed 'codec' is a field path such as attributes.compression")
        cversions = _versions(ctx, c["versions"], what="compressed versions") if "versions" in c else None
        if cversions is not None and not cversions.fits(versions):
            raise ctx.error(f"compressed versions {cversions} fall outside the field's versions {versions}")
        compressed = Compression(tuple(c["codec"].split(".")), contents, cversions)
        if contents is None and not isinstance(ftype, ArrayType):
            raise ctx.error("a compressed field is an array, or bytes with 'contents'")
        if contents is not None and not isinstance(ftype, BytesType):
            raise ctx.error("'contents' applies to a compressed bytes field")
    flex = spec.get("flexible", True)
    if not isinstance(flex, bool):
        raise ctx.error("'flexible' is true or false")
    if "flexible" in spec and not (isinstance(ftype, (BytesType, ArrayType)) and ftype.prefix is not None):
        raise ctx.error("'flexible' applies to prefixed bytes, strings and arrays (compact in flexible versions)")
    tag, tagged = spec.get("tag"), None
    if ("tag" in spec) != ("tagged_versions" in spec):
        raise ctx.error("a tagged field has both 'tag' and 'tagged_versions'")
    if "tag" in spec:
        if not isinstance(tag, int) or isinstance(tag, bool) or tag < 0:
            raise ctx.error("'tag' is a non-negative integer")
        tagged = _versions(ctx, spec["tagged_versions"], what="tagged_versions")
        if not tagged.fits(versions):
            raise ctx.error(f"tagged_versions {tagged} fall outside the field's versions {versions}")
        outside = [v for v in tagged.versions(valid) if v not in flexible]
        if outside:
            raise ctx.error(f"tagged at versions {outside}, which are not flexible (flexible_versions {flexible})")
        if derived or const is not None or compressed or "count" in spec:
            raise ctx.error("a tagged field is not derived, const, compressed or counted")
    default = None
    if "default" in spec:
        if derived or const is not None:
            raise ctx.error("a derived or const field has no default")
        default = Default(_check_default(ctx, spec["default"], ftype))
    return Field(
        name,
        _doc(ctx, spec),
        ftype,
        versions,
        enum,
        const,
        error,
        derived,
        compressed,
        nullable_versions,
        flex,
        tag,
        tagged,
        default,
    )


def _check_default(ctx: _Ctx, value: object, ftype: Type) -> object:
    """The default as the schema spells it, checked against the type."""
    nullable = getattr(ftype, "nullable", False)
    if value is None:
        if not nullable:
            raise ctx.error("a null default needs a nullable field")
        return None
    if isinstance(ftype, IntType) and isinstance(value, int) and not isinstance(value, bool):
        if not ftype.min <= value <= ftype.max:
            raise ctx.error(f"default {value} does not fit in {ftype.name}")
        return value
    if isinstance(ftype, ScalarType):
        if ftype.name == "bool" and isinstance(value, bool):
            return value
        if ftype.name == "float64" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if ftype.name == "uuid" and isinstance(value, str):
            from kcodec.runtime.uuids import uuid_from_text

            try:
                uuid_from_text(value)
            except ValueError as exc:
                raise ctx.error(f"default: {exc}") from None
            return value
    if isinstance(ftype, BytesType) and isinstance(value, str) and (ftype.text or value == ""):
        return value
    if isinstance(ftype, ArrayType) and value == []:
        return []
    raise ctx.error(
        f"default {value!r} does not suit {getattr(ftype, 'name', 'this type')} "
        '(an integer, true/false, a number, a uuid\'s base64 text, a string, "" for bytes, [] or null)'
    )


def _parse_type(ctx: _Ctx, text: object, spec: dict, schemas: SchemaSet, top: bool) -> Type:
    if not isinstance(text, str) or not text:
        raise ctx.error("'type' is required: an integer type, bytes, string, an entity or []TYPE")
    prefix = spec.get("prefix") if top else None
    if text.startswith("[]"):
        element = _parse_type(ctx, text[2:], {}, schemas, top=False)
        if isinstance(element, ArrayType):
            raise ctx.error("arrays of arrays are not supported; wrap the inner array in an entity")
        count = spec.get("count") if top else None
        if top and (prefix is None) == (count is None):
            raise ctx.error("an array needs exactly one of 'prefix' (an inline count) or 'count' (a count field)")
        ptype = _prefix_type(ctx, prefix) if prefix is not None else None
        if count is not None and (not isinstance(count, str) or not _NAME.match(count)):
            raise ctx.error("'count' names the field holding the element count")
        nullable = _nullable(ctx, spec) if top else False
        if nullable and ptype is None:
            raise ctx.error("a nullable array has a 'prefix' (its count is -1 when null)")
        return ArrayType(element, ptype, count, nullable)
    if top and "count" in spec:
        raise ctx.error("'count' applies to arrays")
    if text in ("bytes", "string"):
        if not top:
            # an array element: Kafka's STRING (int16 length) or BYTES (int32 length), compact when flexible
            return BytesType(INT_TYPES["int16" if text == "string" else "int32"], False, text == "string")
        if prefix is None:
            raise ctx.error(
                f"{text} needs a 'prefix' length type ({', '.join(sorted(_PREFIX_TYPES))}), "
                "or 'none' (to the end of the covering length)"
            )
        if prefix == "none":
            # no length of its own: the bytes run to the end of the length covering them (_check_fields)
            if _nullable(ctx, spec):
                raise ctx.error(f"a {text} without a prefix cannot be null (it has no length to say so)")
            return BytesType(None, False, text == "string")
        return BytesType(_prefix_type(ctx, prefix), _nullable(ctx, spec), text == "string")
    if top and "prefix" in spec:
        raise ctx.error("'prefix' applies to bytes, string and arrays")
    if text in INT_TYPES or text in SCALAR_TYPES:
        if top and "nullable" in spec:
            raise ctx.error("'nullable' applies to bytes, string, arrays and structs")
        return INT_TYPES[text] if text in INT_TYPES else SCALAR_TYPES[text]
    if _NAME.match(text):
        # a struct of this file, or an entity resolved once every file is loaded
        return EntityRef(ctx.structs.get(text, text), _nullable(ctx, spec) if top else False)
    raise ctx.error(f"unknown type {text!r}")


def _nullable(ctx: _Ctx, spec: dict) -> bool:
    nullable = spec.get("nullable", False)
    if not isinstance(nullable, bool):
        raise ctx.error("'nullable' is true or false")
    return nullable


def _prefix_type(ctx: _Ctx, name: object) -> IntType:
    if not _one_of(name, _PREFIX_TYPES):
        raise ctx.error(f"'prefix' must be one of {sorted(_PREFIX_TYPES)}, not {name!r}")
    return INT_TYPES[name]


def _load_bits(
    ctx: _Ctx, spec: object, base: IntType, versions: VersionRange, valid: VersionRange, schemas: SchemaSet
) -> tuple[Bit, ...]:
    if not isinstance(spec, list) or not spec:
        raise ctx.error("'bits' must be a non-empty list")
    nbits = base.max_width * 8  # the caller checked the base is fixed-width
    out = []
    for item in spec:
        if not isinstance(item, dict):
            raise ctx.error("each bit group is a mapping")
        _no_unknown_keys(ctx, item, _BIT_KEYS)
        name = item.get("name")
        bctx = ctx.at(f"{ctx.field}.{name}")
        if not isinstance(name, str) or not _NAME.match(name):
            raise bctx.error("bit group names are lower_snake_case")
        m = re.match(r"^(\d+)(?:-(\d+))?$", str(item.get("bits", "")))
        if not m:
            raise bctx.error("'bits' is a bit number or range such as \"0-2\" (bit 0 is least significant)")
        low, high = int(m.group(1)), int(m.group(2) or m.group(1))
        if high < low or high >= nbits:
            raise bctx.error(f"bits {low}-{high} do not fit in {base.name}")
        bversions = _versions(bctx, item.get("versions", str(versions)))
        if not bversions.fits(versions):
            raise bctx.error(f"versions {bversions} fall outside the field's {versions}")
        enum = item.get("enum")
        if enum is not None:
            e = _enum_ref(bctx, enum, schemas)
            too_big = [v.name for v in e.values if v.value >= (1 << (high - low + 1)) or v.value < 0]
            if too_big:
                raise bctx.error(f"enum {enum} values {too_big} do not fit in {high - low + 1} bits")
        reserved = bool(item.get("reserved", False))
        if reserved and enum:
            raise bctx.error("reserved bits carry no enum")
        out.append(Bit(name, low, high - low + 1, _doc(bctx, item), bversions, enum, reserved))
    for v in versions.versions(valid):
        owner: dict[int, str] = {}
        names = set()
        for b in out:
            if v not in b.versions:
                continue
            if b.name in names:
                raise ctx.at(f"{ctx.field}.{b.name}").error(f"bit group name used twice at version {v}")
            names.add(b.name)
            for i in range(b.low, b.low + b.width):
                if i in owner:
                    raise ctx.at(f"{ctx.field}.{b.name}").error(f"bit {i} also belongs to {owner[i]} at version {v}")
                owner[i] = b.name
        missing = [i for i in range(nbits) if i not in owner]
        if missing:
            raise ctx.error(
                f"bits {missing} are not described at version {v}; name them (reserved: true for unused bits)"
            )
    return tuple(out)


def _load_derived(ctx: _Ctx, spec: object, ftype: Type) -> Derived:
    if not isinstance(spec, dict) or "kind" not in spec:
        raise ctx.error("'derived' is {kind: length|count|crc, ...}")
    kind = spec["kind"]
    if not isinstance(ftype, IntType):
        raise ctx.error("a derived field has an integer type")
    if kind in ("length", "crc"):
        allowed = {"kind", "covers"} | ({"algorithm"} if kind == "crc" else set())
        _no_unknown_keys(ctx, spec, allowed)
        covers = spec.get("covers")
        m = re.match(r"^([a-z][a-z0-9_]*)\.\.end$", str(covers))
        if not m:
            raise ctx.error(f"{kind} 'covers' is FIELD..end: the bytes from FIELD to the end of the entity")
        algorithm = None
        if kind == "crc":
            algorithm = spec.get("algorithm")
            if not _one_of(algorithm, _CRC_ALGORITHMS):
                raise ctx.error(f"crc 'algorithm' must be one of {sorted(_CRC_ALGORITHMS)}")
            if ftype.name != "uint32":
                raise ctx.error("a crc field is uint32")
        return Derived(kind, covers=m.group(1), algorithm=algorithm)
    if kind == "count":
        _no_unknown_keys(ctx, spec, {"kind", "of"})
        if not isinstance(spec.get("of"), str):
            raise ctx.error("a count names the array it counts: {kind: count, of: FIELD}")
        return Derived("count", of=spec["of"])
    raise ctx.error(f"unknown derived kind {kind!r}; use length, count or crc")


def _check_fields(ctx: _Ctx, entity: Entity, schemas: SchemaSet) -> None:
    """Cross-field rules inside one entity, checked at every version."""
    if not entity.flexible_versions.empty:
        for f in entity.fields:
            if f.compressed or f.derived and f.derived.kind != "count":
                # the tagged section ends every struct: lengths and CRCs "to the end" would have to cover it
                raise ctx.at(f.name).error("an entity with flexible_versions has no compressed, length or crc fields")
    for version in entity.versions:
        present = [f for f in entity.fields if version in f.versions]
        index = {f.name: i for i, f in enumerate(present)}
        for i, f in enumerate(present):
            fctx = ctx.at(f.name)
            d = f.derived
            if d and d.kind in ("length", "crc"):
                if d.covers is None or d.covers not in index:
                    raise fctx.error(f"covers {d.covers}..end but {d.covers} is not a field at version {version}")
                if index[d.covers] <= i:
                    raise fctx.error(f"covers {d.covers}..end, which must start after the {d.kind} field itself")
            if d and d.kind == "count":
                target = present[index[d.of]] if d.of in index else None
                if target is None or not isinstance(target.type, ArrayType) or target.type.count_field != f.name:
                    raise fctx.error(
                        f"counts {d.of}, which must be an array with 'count: {f.name}' at version {version}"
                    )
                if index[target.name] <= i:
                    raise fctx.error("a count field comes before the array it counts")
            if isinstance(f.type, ArrayType) and f.type.count_field:
                cf = f.type.count_field
                counter = present[index[cf]].derived if cf in index else None
                if counter is None or counter.of != f.name:
                    raise fctx.error(
                        f"'count: {cf}' needs an earlier field {cf} with derived {{kind: count, of: {f.name}}}"
                    )
            compressed = f.compressed and (f.compressed.versions is None or version in f.compressed.versions)
            if f.compressed and compressed:
                _check_codec_path(fctx, f.compressed.codec_path, present[:i], version, schemas)
            what = (
                "a compressed array"
                if f.compressed and isinstance(f.type, ArrayType)
                else "bytes without a prefix"
                if isinstance(f.type, BytesType) and f.type.prefix is None
                else None
            )
            if what:
                # No prefix of its own: the region runs to the end of an enclosing length.
                if i != len(present) - 1:
                    raise fctx.error(f"{what} (without its own length) must be the last field")
                if not any(
                    g.derived
                    and g.derived.kind == "length"
                    and g.derived.covers is not None
                    and index[g.derived.covers] <= i
                    for g in present[:i]
                ):
                    raise fctx.error(f"{what} needs an earlier length field that covers it")


def _check_codec_path(ctx: _Ctx, path: tuple[str, ...], before: list[Field], version: int, schemas: SchemaSet) -> None:
    by_name = {f.name: f for f in before}
    head = by_name.get(path[0])
    if head is None:
        raise ctx.error(f"codec field {'.'.join(path)} must be an earlier field at version {version}")
    if len(path) == 1:
        enum = head.enum
    elif len(path) == 2 and isinstance(head.type, BitsType):
        bit = next((b for b in head.type.bits if b.name == path[1] and version in b.versions), None)
        enum = bit.enum if bit else None
    else:
        enum = None
    if enum is None:
        raise ctx.error(f"codec field {'.'.join(path)} must be an enum (field or bit group) at version {version}")
    names = {v.name for v in schemas.enums[enum].values}
    if "none" not in names:
        raise ctx.error(f"codec enum {enum} must have a value named none")


def _check_references(entity: Entity, schemas: SchemaSet) -> None:
    ctx = _Ctx(entity.file, entity.name)

    def visit(t: Type, f: Field) -> None:
        if isinstance(t, ArrayType):
            visit(t.element, f)
        elif isinstance(t, EntityRef):
            child = schemas.entities.get(t.name)
            if child is None:
                raise ctx.at(f.name).error(f"unknown type {t.name!r}")
            for v in f.versions.versions(entity.valid_versions):
                if v not in child.valid_versions:
                    raise ctx.at(f.name).error(
                        f"{t.name} has no version {v} (valid_versions {child.valid_versions}); "
                        "nested entities share their parent's version"
                    )

    for f in entity.fields:
        visit(f.type, f)
        if f.compressed and f.compressed.contents:
            visit(f.compressed.contents, f)
    _check_not_recursive(entity, schemas, ctx)


def _refs(t: Type) -> list[str]:
    """The entities a field's type nests (its compressed contents aside: those are parsed apart)."""
    if isinstance(t, ArrayType):
        return _refs(t.element)
    return [t.name] if isinstance(t, EntityRef) else []


def _check_not_recursive(entity: Entity, schemas: SchemaSet, ctx: _Ctx) -> None:
    """An entity that holds itself, directly or through other structs (a struct with an array of itself)
    is refused: its decoders would call each other without end, and Kafka's generator has no such struct."""
    for f in entity.fields:
        todo = [(name, [f.name]) for name in _refs(f.type)]
        seen: set[str] = set()
        while todo:
            name, path = todo.pop()
            if name == entity.name:
                own = entity.name.rpartition("__")[2]  # a struct's own name, without its owner's
                raise ctx.at(f.name).error(
                    f"{own} contains itself (through {'.'.join(path)}): recursive structs are not supported"
                )
            child = schemas.entities.get(name)
            if child is None or name in seen:
                continue
            seen.add(name)
            todo += [(ref, [*path, g.name]) for g in child.fields for ref in _refs(g.type)]


# ---------------------------------------------------------------------------- helpers


def _enum_ref(ctx: _Ctx, name: object, schemas: SchemaSet) -> Enum:
    if not _one_of(name, schemas.enums):
        raise ctx.error(f"unknown enum {name!r}; define it under 'enums:'")
    return schemas.enums[name]


def _one_of(value: object, options) -> TypeGuard[str]:
    """Membership that a YAML list or mapping cannot crash (they are unhashable)."""
    return isinstance(value, str) and value in options


def _versions(ctx: _Ctx, text: object, what: str = "versions") -> VersionRange:
    try:
        return VersionRange.parse(text)
    except ValueError as exc:
        raise ctx.error(f"{what}: {exc}") from None


def _doc(ctx: _Ctx, spec: dict) -> str:
    doc = spec.get("doc")
    if not isinstance(doc, str) or not doc.strip():
        raise ctx.error("'doc' is required: one or two sentences saying what this is")
    return " ".join(doc.split())


def _no_unknown_keys(ctx: _Ctx, spec: dict, allowed: set[str]) -> None:
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise ctx.error(f"unknown key(s) {unknown}; allowed: {sorted(allowed)}")
