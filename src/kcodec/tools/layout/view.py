"""Plain-text and markdown renderings of layout tables and size results."""

from __future__ import annotations

from kcodec.runtime.layout import EntityLayout, FieldLayout


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


def render_layout(lay: EntityLayout, markdown: bool = False) -> str:
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

    def line(cells: list[str]) -> str:
        parts = [cells[i].rjust(widths[i]) if i < 2 else cells[i].ljust(widths[i]) for i in range(len(widths))]
        return ("  ".join(parts) + "  " + cells[-1]).rstrip()

    return "\n".join([title, lay.doc, "", line(_HEADINGS), *(line(r) for r in rows)])


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
