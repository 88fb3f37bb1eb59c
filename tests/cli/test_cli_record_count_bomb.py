"""``dump``, ``dump --json``, ``verify`` and ``inspect`` on a record-count bomb (tests/helpers/bombs.py) stay
within a bounded peak RSS, measured in a subprocess, and ``inspect`` ends with one line, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kcodec.records.chunked import CHUNKED_RECORD_COUNT
from tests.helpers.bombs import BOMB_MAX_RSS_MIB, BOMB_RECORDS, MAX_RSS_MIB, bomb, legacy_wrapper_bomb, peak_rss_mib


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
    assert peak < BOMB_MAX_RSS_MIB, f"peak RSS {peak:.0f} MiB"


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
    assert done.returncode == 0 and peak < BOMB_MAX_RSS_MIB, f"peak RSS {peak:.0f} MiB"


def test_verify_bounds_the_problems_of_a_bomb_whose_every_record_breaks_a_rule(tmp_path):
    """Every record but the first lies outside the batch's offset range (last offset delta 0): verify keeps
    the first few problems of the batch and says how many more, in bounded memory: 50 MiB here, 37 MiB for a
    thousand (it kept one per record, 276 MiB for a million records: 140 MiB more for these 600 k, 2 GiB for a
    bomb at the decompression cap)."""
    count = 600_000
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bomb(count, last_offset_delta=0))
    done, peak = peak_rss_mib(["verify", "--json", str(path)])
    assert done.returncode == 1, done.stderr
    assert peak < 120, f"peak RSS {peak:.0f} MiB"
    plain = subprocess.run(
        [sys.executable, "-c", "import sys\nfrom kcodec.cli import main\nsys.exit(main(sys.argv[1:]))", "verify"]
        + [str(path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = plain.stdout.splitlines()
    assert len(lines) < 20 and plain.returncode == 1
    assert lines[-2].endswith("more record problem(s) in this batch"), lines
    more = int(lines[-2].split(" and ")[-1].split()[0])
    listed = len(lines) - 2  # the problem lines before the summary and the verdict
    assert listed + more == count  # the count rule, then one per record but the first
    assert lines[-1].endswith(f": 1 batches, {count} records, {path.stat().st_size} bytes: {listed + 1} problem(s)")


def test_inspect_walks_the_first_inner_messages_of_a_huge_legacy_wrapper(tmp_path):
    """A v1 gzip wrapper of 50 k inner messages: inspect walks the first ones and marks the rest unread (it
    built a span tree of every one: 10 GiB for a million)."""
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(legacy_wrapper_bomb(50_000))
    done, peak = peak_rss_mib(["inspect", str(path)])
    assert "Traceback" not in done.stderr
    assert peak < MAX_RSS_MIB, f"peak RSS {peak:.0f} MiB"


@pytest.fixture(scope="module")
def wrapper_bomb_file(tmp_path_factory):
    """A v1 gzip wrapper of 200 k inner messages, each CRC wrong: one Record each took 352 MiB under verify and
    397 MiB under dump --json for 500 k (650 B and more each), 125 MiB more for these; read a chunk at a time
    they peak at 57 and 87 MiB (36 and 66 MiB for a thousand), under WRAPPER_MAX_RSS_MIB."""
    path = tmp_path_factory.mktemp("wrapper") / "00000000000000000000.log"
    path.write_bytes(legacy_wrapper_bomb(200_000))
    return path


WRAPPER_MAX_RSS_MIB = 130


def test_verify_walks_a_huge_legacy_wrapper_in_bounded_memory(wrapper_bomb_file):
    done, peak = peak_rss_mib(["verify", "--json", str(wrapper_bomb_file)])
    assert done.returncode == 1, done.stderr  # every inner CRC is wrong
    assert peak < WRAPPER_MAX_RSS_MIB, f"peak RSS {peak:.0f} MiB"


def test_dump_json_of_a_huge_legacy_wrapper_stays_bounded(wrapper_bomb_file):
    done, peak = peak_rss_mib(["dump", "--json", str(wrapper_bomb_file)])
    assert done.returncode == 0, done.stderr
    assert peak < WRAPPER_MAX_RSS_MIB, f"peak RSS {peak:.0f} MiB"
