"""The code stays typed (issues #10, #21): mypy, configured in pyproject.toml, reports nothing on
codegen/ and src/kcodec/, and ``make lint`` (so ``make test`` and CI) runs it. The
places where a None would be a bug now say so with a typed error instead of an AttributeError."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kcodec.codegen.schema import load_schemas, resolve
from kcodec.errors import EncodeError, SchemaError
from kcodec.records.model import Record, TimestampType
from kcodec.records.values import legacy_entries

ROOT = Path(__file__).resolve().parents[2]


CHECKED_BY_MAKE = "KCODEC_CHECKED_BY_MAKE"  # set by `make test` after its lint (mypy) and generate --check


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is in the test extra")
@pytest.mark.skipif(bool(os.environ.get(CHECKED_BY_MAKE)), reason="make test's typecheck step ran mypy just before")
def test_mypy_reports_no_errors(tmp_path):
    # no arguments: [tool.mypy] in pyproject.toml lists the files, as `make typecheck` runs it
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("Success: no issues found"), proc.stdout


def test_make_lint_runs_the_type_checker():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^lint:.*\btypecheck\b", makefile, re.M), "lint must depend on typecheck"
    recipe = re.search(r"^typecheck:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe and recipe.group(1).strip() == "$(BIN)/mypy"
    config = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^test = \[[^\]]*"mypy', config, re.M | re.S), "mypy belongs to the test extra"


def test_make_test_says_checked_only_after_the_checks_ran():
    """The tests that repeat a check of ``make test`` (mypy here, ``generate --check`` in test_codegen.py)
    skip under it: the variable is set on the suite's command alone, in a recipe that runs after lint and
    after ``generate --check``."""
    makefile = (ROOT / "Makefile").read_text()
    assert makefile.count(CHECKED_BY_MAKE) == 2  # the comment and the one command
    recipe = re.search(r"^test:(.*)\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe and re.search(r"\blint\b", recipe.group(1))
    lines = recipe.group(2).strip().splitlines()
    assert lines[0].strip() == "$(BIN)/kcodec generate --check"
    assert lines[-1].strip().startswith(f"{CHECKED_BY_MAKE}=1 $(BIN)/python -m pytest ")


def test_type_ignores_name_their_error_code():
    """No blanket ``# type: ignore``: each names the error it silences."""
    bare = []
    for top in ("codegen", "src/kcodec"):
        for path in (ROOT / top).rglob("*.py"):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if re.search(r"#\s*type:\s*ignore(?!\[)", line):
                    bare.append(f"{path.relative_to(ROOT)}:{n}")
    assert not bare


def test_legacy_entries_refuse_log_append_time_without_the_time():
    records = [Record(0, 5, TimestampType.CREATE_TIME, b"k", b"v", ())]
    with pytest.raises(EncodeError, match="needs log_append_time"):
        legacy_entries(records, magic=1, base_offset=0, ts_type=TimestampType.LOG_APPEND_TIME)
    (entry,) = legacy_entries(
        records, magic=1, base_offset=0, ts_type=TimestampType.LOG_APPEND_TIME, log_append_time=77
    )
    assert entry["message"]["timestamp"] == 77


def test_derived_facts_of_a_plain_field_are_schema_errors():
    schemas = load_schemas(ROOT / "schemas")
    batch = resolve(schemas, schemas.entities["record_batch"], 2)
    assert batch.field("batch_length").covers  # a derived length names where its range starts
    with pytest.raises(SchemaError, match="not a derived length or CRC"):
        _ = batch.field("base_offset").covers
    with pytest.raises(SchemaError, match="no fixed size"):
        _ = batch.field("records").fixed_size
