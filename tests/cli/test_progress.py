"""Long commands draw a progress bar (tqdm: the progress extra) when stderr is a terminal, and print
nothing extra in a pipe. The bar is tested in a pseudo-terminal through the installed entry point;
KCODEC_PROGRESS_DELAY=0 shows it at once instead of after a second of work."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.terminal import read_terminal

pytest.importorskip("tqdm")

KCODEC = Path(sys.executable).with_name("kcodec")
LOG = "00000000000000000000.log"


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(KCODEC_PROGRESS_DELAY="0", COLUMNS="100", **extra)
    return env


def on_terminal(*argv, cwd: Path, env: dict | None = None, stdout_too=False, program=(str(KCODEC),)):
    """Run kcodec with stderr on a pseudo-terminal (stdout in a file, or on the terminal too); its
    status and what the terminal showed."""
    master, slave = os.openpty()
    with open(cwd / "stdout.txt", "wb") as out:
        proc = subprocess.Popen(
            [*program, *map(str, argv)],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=slave if stdout_too else out,
            stderr=slave,
            env=env or _env(),
        )
    os.close(slave)
    shown = read_terminal(master)
    return proc.wait(timeout=120), shown.decode("utf-8", "replace")


def in_pipe(*argv, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(KCODEC), *map(str, argv)], cwd=cwd, capture_output=True, text=True, env=_env(), timeout=120
    )


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("progress")
    rows = [{"key": str(i), "value": "v" * 200, "timestamp": i} for i in range(3000)]
    (d / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = in_pipe("write", LOG, "-i", "in.jsonl", "--batch-size", "10", cwd=d)
    assert done.returncode == 0, done.stderr
    return d


COMMANDS = {
    "dump": ("dump", LOG, "--deep-iteration"),
    "verify": ("verify", LOG),
    "convert": ("convert", LOG, "out.log", "--magic", "1"),
    "write": ("write", "written.log", "-i", "in.jsonl"),
    "index": ("index", LOG),
}


@pytest.mark.parametrize("command", COMMANDS)
def test_bar_on_a_terminal(work, command):
    code, shown = on_terminal(*COMMANDS[command], cwd=work)
    assert code == 0, shown
    assert "%|" in shown and "B/s" in shown  # tqdm's bar: percentage, bar, rate
    assert "<" in shown  # elapsed<remaining: the ETA


@pytest.mark.parametrize("command", COMMANDS)
def test_no_bar_in_a_pipe(work, command):
    done = in_pipe(*COMMANDS[command], cwd=work)
    assert done.returncode == 0 and done.stderr == ""


def test_no_bar_in_ci(work):
    code, shown = on_terminal("verify", LOG, cwd=work, env=_env(CI="true"))
    assert code == 0 and "%|" not in shown


def test_fuzz_bar_counts_iterations(work):
    pytest.importorskip("hypothesis")
    code, shown = on_terminal("fuzz", "--entity", "record", "--time", "1.5", "--seed", "1", cwd=work)
    assert code in (0, 1), shown
    assert "it/s" in shown and "decoded" in shown


def test_dump_to_a_terminal_draws_no_bar_over_its_lines(work):
    """The lines themselves scroll: a bar would be torn between them."""
    code, shown = on_terminal("dump", LOG, cwd=work, stdout_too=True)
    assert code == 0 and "baseOffset: 0" in shown and "%|" not in shown


def test_no_bar_without_tqdm(work):
    """tqdm is optional (the progress extra): without it the command runs as in a pipe."""
    hide = "import sys; sys.modules['tqdm'] = None; from kcodec.cli import main; sys.exit(main(sys.argv[1:]))"
    code, shown = on_terminal("verify", LOG, cwd=work, program=(sys.executable, "-c", hide))
    assert code == 0 and shown == ""


SLOW_SPARK_JOB = """
import time
from kcodec.commands.progress import SparkStages
from kcodec.spark.session import local_session

spark = local_session("local[2]", log_level="off")
with SparkStages(0.2):
    spark.sparkContext.parallelize(range(6), 6).map(lambda x: time.sleep(1) or x).count()
spark.stop()
"""


def test_spark_stages_bar(tmp_path):
    """kcodec pipeline's bar: the tasks of Spark's running stages, from its status tracker."""
    pytest.importorskip("pyspark")
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java")
    code, shown = on_terminal(cwd=tmp_path, program=(sys.executable, "-c", SLOW_SPARK_JOB))
    assert code == 0, shown
    assert "stage 0:" in shown and "/6 [" in shown and "running" in shown
    assert "Setting default log level" not in shown  # kcodec's log4j settings set the gateway's logger


def test_spark_bar_outlives_a_context_that_is_still_starting(monkeypatch):
    """While Spark starts, its SparkContext exists before its JVM side (``_jsc``): the watcher looks again
    instead of ending, and draws the stage's bar once the tracker answers."""
    pyspark = pytest.importorskip("pyspark")
    import threading

    from kcodec.commands import progress

    drawn: list[tuple] = []
    answered = threading.Event()

    class Bar:
        def __init__(self, total, *, unit, desc):
            drawn.append((total, unit, desc))

        def to(self, done):
            answered.set()

        def note(self, text):
            pass

        def close(self):
            pass

    class Stage:
        stageId, numTasks, numCompletedTasks, numActiveTasks = 0, 6, 2, 1

    class Tracker:
        def getActiveStageIds(self):
            return [0]

        def getStageInfo(self, stage_id):
            return Stage()

    class StartingContext:
        calls = 0

        def statusTracker(self):
            StartingContext.calls += 1
            if StartingContext.calls <= 3:  # as SparkContext before its gateway is up
                raise AttributeError("'SparkContext' object has no attribute '_jsc'")
            return Tracker()

    monkeypatch.setattr(progress, "_wanted", lambda: True)
    monkeypatch.setattr(progress, "Progress", Bar)
    monkeypatch.setattr(pyspark.SparkContext, "_active_spark_context", StartingContext())
    with progress.SparkStages(0.01):
        assert answered.wait(30), "the watcher ended while Spark was starting"
    assert drawn[0] == (6, "task", "stage 0") and StartingContext.calls > 3
