"""The pipeline's cost table as a chart: one bar per format and codec, scaled to the bytes, and a line
at what the data takes on disk now; PNG through resvg."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from kcodec.tools.cost_chart import cost_chart_svg

SVG = "{http://www.w3.org/2000/svg}"
SIZES = {"v0/none": 3000, "v0/gzip": 1000, "v1/none": 3400, "v1/gzip": 1100, "v2/none": 2000, "v2/zstd": 500}


def _bars(svg: str) -> dict[str, float]:
    root = ET.fromstring(svg)
    out = {}
    for rect in root.iter(f"{SVG}rect"):
        if rect.get("class") == "bar":
            name = rect.find(f"{SVG}title").text.split(":")[0]
            out[name] = float(rect.get("height"))
    return out


def test_one_bar_per_size_scaled_to_the_bytes():
    bars = _bars(cost_chart_svg(SIZES, 2500, "six records"))
    assert set(bars) == {"v0 none", "v0 gzip", "v1 none", "v1 gzip", "v2 none", "v2 zstd"}
    assert bars["v1 none"] / bars["v0 gzip"] == pytest.approx(3400 / 1000, rel=0.01)


def test_the_on_disk_line_and_the_sample_note():
    svg = cost_chart_svg(SIZES, 2500, "six records", estimated=True)
    root = ET.fromstring(svg)
    dashed = [ln for ln in root.iter(f"{SVG}line") if ln.get("stroke-dasharray")]
    assert len(dashed) == 1 and "on disk now: 2.5 kB" in svg and "estimated from a sample" in svg
    bars = _bars(svg)
    base = float(dashed[0].get("y1"))
    assert bars["v2 none"] < 2500 / 3400 * max(bars.values()) * 1.01  # the line sits above the v2 bar
    assert base > 0


def test_each_bar_says_its_size_and_a_missing_slot_says_n_a():
    root = ET.fromstring(cost_chart_svg(SIZES, 2500, "six records"))
    texts = {t.get("class"): [] for t in root.iter(f"{SVG}text")}
    for t in root.iter(f"{SVG}text"):
        texts[t.get("class")].append(t.text)
    assert sorted(texts["value"]) == sorted(["3 kB", "1 kB", "3.4 kB", "1.1 kB", "2 kB", "500 B"])
    # v0 and v1 have no zstd, v2 no gzip here: three slots without a bar say so
    assert texts["na"] == ["n/a"] * 3


def test_png_at_twice_the_svg_size():
    pytest.importorskip("resvg_py")
    import struct

    from kcodec.tools.cost_chart import svg_to_png

    png = svg_to_png(cost_chart_svg(SIZES, 2500, "six records"))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert (width, height) == (2 * 760, 2 * 420)
