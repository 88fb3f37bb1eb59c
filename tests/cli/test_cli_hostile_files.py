"""Files that change or are not what they claim to be: a segment truncated while it is read (retention, a
follower truncating its log) ends the read at its new end instead of killing the process with SIGBUS; a
FIFO, a device or a sparse 3 GiB file where a log or an index is expected is refused or read in bounded
pieces, never waited on or loaded whole; resynchronising after damage costs work in proportion to the
damaged bytes, not to the file."""

from __future__ import annotations

import os
import random
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kcodec.errors import KcodecError, NotRegularFileError
from kcodec.log.index import read_offset_index, read_time_index, read_txn_index
from kcodec.records import resync
from kcodec.records.encode import encode_batch
from kcodec.records.reader import read_batches

TIMEOUT = 120  # a guard against a hang, not a measurement


def write_segment(path: Path, mib: int, records: int = 200) -> int:
    """A log of ``mib`` MiB of one v2 batch repeated with increasing base offsets (the base offset is not
    covered by the CRC, so one encoding serves); returns the size of one batch."""
    batch = bytearray(encode_batch([{"key": b"k%05d" % i, "value": b"v" * 200} for i in range(records)]))
    with open(path, "wb") as f:
        for i in range((mib << 20) // len(batch) + 1):
            struct.pack_into(">q", batch, 0, i * records)
            f.write(batch)
    return len(batch)


def kcodec_child(code: str, *args: str, stdin=None, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


# ---------------------------------------------------------------------------- a segment that shrinks

# The child pauses after decoding a few batches or runs of them (a hook on the decoders, which every reading
# path calls), says so on stdout, and waits for the test to truncate the file before it reads on.
_PAUSING_CHILD = """
    import sys
    import kcodec.records.decode as decode, kcodec.records.reader as reader, kcodec.records.skipping as skipping
    calls = [0]

    def pausing(real):
        def decode_pausing(*a, **kw):
            calls[0] += 1
            if calls[0] == 20:
                print("paused", flush=True)
                sys.stdin.readline()
            return real(*a, **kw)
        return decode_pausing

    reader.decode_entry = skipping.decode_entry = pausing(decode.decode_entry)
    reader.v2_run = pausing(decode.v2_run)  # runs of v2 data batches, decoded in one kernel call each
    decode.decode_entry_header = pausing(decode.decode_entry_header)  # a shallow dump reads headers only
    argv = sys.argv[1:]
    if argv[0] == "read_batches":
        print(sum(len(b.records) for b in reader.read_batches(argv[1], skip_corrupt=argv[2:] == ["skip"])))
        sys.exit(0)
    from kcodec.cli import main
    sys.exit(main(argv))
"""


def _read_while_truncated(tmp_path: Path, *argv: str, log: Path) -> subprocess.CompletedProcess:
    proc = kcodec_child(_PAUSING_CHILD, *argv, stdin=subprocess.PIPE, cwd=tmp_path)
    try:
        for _ in range(100):  # what dump prints before its first batch, then the pause
            line = proc.stdout.readline()
            if line.strip() == "paused" or not line:
                break
        assert line.strip() == "paused"
        with open(log, "r+b") as f:
            f.truncate(5 << 20)  # mid-batch, far behind the reader's position
        proc.stdin.write("go\n")
        proc.stdin.flush()
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
        proc.wait()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


@pytest.mark.parametrize(
    "argv",
    [
        ("dump",),
        ("dump", "--skip-corrupt"),
        ("verify",),
        ("convert", "--magic", "1"),
        ("read_batches",),
        ("read_batches", "skip"),
    ],
    ids=lambda a: "-".join(a),
)
def test_a_segment_truncated_while_it_is_read_ends_the_read_without_a_signal(tmp_path, argv):
    log = tmp_path / "00000000000000000000.log"
    write_segment(log, 24)
    extra = [str(tmp_path / "out.log")] if argv[0] == "convert" else []
    done = _read_while_truncated(tmp_path, *argv[:1], str(log), *extra, *argv[1:], log=log)
    assert done.returncode >= 0, f"killed by signal {-done.returncode}"  # SIGBUS through a mapping
    assert "Traceback" not in done.stderr
    if argv[0] in ("dump", "verify"):
        assert "shrank to 5242880 bytes while it was read" in done.stdout + done.stderr
        assert done.returncode in (0, 1)


def test_a_file_that_shrinks_is_read_up_to_its_new_end(tmp_path):
    log = tmp_path / "00000000000000000000.log"
    size = write_segment(log, 12)
    new_end = (6 << 20) + 10  # past the bytes the reader has read ahead
    reader = read_batches(log)
    batches = iter(reader)
    next(batches)
    with open(log, "r+b") as f:
        f.truncate(new_end)
    assert 1 + sum(1 for _ in batches) == new_end // size
    assert reader.shrank_to == new_end
    assert reader.partial_tail is not None and reader.partial_tail.size == new_end % size


# ---------------------------------------------------------------------------- files that are not segments


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "00000000000000000000.log"
    os.mkfifo(path)
    return path


@pytest.fixture
def sparse(tmp_path) -> Path:
    path = tmp_path / "00000000000000000000.log"
    with open(path, "wb") as f:
        f.truncate(3 << 30)  # no blocks on disk: 3 GiB of zeros
    return path


_PEAK_RSS = """
    import resource, subprocess, sys
    done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
    sys.stdout.write(f"{done.returncode}\\n{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\\n")
    sys.stdout.write(done.stderr)
"""


def run_measured(*argv: str) -> tuple[int, int, str]:
    """(exit status, peak RSS in KiB, stderr) of ``kcodec argv`` in a child of its own."""
    proc = kcodec_child(_PEAK_RSS, sys.executable, "-m", "kcodec.cli", *argv)
    out, err = proc.communicate(timeout=TIMEOUT)
    code, rss, stderr = out.split("\n", 2)
    return int(code), int(rss), stderr


COMMANDS = [("dump",), ("dump", "--skip-corrupt"), ("verify",), ("index", "--check")]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_fifo_or_a_device_is_refused_in_one_line(request, command, kind):
    path = request.getfixturevalue("fifo") if kind == "fifo" else Path("/dev/zero")
    code, _, err = run_measured(*command, str(path))  # a FIFO opened for reading would wait for a writer
    assert code == 2
    assert err.count("\n") == 1 and "not a regular file" in err


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_sparse_3_gib_log_streams(sparse, command):
    code, rss, err = run_measured(*command, str(sparse))
    assert code in (0, 1, 3), err
    assert "Traceback" not in err
    assert rss < 150 << 10, f"peak RSS {rss} KiB"


def test_library_readers_refuse_what_is_not_a_regular_file(fifo):
    for read in (lambda p: list(read_batches(p)), read_offset_index, read_time_index, read_txn_index):
        for path in (fifo, Path("/dev/zero")):
            with pytest.raises(NotRegularFileError):
                read(path)


@pytest.mark.parametrize("suffix", [".index", ".timeindex", ".txnindex"])
def test_a_sparse_3_gib_index_is_refused_after_a_bounded_read(tmp_path, suffix):
    log = tmp_path / "00000000000000000000.log"
    write_segment(log, 1)
    index = log.with_suffix(suffix)
    with open(index, "wb") as f:
        f.truncate(3 << 30)
    read = {".index": read_offset_index, ".timeindex": read_time_index, ".txnindex": read_txn_index}[suffix]
    with pytest.raises(KcodecError, match="larger than 10485760 bytes"):
        read(index)
    for command in (("dump",), ("index", "--check")):
        code, rss, err = run_measured(*command, str(index if command == ("dump",) else log))
        assert code in (1, 3), err
        assert "Traceback" not in err
        assert rss < 150 << 10, f"peak RSS {rss} KiB"


# ---------------------------------------------------------------------------- resynchronisation work


def _checksummed(monkeypatch) -> list[int]:
    sizes: list[int] = []
    real = resync._crc_holds

    def counting(*args):
        sizes.append(args[2])  # the candidate's size: the bytes its CRC covers
        return real(*args)

    monkeypatch.setattr(resync, "_crc_holds", counting)
    return sizes


@pytest.mark.parametrize("codec", ["none", "snappy", "gzip"])
def test_resync_work_grows_with_the_damaged_bytes_not_with_the_file(tmp_path, monkeypatch, codec):
    rng = random.Random(12)
    batch = encode_batch([{"value": b"x" * 300}] * 20, compression=codec)
    damage = bytes(rng.getrandbits(8) for _ in range(256 << 10))
    work = []
    for tail_batches in (2_000, 8_000):
        data = batch + damage + batch * tail_batches
        sizes = _checksummed(monkeypatch)
        found = resync.find_next_entry(data, len(batch) + 1)
        assert found == len(batch) + len(damage)
        work.append(sum(sizes))
    # candidates in random bytes claim sizes up to the end of the input; checksumming each of them cost
    # (damaged bytes x file size): gigabytes here
    assert work[0] <= len(damage) + len(batch), work
    assert work[1] <= len(damage) + len(batch), work


def test_resync_still_finds_every_codec_and_format_after_random_bytes():
    rng = random.Random(5)
    entries = [
        encode_batch([{"value": b"y" * 50}] * 3, compression=c) for c in ("none", "gzip", "snappy", "lz4", "zstd")
    ]
    entries += [encode_batch([{"key": b"k", "value": b"v" * 40}], magic=m) for m in (0, 1)]
    entries += [encode_batch([{"value": b"z" * 80}] * 2, magic=1, compression="gzip")]
    for entry in entries:
        noise = bytes(rng.getrandbits(8) for _ in range(4096))
        assert resync.find_next_entry(noise + entry, 0) == len(noise)
