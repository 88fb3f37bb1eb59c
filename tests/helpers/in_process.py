"""``kcodec`` run in the test's own process (``kcodec.cli.main``), for the tests that check what a command
prints and its exit status rather than the process: no interpreter start and no imports per call."""

from __future__ import annotations

import contextlib
import io
import subprocess
from pathlib import Path


def kcodec_in_process(*argv, cwd: Path) -> subprocess.CompletedProcess:
    """``kcodec argv`` from ``cwd``: its exit status, stdout and stderr, as a process's would be."""
    from kcodec.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # --help, and argparse's usage errors
            code = exc.code
    return subprocess.CompletedProcess([str(a) for a in argv], code, out.getvalue(), err.getvalue())
