"""The library as users expect it: read_batches with its keyword arguments spelled out, BatchReader
as a context manager, read_records and Partition.iter_records with a consumer's isolation levels,
kcodec.read_arrow at the top level (a one-line install hint without pyarrow), help(kcodec) on the
public API (the docs site renders the docstrings: tests/test_docs.py)."""

from __future__ import annotations

import inspect
import os
import pydoc
import subprocess
import sys
from pathlib import Path

import pytest

import kcodec
from kcodec import encode_batch, encode_control_batch

LOG = "00000000000000000000.log"


def txn_log() -> bytes:
    """Offsets 0-1 plain; 2-3 producer 7 committed (marker 4); 5-6 producer 8 aborted (marker 7);
    8 plain; 9 producer 9's transaction with no marker yet."""

    def data(offset, n, pid=-1):
        recs = [{"key": b"k", "value": b"v%d" % (offset + i)} for i in range(n)]
        extra = dict(producer_id=pid, producer_epoch=0, base_sequence=0, transactional=True) if pid >= 0 else {}
        return encode_batch(recs, base_offset=offset, **extra)

    return b"".join(
        [
            data(0, 2),
            data(2, 2, pid=7),
            encode_control_batch("commit", producer_id=7, producer_epoch=0, offset=4),
            data(5, 2, pid=8),
            encode_control_batch("abort", producer_id=8, producer_epoch=0, offset=7),
            data(8, 1),
            data(9, 1, pid=9),
        ]
    )


def test_read_batches_spells_out_its_keywords():
    params = inspect.signature(kcodec.read_batches).parameters
    assert not any(p.kind is p.VAR_KEYWORD for p in params.values())
    assert {
        "verify_crc",
        "strict",
        "max_decompressed_size",
        "max_batch_size",
        "start",
        "end",
        "skip_corrupt",
        "on_skip",
        "resync",
    } <= set(params)
    assert params["verify_crc"].default is True and params["start"].default == 0


def _open(path: Path) -> bool:
    """Whether this process holds ``path`` open (the reader reads files with pread on a descriptor)."""
    fds = Path("/proc/self/fd")
    return any(str(path) == os.path.realpath(fds / fd) for fd in os.listdir(fds))


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc")
def test_batch_reader_closes_its_file_on_leaving(tmp_path):
    path = tmp_path / LOG
    path.write_bytes(txn_log() * 50)
    with kcodec.read_batches(path) as reader:
        batches = iter(reader)  # an iteration left unfinished holds the file
        assert next(batches).base_offset == 0 and _open(path)
    assert not _open(path)
    assert list(batches) == []  # it ended there


@pytest.mark.parametrize("as_stream", [False, True])
def test_read_records_isolation_levels(tmp_path, as_stream):
    path = tmp_path / LOG
    path.write_bytes(txn_log())
    source = open(path, "rb") if as_stream else path
    try:
        committed = [r.offset for r in kcodec.read_records(source, isolation_level="read_committed")]
    finally:
        if as_stream:
            source.close()
    assert committed == [0, 1, 2, 3, 8]  # no markers, no aborted 5-6, not the open 9
    everything = [r.offset for r in kcodec.read_records(path)]
    assert everything == list(range(10))
    with pytest.raises(ValueError, match="read_committed"):
        list(kcodec.read_records(path, isolation_level="committed"))


def test_partition_iter_records_read_committed(tmp_path):
    part = tmp_path / "orders-0"
    part.mkdir()
    (part / LOG).write_bytes(txn_log())
    p = kcodec.Partition(part)
    assert [r.offset for r in p.iter_records(isolation_level="read_committed")] == [0, 1, 2, 3, 8, 9]
    assert [r.offset for r in p.iter_records()] == list(range(10))
    assert [r.offset for r in p.iter_records(start_offset=3, isolation_level="read_committed")] == [3, 8, 9]


def test_read_arrow_at_the_top_level(tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / LOG
    path.write_bytes(txn_log())
    table = kcodec.read_arrow(path)
    assert table.num_rows == 10  # every record, the two markers included
    assert "read_arrow" in kcodec.__all__


def test_read_arrow_without_pyarrow_says_how_to_install(tmp_path):
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "import kcodec\n"
        "try:\n    kcodec.read_arrow(b'')\n"
        "except ImportError as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "kcodec.read_arrow needs pyarrow: pip install 'kcodec[arrow]'"


def test_help_shows_the_public_api():
    text = pydoc.render_doc(kcodec, renderer=pydoc.plaintext)
    functions = text.split("\nFUNCTIONS\n")[1].split("\nVERSION\n")[0]
    names = {line.split("(")[0].strip() for line in functions.splitlines() if line[4:5].strip()}
    assert names <= set(kcodec.__all__)
    assert {"read_batches", "read_records", "read_arrow", "encode_batch"} <= names
    assert "_EXPORTS" not in text and "importlib" not in text
