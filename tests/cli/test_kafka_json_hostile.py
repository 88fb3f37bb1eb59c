"""``kcodec generate --kafka-json`` on hostile definitions: each one generates a package that imports and
round-trips, or is refused in one line naming its file and field (exit 3), before anything is written.
Files are read only when regular and small (a FIFO named ``*.json`` does not block, ``/dev/zero`` behind
a symlink does not run out of memory); version ranges are int16 and bounded; a message may not take a
name the generated package uses itself (read from what the generator writes) or a Python keyword; a
struct holding an array of itself is refused."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from kcodec.cli import main


def _message(name: str = "Probe", valid: str = "0", fields: list | None = None) -> dict:
    return {
        "type": "data",
        "name": name,
        "validVersions": valid,
        "flexibleVersions": "0+",
        "fields": fields or [{"name": "Count", "type": "int32", "versions": "0+", "about": "A count."}],
    }


def _generate(capsys, tmp_path: Path, files: dict[str, dict]) -> tuple[int, str, Path]:
    src = tmp_path / "defs"
    src.mkdir(exist_ok=True)
    for name, spec in files.items():
        (src / name).write_text(json.dumps(spec))
    out = tmp_path / "probe_pkg"
    code = main(["generate", "--kafka-json", str(src), "--out", str(out)])
    _, err = capsys.readouterr()
    return code, err, out


def _refused(code: int, err: str, out: Path, *words: str) -> None:
    assert code == 3, err
    lines = [line for line in err.splitlines() if not line.startswith("note:")]
    assert len(lines) == 1, err
    for word in words:
        assert word in lines[0], lines[0]
    assert not out.exists()  # refused before anything is written


@pytest.mark.parametrize("valid", ["0-2147483647", "0-32768", "0-40000", "0-30000"])
def test_a_version_range_beyond_int16_or_too_wide_is_refused(capsys, tmp_path: Path, valid: str) -> None:
    code, err, out = _generate(capsys, tmp_path, {"Probe.json": _message(valid=valid)})
    _refused(code, err, out, "Probe.json", "alid")  # validVersions / valid_versions


@pytest.mark.parametrize("field_versions", ["0-2147483647", "99999+"])
def test_a_field_version_range_beyond_int16_is_refused(capsys, tmp_path: Path, field_versions: str) -> None:
    fields = [{"name": "Count", "type": "int32", "versions": field_versions, "about": "A count."}]
    code, err, out = _generate(capsys, tmp_path, {"Probe.json": _message(fields=fields)})
    _refused(code, err, out, "Probe.json", "Count", "int16")


@pytest.mark.parametrize("name", ["Schema", "Fast", "Registries", "Kernel", "Codec", "Layout", "SchemaSet"])
def test_a_message_named_like_the_package_s_own_modules_is_refused(capsys, tmp_path: Path, name: str) -> None:
    code, err, out = _generate(capsys, tmp_path, {f"{name}.json": _message(name)})
    _refused(code, err, out, f"{name}.json", "name", "the generated package's own")


@pytest.mark.parametrize("name", ["Lambda", "Class", "Import", "From"])
def test_a_message_named_as_a_python_keyword_is_refused(capsys, tmp_path: Path, name: str) -> None:
    code, err, out = _generate(capsys, tmp_path, {f"{name}.json": _message(name)})
    _refused(code, err, out, f"{name}.json", "Python keyword")


def test_keyword_field_names_generate_a_package_that_round_trips(capsys, tmp_path: Path, monkeypatch) -> None:
    fields = [
        {"name": "From", "type": "int32", "versions": "0+", "about": "a"},
        {"name": "Import", "type": "[]Global", "versions": "0+", "about": "b",
         "fields": [{"name": "Pass", "type": "string", "versions": "0+", "about": "c"}]},
    ]  # fmt: skip
    code, err, out = _generate(capsys, tmp_path, {"Probe.json": _message(fields=fields)})
    assert code == 0, err
    monkeypatch.syspath_prepend(str(tmp_path))
    pkg = __import__("probe_pkg")
    try:
        c = pkg.codec("probe", 0)
        value = {"from": 3, "import": [{"pass": "x"}]}
        data = c.build(value)
        assert c.parse(data)["import"][0]["pass"] == "x" and c.build(c.parse(data)) == data
    finally:
        for name in [m for m in sys.modules if m == "probe_pkg" or m.startswith("probe_pkg.")]:
            del sys.modules[name]


def test_a_struct_holding_an_array_of_itself_is_refused(capsys, tmp_path: Path) -> None:
    fields = [
        {"name": "Root", "type": "Node", "versions": "0+", "about": "The root.", "fields": [
            {"name": "Label", "type": "string", "versions": "0+", "about": "A label."},
            {"name": "Children", "type": "[]Node", "versions": "0+", "about": "Its children."},
        ]},
    ]  # fmt: skip
    code, err, out = _generate(capsys, tmp_path, {"Tree.json": _message("Tree", fields=fields)})
    _refused(code, err, out, "Tree.json", "Node.Children", "contains itself")


def test_a_fifo_named_json_does_not_block(capsys, tmp_path: Path) -> None:
    src = tmp_path / "defs"
    src.mkdir()
    os.mkfifo(src / "Pipe.json")  # no writer ever comes: an open for reading would block forever
    code, err, out = _generate(capsys, tmp_path, {"Probe.json": _message()})
    _refused(code, err, out, "Pipe.json", "FIFO")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_dev_zero_behind_a_json_name_is_refused(capsys, tmp_path: Path) -> None:
    src = tmp_path / "defs"
    src.mkdir()
    (src / "Zero.json").symlink_to("/dev/zero")
    code, err, out = _generate(capsys, tmp_path, {"Probe.json": _message()})
    _refused(code, err, out, "Zero.json", "device")


def test_a_huge_json_file_is_refused_unread(capsys, tmp_path: Path) -> None:
    src = tmp_path / "defs"
    src.mkdir()
    with open(src / "Huge.json", "wb") as f:
        f.truncate(1 << 30)  # sparse: 1 GiB of size, no disk
    code, err, out = _generate(capsys, tmp_path, {"Probe.json": _message()})
    _refused(code, err, out, "Huge.json", "MiB")
