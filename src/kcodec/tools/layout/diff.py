"""Compare two layouts: which fields were added, removed, moved or changed, and how the
fixed offsets and overheads differ.

The layouts are the generated tables (:class:`~kcodec.runtime.layout.EntityLayout`, what
``kcodec layout`` prints), so a diff shows exactly what regenerating did: compare two versions of
an entity (``legacy_message`` v0 → v1), two entities (magic-1 log entries against v2 batches), or
the packaged layout against the one a changed schema directory would generate
(:func:`layouts_from_schemas`: the schemas loaded and resolved, the same rows the generator prints).

Nested entities at a fixed offset are flattened into the parent (``message.crc`` sits at 12 of a
legacy log entry), so entry-level offsets line up with Kafka's (magic at 16 in every format: ``LegacyRecord``
and ``DefaultRecordBatch`` agree there).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from kcodec.runtime.layout import EntityLayout, FieldLayout

__all__ = [
    "Row",
    "Pair",
    "LayoutDiff",
    "flatten",
    "diff_layouts",
    "render_diff",
    "layouts_from_schemas",
    "packaged_layouts",
    "package_layouts",
    "Layouts",
]


@dataclass(frozen=True)
class Layouts:
    """Where layouts come from: ``layout(entity, version)`` and the versions of each entity."""

    layout: Callable[[str, int], EntityLayout]
    versions: dict[str, tuple[int, ...]]
    source: str = "generated"


def packaged_layouts() -> Layouts:
    from kcodec.tools.schema_package import packaged_package

    return package_layouts(packaged_package())


def package_layouts(package) -> Layouts:
    """The layouts of a :class:`~kcodec.tools.schema_package.SchemaPackage` (kcodec's, or a user's Kafka's)."""
    return Layouts(package.layout, package.versions, package.source)


def layouts_from_schemas(directory: str | Path) -> Layouts:
    """The layouts regenerating from ``directory`` would give: the schemas are loaded (YAML) and
    resolved, and each table built from the rows the generator prints; nothing is rendered."""
    from kcodec.codegen.schema import layout_rows, load_schemas, resolve_all

    tables = {}
    for ev in resolve_all(load_schemas(directory)):
        lo, hi = ev.overhead
        rows = tuple(FieldLayout(*row) for row in layout_rows(ev))
        tables[(ev.name, ev.version)] = EntityLayout(ev.name, ev.version, ev.entity.doc, rows, lo, hi, ev.fixed_size)
    versions: dict[str, tuple[int, ...]] = {}
    for name, version in tables:
        versions[name] = versions.get(name, ()) + (version,)

    def layout(entity: str, version: int) -> EntityLayout:
        try:
            return tables[(entity, version)]
        except KeyError:
            raise KeyError(f"{entity} v{version} is not in {directory}") from None

    return Layouts(layout, versions, str(directory))


@dataclass(frozen=True)
class Row:
    """One field (or bit group) of a flattened layout."""

    path: str  # "message.crc", "attributes.compression"
    local: str  # the path inside its own entity: "crc"
    offset: int | None  # from the start of the outermost entity; None when it varies
    size: int | None
    type: str
    bits: str | None
    note: str
    depth: int  # 0 for the entity's own fields, 1 inside a nested entity...

    def as_dict(self) -> dict:
        return asdict(self)


def flatten(lay: EntityLayout, layouts: Layouts, prefix: str = "", base: int | None = 0, depth: int = 0) -> list[Row]:
    rows: list[Row] = []
    for f in lay.fields:
        offset = None if base is None or f.offset is None else base + f.offset
        rows.append(Row(prefix + f.name, f.name, offset, f.size, f.type, f.bits, f.note, depth))
        if f.bits is None and f.type in layouts.versions and lay.version in layouts.versions[f.type]:
            rows += flatten(layouts.layout(f.type, lay.version), layouts, f"{prefix}{f.name}.", offset, depth + 1)
    return rows


def total_overhead(lay: EntityLayout, layouts: Layouts) -> tuple[int, int]:
    """Overhead with nested entities counted (a legacy log entry's 12 plus its message's 14 or 22)."""
    lo, hi = lay.min_overhead, lay.max_overhead
    for f in lay.fields:
        if f.bits is None and f.type in layouts.versions and lay.version in layouts.versions[f.type]:
            a, b = total_overhead(layouts.layout(f.type, lay.version), layouts)
            lo, hi = lo + a, hi + b
    return lo, hi


@dataclass
class Pair:
    status: str  # added, removed, moved, changed, unchanged
    a: Row | None
    b: Row | None
    changes: list[str]  # what differs besides the offset: "size 1 → 2", "always 0 → always 1"

    @property
    def row(self) -> Row:
        """The row shown for the pair: b's, or a's for a removed field (a pair has one at least)."""
        r = self.b or self.a
        assert r is not None
        return r

    @property
    def name(self) -> str:
        if self.a and self.b and self.a.path != self.b.path:
            return f"{self.a.path} → {self.b.path}"
        return self.row.path

    def as_dict(self) -> dict:
        return {
            "status": self.status,
            "field": self.name,
            "a": self.a.as_dict() if self.a else None,
            "b": self.b.as_dict() if self.b else None,
            "changes": self.changes,
        }


@dataclass
class LayoutDiff:
    a: EntityLayout
    b: EntityLayout
    a_source: str
    b_source: str
    pairs: list[Pair]
    overhead: tuple[tuple[int, int], tuple[int, int]]
    total_overhead: tuple[tuple[int, int], tuple[int, int]]

    def title(self) -> str:
        a = f"{self.a.entity} v{self.a.version}"
        b = f"{self.b.entity} v{self.b.version}"
        if self.a_source != self.b_source:
            a, b = f"{a} ({self.a_source})", f"{b} ({self.b_source})"
        return f"{a} → {b}"

    def counts(self) -> dict[str, int]:
        out = {k: 0 for k in ("added", "removed", "moved", "changed", "unchanged")}
        for p in self.pairs:
            out[p.status] += 1
        return out

    def pair(self, field: str) -> Pair:
        for p in self.pairs:
            if field in ((p.a.path if p.a else None), (p.b.path if p.b else None)):
                return p
        raise KeyError(field)

    def as_dict(self) -> dict:
        def ov(x: tuple[int, int]) -> dict:
            return {"min": x[0], "max": x[1]}

        return {
            "a": {
                "entity": self.a.entity,
                "version": self.a.version,
                "source": self.a_source,
                "overhead": ov(self.overhead[0]),
                "overhead_with_nested": ov(self.total_overhead[0]),
                "fixed_size": self.a.fixed_size,
            },
            "b": {
                "entity": self.b.entity,
                "version": self.b.version,
                "source": self.b_source,
                "overhead": ov(self.overhead[1]),
                "overhead_with_nested": ov(self.total_overhead[1]),
                "fixed_size": self.b.fixed_size,
            },
            "counts": self.counts(),
            "fields": [p.as_dict() for p in self.pairs],
        }


def _match(a_rows: list[Row], b_rows: list[Row]) -> dict[int, int]:
    """b index → a index: the same path first; then, for what is left, the same path inside its own
    entity when that is unique on both sides (``message.crc`` ↔ ``crc`` across formats)."""
    out: dict[int, int] = {}
    a_by_path = {r.path: i for i, r in enumerate(a_rows)}
    for j, r in enumerate(b_rows):
        if r.path in a_by_path:
            out[j] = a_by_path[r.path]
    used = set(out.values())

    def unique(rows: list[Row], taken) -> dict[str, int]:
        seen: dict[str, list[int]] = {}
        for i in range(len(rows)):
            if i not in taken:
                seen.setdefault(_local_path(rows, i), []).append(i)
        return {k: v[0] for k, v in seen.items() if len(v) == 1}

    a_left = unique(a_rows, used)
    b_left = unique(b_rows, set(out))
    for key, j in b_left.items():
        if key in a_left:
            out[j] = a_left[key]
    return out


def _local_path(rows: list[Row], i: int) -> str:
    """The path below the innermost nested entity: bit groups keep their field's name."""
    r = rows[i]
    if r.bits is not None:
        return ".".join(r.path.split(".")[-2:])
    return r.local


def diff_layouts(a: EntityLayout, b: EntityLayout, la: Layouts, lb: Layouts | None = None) -> LayoutDiff:
    lb = lb or la
    a_rows, b_rows = flatten(a, la), flatten(b, lb)
    match = _match(a_rows, b_rows)
    matched_a = set(match.values())
    pairs: list[Pair] = []
    emitted: set[int] = set()

    def removed_before(limit: int) -> None:
        for i in range(limit):
            if i not in matched_a and i not in emitted:
                emitted.add(i)
                pairs.append(Pair("removed", a_rows[i], None, []))

    for j, rb in enumerate(b_rows):
        i = match.get(j)
        if i is None:
            pairs.append(Pair("added", None, rb, []))
            continue
        removed_before(i)
        ra = a_rows[i]
        changes = []
        if ra.size != rb.size:
            changes.append(f"size {_size(ra.size)} → {_size(rb.size)}")
        if ra.type != rb.type:
            changes.append(f"type {ra.type} → {rb.type}")
        if ra.bits != rb.bits:
            changes.append(f"bits {ra.bits} → {rb.bits}")
        if ra.note != rb.note:
            changes.append(f"{ra.note or '(no note)'} → {rb.note or '(no note)'}")
        moved = ra.offset != rb.offset
        pairs.append(Pair("moved" if moved else "changed" if changes else "unchanged", ra, rb, changes))
    removed_before(len(a_rows))
    # Read like a picture: by offset (the new one, else the old), variable offsets last, ties in order.
    order = {id(p): k for k, p in enumerate(pairs)}

    def key(p: Pair):
        r = (
            p.b
            if p.b is not None and p.b.offset is not None
            else p.a
            if p.a is not None and p.a.offset is not None
            else p.row
        )
        return (r.offset is None, r.offset or 0, order[id(p)])

    pairs.sort(key=key)
    return LayoutDiff(
        a,
        b,
        la.source,
        lb.source,
        pairs,
        ((a.min_overhead, a.max_overhead), (b.min_overhead, b.max_overhead)),
        (total_overhead(a, la), total_overhead(b, lb)),
    )


def _size(n: int | None) -> str:
    return "variable" if n is None else str(n)


def _off(r: Row | None) -> str:
    if r is None:
        return ""
    text = "variable" if r.offset is None else str(r.offset)
    return text + (f" bits {r.bits}" if r.bits is not None else "")


def _overhead_text(x: tuple[int, int]) -> str:
    return str(x[0]) if x[0] == x[1] else f"{x[0]}..{x[1]}"


def _delta(a: tuple[int, int], b: tuple[int, int]) -> str:
    if a[0] == a[1] and b[0] == b[1]:
        d = b[0] - a[0]
        return f" ({'+' if d > 0 else ''}{d})" if d else " (unchanged)"
    return ""


def summary_lines(d: LayoutDiff) -> list[str]:
    (oa, ob), (ta, tb) = d.overhead, d.total_overhead
    lines = [f"overhead: {_overhead_text(oa)} → {_overhead_text(ob)} bytes{_delta(oa, ob)}"]
    if (ta, tb) != (oa, ob):
        lines.append(
            f"overhead with nested entities: {_overhead_text(ta)} → {_overhead_text(tb)} bytes{_delta(ta, tb)}"
        )
    if d.a.fixed_size != d.b.fixed_size:
        lines.append(f"fixed size: {_size(d.a.fixed_size)} → {_size(d.b.fixed_size)}")
    moved = [p for p in d.pairs if p.status == "moved" and p.row.bits is None]
    if moved:
        lines.append("fixed offsets moved: " + ", ".join(f"{p.name} {_off(p.a)} → {_off(p.b)}" for p in moved))
    c = d.counts()
    lines.append(", ".join(f"{v} {k}" for k, v in c.items()))
    return lines


def render_diff(d: LayoutDiff, markdown: bool = False) -> str:
    headings = ["change", "field", "offset", "size", "type", "details"]
    rows = []
    for p in d.pairs:
        r = p.row
        if p.status == "moved":
            offset = f"{_off(p.a)} → {_off(p.b)}"
        elif p.status == "removed":
            offset = _off(p.a)
        else:
            offset = _off(p.b)
        size = _size(r.size) if r.bits is None else ""
        if p.a and p.b and p.a.size != p.b.size:
            size = f"{_size(p.a.size)} → {_size(p.b.size)}"
        typ = r.type if not (p.a and p.b and p.a.type != p.b.type) else f"{p.a.type} → {p.b.type}"
        details = "; ".join(c for c in p.changes if not c.startswith(("size ", "type ")))
        status = "" if p.status == "unchanged" else p.status
        rows.append([status, p.name, offset, size, typ, details])
    if markdown:
        out = (
            [f"### {d.title()}", ""]
            + [f"- {line}" for line in summary_lines(d)]
            + ["", "| " + " | ".join(headings) + " |", "|" + "|".join("---" for _ in headings) + "|"]
        )
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        return "\n".join(out)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headings[:-1])]

    def line(cells: list[str]) -> str:
        return ("  ".join(cells[i].ljust(widths[i]) for i in range(len(widths))) + "  " + cells[-1]).rstrip()

    return "\n".join([d.title(), *summary_lines(d), "", line(headings), *(line(r) for r in rows)])
