"""A Spark standalone cluster on this machine for the tests: one master and one
worker, each a JVM started directly (``java -cp $SPARK_HOME/jars/*``) as a
child of the test, bound to 127.0.0.1 on ports the OS picks, and stopped (and
waited for) when the test ends."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers.short_jvm import SHORT_LIVED_JVM_OPTIONS

START_TIMEOUT_S = 90  # JVM start on a shared two-core machine
_MASTER_URL = re.compile(r"Starting Spark master at (spark://127\.0\.0\.1:\d+)")
_WORKER_REGISTERED = re.compile(r"Registering worker 127\.0\.0\.1:\d+")


def java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


def loopback_env() -> dict[str, str]:
    """The environment of every Spark process here: loopback only, this interpreter for Python workers."""
    env = dict(os.environ)
    env.update(
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOCAL_HOSTNAME="127.0.0.1",
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
    )
    # the worker builds executor commands from $SPARK_HOME/jars, as bin/load-spark-env.sh would set it up
    env["SPARK_HOME"] = _spark_home()
    env["SPARK_SCALA_VERSION"] = _scala_version()
    return env


@dataclass
class Cluster:
    url: str
    work_dir: Path
    logs: dict[str, Path]
    procs: list[subprocess.Popen] = field(default_factory=list)

    def apps(self) -> list[Path]:
        """The application directories the worker made: one per application whose executors it ran."""
        return sorted(p for p in self.work_dir.glob("app-*") if p.is_dir())

    def log(self, name: str) -> str:
        return self.logs[name].read_text(errors="replace")


def _spark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


def _scala_version() -> str:
    """2.13 from jars/scala-library-2.13.16.jar."""
    for name in os.listdir(os.path.join(_spark_home(), "jars")):
        m = re.fullmatch(r"scala-library-(\d+\.\d+)\..*\.jar", name)
        if m:
            return m.group(1)
    return "2.13"


def _spark_jars() -> str:
    return os.path.join(_spark_home(), "jars", "*")


def _start(name: str, main_class: str, args: list[str], log: Path) -> subprocess.Popen:
    # UI on a port the OS picks, bound to SPARK_LOCAL_IP (127.0.0.1); the master's REST server off
    cmd = [
        java(),
        "-Xmx256m",
        *SHORT_LIVED_JVM_OPTIONS,
        "-cp",
        _spark_jars(),
        "-Dspark.master.rest.enabled=false",
        "-Dspark.ui.enabled=false",
        main_class,
        *args,
    ]
    with open(log, "wb") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=loopback_env(), start_new_session=True)


def _wait_for(pattern: re.Pattern, log: Path, proc: subprocess.Popen, what: str) -> re.Match:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        m = pattern.search(log.read_text(errors="replace"))
        if m:
            return m
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.25)
    raise RuntimeError(f"{what} did not start in {START_TIMEOUT_S} s:\n{log.read_text(errors='replace')[-3000:]}")


def stop(cluster: Cluster) -> None:
    """Stop the worker, then the master (SIGTERM, then SIGKILL), and reap them."""
    for proc in reversed(cluster.procs):
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)  # the worker's executors are in its process group
            except ProcessLookupError:
                pass
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def start(tmp: Path, cores: int = 2, memory: str = "1g") -> Cluster:
    """A master and one worker with ``cores`` and ``memory``; the worker has registered when this returns."""
    tmp.mkdir(parents=True, exist_ok=True)
    logs = {"master": tmp / "master.log", "worker": tmp / "worker.log"}
    cluster = Cluster("", tmp / "work", logs)
    try:
        master = _start(
            "master",
            "org.apache.spark.deploy.master.Master",
            ["--host", "127.0.0.1", "--port", "0", "--webui-port", "0"],
            logs["master"],
        )
        cluster.procs.append(master)
        cluster.url = _wait_for(_MASTER_URL, logs["master"], master, "the Spark master").group(1)
        worker = _start(
            "worker",
            "org.apache.spark.deploy.worker.Worker",
            [
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--webui-port",
                "0",
                "--cores",
                str(cores),
                "--memory",
                memory,
                "--work-dir",
                str(cluster.work_dir),
                cluster.url,
            ],
            logs["worker"],
        )
        cluster.procs.append(worker)
        _wait_for(_WORKER_REGISTERED, logs["master"], worker, "the Spark worker")
    except BaseException:
        stop(cluster)
        raise
    return cluster
