"""One line for a collapsed element (a record, an inner message): what a reader wants to see first."""

from __future__ import annotations

import re

from kcodec.tools.inspect.spans import BAD, Span

_ENTITY_TYPE = re.compile(r"\w+ v\d+")


def summary(sp: Span, lead: list[str], skip: set[str]) -> str:
    """``lead`` (absolute offset and timestamp), then the element's fields that are not derived,
    constant or in ``skip``."""
    parts = list(lead)
    for c in sp.children:
        _summarise(c, parts, skip)
    return ", ".join(parts)


def _summarise(c: Span, parts: list[str], skip: set[str]) -> None:
    name = c.path.rsplit(".", 1)[-1]
    if c.role or c.kind == "unread" or name in skip:
        return
    if c.status == BAD and c.value is None:
        parts.append(f"{name} ?")
        return
    if _ENTITY_TYPE.fullmatch(c.type):  # a nested entity: its fields, flattened
        for g in c.children:
            _summarise(g, parts, skip)
        return
    if any(ch.kind == "bits" for ch in c.children):  # only the bit groups that are set
        parts += [
            f"{g.path.rsplit('.', 1)[-1]} {g.display}"
            for g in c.children
            if g.kind == "bits" and g.raw_bits and "1" in g.raw_bits
        ]
        return
    if c.kind == "array":
        parts.append(f"{name} {'?' if c.value is None else c.value}")
        return
    if c.type.startswith(("bytes", "string")):
        parts.append(f"{name} {_bytes_summary(c)}")
        return
    if name == "attributes" and c.value == 0:
        return
    parts.append(f"{name} {c.display}")


def _bytes_summary(c: Span) -> str:
    """A bytes field: the entity read from it, null, or its shown value and size."""
    sub = next((g for g in c.children if _ENTITY_TYPE.fullmatch(g.type)), None)
    if sub is not None:
        inner: list[str] = []
        for g in sub.children:
            _summarise(g, inner, set())
        return f"{sub.type.split()[0]}({', '.join(inner)})"
    if c.display == "null" or not isinstance(c.value, (bytes, str)):
        return c.display
    return f"{c.display} ({len(c.value)} B)"
