"""Shared fixtures for kcodec's tests."""

from __future__ import annotations

import pytest


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
