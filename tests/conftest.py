"""Shared fixtures for kcodec's tests, and the markers the suite's slices select by (docs/layout.md):
``spark`` for everything under tests/spark/ and tests that need pyspark, ``subprocess`` for tests that run
another process (the CLI, mypy, a virtualenv build, a Spark cluster); tests/helpers/markers.py reads
which from the tests' source."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).parent


def pytest_sessionstart(session: pytest.Session) -> None:
    from tests.helpers.short_jvm import use_for_spark_submit

    use_for_spark_submit()  # before any test starts a JVM, in every xdist worker


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist's --dist loadfile would start files by their number of tests, not in the order below
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from tests.helpers.markers import kinds_of_item
    from tests.helpers.schedule import start_rank

    for item in items:
        for kind in kinds_of_item(item, TESTS):
            item.add_marker(kind)
    # the longest files first (tests/helpers/schedule.py), then the other slow ones: under pytest-xdist
    # they start while the other workers take the rest, instead of running alone at the end (a stable
    # sort keeps modules whole)
    items.sort(key=lambda item: (start_rank(item.path, TESTS), item.get_closest_marker("slow") is None))


@pytest.fixture(scope="session")
def schemas():
    """The IR of the packaged schemas (loaded once per process: tests/helpers/schemas.py)."""
    from tests.helpers.schemas import SCHEMAS

    return SCHEMAS


@pytest.fixture(scope="session")
def rendered(schemas) -> dict[str, str]:
    """Every file the generator prints for the packaged schemas (relative path -> text), rendered once."""
    from kcodec.codegen.render import render

    return render(schemas)


@pytest.fixture(scope="module")
def one_command_line():
    """``kcodec.cli.main``'s command line built once for the module that asks (``pytestmark =
    pytest.mark.usefixtures("one_command_line")``), not at every call: building every command's parser is
    most of a short in-process call. Only for modules that patch no command function (a parser built once
    keeps the functions it was built with)."""
    import functools

    import kcodec.cli

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kcodec.cli, "build_parser", functools.cache(kcodec.cli.build_parser))
        yield
