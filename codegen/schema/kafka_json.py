"""Kafka's JSON message definitions (``clients/src/main/resources/common/message/*.json`` and the
metadata, coordinator and storage ones) as a second front-end to the IR.

The only reader of Kafka-format JSON. Each file is translated into the dict a kcodec schema file holds
and validated by the YAML loader's own checks (:func:`.loader.load_entity_spec`), so both front-ends
give the same IR: Kafka's PascalCase (or lowerCamel) names become snake_case (``KRaftVersion`` ->
``k_raft_version``), ``about`` becomes the doc, ``string`` is an int16-prefixed string and ``bytes``
an int32-prefixed one (compact in flexible versions), arrays have an int32 count, ``records`` is a
nullable int32-prefixed bytes field (its contents are record batches, read with kcodec's record
readers), ``commonStructs`` and inline ``fields`` become the file's structs. ``ignorable``,
``entityType``, ``mapKey`` and ``zeroCopy`` say how Kafka's Java classes treat a field, not what
its bytes are, so they do not change the IR.

Whatever cannot be mapped (an unknown key or type, a version range that does not parse, a default
of the wrong type, a rule of the IR the file breaks) is reported with the file and field: all of
them at once in a :class:`KafkaJsonError`, or, with ``skip_unsupported``, the files concerned are
left out whole (dropping a field would change the bytes) and listed in ``KafkaJsonSet.skipped``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from kcodec.errors import NotRegularFileError, SchemaError
from kcodec.runtime.regular_files import read_regular_file

from .ir import INT_TYPES, SchemaSet
from .loader import check_references, load_entity_spec
from .versions import VersionRange

__all__ = [
    "KafkaJsonError",
    "KafkaJsonSet",
    "KafkaMessage",
    "Unsupported",
    "load_kafka_json",
    "snake_case",
    "strip_comments",
]

# top-level keys: what the bytes are, and facts about the message (kept in KafkaMessage or without
# effect on the bytes: listeners, deprecatedVersions, latestVersionUnstable say who may send it)
_TOP_KEYS = {
    "apiKey",
    "type",
    "name",
    "validVersions",
    "flexibleVersions",
    "fields",
    "commonStructs",
    "listeners",
    "deprecatedVersions",
    "latestVersionUnstable",
}
# ignorable, entityType, mapKey and zeroCopy shape Kafka's Java classes, not the bytes
_FIELD_KEYS = {
    "name",
    "type",
    "versions",
    "nullableVersions",
    "taggedVersions",
    "tag",
    "default",
    "ignorable",
    "entityType",
    "mapKey",
    "zeroCopy",
    "about",
    "fields",
    "flexibleVersions",
}
_STRUCT_KEYS = {"name", "versions", "fields", "about"}
_MESSAGE_TYPES = {
    "request",
    "response",
    "header",
    "metadata",
    "data",
    "coordinator-key",
    "coordinator-value",
}
_PREFIX = {"string": "int16", "bytes": "int32", "records": "int32"}  # Kafka's non-compact length prefixes
# Kafka's primitive types (FieldType): kcodec's types of the same names, and records
_KAFKA_SCALARS = {"int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "bool", "uuid", *_PREFIX}
MAX_DEFINITION_BYTES = 4 << 20  # Kafka's largest definition is tens of KB; a bigger *.json is not one
_KAFKA_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
_WORD = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@dataclass(frozen=True)
class Unsupported:
    """One construct the loader could not map, where it is."""

    file: str
    field: str | None
    reason: str

    def __str__(self) -> str:
        return f"{self.file}" + (f" field {self.field}" if self.field else "") + f": {self.reason}"


class KafkaJsonError(SchemaError):
    """Kafka JSON files that could not be loaded, every problem listed (file and field each)."""

    def __init__(self, problems: list[Unsupported]):
        self.problems = list(problems)
        files = len({p.file for p in problems})
        listed = "; ".join(str(p) for p in problems)
        super().__init__(
            f"{len(problems)} unsupported construct(s) in {files} Kafka JSON file(s) "
            f"(--skip-unsupported loads the rest): {listed}"
        )


@dataclass(frozen=True)
class KafkaMessage:
    """What a file says about its message besides the fields: Kafka's name, its kind and api key."""

    name: str  # Kafka's: FetchResponse
    entity: str  # kcodec's: fetch_response
    type: str  # request, response, header, metadata, data, coordinator-key, coordinator-value
    api_key: int | None
    file: str
    valid_versions: VersionRange
    source: str = ""  # the directory it was loaded from


@dataclass
class KafkaJsonSet:
    schemas: SchemaSet
    messages: dict[str, KafkaMessage] = field(default_factory=dict)  # by entity name
    skipped: list[Unsupported] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # registry records not mapped, and why


def snake_case(name: str) -> str:
    """kcodec's name for a Kafka name: ``PartitionIndex`` -> ``partition_index``, ``KRaftVersion`` ->
    ``k_raft_version``, ``protocolType`` -> ``protocol_type`` (older coordinator files use lowerCamel)."""
    return _WORD.sub("_", name).lower()


def strip_comments(text: str) -> str:
    """Kafka's JSON without its ``//`` and ``/* */`` comments (the licence header, notes on versions);
    text inside strings is kept as it is. Line breaks stay, so JSON errors point at the right line."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            end = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def load_kafka_json(
    directories: list[str | Path] | str | Path,
    *,
    skip_unsupported: bool = False,
    registries: dict | None = None,
) -> KafkaJsonSet:
    """Every ``*.json`` file under ``directories`` (subfolders too) as IR entities.

    ``registries`` is kcodec's own registry data (``kcodec.generated.registries.REGISTRIES``): how the
    internal topics frame their records. The result's registries hold the same topics with the records
    these files define (see :func:`_map_registries`)."""
    dirs = [Path(d) for d in ([directories] if isinstance(directories, (str, Path)) else directories)]
    files: list[tuple[str, Path, str]] = []
    for d in dirs:
        if not d.is_dir():
            raise SchemaError(f"Kafka JSON directory {d} does not exist")
        found = sorted(d.rglob("*.json"))
        if not found:
            raise SchemaError(f"no *.json message definitions in {d}")
        files += [(p.relative_to(d).as_posix(), p, str(d)) for p in found]
    result = KafkaJsonSet(SchemaSet())
    problems: list[Unsupported] = []
    names: dict[str, dict[str, str]] = {}  # file -> kcodec field path -> Kafka's, for errors found later
    seen: dict[str, Path] = {}
    for name, path, source in files:
        if name in seen:
            problems.append(Unsupported(name, None, f"also in {seen[name].parent}: file names must be unique"))
            continue
        seen[name] = path
        try:  # a FIFO named *.json would block, /dev/zero behind a symlink would never end
            data = read_regular_file(path, MAX_DEFINITION_BYTES + 1)
        except NotRegularFileError as exc:
            problems.append(Unsupported(name, None, str(exc)))
            continue
        except OSError as exc:
            problems.append(Unsupported(name, None, f"cannot be read: {exc.strerror or exc}"))
            continue
        if len(data) > MAX_DEFINITION_BYTES:
            problems.append(
                Unsupported(name, None, f"larger than {MAX_DEFINITION_BYTES >> 20} MiB: not a message definition")
            )
            continue
        result.schemas.sources[name] = hashlib.sha256(data).hexdigest()
        problems += _load_file(name, data, source, result, names)
    for entity in list(result.schemas.entities.values()):
        if entity.name not in result.schemas.entities:
            continue  # its message was dropped already
        try:
            check_references(entity, result.schemas)  # a struct type no struct of the file defines
        except SchemaError as exc:
            struct = entity.name.split("__", 1)[1] if entity.owner else None
            field = f"{struct}.{exc.field}" if struct and exc.field else exc.field
            problems.append(Unsupported(entity.file, names.get(entity.file, {}).get(field or "", field), exc.message))
            _drop(result, entity.owner or entity.name)
    if problems and not skip_unsupported:
        raise KafkaJsonError(problems)
    result.skipped = problems
    for p in problems:
        result.schemas.sources.pop(p.file, None)
    if registries:
        _map_registries(result, registries)
    return result


def _drop(result: KafkaJsonSet, entity: str) -> None:
    for name in [n for n, e in result.schemas.entities.items() if n == entity or e.owner == entity]:
        del result.schemas.entities[name]
    result.messages.pop(entity, None)


def _load_file(
    name: str, data: bytes, source: str, result: KafkaJsonSet, names: dict[str, dict[str, str]]
) -> list[Unsupported]:
    try:
        spec = json.loads(strip_comments(data.decode("utf-8")))
    except (UnicodeDecodeError, ValueError) as exc:
        return [Unsupported(name, None, f"not valid JSON: {exc}")]
    if not isinstance(spec, dict):
        return [Unsupported(name, None, "a message definition is a JSON object")]
    translator = _Translator(name)
    doc, message = translator.message(spec)
    names[name] = translator.names
    if translator.problems or doc is None or message is None:
        return translator.problems
    if message.entity in result.messages:
        other = result.messages[message.entity].file
        return [Unsupported(name, None, f"message {message.name} is also defined in {other}")]
    try:
        load_entity_spec(name, doc, result.schemas)
    except SchemaError as exc:
        path = _field_path(exc)
        return [Unsupported(name, translator.names.get(path or "", path), exc.message)]
    result.messages[message.entity] = replace(message, source=source)
    return []


def _field_path(exc: SchemaError) -> str | None:
    """The field a shared-loader error names, with its struct: ``partition.index``."""
    where = exc.entity or ""
    if " struct " in where:
        struct = where.split(" struct ", 1)[1]
        return f"{struct}.{exc.field}" if exc.field else struct
    return exc.field


def _overlap(a: VersionRange, b: VersionRange) -> VersionRange:
    low = max(a.low, b.low)
    highs = [h for h in (a.high, b.high) if h is not None]
    high = min(highs) if highs else None
    if a.empty or b.empty or high is not None and high < low:
        return VersionRange(0, 0, empty=True)
    return VersionRange(low, high)


class _Translator:
    """One Kafka JSON file into a kcodec schema dict, collecting what it cannot map."""

    def __init__(self, file: str):
        self.file = file
        self.problems: list[Unsupported] = []
        self.structs: dict[str, str] = {}  # Kafka struct name -> kcodec struct name
        self.names: dict[str, str] = {}  # kcodec field path (struct.field) -> Kafka's (Struct.Field)

    def problem(self, where: str | None, reason: str) -> None:
        self.problems.append(Unsupported(self.file, where, reason))

    def message(self, spec: dict) -> tuple[dict | None, KafkaMessage | None]:
        self._unknown_keys(None, spec, _TOP_KEYS)
        name = spec.get("name")
        if not isinstance(name, str) or not _KAFKA_NAME.match(name):
            self.problem(None, f"'name' must be a Kafka message name such as FetchRequest, not {name!r}")
            return None, None
        mtype = spec.get("type")
        if mtype not in _MESSAGE_TYPES:
            self.problem(None, f"unknown message type {mtype!r}; known: {', '.join(sorted(_MESSAGE_TYPES))}")
        api_key = spec.get("apiKey")
        if api_key is not None and (not isinstance(api_key, int) or isinstance(api_key, bool) or api_key < 0):
            self.problem(None, f"'apiKey' must be a non-negative integer, not {api_key!r}")
            api_key = None
        valid = self._range(None, spec.get("validVersions"), "validVersions")
        if valid is not None and (valid.high is None or valid.empty):
            self.problem(None, f'validVersions {valid} is not a closed range such as "0-3"')
        flexible = self._range(None, spec.get("flexibleVersions", "none"), "flexibleVersions")
        structs: list[dict] = []
        for common in _list(spec.get("commonStructs", [])):
            if isinstance(common, dict) and isinstance(common.get("name"), str):
                self.structs[common["name"]] = snake_case(common["name"])
        for common in _list(spec.get("commonStructs", [])):
            if not isinstance(common, dict) or not isinstance(common.get("name"), str):
                self.problem(None, f"a common struct is an object with a name, not {common!r}")
                continue
            self._unknown_keys(common["name"], common, _STRUCT_KEYS)
            structs.append(
                {
                    "name": snake_case(common["name"]),
                    "doc": _about(common, f"Kafka's common struct {common['name']}."),
                    "fields": self.fields(common.get("fields"), common["name"]),
                }
            )
        fields = self.fields(spec.get("fields"), None)
        if valid is None or flexible is None:
            return None, None
        doc = {
            "entity": snake_case(name),
            "doc": f"Kafka's {name}" + (f" ({mtype}, api key {api_key})." if api_key is not None else f" ({mtype})."),
            "valid_versions": str(valid),
            "flexible_versions": str(flexible),
            "structs": structs,
            "fields": fields,
        }
        return doc, KafkaMessage(name, snake_case(name), str(mtype), api_key, self.file, valid)

    def fields(self, specs: object, parent: str | None) -> list[dict]:
        if not isinstance(specs, list):
            self.problem(parent, "'fields' must be a list")
            return []
        return [f for f in (self.field(spec, parent) for spec in specs) if f is not None]

    def field(self, spec: object, parent: str | None) -> dict | None:
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            self.problem(parent, f"a field is an object with a name, not {spec!r}")
            return None
        kname = spec["name"]
        where = f"{parent}.{kname}" if parent else kname
        self._unknown_keys(where, spec, _FIELD_KEYS)
        if not _KAFKA_NAME.match(kname):
            self.problem(where, "field names are letters and digits (PascalCase)")
            return None
        out: dict = {"name": snake_case(kname), "doc": _about(spec, f"Kafka's {kname}.")}
        self._type(where, spec, out)
        tagged = self._range(where, spec["taggedVersions"], "taggedVersions") if "taggedVersions" in spec else None
        if tagged is not None:
            out["tagged_versions"] = str(tagged)
        # as Kafka's FieldSpec: without 'versions', a tagged field exists where it is tagged
        versions = self._range(where, spec["versions"], "versions") if "versions" in spec else tagged
        if versions is None and "versions" not in spec:
            self.problem(where, "'versions' is required (or 'taggedVersions')")
        elif versions is not None:
            out["versions"] = str(versions)
        if "nullableVersions" in spec:
            nullable = self._range(where, spec["nullableVersions"], "nullableVersions")
            if nullable is not None and versions is not None:
                # Kafka lets nullableVersions reach past the field's versions; only the overlap matters
                out["nullable_versions"] = str(_overlap(nullable, versions))
        if "tag" in spec:
            tag = spec["tag"]  # Jackson reads "0" as 0; the shared checks say what a bad tag is
            out["tag"] = int(tag) if isinstance(tag, str) and tag.isdigit() else tag
        self.names[out["name"] if parent is None else f"{snake_case(parent)}.{out['name']}"] = where
        if "flexibleVersions" in spec:
            if spec["flexibleVersions"] == "none":
                out["flexible"] = False  # RequestHeader's ClientId keeps its int16 length
            else:
                self.problem(where, f'field flexibleVersions {spec["flexibleVersions"]!r}: only "none" is supported')
        if "default" in spec:
            default = self._default(where, spec["default"], spec.get("type"))
            if default is not _OMIT:
                out["default"] = default
        return out

    def _type(self, where: str, spec: dict, out: dict) -> None:
        text = spec.get("type")
        if not isinstance(text, str):
            self.problem(where, f"'type' must be a string, not {text!r}")
            return
        array = text.startswith("[]")
        base = text[2:] if array else text
        nested = spec.get("fields")
        if base in _KAFKA_SCALARS:
            if nested is not None:
                self.problem(where, f"a {text} field has no 'fields'")
            if array and base == "records":
                self.problem(where, "an array of records is not a Kafka type")
                return
            out["type"] = "bytes" if base == "records" else text
            if array:
                out["prefix"] = "int32"
            elif base in _PREFIX:
                out["prefix"] = _PREFIX[base]
            return
        if not base or not base[0].isupper() or not _KAFKA_NAME.match(base):
            self.problem(where, f"unknown type {text!r}")
            return
        struct = snake_case(base)
        if nested is not None:  # a struct defined here
            if base in self.structs and self.structs[base] != struct:
                self.problem(where, f"struct {base} is defined twice")
            self.structs[base] = struct
            out["type"] = "[]struct" if array else "struct"
            out["struct"] = struct
            out["fields"] = self.fields(nested, base)
        else:  # a common struct, or one defined by an earlier field
            out["type"] = f"[]{struct}" if array else struct
        if array:
            out["prefix"] = "int32"

    def _default(self, where: str, value: object, ktype: object) -> object:
        """Kafka's default (a JSON string, as Kafka's FieldSpec reads it) as the IR's typed value."""
        text = value if isinstance(value, str) else json.dumps(value)
        t = ktype if isinstance(ktype, str) else ""
        try:
            if text == "null":
                return None
            if t.startswith("[]"):
                if text in ("", "[]"):
                    return []
                raise ValueError("an array's default is null or empty")
            if t in INT_TYPES:
                return _int(text)
            if t == "bool":
                if text.lower() not in ("true", "false"):
                    raise ValueError("a bool's default is true or false")
                return text.lower() == "true"
            if t == "float64":
                return float(text)
            if t in ("string", "uuid"):
                return text
            if t in ("bytes", "records"):
                if text:
                    raise ValueError("a bytes default is null or empty")
                return ""
            if text:
                raise ValueError("a struct's default is null or empty")
            return _OMIT  # empty: the struct of its fields' defaults, the IR's own default
        except ValueError as exc:
            self.problem(where, f"default {value!r} of type {t}: {exc}")
            return _OMIT

    def _range(self, where: str | None, text: object, what: str) -> VersionRange | None:
        try:
            return VersionRange.parse(text)
        except ValueError as exc:
            self.problem(where, f"{what}: {exc}")
            return None

    def _unknown_keys(self, where: str | None, spec: dict, allowed: set[str]) -> None:
        for key in sorted(set(spec) - allowed):
            self.problem(where, f"unknown key {key!r}")


_OMIT = object()  # no default key in the translated field


def _int(text: str) -> int:
    """An integer default as Kafka writes them: decimal or 0x hex, with a sign."""
    body = text.lstrip("+-")
    try:
        value = int(body, 16) if body[:2].lower() == "0x" else int(body, 10)
    except ValueError:
        raise ValueError("not a decimal or 0x integer") from None
    return -value if text.startswith("-") else value


def _about(spec: dict, fallback: str) -> str:
    about = spec.get("about")
    return about if isinstance(about, str) and about.strip() else fallback


def _list(value: object) -> list:
    return value if isinstance(value, list) else []


# ---------------------------------------------------------------------------- registries


def _map_registries(result: KafkaJsonSet, template: dict) -> None:
    """The internal topics' registries for these files: kcodec's topics and framings, with the records
    the files define. Metadata records are numbered by their ``apiKey`` (type ``metadata``). A coordinator
    record is a key message and a value message: Kafka 4.1's ``coordinator-key``/``coordinator-value``
    pairs share an ``apiKey``, the record type; in older files (type ``data``) ``XKey`` and ``XValue`` pair
    by name and the key's versions are the record types (OffsetCommitKey 0-1, GroupMetadataKey 2). kcodec's
    records are kept where the files define their entities (matched by name: kcodec's entity names are
    Kafka's in snake_case); a new pair joins the registry whose records come from the same directory."""
    entities, messages = result.schemas.entities, result.messages
    pairs = _coordinator_pairs(messages)
    registries: dict[str, dict] = {}
    for name, reg in template.items():
        records, sources, missing = [], set(), []
        for rec in reg["records"]:
            wanted = [rec[r] for r in ("key", "value") if r in rec]
            if all(w in entities for w in wanted):
                records.append(dict(rec))
                sources |= {messages[w].source for w in wanted if w in messages}
            else:
                missing.append(f"{rec['type']} ({rec['name']})")
        if reg["framing"] == "metadata":
            api = {m.api_key: m for m in messages.values() if m.type == "metadata" and m.api_key is not None}
            if api:
                records = [{"type": k, "name": m.entity, "value": m.entity} for k, m in sorted(api.items())]
        if reg["framing"] == "coordinator":
            known = {r["type"] for r in records}
            for key, (rtypes, value) in sorted(pairs.items()):
                if messages[key].source not in sources:
                    continue
                for rtype in rtypes:
                    if rtype not in known:
                        records.append({"type": rtype, "name": key.removesuffix("_key"), "key": key, "value": value})
        if records:
            registries[name] = {**reg, "records": sorted(records, key=lambda r: r["type"])}
            if missing and reg["framing"] != "metadata":
                result.notes.append(f"{name}: record types {', '.join(missing)} left out: not in these files")
        else:
            result.notes.append(f"{name} ({', '.join(reg['topics'])}): left out, none of its records is in these files")
    placed = {r.get("key") for reg in registries.values() for r in reg["records"]}
    for key in sorted(set(pairs) - placed):
        result.notes.append(f"{key}: no kcodec registry frames its topic (none has records from its directory)")
    result.schemas.registries = registries


def _coordinator_pairs(messages: dict[str, KafkaMessage]) -> dict[str, tuple[list[int], str]]:
    """Key entity -> (its record types, value entity) for the coordinator records these files define."""
    pairs: dict[str, tuple[list[int], str]] = {}
    values = {m.api_key: m.entity for m in messages.values() if m.type == "coordinator-value" and m.api_key is not None}
    for m in messages.values():
        if m.type == "coordinator-key" and m.api_key is not None and m.api_key in values:
            pairs[m.entity] = ([m.api_key], values[m.api_key])
        elif m.type == "data" and m.entity.endswith("_key") and m.entity[:-4] + "_value" in messages:
            pairs[m.entity] = (m.valid_versions.versions(m.valid_versions), m.entity[:-4] + "_value")
    return pairs
