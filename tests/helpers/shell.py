"""Shell completion as bash runs it: the words a completion script offers."""

from __future__ import annotations

import subprocess


def bash_complete(script: str, *words: str) -> list[str]:
    """What ``script`` (kcodec's bash completion) puts in COMPREPLY for the command line ``words``."""
    line = " ".join(words)
    program = (
        f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _kcodec; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    )
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()
