"""``onCorrupt=skip`` keeps what a split skipped bounded: the first ``MAX_REPORTED`` regions are listed (on
stderr and in the ``corruptReportPath`` file), the rest counted in one summary line of the same shape, as
``verify`` and ``metadata image`` do for their problems. A segment of 150 000 entries whose CRCs fail is
read, each skipped alone, with a peak RSS well below what listing them all took. No Spark session: a
split is read as a task reads it."""

from __future__ import annotations

import json
from pathlib import Path

from kcodec.records.reader import MAX_KEPT_RANGES
from kcodec.spark.read import MAX_REPORTED, MORE_KIND
from tests.helpers.batches import V0_ENTRY
from tests.helpers.bombs import PEAK_LINE, python_peak_rss_mib

BAD_CRC = V0_ENTRY[:12] + bytes([V0_ENTRY[12] ^ 0xFF]) + V0_ENTRY[13:]  # framing sound, CRC wrong

READ = (
    """
import os, sys
from kcodec.spark.arrow import RECORD_COLUMNS
from kcodec.spark.options import ReadOptions
from kcodec.spark.planning import discover, plan
from kcodec.spark.read import read_split

root, report = sys.argv[1], sys.argv[2]
opts = ReadOptions(root, on_corrupt="skip", corrupt_report_path=report)
cols = [(c, True) for c in RECORD_COLUMNS]
stderr, sys.stderr = sys.stderr, open(os.devnull, "w")  # one line per listed region
rows = sum(rb.num_rows for split in plan(discover(root), opts) for rb in read_split(split, opts, cols))
sys.stderr = stderr
assert rows == 1, rows
"""
    + PEAK_LINE
)


def _segment(root: Path, bad: int) -> Path:
    d = root / "t-0"
    d.mkdir(parents=True)
    (d / "00000000000000000000.log").write_bytes(BAD_CRC * bad + V0_ENTRY)
    return root


def _report(report: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(report.glob("*.jsonl")) for line in f.read_text().splitlines()]


def test_the_regions_past_the_bound_are_counted_in_one_line(tmp_path: Path, capfd) -> None:
    from kcodec.spark.arrow import RECORD_COLUMNS
    from kcodec.spark.options import ReadOptions
    from kcodec.spark.planning import discover, plan
    from kcodec.spark.read import read_split

    bad = MAX_REPORTED + 7
    root, report = _segment(tmp_path / "logs", bad), tmp_path / "report"
    opts = ReadOptions(str(root), on_corrupt="skip", corrupt_report_path=str(report))
    cols = [(c, True) for c in RECORD_COLUMNS]
    (split,) = plan(discover(str(root)), opts)
    assert sum(rb.num_rows for rb in read_split(split, opts, cols)) == 1
    items = _report(report)
    assert len(items) == MAX_REPORTED + 1
    assert [i["position"] for i in items[:MAX_REPORTED]] == [k * len(V0_ENTRY) for k in range(MAX_REPORTED)]
    assert all(i["kind"] == "crc" and i["bytes"] == len(V0_ENTRY) for i in items[:MAX_REPORTED])
    more = items[-1]
    assert more["kind"] == MORE_KIND and more["regions"] == 7 and more["bytes"] == 7 * len(V0_ENTRY)
    assert more["position"] == MAX_REPORTED * len(V0_ENTRY)
    assert more["error"].startswith(f"and 7 more skipped region(s) from byte {more['position']} on")
    err = capfd.readouterr().err.splitlines()
    assert len(err) == MAX_REPORTED + 1 and err[-1].endswith("(238 bytes, 0 record(s)), not listed")
    assert MAX_KEPT_RANGES >= MAX_REPORTED  # the reader under the split lists no fewer


def test_a_segment_of_damaged_entries_is_skipped_in_bounded_memory(tmp_path: Path) -> None:
    bad = 150_000  # 195 MiB peak RSS when every region was listed (300 000: 297 MiB)
    root, report = _segment(tmp_path / "logs", bad), tmp_path / "report"
    done, peak = python_peak_rss_mib(READ, [str(root), str(report)])
    assert done.returncode == 0, done.stderr
    items = _report(report)
    assert len(items) == MAX_REPORTED + 1 and items[-1]["regions"] == bad - MAX_REPORTED
    assert peak < 130, f"peak RSS {peak:.0f} MiB"
