"""The public API as a type checker sees it (issue 23): `kcodec.X` is no longer Any behind the lazy
`__getattr__`, so `mypy --strict` catches a misspelt keyword and a wrong type in a user's script, and
`read_arrow` / `read_internal_view` say what they return."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

USER_SCRIPT = """
from __future__ import annotations

import kcodec


def first_key(path: str) -> bytes | None:
    for batch in kcodec.read_batches(path, verify_crc=True, max_batch_size=1 << 20):
        for record in batch.records:
            return record.key
    return None


def located(path: str) -> list[tuple[str | None, int | None, int]]:
    return [(r.topic, r.partition, r.offset) for r in kcodec.Partition(path).iter_records(start_offset=3)]


table = kcodec.read_arrow("00000000000000000000.log", start_offset=3, end_offset=9)
"""

MISTAKES = """
import kcodec

kcodec.read_batches("00000000000000000000.log", verfy_crc=True)
offset: str = kcodec.read_batches("00000000000000000000.log").start
kcodec.encode_batch([], magic="2", compresion="gzip")
"""


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is in the test extra")
def test_mypy_strict_sees_the_public_api(tmp_path):
    (tmp_path / "script.py").write_text(USER_SCRIPT)
    (tmp_path / "mistakes.py").write_text(MISTAKES)
    # kcodec's sources as an installed package is read: its own modules are not the script's to check
    env = {**os.environ, "MYPYPATH": str(ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--cache-dir", str(tmp_path / "c")]
        + ["--no-error-summary", "script.py", "mistakes.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert not [e for e in errors if e.startswith("script.py")], proc.stdout
    mistakes = "\n".join(e for e in errors if e.startswith("mistakes.py"))
    assert 'Unexpected keyword argument "verfy_crc" for "read_batches"' in mistakes, proc.stdout
    assert 'Incompatible types in assignment (expression has type "int", variable has type "str")' in mistakes
    assert 'Unexpected keyword argument "compresion" for "encode_batch"' in mistakes
    assert "kcodec" not in proc.stdout.replace("mistakes.py", "").replace("script.py", "").split("error:")[0]
