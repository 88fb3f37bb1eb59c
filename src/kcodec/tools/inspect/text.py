"""A span tree as annotated hex: one line per field (more for long raw bytes), ANSI colours optional."""

from __future__ import annotations

import re

from kcodec.tools.inspect.spans import BAD, OK, WARN, Span

_COLOURS = {
    "range": "2",
    "hex": "36",
    "name": "1",
    "value": "32",
    "note": "33",
    "bad": "1;31",
    "warn": "35",
    "title": "1;4",
    "dspace": "34",
}
_HEX_PER_LINE = 8
_RANGE_W = 11


class _Style:
    def __init__(self, colour: bool):
        self.colour = colour

    def __call__(self, what: str, text: str) -> str:
        if not self.colour or not text:
            return text
        return f"\x1b[{_COLOURS[what]}m{text}\x1b[0m"


def _range_text(s: Span, start: int | None = None, end: int | None = None) -> str:
    a = s.start if start is None else start
    b = s.end if end is None else end
    plus = "" if s.space == "file" else "+"
    if b - a == 1:
        return f"{plus}{a}"
    if b <= a:
        return f"{plus}{a} (0 bytes)"
    return f"{plus}{a}..{b - 1}"


def render_text(span: Span, *, colour: bool = False, max_bytes: int = 32) -> str:
    """A span tree as annotated hex: one line per field (more for long raw bytes)."""
    st = _Style(colour)
    out: list[str] = []
    if span.kind == "tail":
        out.append(st("title", f"tail at byte {span.start}: {span.display}"))
        _lines(span, 1, st, out, max_bytes, label="(tail)")
        return "\n".join(out)
    what = "entity" if span.kind == "entity" else "entry"
    title = f"{what} at byte {span.start}: {span.type}, {span.end - span.start} bytes"
    if span.display:
        title += f", {span.display}"
    if span.status != OK:
        title += f" [{span.status.upper()}]"
    out.append(st("title", title))
    for c in span.children:
        _render(c, 1, st, out, max_bytes)
    return "\n".join(out)


def _render(s: Span, depth: int, st: _Style, out: list[str], max_bytes: int) -> None:
    if s.kind == "decompressed":
        head = f"{'':>{_RANGE_W}}  {'':<{3 * _HEX_PER_LINE - 1}}  {'  ' * depth}{s.path} (decompressed): {s.display}"
        out.append(st("dspace", head.rstrip() + "; positions below count from its first byte (+)"))
        for c in s.children:
            _render(c, depth + 1, st, out, max_bytes)
        if s.status == BAD and s.notes:
            out.append(_line(" ", "", "", depth + 1, st, "", "", s.notes, s.status))
        return
    if s.collapsed:
        _lines(s, depth, st, out, max_bytes, summary=True)
        for leaf in s.walk():
            if leaf is not s and leaf.status == BAD and (leaf.raw is not None or not leaf.children):
                _lines(leaf, depth + 1, st, out, max_bytes)
        return
    _lines(s, depth, st, out, max_bytes)
    if s.kind == "bits":
        return
    for c in s.children:
        _render(c, depth + 1, st, out, max_bytes)


def _marker(status: str) -> str:
    return {OK: " ", WARN: "?", BAD: "!"}[status]


def _line(
    mark: str, rng: str, hx: str, depth: int, st: _Style, name: str, value: str, notes: list[str], status: str
) -> str:
    rng_cell = " " * (_RANGE_W - len(rng)) + st("dspace" if rng.startswith("+") else "range", rng)
    hex_cell = st("hex", hx) + " " * (3 * _HEX_PER_LINE - 1 - len(hx))
    text = f"{mark}{rng_cell}  {hex_cell}  {'  ' * (depth - 1)}"
    if name:
        text += st("name", name)
    if value:
        text += " = " + st("value", value)
    if notes:
        colour = "bad" if status == BAD else "warn" if status == WARN else "note"
        text += "  " + st(colour, "[" + "; ".join(notes) + "]")
    return text.rstrip()


def _lines(
    s: Span, depth: int, st: _Style, out: list[str], max_bytes: int, summary: bool = False, label: str | None = None
) -> None:
    name = label or s.path or "(entry)"
    if s.type and not summary:
        name += f" <{s.type}>"
    value = s.display
    # A summary line repeats only the damage its one-line display does not already say.
    notes = [n for n in s.notes if s.status != OK and n not in value] if summary else list(s.notes)
    mark = _marker(s.status)
    if s.kind == "bits":
        out.append(_line(mark, "", f"bits {s.bits}: {s.raw_bits}", depth, st, name, value, notes, s.status))
        return
    if s.raw is None or summary:
        out.append(_line(mark, _range_text(s), "", depth, st, name, value, notes, s.status))
        return
    raw = s.raw
    shown = raw if max_bytes <= 0 else raw[:max_bytes]
    chunks = [shown[i : i + _HEX_PER_LINE] for i in range(0, len(shown), _HEX_PER_LINE)] or [b""]
    for i, chunk in enumerate(chunks):
        a = s.start + i * _HEX_PER_LINE
        rng = _range_text(s, a, a + len(chunk)) if len(chunks) > 1 else _range_text(s)
        hx = " ".join(f"{b:02x}" for b in chunk)
        if i == 0:
            out.append(_line(mark, rng, hx, depth, st, name, value, notes, s.status))
        else:
            out.append(_line(" ", rng, hx, depth, st, "", "", [], OK))
    if len(raw) > len(shown):
        out.append(_line(" ", "", f"… {len(raw) - len(shown)} more bytes", depth, st, "", "", [], OK))


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)
