"""Build a wheel, install it into a fresh virtualenv and use it from outside
the repository: the package must work without the source tree."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
# Not copied into the build tree: environments, VCS data and build leftovers.
_IGNORE = shutil.ignore_patterns(
    ".venv", "venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", "*.pyc"
)


def _clean_env() -> dict[str, str]:
    """The environment minus anything that would point Python back at the repository
    or at the test runner's own virtualenv."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "PYTHONSAFEPATH")
    }
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    return env


def _run(args: list, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=timeout
    )
    return proc


def _ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"{proc.args} exited {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """Build the wheel from a copy of the repository (so the build leaves no build/ or
    *.egg-info in the work tree), then install it into a new virtualenv."""
    root = tmp_path_factory.mktemp("install")
    assert (REPO / "pyproject.toml").is_file(), REPO
    src = root / "src"
    shutil.copytree(REPO, src, ignore=_IGNORE)
    dist = root / "dist"
    built = _ok(_run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", dist, src], cwd=root))
    wheels = list(dist.glob("kcodec-*.whl"))
    assert len(wheels) == 1, wheels
    venv = root / "venv"
    _ok(_run([sys.executable, "-m", "venv", venv], cwd=root, timeout=300))
    python = venv / "bin" / "python"
    _ok(_run([python, "-m", "pip", "install", wheels[0]], cwd=root, timeout=900))
    work = root / "elsewhere"  # a cwd outside the repository
    work.mkdir()
    return {
        "wheel": wheels[0],
        "venv": venv,
        "python": python,
        "kcodec": venv / "bin" / "kcodec",
        "cwd": work,
        "build_log": built.stdout + built.stderr,
    }


def test_wheel_contains_package_data(installed) -> None:
    with zipfile.ZipFile(installed["wheel"]) as wheel:
        names = set(wheel.namelist())
    schemas = sorted(p.relative_to(REPO / "schemas").as_posix() for p in (REPO / "schemas").rglob("*.yaml"))
    templates = sorted(p.name for p in (REPO / "codegen" / "templates").glob("*.j2"))
    assert schemas and templates
    for name in schemas:
        assert f"kcodec/schemas/{name}" in names
    for name in templates:
        assert f"kcodec/codegen/templates/{name}" in names
    csrc = sorted(p.name for p in (REPO / "csrc").iterdir())  # the kernel's hand-written C: generate reads its digest
    assert csrc
    for name in csrc:
        assert f"kcodec/csrc/{name}" in names
    for name in (
        "kcodec/__init__.py",
        "kcodec/cli.py",
        "kcodec/generated/__init__.py",
        "kcodec/generated/record_batch.py",
        "kcodec/codegen/schema/loader.py",
        "kcodec/runtime/__init__.py",
    ):
        assert name in names
    tops = {n.split("/")[0] for n in names}
    # one import package: no top-level codegen/, generated/ or schemas/; besides it only the hook by which
    # PySpark finds the kafka-segments data source (pyspark_* packages defining DefaultSource)
    assert "pyspark_kafka_segments/__init__.py" in names
    # and the start-up file that gives a session with no register() call kcodec's driver hooks
    assert "kcodec-spark.pth" in names
    assert "kcodec" in tops and all(
        t in ("kcodec", "pyspark_kafka_segments", "kcodec-spark.pth") or t.endswith(".dist-info") for t in tops
    ), tops


def test_installed_start_up_hook_waits_for_pyspark(installed) -> None:
    """The wheel's kcodec-spark.pth runs at start-up: a finder waits for PySpark's modules and has
    imported nothing of kcodec (nor pyspark, nor importlib.abc's tail of importlib.resources, tempfile ...:
    every Python process of the environment runs it) by itself."""
    code = (
        "import sys; print(any(type(f).__name__ == '_AfterImport' for f in sys.meta_path), "
        "any(m == 'kcodec' or m.startswith(('kcodec.', 'pyspark.', 'importlib.abc')) for m in sys.modules))"
    )
    proc = _ok(_run([installed["python"], "-c", code], cwd=installed["cwd"]))
    assert proc.stdout.split() == ["True", "False"]


def test_the_build_warns_of_no_missing_package(installed) -> None:
    """Every data folder is a package of its own: setuptools prints no page of BuildBackendWarning."""
    assert "is absent from the `packages` configuration" not in installed["build_log"]


def test_installed_layout(installed) -> None:
    proc = _ok(_run([installed["kcodec"], "layout", "record_batch", "--version", "2"], cwd=installed["cwd"]))
    assert proc.stdout.startswith("record_batch v2: overhead 61 bytes")
    assert "21..end" in proc.stdout


def test_installed_size(installed) -> None:
    proc = _ok(
        _run(
            [installed["kcodec"], "size", "--magic", "2", "--key-size", "3", "--value-size", "5", "--format", "json"],
            cwd=installed["cwd"],
        )
    )
    assert json.loads(proc.stdout) == {"magic": 2, "bytes": 76}
    proc = _ok(
        _run(
            [installed["kcodec"], "size", "--magic", "2", "--key-size", "3", "--value-size", "5"], cwd=installed["cwd"]
        )
    )
    assert proc.stdout.rstrip().endswith("76")


def test_installed_generate_check_is_fresh(installed) -> None:
    # the generator's dependencies are the `generate` extra: without it the command says how to get it
    proc = _run([installed["kcodec"], "generate", "--check"], cwd=installed["cwd"])
    assert proc.returncode == 3 and "pip install 'kcodec[generate]'" in proc.stderr, proc.stderr
    _ok(
        _run(
            [installed["python"], "-m", "pip", "install", f"{installed['wheel']}[generate]"],
            cwd=installed["cwd"],
            timeout=900,
        )
    )
    proc = _ok(_run([installed["kcodec"], "generate", "--check"], cwd=installed["cwd"]))
    assert "is fresh" in proc.stdout
    site = str(installed["venv"])
    assert site in proc.stdout  # it checked the installed package, not the repository


def test_installed_modules_resolve_in_venv(installed) -> None:
    code = (
        "import importlib.util, json, sys, sysconfig\n"
        "import kcodec, kcodec.codegen, kcodec.generated, kcodec.schemas, kcodec.runtime\n"
        "print(json.dumps({\n"
        "  'purelib': sysconfig.get_paths()['purelib'],\n"
        "  'files': [kcodec.__file__, kcodec.codegen.__file__, kcodec.generated.__file__,\n"
        "            kcodec.schemas.__file__, kcodec.runtime.__file__],\n"
        "  'codecs': len(kcodec.generated.CODECS),\n"
        "  'top_codegen': importlib.util.find_spec('codegen') is not None,\n"
        "  'top_generated': importlib.util.find_spec('generated') is not None,\n"
        "  'top_schemas': importlib.util.find_spec('schemas') is not None,\n"
        "}))\n"
    )
    proc = _ok(_run([installed["python"], "-c", code], cwd=installed["cwd"]))
    data = json.loads(proc.stdout)
    purelib = Path(data["purelib"]).resolve()
    assert purelib.is_relative_to(Path(installed["venv"]).resolve())
    for file in data["files"]:
        path = Path(file).resolve()
        assert path.is_relative_to(purelib), file
        assert not path.is_relative_to(REPO), file
    assert data["codecs"] > 0
    assert data["top_codegen"] is False
    assert data["top_generated"] is False
    assert data["top_schemas"] is False


def test_installed_imports_fail_for_top_level_names(installed) -> None:
    for name in ("codegen", "generated"):
        proc = _run([installed["python"], "-c", f"import {name}"], cwd=installed["cwd"])
        assert proc.returncode != 0
        assert "ModuleNotFoundError" in proc.stderr
