"""Small things a user of the command line meets (issue 23, item 12): `kcodec fuzz` leaves no `.hypothesis/`
where it runs, `verify --json` names the damaged batch's offset as its text does, an unknown option points at
the subcommand's help, and the help lists what users run first."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kcodec.cli import COMMANDS, main
from kcodec.records.encode import encode_batch

KCODEC = Path(sys.executable).with_name("kcodec")


def _run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse's own exit
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_fuzz_leaves_nothing_in_the_working_directory(tmp_path):
    pytest.importorskip("hypothesis")
    work, cache = tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"} | {"XDG_CACHE_HOME": str(cache)}
    done = subprocess.run(
        [str(KCODEC), "fuzz", "--iterations", "3", "--quiet"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert list(work.iterdir()) == []
    assert (cache / "kcodec" / "hypothesis").is_dir()  # hypothesis's caches live with the user's caches


def test_verify_json_names_the_damaged_batch_offset(tmp_path):
    damaged = bytearray(encode_batch([{"key": b"k", "value": b"v" * 300}] * 5, compression="gzip", base_offset=3))
    damaged[80:84] = b"\xde\xad\xbe\xef"  # inside the compressed records: the batch is skipped whole
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(encode_batch([{"key": b"k", "value": b"v"}] * 3) + bytes(damaged))
    code, out, _ = _run("verify", path)
    assert code == 1 and "batch offset 3:" in out
    code, out, _ = _run("verify", path, "--json")
    (problem,) = json.loads(out)["problems"]
    assert code == 1 and problem["offset"] == 3 and problem["position"] == len(path.read_bytes()) - len(damaged)


@pytest.mark.parametrize("command", ["dump", "verify", "write"])
def test_an_unknown_option_points_at_the_subcommands_help(command):
    code, out, err = _run(command, "x.log", "--no-such-option")
    assert (code, out) == (2, "")
    assert err == f"kcodec {command}: error: unrecognized arguments: --no-such-option (see kcodec {command} --help)\n"


def test_help_lists_what_users_run_first():
    assert COMMANDS[:3] == ("dump", "verify", "inspect")
    assert COMMANDS.index("generate") > COMMANDS.index("pipeline")
    code, _, err = _run()
    listed = [line.split()[0] for line in err.splitlines() if line.startswith("    ") and line.split()]
    assert code == 2 and listed[0] == "dump" and listed.index("generate") > listed.index("metadata")
