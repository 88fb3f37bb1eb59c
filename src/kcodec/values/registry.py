"""A Schema Registry's state as data, and how its ``_schemas`` topic's records build it.

The registry keeps its state in a compacted topic (``_schemas``): JSON keys ``{"keytype": ..., "subject": ...,
"version": ..., "magic": ...}`` with keytype ``SCHEMA``, ``CONFIG``, ``DELETE_SUBJECT`` or ``NOOP`` (newer
registries add ``MODE``, ``CONTEXT``, ``CLEAR_SUBJECT`` ...: counted, not needed to read values), and JSON
values. A SCHEMA value holds ``subject``, ``version``, ``id``, ``schema``, ``schemaType`` (absent: AVRO),
``references`` and ``deleted`` (a soft delete); a null value hard-deletes that version. A DELETE_SUBJECT
value ``{"subject", "version"}`` soft-deletes the subject's versions up to it. Records apply in offset
order, so the last record per key wins, as after compaction. A record that does not parse is reported
(:attr:`RegistryState.damaged`) and the rest still load."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["SCHEMA_TYPES", "Reference", "RegisteredSchema", "DamagedRecord", "RegistryState", "registry_state"]

SCHEMA_TYPES = ("AVRO", "PROTOBUF", "JSON")


@dataclass(frozen=True)
class Reference:
    """A schema reference: ``name`` (an Avro full name, a .proto import path, a JSON Schema ``$ref``) to a
    subject's version."""

    name: str
    subject: str
    version: int


@dataclass(frozen=True)
class RegisteredSchema:
    """One schema as the registry stores it: its id, type (AVRO, PROTOBUF, JSON), text and references;
    ``subject``/``version`` where known (a schema read by id from files may have none)."""

    id: int
    schema_type: str
    schema: str
    references: tuple[Reference, ...] = ()
    subject: str | None = None
    version: int | None = None
    deleted: bool = False


@dataclass(frozen=True)
class DamagedRecord:
    """A ``_schemas`` record that could not be applied, and why."""

    offset: int
    reason: str
    file: str | None = None


@dataclass
class RegistryState:
    """What a registry holds: every (subject, version) still there (soft-deleted ones flagged), the versions
    hard-deleted, compatibility configs, and what could not be read."""

    versions: dict[tuple[str, int], RegisteredSchema] = field(default_factory=dict)
    hard_deleted: dict[tuple[str, int], int | None] = field(default_factory=dict)  # -> its id where known
    configs: dict[str | None, str] = field(default_factory=dict)  # subject (None: global) -> compatibility
    damaged: list[DamagedRecord] = field(default_factory=list)
    records: int = 0
    other_keytypes: dict[str, int] = field(default_factory=dict)

    def by_id(self, schema_id: int) -> RegisteredSchema | None:
        """The schema with that id: a live version first, else a soft-deleted one (the registry still
        serves those by id); None when no version has it."""
        found = [s for s in self.versions.values() if s.id == schema_id]
        found.sort(key=lambda s: (s.deleted, s.subject or "", s.version or 0))
        return found[0] if found else None

    def subjects_of(self, schema_id: int) -> list[tuple[str, int]]:
        return sorted(k for k, s in self.versions.items() if s.id == schema_id)

    def version(self, subject: str, version: int) -> RegisteredSchema | None:
        return self.versions.get((subject, version))

    def latest(self, subject: str) -> RegisteredSchema | None:
        """The subject's highest version that is not deleted."""
        live = [s for (subj, _), s in self.versions.items() if subj == subject and not s.deleted]
        return max(live, key=lambda s: s.version or 0) if live else None

    def subjects(self) -> list[str]:
        return sorted({subj for subj, _ in self.versions} | {subj for subj, _ in self.hard_deleted})


def _references(raw) -> tuple[Reference, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ValueError("references is not a list")
    out = []
    for r in raw:
        if not isinstance(r, dict) or not {"name", "subject", "version"} <= r.keys():
            raise ValueError(f"reference {r!r} lacks name, subject or version")
        out.append(Reference(str(r["name"]), str(r["subject"]), _int(r["version"], "reference version")))
    return tuple(out)


def _int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} {value!r} is not an integer")
    return value


def schema_from_json(value: dict, *, subject: str | None = None, version: int | None = None) -> RegisteredSchema:
    """A SCHEMA value (or a registry's ``GET /schemas`` entry) as a :class:`RegisteredSchema`; ValueError
    saying what is wrong."""
    schema_type = value.get("schemaType") or "AVRO"
    if schema_type not in SCHEMA_TYPES:
        raise ValueError(f"unknown schemaType {schema_type!r}")
    text = value.get("schema")
    if not isinstance(text, str):
        raise ValueError("no schema text")
    deleted = value.get("deleted", False)
    if not isinstance(deleted, bool):
        raise ValueError(f"deleted {deleted!r} is not a boolean")
    return RegisteredSchema(
        id=_int(value.get("id"), "id"),
        schema_type=schema_type,
        schema=text,
        references=_references(value.get("references")),
        subject=str(value["subject"]) if value.get("subject") is not None else subject,
        version=_int(value["version"], "version") if value.get("version") is not None else version,
        deleted=deleted,
    )


def _json_object(data: bytes | None, what: str) -> dict | None:
    if data is None:
        return None
    try:
        parsed = json.loads(bytes(data))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{what} is not JSON ({exc})") from None
    if not isinstance(parsed, dict):
        raise ValueError(f"{what} is not a JSON object")
    return parsed


class _Builder:
    def __init__(self) -> None:
        self.state = RegistryState()

    def apply(self, offset: int, key: bytes | None, value: bytes | None, file: str | None) -> None:
        self.state.records += 1
        try:
            self._apply(key, value)
        except ValueError as exc:
            self.state.damaged.append(DamagedRecord(offset, str(exc), file))

    def _apply(self, raw_key: bytes | None, raw_value: bytes | None) -> None:
        key = _json_object(raw_key, "key")
        if key is None:
            raise ValueError("no key")
        keytype = key.get("keytype")
        value = _json_object(raw_value, "value")
        if keytype == "SCHEMA":
            subject, version = key.get("subject"), key.get("version")
            if not isinstance(subject, str):
                raise ValueError("SCHEMA key without a subject")
            at = (subject, _int(version, "SCHEMA key version"))
            if value is None:  # a hard delete
                gone = self.state.versions.pop(at, None)
                self.state.hard_deleted[at] = gone.id if gone else self.state.hard_deleted.get(at)
                return
            schema = schema_from_json(value, subject=subject, version=at[1])
            if (schema.subject, schema.version) != at:
                raise ValueError(
                    f"value names {schema.subject} version {schema.version}, its key {at[0]} version {at[1]}"
                )
            self.state.versions[at] = schema
            self.state.hard_deleted.pop(at, None)
        elif keytype == "CONFIG":
            subject = key.get("subject")
            if value is None:
                self.state.configs.pop(subject, None)
            else:
                level = value.get("compatibilityLevel") or value.get("compatibility")
                if level is not None:
                    self.state.configs[subject] = str(level)
        elif keytype == "DELETE_SUBJECT":
            if value is None:
                raise ValueError("DELETE_SUBJECT record without a value")
            subject, upto = value.get("subject"), _int(value.get("version"), "DELETE_SUBJECT version")
            for (subj, ver), s in list(self.state.versions.items()):
                if subj == subject and ver <= upto and not s.deleted:
                    self.state.versions[(subj, ver)] = RegisteredSchema(**{**s.__dict__, "deleted": True})
        elif keytype == "NOOP":
            pass
        elif isinstance(keytype, str):
            self.state.other_keytypes[keytype] = self.state.other_keytypes.get(keytype, 0) + 1
        else:
            raise ValueError("key has no keytype")


def registry_state(records: Iterable[tuple[int, bytes | None, bytes | None, str | None]]) -> RegistryState:
    """The state ``_schemas`` records build: ``(offset, key, value, file)`` in offset order."""
    builder = _Builder()
    for offset, key, value, file in records:
        builder.apply(offset, key, value, file)
    return builder.state
