"""The Spark package without Spark running: importing it changes nothing in pyspark (``register`` does),
and the docs' Spark page lists exactly the options of kcodec.spark.options.OPTIONS. (Its import cycles and
underscore names are pinned with every package's in tests/codegen/test_layering.py.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.helpers.docs import section


def test_importing_the_package_leaves_pyspark_alone():
    """``import kcodec.spark`` after pyspark patches nothing: ``register(spark)`` installs the save modes."""
    pytest.importorskip("pyspark")
    code = (
        "from pyspark.sql.readwriter import DataFrameWriter; save = DataFrameWriter.save; "
        "import kcodec.spark, kcodec.spark.source, kcodec.spark.savemode, pyspark_kafka_segments; "
        "assert DataFrameWriter.save is save, DataFrameWriter.save; "
        "assert not getattr(DataFrameWriter.save, '_kcodec_save_modes', False)"
    )
    # without the start-up hook (kcodec-spark.pth), which installs them at PySpark's import on purpose
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "KCODEC_SPARK_HOOKS": "0"})


# ----------------------------------------------------------------------------- the options docs/spark.md lists


def _spark_page() -> str:
    return section("spark.md", "Spark")


def _named(text: str) -> set[str]:
    return {n for n in re.findall(r"`([^`]+)`", text) if "*" not in n}


def _documented_option_names() -> set[str]:
    """The names the Spark page (docs/spark.md) gives as options: the first column of its two tables of Spark's
    options, and its lists of kcodec's own read and write options (values in parentheses left out)."""
    text = _spark_page()
    names: set[str] = set()
    for header in ("| Spark Kafka source option |", "| Spark Kafka sink option |"):
        table = text[text.index(header) :].split("\n\n", 1)[0]
        names |= {n for row in table.splitlines()[2:] for n in _named(row.split("|")[1])}
    for lead, end in (("kcodec's own read options where Spark has none:", ";"), ("kcodec's own write options:", ". ")):
        listing = re.sub(r"\([^)]*\)", "", text[text.index(lead) + len(lead) :])
        names |= _named(listing[: listing.index(end)])
    return names


def test_the_docs_list_exactly_the_option_table():
    from kcodec.spark.options import OPTIONS

    table = {n for o in OPTIONS if o.documented for n in (o.name, *o.aliases)}
    assert _documented_option_names() == table
