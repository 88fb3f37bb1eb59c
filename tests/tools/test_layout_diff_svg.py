"""``kcodec layout --diff`` (versions, entities, a changed schema directory) and ``--svg`` byte diagrams,
checked as XML and by rendering them to PNG."""

from __future__ import annotations

import json
import shutil
import struct
import zlib
from pathlib import Path
from xml.etree import ElementTree

import pytest

from kcodec.cli import EXIT_OK, EXIT_USAGE, main
from kcodec.generated import ENTITY_VERSIONS, layout

pytestmark = pytest.mark.usefixtures("one_command_line")  # tests/conftest.py

SVG_NS = "{http://www.w3.org/2000/svg}"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def table_row(text: str, field: str) -> list[str]:
    """Cells of a diff table row, split on runs of 2+ spaces (cells may hold single spaces)."""
    import re

    for line in text.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if field in cells[:2]:
            return cells if cells[1] == field else [""] + cells
    raise AssertionError(f"no row for {field!r} in\n{text}")


# ---------------------------------------------------------------------------- --diff


def test_diff_v0_v1_names_timestamp_added_at_offset_6(capsys) -> None:
    code, out, err = run(capsys, "layout", "--diff", "legacy_message", "0", "1")
    assert code == EXIT_OK and err == ""
    lines = out.splitlines()
    assert lines[0] == "legacy_message v0 → legacy_message v1"
    assert "overhead: 14 → 22 bytes (+8)" in lines
    assert "fixed offsets moved: key 6 → 14" in lines
    assert table_row(out, "timestamp")[:5] == ["added", "timestamp", "6", "8", "int64"]
    assert table_row(out, "key")[:3] == ["moved", "key", "6 → 14"]
    assert table_row(out, "crc")[:4] == ["", "crc", "0", "4"]
    assert table_row(out, "attributes.timestamp_type")[:3] == ["added", "attributes.timestamp_type", "5 bits 3"]
    magic = table_row(out, "magic")
    assert magic[0] == "changed" and "always 0 → always 1" in magic[-1]
    # the same with the entity first
    code, out2, _ = run(capsys, "layout", "legacy_message", "--diff", "0", "1")
    assert out2 == out


def test_diff_json(capsys) -> None:
    code, out, _ = run(capsys, "layout", "--diff", "legacy_message", "0", "1", "--format", "json")
    d = json.loads(out)
    assert d["a"]["overhead"] == {"min": 14, "max": 14} and d["b"]["overhead"] == {"min": 22, "max": 22}
    by = {f["field"]: f for f in d["fields"]}
    ts = by["timestamp"]
    assert ts["status"] == "added" and ts["a"] is None and ts["b"]["offset"] == 6 and ts["b"]["size"] == 8
    assert by["key"]["status"] == "moved" and (by["key"]["a"]["offset"], by["key"]["b"]["offset"]) == (6, 14)
    assert by["value"]["status"] == "unchanged" and by["value"]["b"]["offset"] is None
    assert d["counts"] == {"added": 2, "removed": 0, "moved": 1, "changed": 2, "unchanged": 4}


def test_diff_magic_1_message_sets_against_v2_batches(capsys) -> None:
    code, out, err = run(capsys, "layout", "--diff", "legacy_log_entry:1", "record_batch:2")
    assert code == EXIT_OK and err == ""
    lines = out.splitlines()
    assert lines[0] == "legacy_log_entry v1 → record_batch v2"
    assert "overhead: 12 → 61 bytes (+49)" in lines
    assert "overhead with nested entities: 34 → 61 bytes (+27)" in lines
    assert table_row(out, "message.crc → crc")[:3] == ["moved", "message.crc → crc", "12 → 17"]
    assert table_row(out, "message.magic → magic")[2] == "16"  # at 16 in every format (Records.MAGIC_OFFSET)
    assert table_row(out, "message.timestamp")[:3] == ["removed", "message.timestamp", "18"]
    assert table_row(out, "records_count")[:4] == ["added", "records_count", "57", "4"]
    assert table_row(out, "message.attributes → attributes")[3] == "1 → 2"
    code, out, _ = run(capsys, "layout", "--diff", "legacy_log_entry:1", "record_batch:2", "--format", "markdown")
    assert out.startswith("### legacy_log_entry v1 → record_batch v2")
    assert "| moved | message.crc → crc | 12 → 17 | 4 | uint32 |" in out


def test_diff_of_a_changed_schema_directory(capsys, tmp_path: Path) -> None:
    """What regenerating after a schema change does: producer_epoch widened to int32."""
    import kcodec.schemas

    schemas = tmp_path / "schemas"
    shutil.copytree(kcodec.schemas.__path__[0], schemas, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    batch = schemas / "record_batch.yaml"
    text = batch.read_text()
    assert "  - name: producer_epoch\n    type: int16" in text
    batch.write_text(
        text.replace("  - name: producer_epoch\n    type: int16", "  - name: producer_epoch\n    type: int32")
    )
    code, out, err = run(capsys, "layout", "--diff", "record_batch", "2", "2", "--new-schemas", str(schemas))
    assert code == EXIT_OK, err
    assert "overhead: 61 → 63 bytes (+2)" in out
    assert table_row(out, "producer_epoch")[:5] == ["changed", "producer_epoch", "51", "2 → 4", "int16 → int32"]
    assert table_row(out, "base_sequence")[:3] == ["moved", "base_sequence", "53 → 55"]
    assert table_row(out, "records")[:3] == ["moved", "records", "61 → 63"]
    assert table_row(out, "crc")[0] == ""
    # the packaged tree is untouched
    assert layout("record_batch", 2).field("producer_epoch").size == 2


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["--diff", "legacy_message", "0"], "say which entity"),
        (["--diff", "legacy_message", "0", "7"], "legacy_message has no version 7"),
        (["--diff", "nope:0", "record:2"], "unknown entity 'nope'"),
        (["--diff", "record:x", "record:2"], "'x' is not a version number"),
        (["--diff", "a", "b", "c", "d"], "wants two sides"),
        (["legacy_message", "--diff", "0", "1", "--version", "1"], "does not combine"),
        (["record", "--new-schemas", "/tmp"], "only goes with --diff"),
        ([], "an ENTITY is required"),
    ],
)
def test_diff_usage_errors(capsys, argv: list[str], fragment: str) -> None:
    code, out, err = run(capsys, "layout", *argv)
    assert code == EXIT_USAGE and out == ""
    assert len(err.strip().splitlines()) == 1 and fragment in err, err


# ---------------------------------------------------------------------------- --svg


def svg_texts(path: Path) -> tuple[ElementTree.Element, list[str]]:
    root = ElementTree.parse(path).getroot()
    assert root.tag == f"{SVG_NS}svg"
    return root, [t.text or "" for t in root.iter(f"{SVG_NS}text")]


def leaf_names(entity: str, version: int) -> list[str]:
    from kcodec.tools.layout.diff import flatten, packaged_layouts

    rows = flatten(layout(entity, version), packaged_layouts())
    nested = {r.path for r in rows if r.bits is None and r.type in ENTITY_VERSIONS}
    return [r.path if r.bits is None else r.path.rsplit(".", 1)[-1] for r in rows if r.path not in nested]


def test_svg_record_batch(capsys, tmp_path: Path) -> None:
    out = tmp_path / "batch.svg"
    code, stdout, err = run(capsys, "layout", "record_batch", "--version", "2", "--svg", str(out))
    assert code == EXIT_OK and err == "" and stdout.strip() == f"wrote {out} (record_batch v2)"
    root, texts = svg_texts(out)
    for name in leaf_names("record_batch", 2):
        assert name in texts, name
    assert "record_batch v2" in texts and any("overhead 61 bytes" in t for t in texts)
    for offset in range(0, 61, 4):  # byte offsets down the left
        assert str(offset) in texts
    variable = [r for r in root.iter(f"{SVG_NS}rect") if "variable" in (r.get("class") or "")]
    assert len(variable) == 1 and variable[0].get("stroke-dasharray")  # records: dashed, hatched
    assert any("url(#hatch)" == r.get("fill") for r in root.iter(f"{SVG_NS}rect"))


@pytest.mark.parametrize("entity,version", [(e, v) for e, vs in sorted(ENTITY_VERSIONS.items()) for v in vs])
def test_svg_every_entity_is_valid_and_names_every_field(capsys, tmp_path: Path, entity: str, version: int) -> None:
    out = tmp_path / f"{entity}.svg"
    code, _, err = run(capsys, "layout", entity, "--version", str(version), "--svg", str(out))
    assert code == EXIT_OK, err
    _, texts = svg_texts(out)
    for name in leaf_names(entity, version):
        assert any(t == name or t.startswith(name[:6]) and t.endswith("…") for t in texts), (name, texts)


def test_svg_needs_one_version(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "layout", "legacy_message", "--svg", str(tmp_path / "x.svg"))
    assert code == EXIT_USAGE and "pick one with --version" in err
    code, _, err = run(capsys, "layout", "record", "--svg", str(tmp_path / "x.svg"))  # one version: fine
    assert code == EXIT_OK


# ---------------------------------------------------------------------------- rendered to PNG


def _png_pixels(png: bytes) -> tuple[int, int, list[tuple[int, ...]]]:
    """A minimal PNG decoder (8-bit RGB/RGBA, not interlaced): width, height, pixels."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(png):
        n, kind = struct.unpack(">I4s", png[pos : pos + 8])
        body = png[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0
    bpp = 4 if colour == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    pixels = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        pixels += [tuple(line[i : i + bpp]) for i in range(0, stride, bpp)]
        prev = line
    return width, height, pixels


def test_svg_renders_to_png(capsys, tmp_path: Path) -> None:
    resvg_py = pytest.importorskip("resvg_py")
    out = tmp_path / "batch.svg"
    assert run(capsys, "layout", "record_batch", "--version", "2", "--svg", str(out))[0] == EXIT_OK
    root = ElementTree.parse(out).getroot()
    png = bytes(resvg_py.svg_to_bytes(svg_path=str(out)))
    width, height, pixels = _png_pixels(png)
    assert (width, height) == (int(root.get("width")), int(root.get("height")))
    colours = {p[:3] for p in pixels}
    for fill in ("#f8d7da", "#fff3cd", "#d4edda", "#e2d9f3", "#dbe9f6"):  # crc, length, count, magic, fields
        rgb = tuple(int(fill[i : i + 2], 16) for i in (1, 3, 5))
        assert rgb in colours, fill
    dark = sum(1 for p in pixels if sum(p[:3]) < 384)  # text and box edges
    assert dark > 0.005 * len(pixels)
    title = [pixels[y * width + x] for y in range(12, 36) for x in range(70, 260)]  # "record_batch v2"
    assert sum(1 for p in title if sum(p[:3]) < 384) > 300  # the text was drawn (fonts found)
    assert sum(1 for p in pixels if p[:3] == (255, 255, 255)) > 0.2 * len(pixels)  # not one smear


def test_docs_diagram_is_current() -> None:
    """docs/record_batch_v2.svg (shown on docs/inspect.md) is what ``kcodec layout`` draws today; after a
    schema change run ``kcodec layout record_batch --version 2 --svg docs/record_batch_v2.svg`` and
    re-render the PNG next to it."""
    from kcodec.tools.layout.diff import packaged_layouts
    from kcodec.tools.layout.svg import layout_svg

    doc = Path(__file__).parents[2] / "docs" / "record_batch_v2.svg"
    if not doc.exists():
        pytest.skip("docs/ is not shipped with this copy")
    assert doc.read_text(encoding="utf-8") == layout_svg(layout("record_batch", 2), packaged_layouts())
    assert (doc.parent / "record_batch_v2.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
