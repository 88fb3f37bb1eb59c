"""Plain-text and markdown renderings of layout tables and size results."""

from __future__ import annotations

import textwrap

from kcodec.runtime.layout import EntityLayout, FieldLayout

_INDENT = " " * 6  # notes and doc under their row, on a narrow terminal


def _cells(f: FieldLayout) -> list[str]:
    offset = "variable" if f.offset is None else str(f.offset)
    if f.bits is not None:
        size = f"bits {f.bits}"
    else:
        size = "variable" if f.size is None else str(f.size)
    return [offset, size, f.name, f.type, f.versions, f.note, f.doc]


_HEADINGS = ["offset", "size", "field", "type", "versions", "notes", "doc"]


def _summary(lay: EntityLayout) -> str:
    if lay.fixed_size is not None:
        return f"fixed size {lay.fixed_size} bytes"
    if lay.overhead is not None:
        return f"overhead {lay.overhead} bytes before payloads"
    return f"overhead {lay.min_overhead}..{lay.max_overhead} bytes before payloads (varints)"


def render_layout(lay: EntityLayout, markdown: bool = False, width: int | None = None) -> str:
    """The layout as a text table (or markdown). With ``width`` (a terminal's columns) a table that is
    wider puts each row's notes and doc on wrapped lines under it, and cuts what is still too long."""
    rows = [_cells(f) for f in lay.fields]
    title = f"{lay.entity} v{lay.version}: {_summary(lay)}"
    if markdown:
        out = [
            f"### {title}",
            "",
            lay.doc,
            "",
            "| " + " | ".join(_HEADINGS) + " |",
            "|" + "|".join("---:" if i < 2 else "---" for i in range(len(_HEADINGS))) + "|",
        ]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        return "\n".join(out)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(_HEADINGS[:-1])]

    def line(cells: list[str], columns: int) -> str:
        parts = [cells[i].rjust(widths[i]) if i < 2 else cells[i].ljust(widths[i]) for i in range(columns)]
        return "  ".join(parts)

    full = [(line(r, len(widths)) + "  " + r[-1]).rstrip() for r in rows]
    if width is None or max(map(len, full)) <= width:
        return "\n".join([title, lay.doc, "", (line(_HEADINGS, len(widths)) + "  " + _HEADINGS[-1]).rstrip(), *full])
    # too wide for the terminal: notes and doc go under each row, wrapped to the width
    short = len(widths) - 1
    out = [_cut(title, width), textwrap.fill(lay.doc, width), "", _cut(line(_HEADINGS, short).rstrip(), width)]
    for r in rows:
        out.append(_cut(line(r, short).rstrip(), width))
        text = f"{r[-2]}; {r[-1]}" if r[-2] else r[-1]
        out += textwrap.wrap(text, width, initial_indent=_INDENT, subsequent_indent=_INDENT)
    return "\n".join(out)


def _cut(text: str, width: int | None) -> str:
    return text if width is None or len(text) <= width else text[: width - 1] + "…"


def _shape(q) -> str:
    def size(n: int) -> str:
        return "null" if n < 0 else f"{n} B"

    text = f"{q.records} record{'s' if q.records != 1 else ''}, key {size(q.key_size)}, value {size(q.value_size)}"
    if q.headers:
        text += ", headers " + ", ".join(f"{k} B:{size(v)}" for k, v in q.headers)
    return text


def render_sizes(q, results, breakdown: bool = False) -> str:
    label = {
        0: "v0 (magic 0, one log entry per record)",
        1: "v1 (magic 1, one log entry per record)",
        2: "v2 (magic 2, one record batch)",
    }
    out = [_shape(q), ""]
    width = max(len(label[r.magic]) for r in results)
    out.append(f"{'format'.ljust(width)}  {'bytes':>8}")
    for r in results:
        out.append(f"{label[r.magic].ljust(width)}  {r.total:>8}")
    if breakdown:
        for r in results:
            out += ["", f"v{r.magic} by field (summed over records):"]
            w = max(len(k) for k in r.fields)
            out += [f"  {k.ljust(w)}  {v:>8}" for k, v in r.fields.items()]
    return "\n".join(out)
