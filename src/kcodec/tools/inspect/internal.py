"""Records of Kafka's internal topics over bytes, as their registries (``schemas/internal/registries.yaml``)
frame them: a coordinator key's int16 record type and value's int16 version, a metadata record's frame
version, api key and version (uvarints), each before the entity they select; and the values of KRaft control
records, selected by their control record key. The registries, versions and entities are a
:class:`~kcodec.internal_topics.registry.CodecSource`'s: kcodec's own, or a ``--schemas-from`` package's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kcodec.internal_topics.registry import METADATA_FRAME_VERSION, PACKAGED, CodecSource, coordinator_key_version
from kcodec.tools.inspect.numbers import read_int
from kcodec.tools.inspect.schema import int_type
from kcodec.tools.inspect.spans import WARN, Span

__all__ = ["Framed", "read_framing", "record_hints", "control_value_hint"]

Choice = tuple[str, int]


@dataclass(frozen=True)
class Framed:
    """Bytes that hold framing integers before an entity: ``prefix`` names them and their types, ``choose``
    picks the entity and version from their values, or says (as a string) why none fits."""

    prefix: tuple[tuple[str, str], ...]
    choose: Callable[[dict], Choice | str]


def read_framing(hint: Framed, buf, pos: int, end: int, path: str, space: str, values: dict, field: str):
    """The framing integers at ``pos``: (entity, version) or None, their spans and the position after them.
    Their values go into ``values`` as ``FIELD:framing`` (a coordinator value's entity depends on its key's
    record type)."""
    spans: list[Span] = []
    found: dict = {}
    for name, type_name in hint.prefix:
        sp, v, pos, ok = read_int(int_type(type_name), buf, pos, end, f"{path}.{name}", space)
        sp.kind = "prefix"
        spans.append(sp)
        if not ok:
            return None, spans, pos
        found[name] = v
    values[f"{field}:framing"] = found
    choice = hint.choose(found)
    if isinstance(choice, str):
        rest = Span(pos, end, f"{path}.(unread)", kind="unread", raw=bytes(buf[pos:end]), space=space)
        spans.append(rest.mark(WARN, choice))
        return None, spans, end
    return choice, spans, pos


def _by_type(registry: str, source: CodecSource) -> dict[int, dict]:
    return {r["type"]: r for r in source.registries[registry]["records"]}


def _value_at(entity: str, version: int, source: CodecSource) -> Choice | str:
    if version in source.versions[entity]:
        return entity, version
    return f"{entity} has no version {version}: the value is not read"


def _coordinator_hints(registry: str, source: CodecSource) -> dict:
    records = _by_type(registry, source)

    def key(found: dict) -> Choice | str:
        rec = records.get(found["record_type"])
        if rec is None:
            return f"unknown record type {found['record_type']} in {registry}: the key is not read"
        return rec["key"], coordinator_key_version(rec["key"], found["record_type"], source)

    def value(record: dict) -> Framed | None:
        record_type = (record.get("key:framing") or {}).get("record_type")
        rec = records.get(record_type) if record_type is not None else None
        if rec is None:
            return None
        return Framed((("version", "int16"),), lambda found: _value_at(rec["value"], found["version"], source))

    return {"key": Framed((("record_type", "int16"),), key), "value": value}


def _metadata_hints(registry: str, source: CodecSource) -> dict:
    records = _by_type(registry, source)

    def value(found: dict) -> Choice | str:
        if found["frame_version"] != METADATA_FRAME_VERSION:
            return f"frame version {found['frame_version']}, expected {METADATA_FRAME_VERSION}"
        rec = records.get(found["api_key"])
        if rec is None:
            return f"unknown api key {found['api_key']} in {registry}: the record is not read"
        return _value_at(rec["value"], found["version"], source)

    prefix = (("frame_version", "uvarint"), ("api_key", "uvarint"), ("version", "uvarint"))
    return {"value": Framed(prefix, value)}


def record_hints(registry: str, source: CodecSource = PACKAGED) -> dict:
    """How the key and value of a record (not a control record) of ``registry``'s topic are read."""
    framing = source.registries[registry]["framing"]
    if framing == "coordinator":
        return _coordinator_hints(registry, source)
    if framing == "metadata":
        return _metadata_hints(registry, source)
    return {}


def control_value_hint(control_type, source: CodecSource = PACKAGED) -> Choice | None:
    """The entity of a KRaft control record's value (LeaderChange, SnapshotHeader ...), always at version 0,
    by its control record key's type (its enum name, or the number of a type the enum does not list); None
    also when the source has no control registry (a package generated without Kafka's raft messages)."""
    registry = next((r for r in source.registries.values() if r["framing"] == "control"), {"records": ()})
    for rec in registry["records"]:
        if control_type in (rec["name"], rec["type"]):
            return rec["value"], 0
    return None
