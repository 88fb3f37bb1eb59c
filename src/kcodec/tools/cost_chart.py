"""The pipeline's cost table as a picture: grouped bars (one group per compression codec, one bar per
message format) with a dashed line at what the data batches take on disk now. SVG from kcodec's own
writer; PNG through resvg-py when asked (``pip install resvg-py``)."""

from __future__ import annotations

from kcodec.tools.svg_canvas import FONT, Canvas, escape

__all__ = ["cost_chart_svg", "svg_to_png", "PNG_ZOOM"]

_FORMAT_COLORS = {0: "#9ecae1", 1: "#4292c6", 2: "#08519c"}
_WIDTH, _HEIGHT = 760, 420
_LEFT, _RIGHT, _TOP, _BOTTOM = 90, 150, 56, 56


def _ticks(top: int) -> list[int]:
    """About five round tick values from 0 to at least ``top``."""
    step = 1
    while top / step > 5:
        for m in (2, 5, 10):
            if top / (step * m) <= 5:
                step *= m
                break
        else:
            step *= 10
    return list(range(0, top + step, step))


def _bytes(n: int) -> str:
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


def cost_chart_svg(sizes: dict[str, int], on_disk: int, title: str, *, estimated: bool = False) -> str:
    """``sizes`` maps ``v{magic}/{codec}`` to bytes (the pipeline's ``sizeAs`` totals); ``on_disk`` is
    what the same data batches take in the segments now."""
    codecs: list[str] = []
    magics: list[int] = []
    for key in sizes:
        fmt, codec = key.split("/", 1)  # "v2/zstd"
        if codec not in codecs:
            codecs.append(codec)
        if int(fmt[1:]) not in magics:
            magics.append(int(fmt[1:]))
    magics.sort()
    ticks = _ticks(max([*sizes.values(), on_disk, 1]))
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM
    scale = plot_h / ticks[-1]
    c = Canvas()
    c.text(_WIDTH / 2, 22, title, size=15, weight="bold")
    if estimated:
        c.text(_WIDTH / 2, 40, "compressed sizes estimated from a sample of the batches", size=11, fill="#555")
    for v in ticks:
        y = _TOP + plot_h - v * scale
        c.line(_LEFT, y, _LEFT + plot_w, y, stroke="#e5e5e5")
        c.text(_LEFT - 8, y, _bytes(v), size=11, anchor="end", fill="#444")
    group_w = plot_w / max(len(codecs), 1)
    bar_w = group_w * 0.8 / max(len(magics), 1)
    for g, codec in enumerate(codecs):
        x0 = _LEFT + g * group_w + group_w * 0.1
        for b, magic in enumerate(magics):
            value = sizes.get(f"v{magic}/{codec}")
            mid = x0 + b * bar_w + (bar_w - 2) / 2
            if value is None:  # a format that has no such codec (zstd before v2): said, not left blank
                c.text(mid, _TOP + plot_h - 6, "n/a", size=10, anchor="start", fill="#777", rotate=True, cls="na")
                continue
            h = value * scale
            color = _FORMAT_COLORS.get(magic, "#777")
            c.rect(x0 + b * bar_w, _TOP + plot_h - h, bar_w - 2, h, color, stroke="none", cls="bar")
            c.parts[-1] = c.parts[-1].replace("/>", f"><title>v{magic} {escape(codec)}: {value:,} bytes</title></rect>")
            # the value over its bar, upright along it (bars are narrower than the label)
            c.text(
                mid,
                _TOP + plot_h - h - 4,
                _bytes(value),
                size=10,
                anchor="start",
                fill="#333",
                rotate=True,
                cls="value",
            )
        c.text(_LEFT + g * group_w + group_w / 2, _TOP + plot_h + 18, codec, size=12)
    y = _TOP + plot_h - on_disk * scale
    c.parts.append(
        f'<line x1="{_LEFT:.1f}" y1="{y:.1f}" x2="{_LEFT + plot_w:.1f}" y2="{y:.1f}" stroke="#d62728" '
        'stroke-width="2" stroke-dasharray="7 4"/>'
    )
    c.text(_LEFT + plot_w - 4, y - 10, f"on disk now: {_bytes(on_disk)}", size=11, anchor="end", fill="#d62728")
    c.line(_LEFT, _TOP + plot_h, _LEFT + plot_w, _TOP + plot_h, stroke="#333")
    legend_y = _TOP + 10
    for i, magic in enumerate(magics):
        yy = legend_y + i * 20
        c.rect(_LEFT + plot_w + 10, yy - 6, 12, 12, _FORMAT_COLORS.get(magic, "#777"), stroke="none")
        c.text(_LEFT + plot_w + 28, yy, f"message format v{magic}", size=11, anchor="start")
    c.text(_LEFT + plot_w / 2, _HEIGHT - 14, "compression codec", size=12, fill="#444")
    body = "\n".join(c.parts)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" '
        f'viewBox="0 0 {_WIDTH} {_HEIGHT}" font-family="{FONT}">\n'
        f"<title>{escape(title)}</title>\n"
        f'<rect width="{_WIDTH}" height="{_HEIGHT}" fill="white"/>\n{body}\n</svg>\n'
    )


PNG_ZOOM = 2  # pixels per SVG unit: sharp on high-density screens and in documents


def svg_to_png(svg: str, zoom: float = PNG_ZOOM) -> bytes:
    """The chart as PNG at ``zoom`` times its SVG size, rendered by resvg (the ``resvg-py`` package, no
    system libraries)."""
    try:
        import resvg_py
    except ImportError:
        raise ImportError("a PNG chart needs resvg-py: pip install resvg-py") from None
    return bytes(resvg_py.svg_to_bytes(svg_string=svg, zoom=zoom))
