"""``kcodec generate --kafka-json DIR --out PKGDIR`` and the commands that read such a package with
``--schemas-from PKGDIR``: layout (and --diff across versions), dump's internal-topic decoders."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.generated import codec
from kcodec.records.encode import NewRecord, encode_batch

HERE = Path(__file__).resolve().parent
KAFKA_JSON = HERE.parent / "codegen" / "kafka_json"
UNSUPPORTED = HERE.parent / "codegen" / "kafka_json_unsupported"
TS = 1700000000000


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def pkg(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("gen") / "kafka_msgs"
    assert main(["generate", "--kafka-json", str(KAFKA_JSON), "--out", str(out)]) == 0
    return str(out)


def test_generate_writes_an_importable_package(pkg: str) -> None:
    names = {p.name for p in Path(pkg).glob("*.py")}
    assert {"__init__.py", "schema.py", "registries.py", "kitchen_sink_request.py", "partition_record.py"} <= names
    assert (Path(pkg) / "fast" / "kitchen_sink_request.py").is_file()
    assert "KITCHEN_SINK_REQUEST_V3_CODEC" in (Path(pkg) / "kitchen_sink_request.py").read_text()


def test_generate_again_changes_nothing(capsys, pkg: str) -> None:
    code, out, _ = run(capsys, "generate", "--kafka-json", str(KAFKA_JSON), "--out", pkg)
    assert code == 0 and "0 written" in out and "0 deleted" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--kafka-json", str(KAFKA_JSON)], "needs --out PKGDIR"),
        (["--kafka-json", str(KAFKA_JSON), "--out", "/tmp/not-an-identifier/a-b"], "not a Python identifier"),
        (["--kafka-json", "/nonexistent-dir", "--out", "/tmp/x_pkg"], "no such directory"),
        (["--kafka-json", str(KAFKA_JSON), "--check", "--out", "/tmp/x_pkg"], "takes no --schemas or --check"),
        (["--skip-unsupported"], "goes with --kafka-json"),
    ],
)
def test_generate_usage_errors(capsys, argv: list[str], message: str) -> None:
    code, _, err = run(capsys, "generate", *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_generate_refuses_kcodecs_own_generated(capsys) -> None:
    from kcodec.commands.common import packaged

    code, _, err = run(capsys, "generate", "--kafka-json", str(KAFKA_JSON), "--out", str(packaged("generated")))
    assert code == 2 and "kcodec's own generated/" in err


def test_unsupported_files_refuse_or_are_skipped(capsys, tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(UNSUPPORTED, src)
    shutil.copy(KAFKA_JSON / "TopicRecord.json", src)
    code, _, err = run(capsys, "generate", "--kafka-json", str(src), "--out", str(tmp_path / "p1"))
    assert code == 3 and len(err.strip().splitlines()) == 1
    assert "UnknownType.json field Stamp: unknown type 'int128'" in err and "BadDefault.json field Retries" in err
    assert not (tmp_path / "p1").exists()  # nothing written
    code, out, err = run(
        capsys, "generate", "--kafka-json", str(src), "--out", str(tmp_path / "p2"), "--skip-unsupported"
    )
    assert code == 0 and "1 Kafka messages" in out and "6 file(s) skipped" in out
    skipped = [line for line in err.splitlines() if line.startswith("skipped ")]
    assert len(skipped) == 9 and "skipped BadVersions.json field Item.Flag" in err
    assert (tmp_path / "p2" / "topic_record.py").is_file()


def test_layout_of_a_kafka_message(capsys, pkg: str) -> None:
    code, out, _ = run(capsys, "layout", "--schemas-from", pkg, "KitchenSinkRequest", "--version", "2", "--json")
    assert code == 0
    table = json.loads(out)
    fields = {f["name"]: f for f in table["fields"]}
    assert table["entity"] == "kitchen_sink_request" and table["version"] == 2
    assert fields["client_tag"]["offset"] == 0 and "int16 length" in fields["client_tag"]["type"]
    assert "compact" in fields["group_id"]["type"]
    assert "tag 1" in fields["note"]["note"]


def test_layout_diff_across_versions(capsys, pkg: str) -> None:
    code, out, _ = run(
        capsys, "layout", "--schemas-from", pkg, "--diff", "KitchenSinkRequest:1", "KitchenSinkRequest:2", "--json"
    )
    assert code == 0
    diff = json.loads(out)
    status = {p["field"]: p["status"] for p in diff["fields"]}
    assert status["note"] == "added" and status["_tagged_fields"] == "added"
    assert status["group_id"] == "changed" and status["client_tag"] == "unchanged"  # flexibleVersions none


@pytest.mark.parametrize(
    "argv, message",
    [
        (["NoSuchMessage"], "unknown entity 'no_such_message'"),
        (["record_batch"], "unknown entity 'record_batch'"),  # kcodec's own entities are not in the package
    ],
)
def test_layout_unknown_entity_in_the_package(capsys, pkg: str, argv: list[str], message: str) -> None:
    code, _, err = run(capsys, "layout", "--schemas-from", pkg, *argv)
    assert code == 2 and message in err


def test_schemas_from_wants_a_generated_package(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "layout", "--schemas-from", str(KAFKA_JSON), "TopicRecord")
    assert code == 2 and "generate one first, kcodec generate --kafka-json" in err
    code, _, err = run(capsys, "layout", "--schemas-from", str(tmp_path / "none"), "TopicRecord")
    assert code == 2 and "no such directory" in err


# ---------------------------------------------------------------------------- dump's internal-topic decoders


def _versioned(entity: str, version: int, value: dict) -> bytes:
    return struct.pack(">h", version) + codec(entity, version).build(value)


def _offsets_segment(directory: Path) -> Path:
    key = _versioned("offset_commit_key", 1, {"group": "g1", "topic": "orders", "partition": 0})
    v3 = _versioned(
        "offset_commit_value", 3, {"offset": 42, "leader_epoch": 7, "metadata": "m", "commit_timestamp": TS}
    )
    v1 = _versioned(
        "offset_commit_value",
        1,
        {"offset": 9, "metadata": "", "commit_timestamp": TS, "expire_timestamp": TS + 5},
    )
    records = [
        NewRecord(key=key, value=v3, timestamp=TS),
        NewRecord(key=key, value=v1, timestamp=TS),
        NewRecord(key=key, value=None, timestamp=TS),  # a tombstone
        NewRecord(key=_versioned("group_metadata_key", 2, {"group": "g1"}), value=b"\x00\x03", timestamp=TS),
    ]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "00000000000000000000.log"
    path.write_bytes(encode_batch(records))
    return path


def test_dump_offsets_with_the_users_schemas(capsys, tmp_path: Path, pkg: str) -> None:
    path = _offsets_segment(tmp_path / "__consumer_offsets-3")
    code, ours, _ = run(capsys, "dump", "--files", str(path), "--print-data-log")
    assert code == 0
    code, theirs, _ = run(capsys, "dump", "--files", str(path), "--print-data-log", "--schemas-from", pkg)
    assert code == 0
    ours_lines, their_lines = ours.splitlines(), theirs.splitlines()
    records = [i for i, line in enumerate(their_lines) if "key: " in line or "Unknown record type" in line]
    assert len(records) == 4
    for i in records[:3]:  # offset commits (v3, v1) and the tombstone: the same lines as kcodec's own schemas
        assert their_lines[i] == ours_lines[i]
    assert 'payload: {"version":"3","data":{"offset":42,"leaderEpoch":7,"metadata":"m"' in their_lines[records[0]]
    assert '"expireTimestamp":1700000000005' in their_lines[records[1]]
    assert "payload: <DELETE>" in their_lines[records[2]]
    # GroupMetadataKey/Value are not in the package: its consumer_offsets registry does not know type 2
    assert "Unknown record type 2 at offset 3, skipping." in their_lines[records[3]]
    assert "Unknown record type" not in ours_lines[records[3]]


def test_dump_json_with_the_users_schemas(capsys, tmp_path: Path, pkg: str) -> None:
    path = _offsets_segment(tmp_path / "seg")
    code, out, _ = run(capsys, "dump", "--files", str(path), "--offsets-decoder", "--json", "--schemas-from", pkg)
    assert code == 0
    batch = json.loads(out.splitlines()[0])
    first = batch["records"][0]
    assert first["recordName"] == "offset_commit" and first["value"]["data"]["leaderEpoch"] == 7
    assert "decodeError" in batch["records"][3]


def test_dump_refuses_a_decoder_the_package_lacks(capsys, tmp_path: Path, pkg: str) -> None:
    path = _offsets_segment(tmp_path / "seg")
    code, _, err = run(capsys, "dump", "--files", str(path), "--transaction-log-decoder", "--schemas-from", pkg)
    assert code == 2 and "has no transaction_state records" in err


# ---------------------------------------------------------------------------- kcodec fuzz


def test_fuzz_a_kafka_message(capsys, tmp_path: Path, pkg: str) -> None:
    pytest.importorskip("hypothesis")
    stats = tmp_path / "stats.json"
    code, out, _ = run(
        capsys,
        "fuzz",
        "--schemas-from",
        pkg,
        "--entity",
        "KitchenSinkRequest",
        "--entity",
        "TopicRecord v0",
        "--iterations",
        "300",
        "--quiet",
        "--json",
        str(stats),
    )
    assert code == 0, out
    data = json.loads(stats.read_text())
    assert data["iterations"] == 300 and data["outcomes"].get("unexpected", 0) == 0
    assert set(data["by_target"]) <= {f"kitchen_sink_request v{v}" for v in range(4)} | {"topic_record v0"}
    assert "topic_record v0" in data["by_target"] and data["outcomes"]["decoded"] > 0


def test_fuzz_names_the_packages_entities(capsys, pkg: str) -> None:
    pytest.importorskip("hypothesis")
    code, _, err = run(capsys, "fuzz", "--schemas-from", pkg, "--entity", "record_batch", "--iterations", "1")
    assert code == 2 and "kitchen_sink_request v0" in err and "segment" not in err


def test_completion_offers_the_new_options(capsys) -> None:
    code, out, _ = run(capsys, "completion", "bash")
    assert code == 0
    for command, option in [("generate", "--kafka-json"), ("generate", "--skip-unsupported")] + [
        (c, "--schemas-from") for c in ("layout", "dump", "fuzz", "inspect")
    ]:
        line = next(line for line in out.splitlines() if line.strip().startswith(f"{command}) opts="))
        assert option in line, (command, option)


# ---------------------------------------------------------------------------- kcodec size --message


def test_size_of_a_kafka_message(capsys, tmp_path: Path, pkg: str) -> None:
    value = tmp_path / "topic.json"
    value.write_text('{"name": "orders", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"}')
    code, out, _ = run(
        capsys, "size", "--schemas-from", pkg, "--message", "TopicRecord:0", "--value", str(value), "--breakdown"
    )
    assert code == 0
    # a compact string (uvarint 7, then 6 bytes), a 16-byte uuid and an empty tagged section
    assert out.splitlines()[0] == "topic_record v0: 24 bytes"
    code, out, _ = run(
        capsys,
        "size",
        "--schemas-from",
        pkg,
        "--message",
        "TopicRecord:0",
        "--value",
        str(value),
        "--json",
        "--breakdown",
    )
    assert json.loads(out) == {
        "entity": "topic_record",
        "version": 0,
        "bytes": 24,
        "fields": {"name": 7, "topic_id": 16, "_tagged_fields": 1},
    }


def test_size_equals_the_built_bytes(capsys, tmp_path: Path, pkg: str) -> None:
    from kcodec.internal_topics.json_converter import from_kafka_json, kafka_json
    from kcodec.tools.schema_package import load_package

    package = load_package(pkg)
    schemas = package.codecs.schema_set()
    codec = package.module.codec("kitchen_sink_request", 3)
    data = codec.build(
        from_kafka_json(
            "kitchen_sink_request",
            3,
            {"groupId": "g", "topics": [{"name": "t", "partitions": [], "hint": 2}], "note": "n", "payload": "AAE="},
            schemas,
        )
    )
    shown = kafka_json("kitchen_sink_request", 3, codec.parse(data), schemas)  # Kafka's JSON, and back
    assert codec.build(from_kafka_json("kitchen_sink_request", 3, shown, schemas)) == data
    value = tmp_path / "sink.json"
    value.write_text(json.dumps(shown))
    code, out, _ = run(
        capsys, "size", "--schemas-from", pkg, "--message", "KitchenSinkRequest:3", "--value", str(value), "--json"
    )
    assert code == 0 and json.loads(out)["bytes"] == len(data)


@pytest.mark.parametrize(
    "value, code, message",
    [
        ('{"offset": "x"}', 3, "offset: an integer is expected"),
        ('{"metadata": null}', 3, "cannot be null (at field metadata)"),
        ('{"bogus": 1}', 3, "no field(s) bogus at version 3"),
        ("[1", 2, "not JSON"),
    ],
)
def test_size_refuses_a_bad_message(capsys, tmp_path: Path, value: str, code: int, message: str) -> None:
    path = tmp_path / "v.json"
    path.write_text(value)
    got, _, err = run(capsys, "size", "--message", "offset_commit_value:3", "--value", str(path))
    assert got == code and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--message", "offset_commit_value:3"], "needs --value FILE"),
        (["--message", "offset_commit_value", "--value", "x"], "say NAME:VERSION"),
        (["--message", "offset_commit_value:9", "--value", "x"], "has no version 9"),
        (["--message", "offset_commit_value:3", "--value", "x", "--key-size", "1"], "--key-size size record batches"),
        (["--key-size", "1"], "--key-size and --value-size are required"),
        (["--key-size", "1", "--value-size", "1", "--value", "x"], "size a --message"),
    ],
)
def test_size_message_usage(capsys, argv: list[str], message: str) -> None:
    code, _, err = run(capsys, "size", *argv)
    assert code == 2 and message in err


# ---------------------------------------------------------------------------- kcodec inspect


def _inspect_json(capsys, *argv: str) -> tuple[int, list[dict]]:
    code, out, err = run(capsys, "inspect", "--records", "--json", *argv)
    assert not err, err
    return code, [json.loads(line) for line in out.splitlines()]


def _record(entry: dict, i: int) -> dict:
    records = next(c for c in entry["children"] if c["path"] == "records")
    return next(c for c in records["children"] if c["path"] == f"records[{i}]")


def test_inspect_offsets_with_the_users_schemas(capsys, tmp_path: Path, pkg: str) -> None:
    path = _offsets_segment(tmp_path / "__consumer_offsets-3")
    code, theirs = _inspect_json(capsys, str(path), "--schemas-from", pkg)
    assert code == 0  # type 2 is not in the package: its key is left unread (a warning), nothing is damaged
    code, ours = _inspect_json(capsys, str(path))  # the same process: kcodec's own schemas come back
    assert code == 1  # kcodec's group_metadata_value v3 needs more than the 2 bytes written
    for i in range(3):  # offset commits (v3, v1) and the tombstone: the same spans, byte for byte
        assert _record(theirs[0], i) == _record(ours[0], i)
    spans = {s["path"]: s for s in _walk(_record(theirs[0], 0))}
    assert spans["records[0].value.data"]["type"] == "offset_commit_value v3"
    assert spans["records[0].value.data.leader_epoch"]["value"] == 7
    key = {s["path"]: s for s in _walk(_record(theirs[0], 3))}["records[3].key.data.(unread)"]
    assert key["status"] == "warn" and "unknown record type 2 in consumer_offsets" in key["notes"][0]
    code, forced = _inspect_json(
        capsys, str(_offsets_segment(tmp_path / "seg")), "--offsets-decoder", "--schemas-from", pkg
    )
    assert code == 0 and _record(forced[0], 0) == _record(theirs[0], 0)


def _walk(span: dict):
    yield span
    for c in span.get("children", ()):
        yield from _walk(c)


def _kitchen_sink(pkg: str) -> bytes:
    from kcodec.internal_topics.json_converter import from_kafka_json
    from kcodec.tools.schema_package import load_package

    package = load_package(pkg)
    value = {"groupId": "g", "topics": [{"name": "t", "partitions": [], "hint": 2}], "note": "n", "payload": "AAE="}
    return package.module.codec("kitchen_sink_request", 3).build(
        from_kafka_json("kitchen_sink_request", 3, value, package.codecs.schema_set())
    )


def test_inspect_an_entity_of_the_package(capsys, tmp_path: Path, pkg: str) -> None:
    path = tmp_path / "sink.bin"
    data = _kitchen_sink(pkg)
    path.write_bytes(data)
    code, out, _ = run(capsys, "inspect", "--schemas-from", pkg, "--entity", "KitchenSinkRequest:3", str(path))
    assert code == 0
    assert out.splitlines()[0] == f"entity at byte 0: kitchen_sink_request v3, {len(data)} bytes"
    assert "[tag 1: note]" in out and 'topics[0].name.data = "t"' in out and "weight <float64> = 0.5" in out
    code, spans = _inspect_json(capsys, "--schemas-from", pkg, "--entity", "kitchen_sink_request", str(path))
    assert code == 0 and spans[0]["type"] == "kitchen_sink_request v3" and spans[0]["end"] == len(data)
    note = {s["path"]: s for s in _walk(spans[0])}["note"]
    assert note["value"] == "n" and note["status"] == "ok"
    path.write_bytes(data + b"\x00")  # a byte too many: read, and marked
    code, spans = _inspect_json(capsys, "--schemas-from", pkg, "--entity", "KitchenSinkRequest:3", str(path))
    assert code == 0 and spans[0]["status"] == "warn" and spans[0]["children"][-1]["path"] == "(unread)"
    path.write_bytes(data[:-3])  # the tagged note cut short: damaged, exit 1
    code, spans = _inspect_json(capsys, "--schemas-from", pkg, "--entity", "KitchenSinkRequest:3", str(path))
    assert code == 1 and spans[0]["status"] == "bad"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--entity", "KitchenSinkRequest:3"], "--entity KitchenSinkRequest: not an entity of kcodec's schemas"),
        (["--entity", "KitchenSinkRequest:9", "--schemas-from", "PKG"], "kitchen_sink_request has no version 9"),
        (["--entity", "KitchenSinkRequest:x", "--schemas-from", "PKG"], "say NAME:VERSION"),
        (["--entity", "TopicRecord", "--at", "0", "--schemas-from", "PKG"], "drop --at"),
        (["--entity", "TopicRecord", "--offsets-decoder"], "drop --offsets-decoder"),
        (["--transaction-log-decoder", "--schemas-from", "PKG"], "has no transaction_state records"),
        (["--schemas-from", str(KAFKA_JSON)], "not a package kcodec generated: generate one first"),
        (["--schemas-from", "/nonexistent-pkg"], "--schemas-from /nonexistent-pkg: no such directory"),
    ],
)
def test_inspect_usage_errors(capsys, tmp_path: Path, pkg: str, argv: list[str], message: str) -> None:
    path = tmp_path / "x.bin"
    path.write_bytes(b"\x00" * 40)
    code, out, err = run(capsys, "inspect", str(path), *[pkg if a == "PKG" else a for a in argv])
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out


@pytest.mark.parametrize("name", ["__init__.py", "schema.py", "fast/__init__.py"])
def test_generate_never_writes_over_a_file_it_did_not_write(capsys, tmp_path: Path, name: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(KAFKA_JSON / "TopicRecord.json", src)
    out = tmp_path / "my_pkg"
    mine = out / name
    mine.parent.mkdir(parents=True)
    mine.write_text("# my own module\nVALUE = 1\n")
    code, _, err = run(capsys, "generate", "--kafka-json", str(src), "--out", str(out))
    failures = [line for line in err.splitlines() if line.startswith("kcodec generate:")]  # notes come first
    assert code != 0 and len(failures) == 1 and str(mine) in failures[0], err
    assert mine.read_text() == "# my own module\nVALUE = 1\n"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [name]  # nothing written
