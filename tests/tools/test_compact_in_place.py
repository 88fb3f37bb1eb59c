"""kcodec compact --in-place is crash-safe: stopped after any step of Kafka's .cleaned -> .swap -> rename
sequence (in process, and by a real kill -9), the partition reads whole (every offset once, old or cleaned),
and the next run completes it; a second writer or a running broker's lock is refused."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import kcodec.log.swap as swap_module
from kcodec.log.lock import OutputLock, OutputLockedError
from kcodec.log.partition import Partition
from kcodec.records.decode import decode_entry
from kcodec.tools.compact import compact_in_place, compact_to, plan_partition
from tests.helpers.compact_logs import T0, config, data, records, write_partition


class _Crash(Exception):
    pass


def _partition(path):
    segs = [
        [data(0, [(b"a", b"1"), (b"b", b"1")])],
        [data(2, [(b"a", b"2"), (b"c", None)])],
        [data(4, [(b"b", b"2"), (b"d", b"1")])],
        [data(6, [(b"a", b"3"), (b"e", b"1")])],
        [data(8, [(b"z", b"")])],
    ]
    return write_partition(path, segs, [T0, T0 + 1, T0 + 2, T0 + 3, T0 + 4])


def _settings(part):
    return config(segment_bytes=2 * plan_partition(part, config()).segments[0].size)


def _readable(directory):
    """Every entry decodes with a valid CRC and offsets only go up."""
    last = -1
    for seg in Partition(directory).segments:
        for _, raw in seg.entries(strict=True):
            batch = decode_entry(raw, verify_crc=True)
            assert batch.base_offset > last
            last = batch.last_offset
    leftovers = [p.name for p in directory.iterdir() if p.name.endswith((".cleaned", ".swap", ".deleted"))]
    return leftovers


@pytest.fixture
def expected(tmp_path):
    part = _partition(tmp_path / "ref" / "t-0")
    compact_to(part, tmp_path / "ref-out", _settings(part))
    return records(tmp_path / "ref-out" / "t-0")


def _steps(tmp_path, monkeypatch) -> list[str]:
    seen: list[str] = []
    monkeypatch.setattr(swap_module, "_after_step", seen.append)
    part = _partition(tmp_path / "count" / "t-0")
    compact_in_place(part, _settings(part))
    monkeypatch.undo()
    return seen


def test_stopped_after_any_step_the_partition_reads_whole_and_the_next_run_completes(tmp_path, monkeypatch, expected):
    steps = _steps(tmp_path, monkeypatch)
    assert len(steps) > 10 and any("swapped in" in s for s in steps)
    original = records(_partition(tmp_path / "orig" / "t-0").path)
    for k in range(len(steps)):
        directory = tmp_path / f"k{k}" / "t-0"
        part = _partition(directory)
        count = iter(range(len(steps) + 1))

        def after(step, k=k, count=count):
            if next(count) == k:
                raise _Crash(step)

        monkeypatch.setattr(swap_module, "_after_step", after)
        with pytest.raises(_Crash):
            compact_in_place(part, _settings(part))
        monkeypatch.undo()
        # what a reader sees right after the crash: each offset at most once, each record an original one
        _readable(directory)
        assert set(records(directory)) <= set(original)
        compact_in_place(Partition(directory), _settings(part))  # recovers, then cleans
        assert _readable(directory) == []
        assert records(directory) == expected, steps[k]


@pytest.mark.parametrize("at", ["cleaned written", "00000000000000000000.log.cleaned to swap", "swapped in"])
def test_kill_9_during_in_place_then_the_command_completes(tmp_path, expected, at):
    directory = tmp_path / "t-0"
    part = _partition(directory)
    segment_bytes = _settings(part).segment_bytes
    script = (
        "import os, signal, sys\n"
        "import kcodec.log.swap as s\n"
        "from kcodec.log.partition import Partition\n"
        "from kcodec.tools.compact import compact_in_place\n"
        "from tests.helpers.compact_logs import config\n"
        f"def after(step):\n    if {at!r} in step: os.kill(os.getpid(), signal.SIGKILL)\n"
        "s._after_step = after\n"
        f"compact_in_place(Partition(sys.argv[1]), config(segment_bytes={segment_bytes}))\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run([sys.executable, "-c", script, str(directory)], cwd=root, capture_output=True, timeout=120)
    assert proc.returncode == -9, proc.stderr.decode()
    _readable(directory)
    cli = os.path.join(os.path.dirname(sys.executable), "kcodec")
    done = subprocess.run(
        [
            cli,
            "compact",
            str(directory),
            "--in-place",
            "--now",
            str(config().now_ms),
            "--segment-bytes",
            str(segment_bytes),
        ],  # fmt: skip
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert _readable(directory) == []
    assert records(directory) == expected


def test_a_second_writer_and_a_running_broker_are_refused(tmp_path):
    part = _partition(tmp_path / "t-0")
    with OutputLock.for_directory(tmp_path):  # what a broker holds on its log directory
        with pytest.raises(OutputLockedError, match="locked"):
            compact_in_place(part, config())
    with OutputLock.for_directory(tmp_path / "t-0"):  # another kcodec writer of the partition
        with pytest.raises(OutputLockedError):
            compact_in_place(part, config())
    before = records(tmp_path / "t-0")
    assert len(before) == 9
