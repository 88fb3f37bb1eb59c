"""The documentation site (mkdocs.yml) builds with ``--strict``: a broken link or anchor, a page missing from
the nav or an API reference that does not render fails ``make test``, as ``make docs`` would."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

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
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    assert "read_batches" in api and "read_arrow" in api and "KcodecError" in api
    spark = (tmp_path / "site" / "api-spark" / "index.html").read_text(encoding="utf-8")
    assert "local_session" in spark and "OPTIONS" in spark


def test_the_readme_links_every_page_and_each_link_exists():
    """The README's Documentation section names every page of docs/ with a relative link a code host follows."""
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)\)", page("README.md")))
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")} - {"docs/index.md"}
    assert linked == pages
