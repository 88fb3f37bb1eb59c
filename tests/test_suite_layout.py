"""The suite's own layout: test modules import shared code from tests/helpers/ only (never another test
module, nor a loose module elsewhere under tests/), helpers import no test module, and the markers the
suite's slices select by are set where tests/conftest.py says."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(TESTS.parent).with_suffix("").parts)


def _imports(source: str, module: str) -> list[tuple[int, str]]:
    """(line, module) of every import under tests/ in ``source`` (nested imports too); ``from P import n``
    gives ``P.n`` where P is a package, so that ``from . import cluster`` names the module it imports."""
    package = module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = [*package[: len(package) - node.level + 1]] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            names = [alias.name for alias in node.names]
            if (TESTS.parent / target.replace(".", "/")).is_dir():
                found += [(node.lineno, f"{target}.{name}") for name in names]
            else:
                found.append((node.lineno, target))
    return [(line, name) for line, name in found if name.split(".")[0] == "tests"]


def _allowed(name: str, importer: str) -> bool:
    if name == "tests.helpers" or name.startswith("tests.helpers."):
        return True
    return name.split(".")[-1] == "conftest" and not importer.startswith("tests.helpers")


def layout_violations(source: str, module: str) -> list[str]:
    return [f"{module}:{line} imports {name}" for line, name in _imports(source, module) if not _allowed(name, module)]


def test_the_checker_sees_each_kind_of_import() -> None:
    bad = (
        "from tests.records.test_worked_examples import V2_BATCH\n"
        "from .test_kernel_record_writer import outcome\n"
        "from ..internal_logs import write_consumer_offsets\n"
        "from . import cluster\n"
        "def f():\n"
        "    import tests.tools.test_dump_parity\n"
    )
    assert len(layout_violations(bad, "tests.spark.test_x")) == 5
    good = (
        "from tests.helpers.batches import V2_BATCH\n"
        "from tests.helpers import spark_cluster\n"
        "from .conftest import SAMPLES\n"
        "from kcodec.generated import codec\n"
        "import pytest\n"
    )
    assert layout_violations(good, "tests.spark.test_x") == []


@pytest.mark.parametrize("path", sorted(TESTS.rglob("*.py")), ids=lambda p: p.relative_to(TESTS).as_posix())
def test_modules_import_shared_code_from_helpers_only(path: Path) -> None:
    assert layout_violations(path.read_text(encoding="utf-8"), _module_name(path)) == []


def test_loose_modules_live_in_helpers() -> None:
    """Under tests/ a module is a test module, a conftest, a package's __init__, or a helper."""
    loose = [
        p.relative_to(TESTS).as_posix()
        for p in TESTS.rglob("*.py")
        if not p.name.startswith("test_")
        and p.name not in ("conftest.py", "__init__.py")
        and p.parent.name != "helpers"
        and "kitchen_sink" not in p.parts
    ]
    assert loose == []


def test_markers_follow_folders_and_sources(request: pytest.FixtureRequest) -> None:
    from tests.helpers.markers import kinds_of

    assert kinds_of("tests.helpers.spark_cluster", "start") == {"subprocess"}  # Popen of a JVM
    assert kinds_of("tests.helpers.shell", "bash_complete") == {"subprocess"}
    assert kinds_of("tests.codegen.test_typecheck", "test_mypy_reports_no_errors") == {"subprocess"}
    assert "spark" in kinds_of("tests.cli.test_progress", "test_spark_stages_bar")  # importorskip("pyspark")
    assert kinds_of("tests.helpers.batches", "damaged") == frozenset()
    assert kinds_of("tests.test_suite_layout", "test_loose_modules_live_in_helpers") == frozenset()
    assert not {m.name for m in request.node.iter_markers()} & {"spark", "subprocess"}


def test_the_start_order_names_files_that_exist() -> None:
    """tests/helpers/schedule.py's list of the longest files: each is a test file here, named once (a
    renamed file would otherwise silently start last)."""
    from tests.helpers.schedule import SLOWEST_FILES

    assert len(set(SLOWEST_FILES)) == len(SLOWEST_FILES)
    assert [name for name in SLOWEST_FILES if not (TESTS / name).is_file()] == []
