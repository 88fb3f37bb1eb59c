"""`kcodec dump` of a segment whose compressed payload is damaged, as kafka-dump-log reads it: a shallow dump
prints every header the size field frames (``isvalid: false`` where the CRC fails) and goes on to the end of
the file; records are decoded only under deep iteration, after the damaged batch's header; ``--skip-corrupt``
never hides that header."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.records.encode import encode_batch
from kcodec.records.framing import V2_OVERHEAD

NAME = "00000000000000000000.log"


def _records(first: int, n: int, magic: int) -> list[dict]:
    timestamp = -1 if magic == 0 else 1_700_000_000_000  # v0 has none
    return [
        {"offset": first + i, "key": b"k%d" % i, "value": b"value %d " % i * 20, "timestamp": timestamp}
        for i in range(n)
    ]


def _segment(magic: int) -> tuple[bytes, int, int]:
    """Three batches (the middle one gzip); (the log, the middle batch's position, its size)."""
    first = encode_batch(_records(0, 3, magic), magic=magic, base_offset=0)
    middle = encode_batch(_records(3, 40, magic), magic=magic, compression="gzip", base_offset=3)
    last = encode_batch(_records(43, 2, magic), magic=magic, base_offset=43)
    return first + middle + last, len(first), len(middle)


def _damaged(magic: int) -> tuple[bytes, bytes, int, int]:
    data, at, size = _segment(magic)
    payload = at + (V2_OVERHEAD if magic == 2 else size // 3)  # inside the compressed stream
    damaged = bytearray(data)
    damaged[payload + 20 : payload + 24] = b"\xde\xad\xbe\xef"
    return data, bytes(damaged), at, size


def _dump(path: Path, *extra: str) -> tuple[int, list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["dump", str(path), *extra])
    return code, out.getvalue().splitlines(), err.getvalue()


@pytest.fixture(params=[2, 1, 0], ids=["v2", "v1", "v0"])
def logs(request, tmp_path):
    good, damaged, at, size = _damaged(request.param)
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / NAME).write_bytes(good)
    (tmp_path / NAME).write_bytes(damaged)
    return tmp_path / "good" / NAME, tmp_path / NAME, at, size


@pytest.mark.parametrize("extra", [(), ("--skip-corrupt",)])
def test_shallow_dump_prints_every_header_and_goes_on(logs, extra):
    good, damaged, at, _ = logs
    _, expected, _ = _dump(good)
    code, lines, err = _dump(damaged, *extra)
    assert (code, err) == (0, "")
    header = next(i for i, line in enumerate(expected) if f" position: {at} " in line)
    # what kafka-dump-log prints: the same header, its stored CRC, isvalid false; then the batches after it
    assert expected[header].endswith("isvalid: true")
    expected[header] = expected[header][: -len("true")] + "false"
    assert lines[1:] == expected[1:]


def test_deep_dump_shows_the_header_then_stops_at_the_damage(logs):
    _, damaged, at, _ = logs
    code, lines, err = _dump(damaged, "--deep-iteration")
    assert code == 3
    assert f" position: {at} " in lines[-1] and lines[-1].endswith("isvalid: false")
    assert err.count("\n") == 1 and "--skip-corrupt reads on" in err


def test_deep_dump_with_skip_corrupt_keeps_the_header_and_reads_on(logs):
    _, damaged, at, size = logs
    code, lines, err = _dump(damaged, "--deep-iteration", "--skip-corrupt")
    assert code == 1
    header = next(i for i, line in enumerate(lines) if f" position: {at} " in line)
    assert lines[header].endswith("isvalid: false")
    assert lines[header + 1].startswith(f"Skipped {size} corrupt bytes at position {at}..{at + size}: ")
    assert lines[-1].startswith("| offset: 44 ")  # the batch after it, with its records
    assert f"skipped 1 damaged range(s), {size} bytes" in err
