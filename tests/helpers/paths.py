"""Where the tests find the repository's files."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
# a test-only schema set that uses every feature of the schema language: what the generator does with a
# schema is checked on it, a fraction of the packaged set's cost
SINK = TESTS / "codegen" / "kitchen_sink"
