"""Shared fixtures for kcodec's tests, and the markers the suite's slices select by (docs/layout.md):
``spark`` for everything under tests/spark/ and tests that need pyspark, ``subprocess`` for tests that run
another process (the CLI, mypy, a virtualenv build, a Spark cluster); tests/helpers/markers.py reads
which from the tests' source."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from tests.helpers.markers import kinds_of_item

    for item in items:
        for kind in kinds_of_item(item, TESTS):
            item.add_marker(kind)
    # the slow modules (a wheel build, a Spark cluster) first: under pytest-xdist they start while the
    # other workers take the rest, instead of running alone at the end (a stable sort keeps modules whole)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


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
