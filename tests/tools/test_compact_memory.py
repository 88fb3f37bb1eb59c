"""A dry run of ``kcodec compact`` keeps none of the cleaned bytes it counts: in a child process, its peak
RSS over a 32 MB partition grows by a few batches' worth, not by the log (before, a cleaned segment's bytes
were joined in memory whether or not anything wrote them). Not timed."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers.compact_logs import NOW, data, write_partition

VALUE = 4096
CHILD = """
import json, sys
from pathlib import Path
from kcodec.log.partition import Partition
from kcodec.tools.compact import CleanerConfig, clean_partition, plan_partition

def kib(name):
    for line in open("/proc/self/status"):
        if line.startswith(name + ":"):
            return int(line.split()[1])

plan = plan_partition(Partition(Path(sys.argv[1])), CleanerConfig(now_ms=int(sys.argv[2])))
before = kib("VmRSS")
result = clean_partition(plan)
print(json.dumps({"before": before, "peak": kib("VmHWM"), "after": result.bytes_after,
                  "rewritten": result.batches_rewritten}))
"""


def test_a_dry_run_keeps_no_cleaned_bytes(tmp_path):
    segments = []
    for s in range(16):  # segments of 2 MB: the reader maps one at a time, and RSS counts its pages
        batches = []
        for b in range(4):
            base = (s * 4 + b) * 128
            # half the keys come back in the next batch: every batch but the last loses records
            pairs = [(b"k%d" % ((base + i) // 2 + (i % 2) * 64), bytes([i]) * VALUE) for i in range(128)]
            batches.append(data(base, pairs))
        segments.append(batches)
    segments.append([data(8192, [(b"z", b"1")])])
    part = write_partition(tmp_path / "t-0", segments)
    log_bytes = sum(seg.size for seg in part.segments)
    assert log_bytes > 32 << 20
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(part.path), str(NOW)], capture_output=True, text=True, check=True
    )
    got = json.loads(proc.stdout)
    assert got["rewritten"] > 32 and got["after"] > 8 << 20
    grown = (got["peak"] - got["before"]) * 1024
    assert grown < 10 << 20, f"peak RSS grew {grown >> 20} MiB over a {log_bytes >> 20} MiB dry run"
