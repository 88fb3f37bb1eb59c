"""The ``kcodec`` command line: layout, size, errors and help."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kcodec.cli import COMMANDS, main
from kcodec.commands.common import EXIT_CHECK_FAILED, EXIT_ERROR, EXIT_OK, EXIT_USAGE
from tests.helpers.paths import SINK

_SCRIPT = Path(sys.executable).parent / "kcodec"
KCODEC = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "kcodec.cli"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_exit(capsys, *argv: str) -> tuple[int, str, str]:
    """For argparse's own exits (usage errors, --help), which raise SystemExit."""
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    out, err = capsys.readouterr()
    return info.value.code, out, err


def row(text: str, name: str) -> list[str]:
    """The cells (offset, size, name, ...) of one field row of a table layout."""
    for line in text.splitlines():
        cells = line.split()
        if len(cells) >= 3 and cells[2] == name:
            return cells
        if len(cells) >= 4 and cells[1] == "bits" and cells[3] == name:
            return cells
    raise AssertionError(f"no row for {name!r} in:\n{text}")


def sections(text: str) -> dict[str, str]:
    """Split a multi-version table output into {'entity vN': text}."""
    out: dict[str, str] = {}
    for block in text.strip().split("\n\n"):
        m = re.match(r"^(\w+ v\d+):", block)
        if m:
            out[m.group(1)] = block
        else:  # a block without title continues the previous one (title, doc, blank, table)
            key = list(out)[-1]
            out[key] += "\n\n" + block
    return out


# ---------------------------------------------------------------------------- the parser a run builds


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_alone_has_the_parser_the_whole_line_gives_it(command) -> None:
    from kcodec.cli import build_parser

    alone = build_parser(command)
    assert list(alone.subcommands) == [command]
    assert alone.subcommands[command].format_help() == build_parser().subcommands[command].format_help()


@pytest.mark.parametrize(
    "argv,built",
    [
        (["write", "out.log", "--help"], "write"),
        (["dump", "--help"], "dump"),
        (["completion", "bash"], None),  # describes every command
        (["--help"], None),
        (["--version"], None),
        (["nosuch"], None),  # the error lists the commands
        ([], None),
    ],
)
def test_main_builds_only_the_parser_of_the_command_it_runs(monkeypatch, capsys, argv, built) -> None:
    import kcodec.cli

    asked = []
    real = kcodec.cli.build_parser

    def recording(command=None):
        asked.append(command)
        return real(command)

    monkeypatch.setattr(kcodec.cli, "build_parser", recording)
    try:
        main(argv)
    except SystemExit:
        pass
    capsys.readouterr()
    assert asked == [built]


# ---------------------------------------------------------------------------- layout


def test_exit_codes_match_the_documented_ones() -> None:
    import kcodec.cli

    assert (EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE, EXIT_ERROR) == (0, 1, 2, 3)
    doc = kcodec.cli.__doc__
    assert "0 success; 1 a check failed" in doc and "2 bad usage; 3 kcodec refused" in " ".join(doc.split())


def test_layout_record_batch_table(capsys) -> None:
    code, out, err = run(capsys, "layout", "record_batch", "--version", "2")
    assert code == 0 and err == ""
    assert out.splitlines()[0] == "record_batch v2: overhead 61 bytes before payloads"
    assert "overhead 61" in out
    crc = row(out, "crc")
    assert crc[:2] == ["17", "4"]
    assert "21..end" in " ".join(crc)
    assert "crc32c" in " ".join(crc)
    records = row(out, "records")
    assert records[:2] == ["61", "variable"]
    assert row(out, "batch_length")[:2] == ["8", "4"]
    assert row(out, "magic")[:2] == ["16", "1"]
    assert row(out, "attributes")[:2] == ["21", "2"]
    assert row(out, "records_count")[:2] == ["57", "4"]


def test_layout_record_batch_json(capsys) -> None:
    code, out, err = run(capsys, "layout", "record_batch", "--version", "2", "--format", "json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["entity"] == "record_batch" and data["version"] == 2
    assert data["min_overhead"] == data["max_overhead"] == 61
    assert data["fixed_size"] is None
    fields = {f["name"]: f for f in data["fields"]}
    assert fields["crc"]["offset"] == 17 and fields["crc"]["size"] == 4
    assert "21..end" in fields["crc"]["note"]
    assert fields["records"]["offset"] == 61 and fields["records"]["size"] is None
    assert fields["base_offset"]["offset"] == 0


def test_layout_record_batch_markdown(capsys) -> None:
    code, out, err = run(capsys, "layout", "record_batch", "--version", "2", "--format", "markdown")
    assert code == 0 and err == ""
    lines = out.strip().splitlines()
    assert lines[0].startswith("### record_batch v2") and "overhead 61" in lines[0]
    table = [line for line in lines if line.startswith("|")]
    assert table[0] == "| offset | size | field | type | versions | notes | doc |"
    assert re.fullmatch(r"\|(-*:?-+:?\|)+", table[1].replace(" ", "")), table[1]
    ncols = table[0].count("|")
    body = table[2:]
    assert len(body) >= 14
    for line in body:
        # escaped pipes inside cells do not count as column separators
        assert line.replace("\\|", "").count("|") == ncols, line
    crc = next(line for line in body if "| crc |" in line)
    assert crc.startswith("| 17 | 4 | crc |") and "21..end" in crc
    assert any(line.startswith("| 61 | variable | records |") for line in body)


def test_layout_legacy_message_both_versions(capsys) -> None:
    code, out, err = run(capsys, "layout", "legacy_message")
    assert code == 0 and err == ""
    parts = sections(out)
    assert set(parts) == {"legacy_message v0", "legacy_message v1"}
    v0, v1 = parts["legacy_message v0"], parts["legacy_message v1"]
    assert "overhead 14 bytes" in v0.splitlines()[0]
    assert "overhead 22 bytes" in v1.splitlines()[0]
    assert "timestamp" not in [line.split()[2] for line in v0.splitlines()[4:] if len(line.split()) > 2]
    assert row(v1, "timestamp")[:2] == ["6", "8"]
    assert row(v0, "key")[:2] == ["6", "variable"]
    assert row(v1, "key")[:2] == ["14", "variable"]
    assert row(v0, "crc")[:2] == ["0", "4"]


def test_layout_legacy_message_json_lists_versions(capsys) -> None:
    code, out, _ = run(capsys, "layout", "legacy_message", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert [d["version"] for d in data] == [0, 1]
    assert [d["min_overhead"] for d in data] == [14, 22]
    ts = next(f for f in data[1]["fields"] if f["name"] == "timestamp")
    assert ts["offset"] == 6 and ts["size"] == 8
    assert "timestamp" not in {f["name"] for f in data[0]["fields"]}


@pytest.mark.parametrize("version", ["0", "1"])
def test_layout_legacy_log_entry(capsys, version: str) -> None:
    code, out, _ = run(capsys, "layout", "legacy_log_entry", "--version", version)
    assert code == 0
    assert out.splitlines()[0] == f"legacy_log_entry v{version}: overhead 12 bytes before payloads"
    assert row(out, "size")[:2] == ["8", "4"]
    assert row(out, "message")[:2] == ["12", "variable"]


@pytest.mark.usefixtures("one_command_line")  # 441 calls: building the command line took most of the time
def test_layout_every_entity(capsys) -> None:
    from kcodec.generated import ENTITY_VERSIONS

    for entity, versions in ENTITY_VERSIONS.items():
        for fmt in ("table", "json", "markdown"):
            code, out, err = run(capsys, "layout", entity, "--format", fmt)
            assert code == 0 and err == "", (entity, fmt, err)
            if fmt == "json":
                data = json.loads(out)
                assert len(versions) == (len(data) if isinstance(data, list) else 1)


# ---------------------------------------------------------------------------- size


def sizes_table(out: str) -> dict[int, int]:
    result = {}
    for line in out.splitlines():
        m = re.match(r"^v(\d) \(magic \d, .*\)\s+(\d+)$", line)
        if m:
            result[int(m.group(1))] = int(m.group(2))
    return result


def sizes_json(out: str) -> dict[int, int]:
    data = json.loads(out)
    data = data if isinstance(data, list) else [data]
    return {d["magic"]: d["bytes"] for d in data}


# (key size, value size, records, {magic: bytes})
ARTICLE_SIZES = [
    (3, 5, 1, {0: 34, 1: 42, 2: 76}),
    (-1, 5, 1, {0: 31, 1: 39, 2: 73}),
    (-1, 6, 10, {0: 320, 1: 400, 2: 191}),
    (-1, 16384, 1, {1: 16418, 2: 16456}),
]


@pytest.mark.parametrize(
    "key, value, records, expected", ARTICLE_SIZES, ids=["k3v5", "null-key-v5", "10x-null-key-v6", "null-key-v16384"]
)
def test_size_article_numbers(capsys, key: int, value: int, records: int, expected: dict[int, int]) -> None:
    argv = ["size", "--key-size", str(key), "--value-size", str(value), "--records", str(records)]
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == ""
    table = sizes_table(out)
    assert set(table) == {0, 1, 2}
    for magic, total in expected.items():
        assert table[magic] == total, (magic, out)
    code, out, _ = run(capsys, *argv, "--format", "json")
    assert code == 0
    js = sizes_json(out)
    assert js == table
    for magic, total in expected.items():
        code, out, _ = run(capsys, *argv, "--magic", str(magic))
        assert code == 0 and sizes_table(out) == {magic: total}
        code, out, _ = run(capsys, *argv, "--magic", str(magic), "--format", "json")
        assert code == 0 and json.loads(out) == {"magic": magic, "bytes": total}


def test_size_table_describes_the_shape(capsys) -> None:
    _, out, _ = run(capsys, "size", "--key-size", "-1", "--value-size", "6", "--records", "10")
    assert out.splitlines()[0] == "10 records, key null, value 6 B"


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("extra", [[], ["--records", "3"], ["--key-size", "-1"]])
def test_size_breakdown_adds_up(capsys, magic: int, extra: list[str]) -> None:
    argv = ["size", "--magic", str(magic), "--key-size", "3", "--value-size", "5", *extra]
    code, out, _ = run(capsys, *argv, "--breakdown", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["fields"] and sum(data["fields"].values()) == data["bytes"]
    code, out, _ = run(capsys, *argv, "--breakdown")
    assert code == 0
    total = sizes_table(out)[magic]
    assert total == data["bytes"]
    rows = re.findall(r"^  (\S+)\s+(\d+)$", out, flags=re.M)
    assert dict((k, int(v)) for k, v in rows) == data["fields"]
    assert f"v{magic} by field" in out


def test_size_breakdown_fields(capsys) -> None:
    _, out, _ = run(
        capsys, "size", "--magic", "2", "--key-size", "3", "--value-size", "5", "--breakdown", "--format", "json"
    )
    fields = json.loads(out)["fields"]
    assert fields["crc"] == 4 and fields["records_count"] == 4
    assert fields["records[].key"] == 1 + 3 and fields["records[].value"] == 1 + 5
    _, out, _ = run(
        capsys, "size", "--magic", "0", "--key-size", "3", "--value-size", "5", "--breakdown", "--format", "json"
    )
    fields = json.loads(out)["fields"]
    assert fields["offset"] == 8 and fields["size"] == 4 and fields["message.key"] == 4 + 3


def test_size_without_breakdown_has_no_fields(capsys) -> None:
    _, out, _ = run(capsys, "size", "--magic", "2", "--key-size", "3", "--value-size", "5", "--format", "json")
    assert "fields" not in json.loads(out)
    _, out, _ = run(capsys, "size", "--magic", "2", "--key-size", "3", "--value-size", "5")
    assert "by field" not in out


def test_size_with_header(capsys) -> None:
    base = ["size", "--magic", "2", "--key-size", "3", "--value-size", "5"]
    _, out, _ = run(capsys, *base)
    assert sizes_table(out) == {2: 76}
    code, out, err = run(capsys, *base, "--header", "1:8")
    assert code == 0 and err == ""
    # header key length varint 1 + key 1 + value length varint 1 + value 8; record length varint stays 1 byte
    assert sizes_table(out) == {2: 76 + 1 + 1 + 1 + 8} == {2: 87}
    assert "headers 1 B:8 B" in out.splitlines()[0]
    code, out, _ = run(capsys, *base, "--header", "1:8", "--format", "json", "--breakdown")
    data = json.loads(out)
    assert data["bytes"] == 87 and sum(data["fields"].values()) == 87
    assert data["fields"]["records[].headers"] == 1 + 11
    _, out, _ = run(capsys, *base, "--header", "1:8", "--header", "2:-1", "--format", "json")
    assert json.loads(out)["bytes"] == 87 + 1 + 2 + 1


def test_size_header_without_magic_compares_only_v2(capsys) -> None:
    code, out, err = run(capsys, "size", "--key-size", "3", "--value-size", "5", "--header", "1:8")
    assert code == 0 and err == ""
    assert sizes_table(out) == {2: 87}


# ---------------------------------------------------------------------------- errors


def assert_one_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("kcodec ")
    return lines[0]


def assert_argparse_error(err: str, fragment: str) -> None:
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert (
        last.startswith("kcodec size: error:")
        or last.startswith("kcodec layout: error:")
        or last.startswith("kcodec: error:")
    ), err
    assert fragment in last, err


def test_unknown_entity(capsys) -> None:
    code, out, err = run(capsys, "layout", "nope")
    assert code == EXIT_USAGE == 2 and out == ""
    line = assert_one_line(err)
    assert "unknown entity 'nope'" in line and "record_batch" in line


def test_bad_version(capsys) -> None:
    code, out, err = run(capsys, "layout", "record_batch", "--version", "3")
    assert code == 2 and out == ""
    assert "record_batch has no version 3; valid: 2" in assert_one_line(err)


def test_header_with_magic_0(capsys) -> None:
    code, out, err = run(capsys, "size", "--magic", "0", "--key-size", "3", "--value-size", "5", "--header", "1:8")
    assert code == 2 and out == ""
    assert "headers need magic 2" in assert_one_line(err)


@pytest.mark.parametrize("bad", ["1x8", "1:", ":8", "a:b", "1:8:9", "-1:8", "1:-2"])
def test_bad_header_syntax(capsys, bad: str) -> None:
    code, out, err = run_exit(capsys, "size", "--key-size", "3", "--value-size", "5", "--header", bad)
    assert code == 2 and out == ""
    assert_argparse_error(err, "--header")


def test_records_zero(capsys) -> None:
    code, out, err = run_exit(capsys, "size", "--key-size", "3", "--value-size", "5", "--records", "0")
    assert code == 2 and out == ""
    assert "--records: 0 is below the least allowed value, 1" in assert_one_line(err)


def test_negative_size(capsys) -> None:
    code, _, err = run_exit(capsys, "size", "--key-size", "-2", "--value-size", "5")
    assert code == 2
    assert_argparse_error(err, "-1 for null")


def test_missing_required_and_bad_choice(capsys) -> None:
    code, _, err = run(capsys, "size", "--key-size", "3")
    assert code == 2  # required unless --message: said by kcodec, not argparse, in one line
    assert err.strip().splitlines() == [
        "kcodec size: --key-size and --value-size are required (or --message NAME:VERSION --value FILE)"
    ]
    code, _, err = run_exit(capsys, "size", "--magic", "3", "--key-size", "3", "--value-size", "5")
    assert code == 2
    assert_argparse_error(err, "--magic")
    code, _, err = run_exit(capsys, "layout", "record", "--format", "yaml")
    assert code == 2
    assert_argparse_error(err, "--format")


def test_no_command(capsys) -> None:
    code, out, err = run(capsys)  # the full help, on stderr, exit 2 (not argparse's one usage line)
    assert code == 2 and out == "" and "Traceback" not in err and "COMMAND" in err and "dump" in err


def test_schema_error_exit_3(capsys, tmp_path: Path) -> None:
    code, out, err = run(capsys, "generate", "--schemas", str(tmp_path / "missing"), "--out", str(tmp_path / "o"))
    assert code == EXIT_ERROR == 3 and out == ""
    assert "does not exist" in assert_one_line(err)
    broken = tmp_path / "schemas"
    broken.mkdir()
    (broken / "thing.yaml").write_text(
        'entity: thing\ndoc: A thing.\nvalid_versions: "0"\nfields:\n  - {name: a, type: float32, doc: A float.}\n'
    )
    code, out, err = run(capsys, "generate", "--schemas", str(broken), "--out", str(tmp_path / "o"))
    assert code == 3
    assert assert_one_line(err) == "kcodec generate: thing.yaml: thing: a: unknown type 'float32'"
    assert not (tmp_path / "o").exists()


def test_generate_out_is_a_file(capsys, tmp_path: Path) -> None:
    target = tmp_path / "afile"
    target.write_text("not a directory")
    try:
        code, out, err = run(capsys, "generate", "--schemas", str(SINK), "--out", str(target))
    except OSError:
        pytest.fail("OSError escaped kcodec.cli.main")
    assert code not in (EXIT_OK, EXIT_CHECK_FAILED)
    assert_one_line(err)


@pytest.mark.parametrize("argv", [[], ["generate"], ["layout"], ["size"]])
def test_help(capsys, argv: list[str]) -> None:
    code, out, err = run_exit(capsys, *argv, "--help")
    assert code == 0 and err == ""
    assert out.startswith("usage: kcodec")
    if argv:
        assert f"usage: kcodec {argv[0]}" in out


def test_version(capsys) -> None:
    import kcodec

    code, out, _ = run_exit(capsys, "--version")
    assert code == 0 and out.strip() == f"kcodec {kcodec.__version__}"


# ---------------------------------------------------------------------------- console script smoke tests


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([*KCODEC, *argv], capture_output=True, text=True, timeout=120, env=dict(os.environ))


def test_console_script_size() -> None:
    proc = _run("size", "--magic", "2", "--key-size", "3", "--value-size", "5", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"magic": 2, "bytes": 76}


def test_console_script_error_and_help() -> None:
    proc = _run("layout", "nope")
    assert proc.returncode == 2 and proc.stdout == ""
    assert_one_line(proc.stderr)
    for sub in ("generate", "layout", "size"):
        proc = _run(sub, "--help")
        assert proc.returncode == 0 and proc.stdout.startswith(f"usage: kcodec {sub}"), proc.stderr
