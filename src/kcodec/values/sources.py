"""Where schemas come from: the ``_schemas`` topic on disk, files, or a live registry (only when asked).

Every source answers the same questions (:class:`SchemaSource`): the schema of an id, a subject's version
(to resolve references), a subject's latest version (the reader schema), the subjects an id is registered
under. :func:`open_schema_source` picks one from what the user named."""

from __future__ import annotations

import base64
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from kcodec.log.fs import resolve
from kcodec.values.errors import SchemaSourceError
from kcodec.values.registry import RegisteredSchema, RegistryState, schema_from_json
from kcodec.values.registry_topic import SCHEMAS_TOPIC, find_registry_partition, read_registry_topic

__all__ = [
    "SchemaSource",
    "RegistryStateSource",
    "SchemaFilesSource",
    "RegistryUrlSource",
    "open_schema_source",
    "default_schemas_path",
]

# file suffix -> schemaType, for a directory of <id>.<suffix> files
FILE_TYPES = {".avsc": "AVRO", ".proto": "PROTOBUF", ".json": "JSON"}
URL_TIMEOUT_S = 10.0


class SchemaSource:
    """The questions a decoder asks; a source that cannot answer returns None."""

    description = "schemas"

    @property
    def damaged(self) -> list:
        """What the source could not read and left out (``_schemas`` records and batches)."""
        return []

    def by_id(self, schema_id: int) -> RegisteredSchema | None:
        raise NotImplementedError

    def version(self, subject: str, version: int) -> RegisteredSchema | None:
        raise NotImplementedError

    def latest(self, subject: str) -> RegisteredSchema | None:
        raise NotImplementedError

    def subjects_of(self, schema_id: int) -> list[tuple[str, int]]:
        raise NotImplementedError


class RegistryStateSource(SchemaSource):
    """Schemas from a registry's state: its ``_schemas`` topic, or a ``GET /schemas`` export."""

    def __init__(self, state: RegistryState, description: str):
        self.state, self.description = state, description

    @property
    def damaged(self) -> list:
        return self.state.damaged

    def by_id(self, schema_id: int) -> RegisteredSchema | None:
        return self.state.by_id(schema_id)

    def version(self, subject: str, version: int) -> RegisteredSchema | None:
        return self.state.version(subject, version)

    def latest(self, subject: str) -> RegisteredSchema | None:
        return self.state.latest(subject)

    def subjects_of(self, schema_id: int) -> list[tuple[str, int]]:
        return self.state.subjects_of(schema_id)


class SchemaFilesSource(SchemaSource):
    """A directory of ``<id>.avsc`` / ``<id>.proto`` / ``<id>.json`` files: schemas by id, no subjects (so
    no references and no reader schema but the writer's)."""

    def __init__(self, directory: Path):
        self.description = str(directory)
        self.schemas: dict[int, RegisteredSchema] = {}
        for path in sorted(directory.iterdir()):
            schema_type = FILE_TYPES.get(path.suffix)
            if schema_type is None or not path.stem.isdigit() or not path.is_file():
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise SchemaSourceError(f"{path}: cannot read the schema: {exc}") from None
            schema_id = int(path.stem)
            if schema_id in self.schemas:
                raise SchemaSourceError(f"{directory}: two files for schema id {schema_id}")
            self.schemas[schema_id] = RegisteredSchema(schema_id, schema_type, text)
        if not self.schemas:
            raise SchemaSourceError(
                f"{directory}: no <id>.avsc, <id>.proto or <id>.json files, and no {SCHEMAS_TOPIC}-N partition"
            )

    def by_id(self, schema_id: int) -> RegisteredSchema | None:
        return self.schemas.get(schema_id)

    def version(self, subject: str, version: int) -> RegisteredSchema | None:
        return None

    def latest(self, subject: str) -> RegisteredSchema | None:
        return None

    def subjects_of(self, schema_id: int) -> list[tuple[str, int]]:
        return []


def export_state(path: Path) -> RegistryState:
    """The registry state in a ``GET /schemas`` export (a JSON list of subject/version/id/schemaType/schema/
    references objects); :class:`SchemaSourceError` when it is not one."""
    try:
        entries = json.loads(path.read_bytes())
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise SchemaSourceError(f"{path}: not a schema export (the JSON of GET /schemas): {exc}") from None
    if not isinstance(entries, list):
        raise SchemaSourceError(f"{path}: not a schema export: a JSON list of schemas is expected")
    state = RegistryState()
    for n, entry in enumerate(entries):
        try:
            if not isinstance(entry, dict):
                raise ValueError("not an object")
            schema = schema_from_json(entry)
        except ValueError as exc:
            raise SchemaSourceError(f"{path}: entry {n}: {exc}") from None
        if schema.subject is None or schema.version is None:
            raise SchemaSourceError(f"{path}: entry {n}: no subject or version")
        state.versions[(schema.subject, schema.version)] = schema
    state.records = len(entries)
    return state


class RegistryUrlSource(SchemaSource):
    """A live registry's REST API, asked only for what a decode needs, each answer kept for the run:
    ``GET /schemas/ids/{id}``, ``/schemas/ids/{id}/versions``, ``/subjects/{s}/versions/{v|latest}``.
    Credentials in the URL (``https://user:secret@host``) go as HTTP basic auth and are left out of
    every message."""

    def __init__(self, url: str, timeout: float = URL_TIMEOUT_S):
        parts = urllib.parse.urlsplit(url)
        self.headers = {"Accept": "application/vnd.schemaregistry.v1+json, application/json"}
        if parts.username is not None:  # https://user:secret@host: HTTP basic auth, never printed
            user = urllib.parse.unquote(parts.username)
            secret = urllib.parse.unquote(parts.password or "")
            token = base64.b64encode(f"{user}:{secret}".encode()).decode("ascii")
            self.headers["Authorization"] = f"Basic {token}"
            parts = parts._replace(netloc=(parts.hostname or "") + (f":{parts.port}" if parts.port else ""))
        self.base, self.timeout = urllib.parse.urlunsplit(parts).rstrip("/"), timeout
        self.description = self.base
        self._cache: dict[str, object] = {}

    def _get(self, path: str):
        if path in self._cache:
            return self._cache[path]
        request = urllib.request.Request(self.base + path, headers=self.headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            if exc.code != 404:
                raise SchemaSourceError(f"{self.base}{path}: HTTP {exc.code} {exc.reason}") from None
            answer = None  # not found: an unknown id or subject, not a failure of the source
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise SchemaSourceError(f"{self.base}{path}: {reason}") from None
        self._cache[path] = answer
        return answer

    def by_id(self, schema_id: int) -> RegisteredSchema | None:
        answer = self._get(f"/schemas/ids/{schema_id}")
        if not isinstance(answer, dict):
            return None
        try:
            return schema_from_json({**answer, "id": schema_id})
        except ValueError as exc:
            raise SchemaSourceError(f"{self.base}/schemas/ids/{schema_id}: {exc}") from None

    def _subject_version(self, subject: str, version: str) -> RegisteredSchema | None:
        path = f"/subjects/{urllib.parse.quote(subject, safe='')}/versions/{version}"
        answer = self._get(path)
        if not isinstance(answer, dict):
            return None
        try:
            return schema_from_json(answer)
        except ValueError as exc:
            raise SchemaSourceError(f"{self.base}{path}: {exc}") from None

    def version(self, subject: str, version: int) -> RegisteredSchema | None:
        return self._subject_version(subject, str(version))

    def latest(self, subject: str) -> RegisteredSchema | None:
        return self._subject_version(subject, "latest")

    def subjects_of(self, schema_id: int) -> list[tuple[str, int]]:
        answer = self._get(f"/schemas/ids/{schema_id}/versions")
        if not isinstance(answer, list):
            return []
        return sorted((str(a["subject"]), int(a["version"])) for a in answer if isinstance(a, dict))


def default_schemas_path(input_path: str) -> str | None:
    """The ``_schemas-N`` directory beside an input's partition directory (``LOGDIR/orders-0/000.log`` ->
    ``LOGDIR/_schemas-0``), or inside the directory given; None when there is none."""
    fs, p = resolve(os.fspath(input_path))
    candidates = [p, fs.parent(p)] if fs.is_dir(p) else [fs.parent(fs.parent(p))]
    for directory in candidates:
        if directory and fs.is_dir(directory):
            part = find_registry_partition(directory)
            if part is not None:
                return str(part.path)
    return None


def open_schema_source(spec: str) -> SchemaSource:
    """The source ``spec`` names: an ``http(s)://`` registry URL; a ``_schemas-N`` partition directory (or a
    log directory holding one); a directory of ``<id>.avsc|.proto|.json`` files; a ``GET /schemas`` export
    file. :class:`SchemaSourceError` when it is none of these."""
    if spec.startswith(("http://", "https://")):
        return RegistryUrlSource(spec)
    if "://" not in spec:
        path = Path(spec)
        if not path.exists():
            raise SchemaSourceError(f"{spec}: no such file or directory")
        if path.is_file():
            return RegistryStateSource(export_state(path), spec)
        if find_registry_partition(spec) is None:
            return SchemaFilesSource(path)
    return RegistryStateSource(read_registry_topic(spec), spec)
