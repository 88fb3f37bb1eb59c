"""Every tagged nullable struct of the shipped schemas (Kafka's coordinator and metadata definitions) against
an encoder written here from Kafka's own rules: MessageDataGenerator writes a nullable struct's one-byte
presence marker (-1 null, 1 present) "for both regular and tagged struct fields", so a tagged one's payload
is the marker and then the struct. ``ConsumerGroupMemberMetadataValue``'s ``ClassicMemberMetadata`` (tag 0)
is the known case: read without its marker, its bytes failed with "supported_protocols: 327 elements cannot
fit".

The encoder below takes only the field list from the schema; how each type goes on the wire (compact
lengths, the tagged section, the presence marker) is written here from Kafka's generator, not from
kcodec's emitters."""

from __future__ import annotations

import struct
import uuid

import pytest

from kcodec.codegen.schema.ir import ArrayType, BitsType, BytesType, EntityRef, IntType, ScalarType
from kcodec.codegen.schema.resolve import EntityVersion, resolve
from kcodec.generated import codec, schema_set
from kcodec.generated.fast import DECODERS

SCHEMAS = schema_set()


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _length(n: int | None, prefix: IntType, compact: bool) -> bytes:
    """A length or count: compact ones are N + 1 as an unsigned varint (0 for null), others signed fixed."""
    if compact:
        return _uvarint(0 if n is None else n + 1)
    assert prefix.width is not None
    return (-1 if n is None else n).to_bytes(prefix.width, "big", signed=True)


def _encode(t, value, version: int) -> bytes:
    if isinstance(t, (IntType, BitsType)):
        base = t.base if isinstance(t, BitsType) else t
        assert base.width is not None, "no varints in Kafka's message definitions"
        return int(value).to_bytes(base.width, "big", signed=base.signed)
    if isinstance(t, ScalarType):
        if t.name == "bool":
            return b"\x01" if value else b"\x00"
        if t.name == "float64":
            return struct.pack(">d", value)
        return value.bytes  # uuid
    if isinstance(t, BytesType):
        if value is None:
            return _length(None, t.prefix, t.compact)
        data = value.encode() if t.text else bytes(value)
        return _length(len(data), t.prefix, t.compact) + data
    if isinstance(t, ArrayType):
        assert t.prefix is not None
        if value is None:
            return _length(None, t.prefix, t.compact)
        return _length(len(value), t.prefix, t.compact) + b"".join(_encode(t.element, v, version) for v in value)
    assert isinstance(t, EntityRef), t
    ev = resolve(SCHEMAS, SCHEMAS.entities[t.name], version)
    if t.nullable:  # the presence marker, tagged or not
        return b"\xff" if value is None else b"\x01" + _struct(ev, value)
    return _struct(ev, value)


def _struct(ev: EntityVersion, value: dict) -> bytes:
    out = b"".join(_encode(f.type, value[f.name], ev.version) for f in ev.fields)
    if not ev.flexible:
        return out
    tags = []
    for f in ev.tagged:  # written only when not the default; every tagged struct here defaults to null
        if value.get(f.name) is not None:
            payload = _encode(f.type, value[f.name], ev.version)
            tags.append(_uvarint(f.field.tag) + _uvarint(len(payload)) + payload)
    return out + _uvarint(len(tags)) + b"".join(tags)


def _sample(t, version: int, depth: int = 0):
    """A value of type ``t`` with something in every field (lists of two, so counts are not 0 or 1)."""
    if isinstance(t, (IntType, BitsType)):
        return 7
    if isinstance(t, ScalarType):
        return {"bool": True, "float64": 1.5, "uuid": uuid.UUID(int=0x1234)}[t.name]
    if isinstance(t, BytesType):
        return "range" if t.text else b"\x00\x01\x02" * 109  # 327 bytes, the count the old reader saw
    if isinstance(t, ArrayType):
        return [_sample(t.element, version, depth + 1) for _ in range(2)]
    assert isinstance(t, EntityRef)
    ev = resolve(SCHEMAS, SCHEMAS.entities[t.name], version)
    return _sample_struct(ev, depth + 1)


def _sample_struct(ev: EntityVersion, depth: int = 0) -> dict:
    value = {f.name: _sample(f.type, ev.version, depth) for f in ev.fields}
    value |= {f.name: _sample(f.type, ev.version, depth) for f in ev.tagged}
    return value


def _nullable_struct(t) -> bool:
    return isinstance(t, EntityRef) and t.nullable


def _tagged_nullable_structs() -> list[tuple[str, int, str]]:
    found = []
    for entity in SCHEMAS.entities.values():
        for version in entity.valid_versions.versions(entity.valid_versions):
            ev = resolve(SCHEMAS, entity, version)
            found += [(entity.name, version, f.name) for f in ev.tagged if _nullable_struct(f.type)]
    return sorted(found)


CASES = _tagged_nullable_structs()


def test_the_known_case_is_among_them() -> None:
    assert ("consumer_group_member_metadata_value", 0, "classic_member_metadata") in CASES


def _narrow(parsed, like):
    """kcodec's parsed value narrowed to the fields given (it adds ``_unknown_tags``)."""
    if isinstance(like, dict):
        return {k: _narrow(parsed[k], v) for k, v in like.items()}
    if isinstance(like, list):
        return [_narrow(p, v) for p, v in zip(parsed, like, strict=True)]
    return parsed


@pytest.mark.parametrize(("entity", "version", "field"), CASES)
@pytest.mark.parametrize("present", [True, False], ids=["present", "null"])
def test_tagged_nullable_struct_has_its_presence_marker(entity: str, version: int, field: str, present: bool) -> None:
    ev = resolve(SCHEMAS, SCHEMAS.entities[entity], version)
    value = _sample_struct(ev)
    if not present:
        value[field] = None
    expected = _struct(ev, value)
    c = codec(entity, version)
    assert c.build(value) == expected  # kcodec writes what Kafka writes
    assert _narrow(c.parse(expected), value) == value  # and reads it back
    assert c.size(value) == len(expected)
    decode, names = DECODERS[(entity, version)]  # the fast backend reads it too
    values, end = decode(expected, 0, len(expected))
    assert end == len(expected) and (values[list(names).index(field)] is None) is not present
