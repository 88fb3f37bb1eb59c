"""The documentation's sections as tests read them: README.md (what a newcomer reads first) and the pages of
docs/ (the reference, moved out of the README)."""

from __future__ import annotations

import re

from tests.helpers.paths import TESTS

ROOT = TESTS.parent


def page(name: str) -> str:
    """The text of ``README.md`` or of a page under ``docs/`` (``"spark.md"``)."""
    path = ROOT / name if name == "README.md" else ROOT / "docs" / name
    return path.read_text(encoding="utf-8")


def section(name: str, heading: str) -> str:
    """The section of page ``name`` under the heading ``heading`` (its text, any level), up to the next heading
    of the same or a higher level; headings inside fenced code blocks are text."""
    lines = page(name).splitlines()
    fenced = False
    start, level = None, 0
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        m = None if fenced else re.match(r"(#{1,6}) (.*)", line)
        if not m:
            continue
        if start is not None and len(m.group(1)) <= level:
            return "\n".join(lines[start:i]) + "\n"
        if start is None and m.group(2) == heading:
            start, level = i, len(m.group(1))
    if start is None:
        raise AssertionError(f"{name} has no heading {heading!r}")
    return "\n".join(lines[start:]) + "\n"
