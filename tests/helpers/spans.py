"""Checks on the byte maps ``kcodec inspect`` draws (kcodec.tools.inspect's Span trees)."""

from __future__ import annotations

from kcodec.tools.inspect import Span


def assert_tiles(span: Span, start: int, end: int, space: str = "file") -> None:
    """Every byte of [start, end) is in exactly one leaf of the given position space."""
    leaves = sorted((s for s in span.walk() if s.raw is not None and s.space == space), key=lambda s: s.start)
    pos = start
    for leaf in leaves:
        assert leaf.start == pos, f"gap or overlap at {pos}: {leaf.path} starts at {leaf.start}"
        assert len(leaf.raw) == leaf.end - leaf.start
        pos = leaf.end
    assert pos == end
