"""Schema Registry framed values and a registry's ``_schemas`` topic, made by what nobody here wrote:
confluent-kafka's serializers over its mock registry client write the values; the ``_schemas`` records are
the mock client's registrations written as the registry writes them (the Schema Registry's SchemaKey /
SchemaValue / ConfigKey / DeleteSubjectKey / NoopKey JSON, which Karapace's schema reader also reads:
keys ``{"keytype", "subject", "version", "magic"}``, SCHEMA values ``{"subject", "version", "id",
"schemaType" (left out for AVRO), "references", "schema", "deleted"}``), laid in segments by kcodec's
own writer. Protobuf message classes come from protoc (grpcio-tools) and protobuf's message factory."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.serialization import MessageField, SerializationContext

from kcodec.log.writer import SegmentWriter
from kcodec.records.encode import encode_batch


def mock_client():
    return SchemaRegistryClient.new_client({"url": "mock://"})


def ctx(topic: str, key: bool = False) -> SerializationContext:
    return SerializationContext(topic, MessageField.KEY if key else MessageField.VALUE)


def _json(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def schema_key(subject: str, version: int) -> bytes:
    return _json({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1})


def schema_value(subject: str, version: int, schema_id: int, schema, deleted: bool = False) -> bytes:
    """A SCHEMA value from a confluent-kafka ``Schema`` (schema_str, schema_type, references)."""
    value: dict = {"subject": subject, "version": version, "id": schema_id}
    if schema.schema_type and schema.schema_type != "AVRO":
        value["schemaType"] = schema.schema_type
    if schema.references:
        value["references"] = [{"name": r.name, "subject": r.subject, "version": r.version} for r in schema.references]
    value["schema"] = schema.schema_str
    value["deleted"] = deleted
    return _json(value)


NOOP = (_json({"keytype": "NOOP", "magic": 0}), None)
GLOBAL_CONFIG = (_json({"keytype": "CONFIG", "magic": 0}), _json({"compatibilityLevel": "BACKWARD"}))


def registrations(client) -> list[tuple[str, int, int, object]]:
    """(subject, version, id, Schema) of every registration the client holds, through its public API."""
    out = []
    for subject in client.get_subjects():
        for version in sorted(client.get_versions(subject)):
            registered = client.get_version(subject, version)
            out.append((subject, version, registered.schema_id, registered.schema))
    return sorted(out, key=lambda r: r[2])


def registry_records(client) -> list[tuple[bytes, bytes | None]]:
    """The ``_schemas`` records a registry writes for the client's registrations, in id order, after a
    NOOP and the global config, as a starting registry does."""
    records = [NOOP, GLOBAL_CONFIG]
    for subject, version, schema_id, schema in registrations(client):
        records.append((schema_key(subject, version), schema_value(subject, version, schema_id, schema)))
    return records


def write_topic(directory: Path, records: list[tuple[bytes | None, bytes | None]], per_batch: int = 3) -> Path:
    """Records as v2 batches of ``per_batch`` in a partition directory, offsets from 0."""
    directory.mkdir(parents=True, exist_ok=True)
    with SegmentWriter(directory, base_offset=0) as writer:
        for start in range(0, len(records), per_batch):
            chunk = [{"key": k, "value": v} for k, v in records[start : start + per_batch]]
            writer.append(encode_batch(chunk, magic=2, base_offset=start))
    return directory


def proto_classes(files: dict[str, str]) -> dict[str, type]:
    """Message classes (by full name) of .proto files compiled by protoc, in a descriptor pool of their own."""
    import grpc_tools
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    include = Path(grpc_tools.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in files.items():
            (Path(tmp) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / name).write_text(text)
        out = Path(tmp) / "set.pb"
        cmd = [sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp}", f"-I{include}", "--include_imports"]
        subprocess.run([*cmd, f"--descriptor_set_out={out}", *files], check=True, cwd=tmp, timeout=120)
        fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for fdp in fds.file:
        pool.AddSerializedFile(fdp.SerializeToString())
    classes = {}
    for fdp in fds.file:
        for name in _message_names(fdp.package, fdp.message_type):
            classes[name] = message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
    return classes


def _message_names(prefix: str, messages) -> list[str]:
    out = []
    for m in messages:
        full = f"{prefix}.{m.name}" if prefix else m.name
        out.append(full)
        out += _message_names(full, m.nested_type)
    return out
