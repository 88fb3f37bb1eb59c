"""One rule for every command: an input FILE that is missing or a
directory is bad usage (exit 2, "no such file" / "is a directory"; dump and verify read a directory's
segments); a missing optional dependency is
one line with the pip command, exit 3; no Java gives an install hint before Spark fails; and tables
fit the terminal. Through the installed entry point where the process matters (a module made
unimportable, no Java, a terminal); in-process (tests/helpers/in_process.py) for the usage errors and SVGs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.in_process import kcodec_in_process
from tests.helpers.terminal import read_terminal

KCODEC = Path(sys.executable).with_name("kcodec")
LOG = "00000000000000000000.log"

FILE_COMMANDS = {
    "dump": ("dump", "{}"),
    "verify": ("verify", "{}"),
    "convert": ("convert", "{}", "out.log", "--magic", "2"),
    "index": ("index", "{}"),
    "inspect": ("inspect", "{}"),
    "write": ("write", "out.log", "-i", "{}"),
}


def kcodec(*argv, cwd: Path, env: dict | None = None, program=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*(program or [str(KCODEC)]), *map(str, argv)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("command", FILE_COMMANDS)
def test_missing_file_and_directory_are_usage_errors(tmp_path, command):
    # dump and verify read a partition directory's segments: one without any is bad usage
    directory = "no segments in this directory" if command in ("dump", "verify") else "is a directory"
    for given, what in ((tmp_path / LOG, "no such file"), (tmp_path, directory)):
        argv = [a.format(given) for a in FILE_COMMANDS[command]]
        done = kcodec_in_process(*argv, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and f"{given}: {what}" in done.stderr, done.stderr


def without(*modules: str) -> list[str]:
    """A python running kcodec's main with ``modules`` made unimportable."""
    hide = "".join(f"sys.modules[{m!r}] = None; " for m in modules)
    return [sys.executable, "-c", f"import sys; {hide}from kcodec.cli import main; sys.exit(main(sys.argv[1:]))"]


@pytest.mark.parametrize(
    "argv, module, extra",
    [
        (("fuzz", "--iterations", "1"), "hypothesis", "fuzz"),
        (("pipeline", ".", "out"), "pyspark", "spark"),
        (("pipeline", ".", "out"), "pyarrow", "spark"),
        (("bench", "--quick", "--only", "aiokafka"), "aiokafka", "bench"),
        (("write", "--from-table", "kafka.records", "--catalog", "sqlite:///c.db", "out"), "pyiceberg", "iceberg"),
        (("write", "--from-table", "records", "out"), "pyarrow", "arrow"),
    ],
)
def test_missing_extra_is_one_line_with_the_pip_command(tmp_path, argv, module, extra):
    done = kcodec(*argv, cwd=tmp_path, program=without(module))
    assert done.returncode == 3, done.stderr
    assert done.stderr == f"kcodec {argv[0]}: needs {module} (the {extra} extra): pip install 'kcodec[{extra}]'\n"
    assert done.stdout == ""


@pytest.mark.parametrize("java_home", [None, "/nonexistent/jdk"])
def test_no_java_gives_an_install_hint(tmp_path, java_home):
    pytest.importorskip("pyspark")
    bin_dir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "PYSPARK_GATEWAY_PORT")}
    env["PATH"] = str(bin_dir)  # this venv's scripts only: no java
    if java_home:
        env["JAVA_HOME"] = java_home
    samples = Path(__file__).parents[2] / "samples" / "data"
    done = kcodec("pipeline", samples, tmp_path / "out", cwd=tmp_path, env=env)
    assert done.returncode == 3, done.stderr
    assert done.stderr.count("\n") == 1 and "Java 17" in done.stderr and "JAVA_GATEWAY_EXITED" not in done.stderr
    assert (java_home or "no java on PATH") in done.stderr


def on_terminal(*argv, cwd: Path, columns: int) -> str:
    """kcodec's stdout on a pseudo-terminal COLUMNS wide."""
    master, slave = os.openpty()
    env = {**os.environ, "COLUMNS": str(columns)}
    proc = subprocess.Popen([str(KCODEC), *argv], cwd=cwd, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    shown = read_terminal(master)
    assert proc.wait(timeout=60) == 0
    return shown.decode().replace("\r\n", "\n")


@pytest.mark.parametrize("columns", [60, 80, 132])
def test_layout_fits_the_terminal(tmp_path, columns):
    shown = on_terminal("layout", "record_batch", "--version", "2", cwd=tmp_path, columns=columns)
    assert "crc" in shown and "partition_leader_epoch" in shown
    assert max(map(len, shown.splitlines())) <= columns
    piped = kcodec("layout", "record_batch", "--version", "2", cwd=tmp_path).stdout  # not a terminal: whole rows
    assert max(map(len, piped.splitlines())) > 132
    if columns >= 100:  # notes and doc wrapped under each row: nothing cut, every word kept
        assert "…" not in shown
        headings = {"notes", "doc"}  # the two columns that moved under the rows
        assert {w.rstrip(";") for w in piped.split()} - headings <= {w.rstrip(";") for w in shown.split()}


def test_svg_subtitle_clears_the_title(tmp_path):
    """The title is bold and its width is only estimated: the subtitle goes on its own line, for every
    entity (legacy_message v1's ran into its title), and the drawing renders."""
    import re

    resvg_py = pytest.importorskip("resvg_py")
    for entity, version in (("legacy_message", 1), ("record_batch", 2), ("record", 2)):
        out = tmp_path / f"{entity}.svg"
        assert kcodec_in_process("layout", entity, "--version", version, "--svg", out, cwd=tmp_path).returncode == 0
        texts = re.findall(r'<text x="([\d.]+)" y="([\d.]+)" font-size="([\d.]+)"', out.read_text())
        (x1, y1, size1), (x2, y2, size2) = [(float(a), float(b), float(c)) for a, b, c in texts[:2]]
        assert y2 - y1 >= (size1 + size2) / 2  # two lines, not one
        assert bytes(resvg_py.svg_to_bytes(svg_path=str(out)))[:8] == b"\x89PNG\r\n\x1a\n"


def test_generate_runs_when_the_generated_package_no_longer_imports() -> None:
    """A runtime that moved on refuses the old generated code ("run `kcodec generate`"): generate itself
    must then still find the package's folder and check it, without importing it."""
    code = (
        "import kcodec.runtime as r\n"
        "r.RUNTIME_API += 1\n"  # every generated module now refuses to import
        "from kcodec.cli import main\n"
        "raise SystemExit(main(['generate', '--check']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "is fresh" in proc.stdout
