"""The Spark tests' shared pieces: one local SparkSession per pytest process
(127.0.0.1 only, no UI, two cores, two shuffle partitions), and helpers that
compute with kcodec's plain Python reader what Spark should return."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "data"
VECTORS = REPO / "tests" / "vectors" / "public"


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java")
    from kcodec.spark.session import local_session

    session = local_session(
        "local[2]",
        "kcodec-tests",
        conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.driver.memory": "1g",
        },
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def samples() -> Path:
    """samples/data as committed (tests never write into it)."""
    assert SAMPLES.is_dir(), "samples/data is missing: python samples/make_samples.py"
    return SAMPLES
