"""The documentation site (mkdocs.yml) builds with ``--strict``: a broken link or anchor, a page missing from
the nav or an API reference that does not render fails ``make test``, as ``make docs`` would."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import kcodec
from tests.helpers.docs import ROOT, page


def test_the_site_builds_strictly_without_a_warning(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is the docs extra: pip install -e '.[docs]'")
    pytest.importorskip("mkdocstrings", reason="mkdocstrings is the docs extra: pip install -e '.[docs]'")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert not re.search(r"^(WARNING|ERROR)\b", done.stderr, re.M), done.stderr
    # the API reference has an entry for every public name (kcodec.codec is generated code, outside src/) and
    # for every module of the Spark package
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    public = set(kcodec.__all__) - {"__version__", "codec"}
    assert {n for n in public if not re.search(rf'id="kcodec(\.\w+)*\.{n}"', api)} == set()
    spark = (tmp_path / "site" / "api-spark" / "index.html").read_text(encoding="utf-8")
    modules = {p.stem for p in (ROOT / "src" / "kcodec" / "spark").glob("*.py")} - {"__init__"}
    assert {m for m in modules if f'id="kcodec.spark.{m}"' not in spark} == set()
    assert 'id="kcodec.spark.session.local_session"' in spark


def test_the_readme_links_every_page_and_each_link_exists():
    """The README's Documentation section names every page of docs/ with a relative link a code host follows."""
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)\)", page("README.md")))
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")} - {"docs/index.md"}
    assert linked == pages
