"""The small SVG writer kcodec's pictures share (layout diagrams, the pipeline's cost chart): no
drawing library, deterministic text."""

from __future__ import annotations

from xml.sax.saxutils import escape

__all__ = ["Canvas", "FONT", "escape"]

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"  # resvg and browsers find one of them


class Canvas:
    """SVG elements appended in drawing order; the caller wraps ``parts`` in an ``<svg>`` element."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def rect(self, x, y, w, h, fill, dashed=False, hatched=False, stroke="#333", cls="") -> None:
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        klass = f' class="{cls}"' if cls else ""
        self.parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="1.2"{dash}{klass}/>'
        )
        if hatched:
            self.parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="url(#hatch)" stroke="none"/>'
            )

    def text(self, x, y, s, size=12.0, anchor="middle", weight="normal", fill="#111", rotate=False, cls="") -> None:
        transform = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if rotate else ""
        klass = f' class="{cls}"' if cls else ""
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:.1f}" text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{fill}" dominant-baseline="middle"{transform}{klass}>'
            f"{escape(s)}</text>"
        )

    def line(self, x1, y1, x2, y2, stroke="#999", width=1.0) -> None:
        self.parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" stroke-width="{width}"/>'
        )
