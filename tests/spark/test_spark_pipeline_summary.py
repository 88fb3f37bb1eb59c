"""The pipeline's summary as a reader meets it (no Spark session: the summary is rendered from its counts):
`1 row` not `1 rows`, control batches named only where there are some, prose wrapped at word boundaries."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from kcodec.spark.pipeline import PartitionSummary, Summary, render_summary


def _summary(control_bytes: int, rows: int) -> Summary:
    data = 1000
    part = PartitionSummary(
        "orders", 0, 1, rows, 1 if control_bytes else 0, rows, data + control_bytes, 900, 1800, data
    )
    part.sizes = {"v2/none": 1200}
    return Summary("src", "dest", "parquet", "local[2]", "dest/records", "dest/batches", [part])


def test_one_row_is_a_row():
    text = render_summary(_summary(0, 1), width=100)
    assert "(1 row)" in text and "1 rows" not in text


def test_control_batches_are_mentioned_only_where_there_are_some():
    without = render_summary(_summary(0, 5), width=100)
    assert "control batches" not in without and "data batches only" not in without
    assert "On disk now: 1,000 bytes." in " ".join(without.split())
    with_control = " ".join(render_summary(_summary(78, 5), width=100).split())
    assert "control batches included" in with_control
    assert "the 1,078 above include control batches: 78 bytes" in with_control


@pytest.mark.parametrize("width", [60, 80, 100])
def test_prose_wraps_at_word_boundaries(width):
    text = render_summary(_summary(78, 5), width=width)
    prose = [line for line in text.splitlines() if line.strip().startswith(("(on disk", "The same", "Exact"))]
    assert prose
    words = set(render_summary(_summary(78, 5), width=10_000).split())  # unwrapped: every word whole
    for line in text.splitlines():
        if not line.startswith(("kcodec pipeline", "  records table", "  batches table")) and "  " not in line.strip():
            assert len(line) <= width, line
            assert all(w in words for w in line.split()), line  # no word cut in two
