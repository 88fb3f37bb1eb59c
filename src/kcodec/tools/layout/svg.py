"""Byte diagrams of layouts, as SVG: fields as boxes along 32-bit rows, the kind of picture
protocol documents use.

Each row holds 4 bytes; a field is a box over its bytes (split across rows when it wraps), labelled
with its name, type and size, with the byte offset of each row on the left. Fields whose size or
offset varies are drawn dashed and hatched, one row each, after the fixed part. Integer fields split
into bit groups get a strip of their own below, most significant bit on the left (Kafka numbers
bit 0 as the least significant). Plain string building, no dependencies.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from kcodec.runtime.layout import EntityLayout
from kcodec.tools.layout.diff import Layouts, Row, flatten, total_overhead
from kcodec.tools.svg_canvas import FONT
from kcodec.tools.svg_canvas import Canvas as _Canvas

__all__ = ["layout_svg"]

BYTES_PER_ROW = 4
BIT_W = 22  # pixels per bit
ROW_H = 46
LEFT = 78
TOP = 92
RIGHT = 24
WIDTH = LEFT + 32 * BIT_W + RIGHT

# Fill colours by what a field is (read from the layout's notes).
_FILLS = {
    "crc": "#f8d7da",
    "length": "#fff3cd",
    "count": "#d4edda",
    "const": "#e2d9f3",
    "plain": "#dbe9f6",
    "variable": "#ffffff",
}
_LEGEND = (
    ("plain", "field"),
    ("length", "derived length"),
    ("crc", "derived CRC"),
    ("count", "derived count"),
    ("const", "constant"),
    ("variable", "variable size or offset"),
)


def _role(r: Row) -> str:
    n = r.note
    if n.startswith(("crc32", "crc32c")) or " crc32" in n:
        return "crc"
    if n.startswith("length of"):
        return "length"
    if n.startswith("count of"):
        return "count"
    if n.startswith("always"):
        return "const"
    return "plain"


def _variable_fill(r: Row) -> str:
    role = _role(r)
    return _FILLS["variable"] if role == "plain" else _FILLS[role]


def _text_w(text: str, size: float) -> float:
    return 0.6 * size * len(text)


def _fit(text: str, width: float, size: float, smallest: float = 8.0) -> tuple[str, float]:
    """Shrink the font (then cut the text) until it fits ``width`` pixels."""
    while size > smallest and _text_w(text, size) > width:
        size -= 0.5
    if _text_w(text, size) > width:
        keep = max(1, int(width / (0.6 * size)) - 1)
        text = text[:keep] + "…"
    return text, size


_VARINT_SIZES = {"varint": "1-5 bytes", "uvarint": "1-5 bytes", "varlong": "1-10 bytes"}


def _size_text(r: Row) -> str:
    if r.size is not None:
        return f"{r.size} byte{'s' if r.size != 1 else ''}"
    return _VARINT_SIZES.get(r.type, "variable")


def _label(c: _Canvas, x, y, w, h, r: Row, extra: str = "") -> None:
    size = _size_text(r)
    name, fs = _fit(r.path, w - 8, 13.0)
    detail = f"{r.type} · {size}{extra}"
    if h >= 34:
        c.text(x + w / 2, y + h / 2 - 8, name, fs, weight="bold", cls="field-name")
        detail, ds = _fit(detail, w - 8, 10.0, 6.5)
        c.text(x + w / 2, y + h / 2 + 9, detail, ds, fill="#444")
    else:
        c.text(x + w / 2, y + h / 2, name, fs, weight="bold", cls="field-name")


def _segments(start: int, end: int) -> list[tuple[int, int, int, int]]:
    """(first row, row count, first byte column, byte columns) boxes covering bytes [start, end);
    full rows in the middle are merged into one box."""
    segs: list[tuple[int, int, int, int]] = []
    pos = start
    while pos < end:
        row, col = divmod(pos, BYTES_PER_ROW)
        if col == 0 and end - pos >= BYTES_PER_ROW:
            n = (end - pos) // BYTES_PER_ROW
            segs.append((row, n, 0, BYTES_PER_ROW))
            pos += n * BYTES_PER_ROW
        else:
            cols = min(BYTES_PER_ROW - col, end - pos)
            segs.append((row, 1, col, cols))
            pos += cols
    return segs


def _row_y(row: int) -> float:
    return TOP + row * ROW_H


GRID_W = 32 * BIT_W
BYTE_W = 8 * BIT_W


def layout_svg(lay: EntityLayout, layouts: Layouts) -> str:
    """The byte diagram of one entity version, as a standalone SVG document."""
    rows = flatten(lay, layouts)
    nested = {r.path for r in rows if r.bits is None and r.type in layouts.versions}
    fields = [r for r in rows if r.bits is None and r.path not in nested]
    fixed = [r for r in fields if r.offset is not None and r.size is not None]
    variable = [r for r in fields if r not in fixed]
    fixed_rows = -(-max((_extent(r)[1] for r in fixed), default=0) // BYTES_PER_ROW)
    c = _Canvas()
    _ruler(c)
    _fixed_fields(c, fixed, fixed_rows)
    bottom = _variable_fields(c, variable, _row_y(fixed_rows))
    y = _bit_groups(c, rows, bottom + 34)
    height = _legend(c, y)
    return _document(lay, layouts, height, c)


def _extent(r: Row) -> tuple[int, int]:
    """A fixed field's first byte and the byte after it (the fields kept as fixed have both)."""
    assert r.offset is not None and r.size is not None, r.path
    return r.offset, r.offset + r.size


def _ruler(c: _Canvas) -> None:
    """Byte columns and bit ticks above the grid."""
    for b in range(BYTES_PER_ROW):
        c.text(LEFT + b * BYTE_W + BYTE_W / 2, TOP - 30, f"+{b}", 11, fill="#555")
    for bit in range(33):
        tall = bit % 8 == 0
        c.line(LEFT + bit * BIT_W, TOP - (12 if tall else 6), LEFT + bit * BIT_W, TOP, "#777" if tall else "#aaa")
    c.text(LEFT - 10, TOP - 30, "byte", 11, anchor="end", fill="#555")


def _fixed_fields(c: _Canvas, fixed: list[Row], n_rows: int) -> None:
    """Fields at fixed offsets with fixed sizes, boxed over their bytes; a field that wraps is labelled
    in its largest box."""
    for row in range(n_rows):
        c.text(LEFT - 10, _row_y(row) + ROW_H / 2, str(row * BYTES_PER_ROW), 12, anchor="end", fill="#333")
    for r in fixed:
        segs = _segments(*_extent(r))
        best = max(segs, key=lambda s: s[1] * s[3] * 4 + s[3])
        for seg in segs:
            row, nrows, col, cols = seg
            x, y, w, h = LEFT + col * BYTE_W, _row_y(row), cols * BYTE_W, nrows * ROW_H
            c.rect(x, y, w, h, _FILLS[_role(r)], cls="field")
            if seg is best:
                _label(c, x, y, w, h, r)
            else:
                text, fs = _fit(r.path, w - 8, 10.0, 7.0)  # the rest of a field labelled elsewhere
                c.text(x + w / 2, y + h / 2, text, fs, fill="#666")


def _variable_fields(c: _Canvas, variable: list[Row], y: float) -> float:
    """Fields whose size or offset varies, dashed: the first one starts where the fixed part ends, the
    rest take one row each from ``y``. Returns the y below them."""
    for i, r in enumerate(variable):
        if i == 0 and r.offset is not None and r.offset % BYTES_PER_ROW:
            row, col = divmod(r.offset, BYTES_PER_ROW)
            x, yy, w = LEFT + col * BYTE_W, _row_y(row), (BYTES_PER_ROW - col) * BYTE_W
            c.rect(x, yy, w, ROW_H, _variable_fill(r), dashed=True, hatched=True, cls="field variable")
            _label(c, x, yy, w, ROW_H, r, " (continues)")
            continue
        label = "…" if r.offset is None else str(r.offset)
        c.text(LEFT - 10, y + ROW_H / 2, label, 12, anchor="end", fill="#333")
        # a fixed-size field at a variable offset keeps its width; anything variable takes the row
        w = r.size * BYTE_W if r.size is not None and r.size <= BYTES_PER_ROW else GRID_W
        c.rect(LEFT, y, w, ROW_H, _variable_fill(r), dashed=True, hatched=r.size is None, cls="field variable")
        where = (
            ""
            if r.offset is not None
            else (", variable offset" if r.size is not None and w < GRID_W else ", at a variable offset")
        )
        _label(c, LEFT, y, w, ROW_H, r, where)
        y += ROW_H
    return y


_STRIP_H = 96


def _bit_groups(c: _Canvas, rows: list[Row], y: float) -> float:
    """One strip per integer field split into bit groups, most significant bit on the left, from ``y``.
    Returns the y below them."""
    by_field: dict[str, list[Row]] = {}
    for r in rows:
        if r.bits is not None:
            by_field.setdefault(r.path.rsplit(".", 1)[0], []).append(r)
    by_path = {r.path: r for r in rows}
    for fname, groups in by_field.items():
        parent = by_path.get(fname)
        nbits = 8 * (parent.size if parent and parent.size else 1)
        y = _bit_strip_heading(c, fname, parent, nbits, y)
        bw = GRID_W / nbits
        for g in groups:
            _bit_group(c, g, nbits, bw, y)
        y += _STRIP_H + 30
    return y


def _bit_strip_heading(c: _Canvas, fname: str, parent: Row | None, nbits: int, y: float) -> float:
    """The title of a bit strip and its bit numbers; returns the y where the strip starts."""
    where = (
        ""
        if parent is None or parent.offset is None
        else f", byte{'s' if nbits > 8 else ''} {parent.offset}"
        + (f"-{parent.offset + nbits // 8 - 1}" if nbits > 8 else "")
    )
    c.text(
        LEFT,
        y,
        f"{fname} ({parent.type if parent else ''}{where}): bit {nbits - 1} … bit 0",
        12,
        anchor="start",
        weight="bold",
    )
    y += 14
    bw = GRID_W / nbits
    for bit in range(nbits):
        c.text(LEFT + (nbits - 1 - bit) * bw + bw / 2, y + 6, str(bit), 8.5 if bw < 20 else 10, fill="#666")
    return y + 14


def _bit_group(c: _Canvas, g: Row, nbits: int, bw: float, y: float) -> None:
    """One bit group's box, labelled across it, or along it when it is narrow."""
    assert g.bits is not None, g.path  # a bit group's row
    lo, _, hi = g.bits.partition("-")
    lo_i, hi_i = int(lo), int(hi or lo)
    x = LEFT + (nbits - 1 - hi_i) * bw
    w = (hi_i - lo_i + 1) * bw
    fill = "#eeeeee" if g.type == "reserved" else "#dbe9f6"
    c.rect(x, y, w, _STRIP_H, fill, cls="bits")
    name = g.path.rsplit(".", 1)[-1]
    if _text_w(name, 10) <= w - 6:
        c.text(
            x + w / 2,
            y + _STRIP_H / 2 - 14,
            name,
            11 if _text_w(name, 11) <= w - 6 else 10,
            weight="bold",
            cls="field-name",
        )
        for k, line in enumerate((f"bits {g.bits}", g.type)):
            fitted, fs = _fit(line, w - 6, 9.0, 6.5)
            c.text(x + w / 2, y + _STRIP_H / 2 + 4 + 13 * k, fitted, fs, fill="#444")
    else:  # narrow: write along the box
        fitted, fs = _fit(name, _STRIP_H - 8, 11, 7)
        c.text(x + w / 2, y + _STRIP_H / 2, fitted, fs, weight="bold", rotate=True, cls="field-name")


def _legend(c: _Canvas, y: float) -> float:
    """What each fill means; returns the height of the whole drawing."""
    lx: float = LEFT
    for role, text in _LEGEND:
        c.rect(lx, y, 18, 14, _FILLS[role], dashed=role == "variable", hatched=role == "variable")
        c.text(lx + 24, y + 7, text, 10.5, anchor="start", fill="#333")
        lx += 30 + _text_w(text, 10.5) + 14
    return y + 30


def _overhead_text(lay: EntityLayout, layouts: Layouts) -> str:
    if lay.fixed_size is not None:
        return f"fixed size {lay.fixed_size} bytes"
    lo, hi = lay.min_overhead, lay.max_overhead
    tlo, thi = total_overhead(lay, layouts)
    over = f"overhead {lo} bytes" if lo == hi else f"overhead {lo}..{hi} bytes"
    if (tlo, thi) != (lo, hi):
        over += f" ({tlo} with nested entities)" if tlo == thi else f" ({tlo}..{thi} with nested entities)"
    return over


def _document(lay: EntityLayout, layouts: Layouts, height: float, body: _Canvas) -> str:
    """The SVG document: size, title, hatch pattern, background, heading, then the drawing."""
    head = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0f}" '
        f'viewBox="0 0 {WIDTH} {height:.0f}" font-family="{FONT}">',
        f"<title>{escape(lay.entity)} v{lay.version} byte layout</title>",
        '<defs><pattern id="hatch" width="8" height="8" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="8" stroke="#c8c8c8" stroke-width="2"/>'
        "</pattern></defs>",
        f'<rect x="0" y="0" width="{WIDTH}" height="{height:.0f}" fill="#ffffff"/>',
    ]
    title = _Canvas()
    # the subtitle on its own line: beside the title it ran into bold names wider than the width estimate
    title.text(LEFT, 20, f"{lay.entity} v{lay.version}", 17, anchor="start", weight="bold")
    title.text(
        LEFT,
        40,
        f"{_overhead_text(lay, layouts)}; 32 bits per row, offsets in bytes",
        12,
        anchor="start",
        fill="#444",
    )
    return "\n".join(head + title.parts + body.parts + ["</svg>"]) + "\n"
