"""The schema sources besides the `_schemas` topic: a directory of <id>.avsc/.proto/.json files, a registry's
``GET /schemas`` export, and a live registry URL (a small HTTP server on 127.0.0.1 answering as the registry's
REST API does), asked once per id; and where the default `_schemas-N` directory is found."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from confluent_kafka.schema_registry import Schema
from confluent_kafka.schema_registry.avro import AvroSerializer

from kcodec.values.decoder import MAX_SCHEMA_BYTES, ValueDecoder
from kcodec.values.errors import SchemaParseError, SchemaSourceError, UnknownSchemaIdError
from kcodec.values.sources import (
    RegistryStateSource,
    RegistryUrlSource,
    SchemaFilesSource,
    default_schemas_path,
    open_schema_source,
)
from tests.helpers.schema_registry import ctx, mock_client, registrations, registry_records, write_topic

V1 = '{"type": "record", "name": "R", "fields": [{"name": "x", "type": "int"}]}'
V2 = '{"type": "record", "name": "R", "fields": [{"name": "x", "type": "int"}, {"name": "y", "type": "string", "default": "d"}]}'  # noqa: E501


@pytest.fixture(scope="module")
def registry():
    client = mock_client()
    data = AvroSerializer(client, V1)({"x": 7}, ctx("t"))
    client.register_schema("t-value", Schema(V2, "AVRO"))
    return client, data


def _export(client) -> list[dict]:
    return [
        {"subject": s, "version": v, "id": i, "schemaType": schema.schema_type, "schema": schema.schema_str}
        for s, v, i, schema in registrations(client)
    ]


def test_a_directory_of_schema_files(registry, tmp_path) -> None:
    _, data = registry
    (tmp_path / "1.avsc").write_text(V1)
    (tmp_path / "2.json").write_text('{"type": "object"}')
    (tmp_path / "notes.txt").write_text("ignored")
    source = open_schema_source(str(tmp_path))
    assert isinstance(source, SchemaFilesSource) and sorted(source.schemas) == [1, 2]
    assert ValueDecoder(source).decode_value(data) == (1, {"x": 7})  # no subjects: read as written
    assert ValueDecoder(source).decode_value(b'\x00\x00\x00\x00\x02{"a": 2.5}') == (2, {"a": 2.5})


def test_a_schema_export(registry, tmp_path) -> None:
    client, data = registry
    export = tmp_path / "schemas.json"
    export.write_text(json.dumps(_export(client)))
    source = open_schema_source(str(export))
    assert isinstance(source, RegistryStateSource)
    assert ValueDecoder(source).decode_value(data, topic="t") == (1, {"x": 7, "y": "d"})  # the latest, v2


def test_bad_sources_are_one_error(tmp_path) -> None:
    (tmp_path / "bad.json").write_text('{"not": "a list"}')
    (tmp_path / "empty").mkdir()
    for spec, words in [
        (tmp_path / "missing", "no such file"),
        (tmp_path / "bad.json", "a JSON list of schemas"),
        (tmp_path / "empty", "no <id>.avsc"),
    ]:
        with pytest.raises(SchemaSourceError, match=words):
            open_schema_source(str(spec))
    with pytest.raises(SchemaSourceError, match="Connection refused|refused"):
        RegistryUrlSource("http://127.0.0.1:9", timeout=2).by_id(1)


class _Registry(BaseHTTPRequestHandler):
    answers: dict[str, object] = {}
    asked: list[str] = []
    auth: list[str | None] = []

    def do_GET(self) -> None:
        self.asked.append(self.path)
        self.auth.append(self.headers.get("Authorization"))
        answer = self.answers.get(self.path)
        body = json.dumps(answer if answer is not None else {"error_code": 40403, "message": "not found"}).encode()
        self.send_response(200 if answer is not None else 404)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def test_a_live_registry_is_asked_once_per_question(registry) -> None:
    client, data = registry
    _Registry.answers = {
        "/schemas/ids/1": {"schema": V1},  # schemaType left out for AVRO, as the registry does
        "/schemas/ids/1/versions": [{"subject": "t-value", "version": 1}],
        "/subjects/t-value/versions/latest": {"subject": "t-value", "version": 2, "id": 2, "schema": V2},
    }
    _Registry.asked, _Registry.auth = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        url = f"http://reader:s%40cret@127.0.0.1:{server.server_address[1]}"
        source = open_schema_source(url)
        assert "cret" not in source.description  # the credentials go in a header, never in a message
        decoder = ValueDecoder(source)
        for _ in range(3):
            assert decoder.decode_value(data, topic="t") == (1, {"x": 7, "y": "d"})
        with pytest.raises(UnknownSchemaIdError):
            decoder.decode_value(b"\x00\x00\x00\x00\x09")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    assert sorted(_Registry.asked) == sorted([*_Registry.answers, "/schemas/ids/9"])
    assert set(_Registry.auth) == {"Basic cmVhZGVyOnNAY3JldA=="}  # reader:s@cret


def test_the_default_schemas_directory_is_found_beside_the_input(registry, tmp_path) -> None:
    client, _ = registry
    write_topic(tmp_path / "_schemas-0", registry_records(client))
    (tmp_path / "t-0").mkdir()
    segment = tmp_path / "t-0" / "00000000000000000000.log"
    segment.write_bytes(b"")
    assert default_schemas_path(str(segment)) == str(tmp_path / "_schemas-0")
    assert default_schemas_path(str(tmp_path / "t-0")) == str(tmp_path / "_schemas-0")
    assert default_schemas_path(str(tmp_path)) == str(tmp_path / "_schemas-0")
    assert default_schemas_path(str(tmp_path / "_schemas-0" / "00000000000000000000.log")) == str(
        tmp_path / "_schemas-0"
    )


def test_a_huge_schema_is_refused_before_it_is_parsed() -> None:
    from kcodec.values.registry import RegisteredSchema, RegistryState

    state = RegistryState()
    huge = '"' + "x" * (MAX_SCHEMA_BYTES + 1) + '"'
    state.versions[("big", 1)] = RegisteredSchema(1, "AVRO", huge, (), "big", 1)
    decoded = ValueDecoder(RegistryStateSource(state, "s")).try_decode(b"\x00\x00\x00\x00\x01\x00")
    assert isinstance(decoded.error, SchemaParseError) and "over the limit" in str(decoded.error)
