"""Protobuf payloads: the registry's ``.proto`` text compiled at run time by protoc, the real compiler as
grpcio-tools ships it on PyPI (the ``confluent`` extra), into a descriptor set loaded in a pool of its own
(two versions of one message never clash). protoc rather than a hand-written or third-party .proto parser:
it is the grammar's reference (proto2, proto3, editions, options, imports), it comes with the well-known
types (``google/protobuf/timestamp.proto`` ...), and its error messages say where a schema is wrong.
It runs in a child process so a schema it cannot compile gives its message, never a crash of kcodec.

Values are dicts keyed by the .proto field names: 64-bit integers as ints, ``bytes`` as bytes, enums by
their value names (the number when the schema does not name it), nested messages as dicts (None when
not set), repeated fields as lists, maps as dicts, fields with presence that are not set as None.
Well-known types are values as Protobuf's JSON mapping makes them: a ``Timestamp`` an aware UTC datetime
printing as RFC 3339 (:class:`ProtoTimestamp`, nanoseconds kept in its text), the wrappers
(``Int64Value`` ...) their wrapped value, ``Duration`` and ``FieldMask`` their strings (``"1.500s"``,
``"a.b,c"``), ``Struct``/``Value``/``ListValue`` the JSON they hold, ``Any`` its message's fields with
``"@type"`` (when the schema holds that type)."""

from __future__ import annotations

import base64
import datetime
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from kcodec.values.errors import BadFrameError, MissingDependencyError, PayloadError, SchemaParseError
from kcodec.values.registry import Reference, RegisteredSchema

__all__ = [
    "ProtobufSchema",
    "ProtoTimestamp",
    "message_value",
    "descriptor_form",
    "PROTOC_TIMEOUT_S",
    "WRAPPERS",
    "JSON_MAPPED",
]

PROTOC_TIMEOUT_S = 120.0
_MAIN = "kcodec_schema_{id}.proto"


def _require() -> None:
    for module, what in (("google.protobuf", "protobuf"), ("grpc_tools", "grpcio-tools (protoc)")):
        try:
            found = importlib.util.find_spec(module) is not None
        except ImportError:
            found = False
        if not found:
            raise MissingDependencyError(what, "decoding Protobuf values")


def _safe_name(name: str) -> str:
    """A reference's import path as a relative file name under the compile directory."""
    parts = Path(name).parts
    if not name or Path(name).is_absolute() or ".." in parts:
        raise SchemaParseError(f"reference name {name!r} is not a relative .proto path")
    return name


def descriptor_form(text: str):
    """The FileDescriptorProto of a schema given as base64 (how confluent-kafka's serializer registers
    Protobuf schemas, and what a registry returns with ``format=serialized``); None for .proto text."""
    stripped = text.strip()
    if not stripped or any(c in stripped for c in " \n\t{;"):
        return None
    from google.protobuf import descriptor_pb2

    try:
        return descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(stripped, validate=True))
    except Exception:  # binascii.Error, protobuf's DecodeError: not a descriptor after all
        return None


def _run_protoc(root: Path, inputs: list[str], out: Path, what: str) -> None:
    import grpc_tools

    include = Path(grpc_tools.__file__).parent / "_proto"  # the well-known types
    command = [sys.executable, "-m", "grpc_tools.protoc", f"-I{root}", f"-I{include}", "--include_imports"]
    command += [f"--descriptor_set_out={out}", *inputs]
    try:
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=PROTOC_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise SchemaParseError(f"protoc did not compile {what} in {PROTOC_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0 or not out.exists():
        lines = [ln.replace(str(root) + os.sep, "") for ln in done.stderr.splitlines() if ln.strip()]
        detail = "; ".join(lines[:3]) or f"exit status {done.returncode}"
        raise SchemaParseError(f"{what} is not a .proto file protoc compiles: {detail}")


def compile_files(schema: RegisteredSchema, refs: list[tuple[Reference, RegisteredSchema]]) -> tuple[list, str]:
    """Every FileDescriptorProto the schema needs, each after those it imports, and the main file's name.
    .proto text goes through protoc; schemas in descriptor form are taken as they are (the well-known
    types they import compiled by protoc)."""
    _require()
    from google.protobuf import descriptor_pb2

    main = _MAIN.format(id=schema.id)
    texts: list[tuple[str, RegisteredSchema]] = []
    binaries = []
    for name, target in [(ref.name, t) for ref, t in refs] + [(main, schema)]:
        if target.schema_type != "PROTOBUF":
            raise SchemaParseError(f"reference {name!r} is {target.schema_type}, not PROTOBUF")
        fdp = descriptor_form(target.schema)
        if fdp is None:
            texts.append((_safe_name(name), target))
        else:
            fdp.name = name
            binaries.append(fdp)
    known = {f.name for f in binaries} | {name for name, _ in texts}
    wanted = sorted({d for f in binaries for d in f.dependency if d not in known and d.startswith("google/protobuf/")})
    compiled: list = []
    if texts or wanted:
        with tempfile.TemporaryDirectory(prefix="kcodec-proto-") as tmp:
            root = Path(tmp) / "src"
            for name, target in texts:
                path = root / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(target.schema, encoding="utf-8")
            root.mkdir(exist_ok=True)
            out = Path(tmp) / "set.pb"
            what = f"schema {schema.id}" if texts and texts[-1][0] == main else f"a reference of schema {schema.id}"
            _run_protoc(root, [name for name, _ in texts] + wanted, out, what)
            compiled = list(descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file)
    return compiled + binaries, main


class ProtobufSchema:
    """A compiled schema: the message class of each message-index path, made on first use."""

    def __init__(self, schema: RegisteredSchema, refs: list[tuple[Reference, RegisteredSchema]]):
        from google.protobuf import descriptor_pool

        files, main = compile_files(schema, refs)
        self.pool = descriptor_pool.DescriptorPool()
        self.main = None
        for fdp in files:  # protoc's (--include_imports: dependencies first), then references in order
            try:
                self.pool.AddSerializedFile(fdp.SerializeToString())
            except Exception as exc:  # a descriptor that names a missing import, or clashes
                raise SchemaParseError(f"schema {schema.id}: {fdp.name} does not load: {exc}") from None
            if fdp.name == main:
                self.main = fdp
        if self.main is None:
            raise SchemaParseError(f"protoc's output for schema {schema.id} lacks the schema's own file")
        self._classes: dict[tuple[int, ...], Any] = {}

    def _full_name(self, indexes: tuple[int, ...]) -> str:
        assert self.main is not None
        messages, names = self.main.message_type, []
        for depth, i in enumerate(indexes):
            if not 0 <= i < len(messages):
                raise BadFrameError(
                    f"message index path {list(indexes)} names no message: level {depth} has {len(messages)} "
                    f"message type(s), index {i}",
                    field="message_indexes",
                )
            names.append(messages[i].name)
            messages = messages[i].nested_type
        package = self.main.package
        return ".".join([package, *names] if package else names)

    def message_paths(self) -> dict[str, tuple[int, ...]]:
        """Every message of the schema's file by its full name, with its message-index path."""
        assert self.main is not None
        out: dict[str, tuple[int, ...]] = {}
        todo: list[tuple[tuple[int, ...], Any, str]] = [
            ((i,), m, self.main.package) for i, m in enumerate(self.main.message_type)
        ]
        while todo:
            path, message, prefix = todo.pop()
            full = f"{prefix}.{message.name}" if prefix else message.name
            out[full] = path
            todo += [((*path, i), m, full) for i, m in enumerate(message.nested_type)]
        return out

    def message_class(self, indexes: tuple[int, ...]):
        cls = self._classes.get(indexes)
        if cls is None:
            from google.protobuf import message_factory

            descriptor = self.pool.FindMessageTypeByName(self._full_name(indexes))
            cls = self._classes[indexes] = message_factory.GetMessageClass(descriptor)
        return cls

    def decode(self, payload: memoryview, indexes: tuple[int, ...]) -> Any:
        cls = self.message_class(indexes)
        try:
            message = cls.FromString(bytes(payload))
        except Exception as exc:  # google.protobuf.message.DecodeError and whatever upb raises
            raise PayloadError(f"Protobuf payload does not decode as {cls.DESCRIPTOR.full_name}: {exc}") from None
        return message_value(message)


class ProtoTimestamp(datetime.datetime):
    """A ``google.protobuf.Timestamp``: an aware UTC datetime (to the microsecond, as Python and Spark hold
    time) that keeps the exact text of Protobuf's JSON mapping (RFC 3339, ``Z``, 0, 3, 6 or 9 fractional
    digits: the nanoseconds too), which :meth:`isoformat` gives."""

    rfc3339: str

    def isoformat(self, sep: str = "T", timespec: str = "auto") -> str:
        return self.rfc3339


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
# the wrappers: their value as the wrapped type (kcodec keeps 64-bit integers numbers, bytes bytes)
WRAPPERS = {
    f"google.protobuf.{n}Value"
    for n in ("Double", "Float", "Int64", "UInt64", "Int32", "UInt32", "Bool", "String", "Bytes")
}
# as Protobuf's JSON mapping has them: Duration "1.5s", FieldMask "a.b,c", Struct an object, Value any JSON
# value, ListValue an array, Any its message's fields with "@type"
JSON_MAPPED = {f"google.protobuf.{n}" for n in ("Duration", "FieldMask", "Struct", "Value", "ListValue", "Any")}


def _timestamp(message) -> ProtoTimestamp:
    try:
        text = message.ToJsonString()  # refuses a Timestamp outside 0001-01-01..9999-12-31
        at = _EPOCH + datetime.timedelta(seconds=message.seconds, microseconds=message.nanos // 1000)
    except (ValueError, OverflowError) as exc:
        raise PayloadError(f"google.protobuf.Timestamp {message.seconds}s {message.nanos}ns: {exc}") from None
    out = ProtoTimestamp(at.year, at.month, at.day, at.hour, at.minute, at.second, at.microsecond, at.tzinfo)
    out.rfc3339 = text
    return out


def _well_known(message) -> Any:
    """A well-known type's value by Protobuf's JSON mapping (see the module's doc); the message's fields as
    a dict for a message that is not one."""
    name = message.DESCRIPTOR.full_name
    if name == "google.protobuf.Timestamp":
        return _timestamp(message)
    if name in WRAPPERS:
        return message.value
    if name in JSON_MAPPED:
        from google.protobuf import json_format

        try:
            pool = message.DESCRIPTOR.file.pool  # the schema's own: an Any's type is looked up there
            return json_format.MessageToDict(message, preserving_proto_field_name=True, descriptor_pool=pool)
        except Exception as exc:  # an Any whose type the schema does not hold, a Duration out of range ...
            raise PayloadError(f"{name} has no JSON mapping here: {exc}") from None
    return message_value(message)


def _is_map(field) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _scalar(field, value):
    if field.enum_type is not None:
        named = field.enum_type.values_by_number.get(value)
        return named.name if named is not None else value
    if field.message_type is not None:
        return _well_known(value)
    return value


def message_value(message) -> dict:
    """A message as plain data, keyed by the .proto field names (see the module's doc)."""
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if _is_map(field):
            value_field = field.message_type.fields_by_name["value"]
            out[field.name] = {k: _scalar(value_field, v) for k, v in value.items()}
        elif field.is_repeated:
            out[field.name] = [_scalar(field, v) for v in value]
        elif field.has_presence and not message.HasField(field.name):
            out[field.name] = None
        else:
            out[field.name] = _scalar(field, value)
    return out
