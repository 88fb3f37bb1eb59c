"""``dump``, ``dump --json``, ``verify`` and ``inspect`` on a record-count bomb (tests/helpers/bombs.py) stay
within a bounded peak RSS, measured in a subprocess, and ``inspect`` ends with one line, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kcodec.records.chunked import CHUNKED_RECORD_COUNT
from tests.helpers.bombs import BOMB_RECORDS, MAX_RSS_MIB, bomb, peak_rss_mib


@pytest.fixture(scope="module")
def bomb_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("bomb") / "00000000000000000000.log"
    path.write_bytes(bomb(BOMB_RECORDS))
    return path


@pytest.mark.parametrize(
    "args", [["dump", "--json"], ["dump", "--print-data-log"], ["verify"]], ids=["json", "text", "verify"]
)
def test_the_bomb_streams_in_bounded_memory(bomb_file, args):
    done, peak = peak_rss_mib([*args, str(bomb_file)])
    assert done.returncode == 0, done.stderr
    assert peak < MAX_RSS_MIB, f"peak RSS {peak:.0f} MiB"


def test_dump_json_of_the_bomb_is_one_valid_line_per_batch(tmp_path):
    path = tmp_path / "bomb.log"
    path.write_bytes(bomb(CHUNKED_RECORD_COUNT + 5))
    done = subprocess.run(
        [sys.executable, "-c", "import sys\nfrom kcodec.cli import main\nsys.exit(main(sys.argv[1:]))", "dump"]
        + ["--json", str(path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    obj = json.loads(lines[0])
    assert obj["recordCount"] == len(obj["records"]) == CHUNKED_RECORD_COUNT + 5
    assert obj["records"][-1]["offset"] == CHUNKED_RECORD_COUNT + 4


def test_inspect_on_the_bomb_ends_in_one_line(bomb_file):
    done, peak = peak_rss_mib(["inspect", str(bomb_file)])
    assert "Traceback" not in done.stderr
    if done.returncode != 0:
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.returncode == 0 and peak < MAX_RSS_MIB, f"peak RSS {peak:.0f} MiB"
