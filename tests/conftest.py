"""Shared fixtures and helpers for kcodec's tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def schemas():
    """The IR of the packaged schemas."""
    import kcodec.schemas
    from kcodec.codegen import load_schemas

    return load_schemas(Path(kcodec.schemas.__path__[0]))
