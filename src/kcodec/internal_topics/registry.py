"""The records of Kafka's internal topics, decoded by the registries of ``schemas/internal/registries.yaml``
(emitted as ``kcodec.generated.registries``): which entity a record's key and value hold, and how its
topic frames them.

- coordinator (``__consumer_offsets``, ``__transaction_state``, ``__share_group_state``): key = int16 record
  type + key struct, value = int16 version + value struct, a null value is a tombstone (Kafka's
  CoordinatorRecordSerde);
- metadata (``__cluster_metadata``, ``__remote_log_metadata``): value = uvarint frame version (1) + uvarint
  api key + uvarint version + record, no key (Kafka's MetadataRecordSerde, RemoteLogMetadataSerde);
- control (KRaft control records): the control record key's type selects the value, at version 0.

A record whose type or version the schemas do not know, or whose bytes are damaged, gives an
:class:`InternalRecord` with ``error`` set, as kafka-dump-log reports it and goes on.
"""

from __future__ import annotations

import gc
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from kcodec.errors import DecodeError, KcodecError, TruncatedError
from kcodec.generated import ENTITY_VERSIONS, codec, schema_set
from kcodec.generated.registries import REGISTRIES
from kcodec.internal_topics.topics import topic_registry
from kcodec.runtime.constructs import EntityCodec
from kcodec.runtime.varint import decode_uvarint

__all__ = [
    "CodecSource",
    "PACKAGED",
    "Decoded",
    "FrameVersionError",
    "InternalRecord",
    "UnknownRecordTypeError",
    "UnsupportedVersionError",
    "registry_for_topic",
    "decode_internal",
    "decode_control",
    "coordinator_key_version",
    "encode_coordinator",
]

METADATA_FRAME_VERSION = 1  # Kafka's MetadataRecordSerde DEFAULT_FRAME_VERSION


class UnknownRecordTypeError(DecodeError):
    """A record type (or api key) the registry does not list."""

    kind = "unknown_record_type"

    def __init__(self, record_type: int, registry: str):
        super().__init__(f"unknown record type {record_type} in {registry}")
        self.record_type = record_type


class FrameVersionError(DecodeError):
    """A metadata-framed value whose frame version is not the one Kafka writes (1)."""

    kind = "frame_version"

    def __init__(self, frame_version: int):
        super().__init__(f"frame version {frame_version}, expected {METADATA_FRAME_VERSION}", position=0)
        self.frame_version = frame_version


class UnsupportedVersionError(DecodeError):
    """A known record type at a version its schema does not define."""

    kind = "unsupported_version"


@dataclass(frozen=True)
class CodecSource:
    """The codecs and registries records are decoded with: kcodec's own (:data:`PACKAGED`), or a package
    generated from a user's Kafka version (``kcodec.tools.schema_package``)."""

    codec: Callable[[str, int], EntityCodec]
    versions: Mapping[str, tuple[int, ...]]
    registries: Mapping[str, dict]
    schema_set: Callable[[], Any]  # the IR the codecs were generated from (for Kafka's JSON names)


PACKAGED = CodecSource(codec, ENTITY_VERSIONS, REGISTRIES, cache(schema_set))


@dataclass(frozen=True)
class Decoded:
    """One key or value: the entity, the version it was read at, and the parsed value."""

    entity: str
    version: int
    value: Any


@dataclass(frozen=True)
class InternalRecord:
    registry: str
    type: int | None  # record type, api key or control type; None when not even that could be read
    name: str | None  # the registry's name for the type (offset_commit, topic_record, snapshot_header)
    key: Decoded | None = None
    value: Decoded | None = None  # None with no error: a tombstone
    error: KcodecError | None = None


def registry_for_topic(topic: str, source: CodecSource = PACKAGED) -> str | None:
    """The registry decoding ``topic`` (a topic name, or a partition directory such as
    ``__consumer_offsets-7``); None for a topic that is not an internal one. KRaft control records are
    decoded by :func:`decode_control` whatever the topic."""
    return topic_registry(topic, source.registries)


def _by_type(source: CodecSource, registry: str) -> dict[int, dict]:
    return {r["type"]: r for r in source.registries[registry]["records"]}


#: construct leaves each parse's context in a reference cycle (a Struct's context is its own ``_root``) that
#: holds every value parsed: only the cyclic collector frees it, and lists of plain ints give that collector
#: no reason to run (a 800 kB PartitionRecord of 100 k replicas decodes to 9 MiB, and a hundred of them
#: stayed in memory). After this many bytes parsed, the next parse first collects what earlier ones left.
COLLECT_AFTER_BYTES = 1 << 20


class _Parsed:
    since_collect = 0


def _collect_parse_garbage(size: int) -> None:
    _Parsed.since_collect += size
    if _Parsed.since_collect >= COLLECT_AFTER_BYTES:
        _Parsed.since_collect = 0
        gc.collect(1)


def _parse(source: CodecSource, entity: str, version: int, data: bytes, at: int) -> Decoded:
    if version not in source.versions.get(entity, ()):
        raise UnsupportedVersionError(f"{entity} has no version {version}", position=at)
    _collect_parse_garbage(len(data))
    try:
        return Decoded(entity, version, source.codec(entity, version).parse(data[at:]))
    except DecodeError as exc:
        raise _located(entity, version, data, at, exc) from None


def _located(entity: str, version: int, data: bytes, at: int, exc: DecodeError) -> KcodecError:
    """The error placed at its byte: the construct codec only knows the entity it failed in, the generated
    fast decoder knows the byte and the field path (``state_batches[1].last_offset``)."""
    from kcodec.generated.fast import DECODERS

    decoder = DECODERS.get((entity, version))
    if decoder is not None:
        try:
            decoder[0](data, at)
        except DecodeError as precise:
            return precise
    return exc.at(at)


def coordinator_key_version(key_entity: str, record_type: int, source: CodecSource = PACKAGED) -> int:
    """The version a coordinator key is read at: keys are versioned by their record type (OffsetCommitKey 0
    and 1, GroupMetadataKey 2); the newer ones (Kafka 4's CoordinatorRecordType) have one version."""
    versions = source.versions[key_entity]
    return record_type if record_type in versions else versions[-1]


def encode_coordinator(
    registry: str, record_type: int, key: dict, value: dict | None, value_version: int, source: CodecSource = PACKAGED
) -> tuple[bytes, bytes | None]:
    """The key and value bytes of a coordinator record, framed as :func:`decode_internal` reads them: the
    int16 record type and the key (at the version its record type says), the int16 value version and the
    value; a None value is a tombstone."""
    if source.registries[registry]["framing"] != "coordinator":
        raise ValueError(f"registry {registry} does not hold coordinator records")
    rec = _by_type(source, registry).get(record_type)
    if rec is None:
        raise ValueError(f"registry {registry} has no record type {record_type}")
    key_bytes = struct.pack(">h", record_type) + source.codec(
        rec["key"], coordinator_key_version(rec["key"], record_type, source)
    ).build(key)
    if value is None:
        return key_bytes, None
    return key_bytes, struct.pack(">h", value_version) + source.codec(rec["value"], value_version).build(value)


def _int16(data: bytes, what: str) -> int:
    if len(data) < 2:
        raise TruncatedError(f"{what} needs 2 bytes but only {len(data)} remain", position=0)
    return struct.unpack_from(">h", data)[0]


def decode_internal(
    registry: str, key: bytes | None, value: bytes | None, source: CodecSource = PACKAGED
) -> InternalRecord:
    """Decode one record of a coordinator or metadata topic by its registry."""
    framing = source.registries[registry]["framing"]
    if framing == "coordinator":
        return _coordinator(source, registry, key, value)
    if framing == "metadata":
        return _metadata(source, registry, value)
    raise ValueError(f"registry {registry} holds {framing} records: use decode_control")


def _coordinator_part(source: CodecSource, entity: str, version: int, data: bytes, word: str) -> Decoded:
    """A coordinator record's key or value after its int16, with the error wording of Kafka's
    CoordinatorRecordSerde (``Could not read record with version V from value's buffer due to: ...``)."""
    try:
        return _parse(source, entity, version, data, 2)
    except DecodeError as exc:
        message = f"Could not read record with version {version} from {word}'s buffer due to: {exc.message}."
        raise exc.replace(message=message) from None


def _coordinator(source: CodecSource, registry: str, key: bytes | None, value: bytes | None) -> InternalRecord:
    rtype = None
    try:
        if key is None:
            raise DecodeError("a coordinator record needs a key")
        rtype = _int16(key, "the record type")
        rec = _by_type(source, registry).get(rtype)
        if rec is None:
            raise UnknownRecordTypeError(rtype, registry)
        key_version = coordinator_key_version(rec["key"], rtype, source)
        decoded_key = _coordinator_part(source, rec["key"], key_version, key, "key")
        if value is None:
            return InternalRecord(registry, rtype, rec["name"], decoded_key)
        decoded = _coordinator_part(source, rec["value"], _int16(value, "the value version"), value, "value")
        return InternalRecord(registry, rtype, rec["name"], decoded_key, decoded)
    except DecodeError as exc:
        name = _by_type(source, registry).get(rtype, {}).get("name") if rtype is not None else None
        return InternalRecord(registry, rtype, name, error=exc)


def _metadata(source: CodecSource, registry: str, value: bytes | None) -> InternalRecord:
    api_key = None
    try:
        if value is None:
            raise DecodeError("a metadata record needs a value")
        frame, pos = decode_uvarint(value, 0)
        if frame != METADATA_FRAME_VERSION:
            raise FrameVersionError(frame)
        api_key, pos = decode_uvarint(value, pos)
        version, pos = decode_uvarint(value, pos)
        rec = _by_type(source, registry).get(api_key)
        if rec is None:
            raise UnknownRecordTypeError(api_key, registry)
        return InternalRecord(registry, api_key, rec["name"], value=_parse(source, rec["value"], version, value, pos))
    except DecodeError as exc:
        name = _by_type(source, registry).get(api_key, {}).get("name") if api_key is not None else None
        return InternalRecord(registry, api_key, name, error=exc)


def decode_control(control_type: int, value: bytes | None, source: CodecSource = PACKAGED) -> InternalRecord | None:
    """A KRaft control record's value (type 2-6), at version 0; None for types the registry does not list
    (transaction markers are decoded elsewhere)."""
    registry = next((n for n, r in source.registries.items() if r["framing"] == "control"), None)
    rec = _by_type(source, registry).get(control_type) if registry is not None else None
    if registry is None or rec is None:
        return None
    try:
        if value is None:
            raise DecodeError("a control record needs a value")
        return InternalRecord(registry, control_type, rec["name"], value=_parse(source, rec["value"], 0, value, 0))
    except DecodeError as exc:
        return InternalRecord(registry, control_type, rec["name"], error=exc)
