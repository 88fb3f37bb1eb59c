"""The one code buffer every emitter writes into: indented lines and readable temporaries."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class Code:
    """Lines of code at a current indentation depth (four spaces a level)."""

    def __init__(self, depth: int = 0):
        self.lines: list[str] = []
        self.depth = depth
        self._taken: set[str] = set()

    def __call__(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    @contextmanager
    def indented(self) -> Iterator[None]:
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def name(self, stem: str) -> str:
        """A local variable named after what it holds: ``stem`` itself the first time, then
        ``stem_2``, ``stem_3``... so two values never share a name within one function."""
        name, n = stem, 1
        while name in self._taken:
            n += 1
            name = f"{stem}_{n}"
        self._taken.add(name)
        return name
