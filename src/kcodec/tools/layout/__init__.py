"""Layout tables as text, diffs between entity versions, and SVG diagrams."""
