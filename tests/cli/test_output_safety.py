"""Outputs never destroy inputs or each other (issue #12, data loss): overlapping input and output
refused, one writer per output, `index` named by an index file, offsets that only go up, interrupted
writes that leave nothing half-done, and dump | write keeping transactions as they were."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.errors import EncodeError
from kcodec.log.lock import OutputLock, OutputLockedError
from kcodec.log.names import segment_name
from kcodec.log.partition import Partition
from kcodec.log.writer import SegmentWriter, write_atomically
from kcodec.records.encode import encode_batch, encode_control_batch
from kcodec.records.reader import read_batches

SEG0 = segment_name(0, ".log")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def jsonl(path: Path, n: int, start: int = 0) -> Path:
    path.write_text(
        "".join(
            json.dumps({"key": f"k{i}", "value": "v" * 50, "timestamp": 1000 + i}) + "\n"
            for i in range(start, start + n)
        )
    )
    return path


def offsets(directory: Path) -> list[int]:
    return [r.offset for b in Partition(directory).iter_batches() for r in b.records]


def visible(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# ----------------------------------------------------------------------------- output overlapping input


def one_line_usage_error(code, err):
    assert code == 2 and err.count("\n") == 1 and "overlaps input" in err, err


def test_convert_verify_write_refuse_output_onto_input_even_through_a_symlink(tmp_path, capsys):
    seg = tmp_path / SEG0
    seg.write_bytes(encode_batch([{"value": b"x"}]))
    link = tmp_path / "link.log"
    link.symlink_to(seg)
    before = seg.read_bytes()
    one_line_usage_error(*run(capsys, "convert", seg, link, "--magic", "1")[::2])
    one_line_usage_error(*run(capsys, "verify", seg, "--recover", link)[::2])
    one_line_usage_error(*run(capsys, "verify", seg, "--recover", seg)[::2])
    src = jsonl(tmp_path / "in.jsonl", 3)
    one_line_usage_error(*run(capsys, "write", src, "-i", src)[::2])
    part = tmp_path / "orders-0"
    part.mkdir()
    inside = jsonl(part / "in.jsonl", 3)
    one_line_usage_error(*run(capsys, "write", part, "-i", inside)[::2])
    assert seg.read_bytes() == before and link.is_symlink()


def test_index_refuses_index_files_that_are_the_log(tmp_path, capsys):
    seg = tmp_path / SEG0
    seg.write_bytes(encode_batch([{"value": b"x"}]))
    (tmp_path / segment_name(0, ".index")).symlink_to(seg)
    one_line_usage_error(*run(capsys, "index", seg)[::2])
    assert read_batches(seg) is not None and len(list(read_batches(seg))) == 1


@pytest.mark.parametrize("dest", ["same", "inside", "parent"])
def test_pipeline_refuses_dest_overlapping_src_before_starting_spark(tmp_path, capsys, dest, monkeypatch):
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    import kcodec.spark.pipeline as pipeline

    monkeypatch.setattr(pipeline, "run_pipeline", lambda *a, **k: pytest.fail("Spark must not start"))
    src = tmp_path / "logs" / "orders-0"
    src.mkdir(parents=True)
    (src / SEG0).write_bytes(encode_batch([{"value": b"x"}]))
    target = {"same": src, "inside": src / "out", "parent": tmp_path / "logs"}[dest]
    one_line_usage_error(*run(capsys, "pipeline", src, target)[::2])
    one_line_usage_error(
        *run(capsys, "pipeline", str(tmp_path / "logs" / "orders-*"), tmp_path / "logs" / "orders-9")[::2]
    )
    assert (src / SEG0).is_file()


# ----------------------------------------------------------------------------- one writer per output


def test_second_writer_of_a_partition_or_a_file_fails_at_once(tmp_path):
    part = tmp_path / "orders-0"
    with SegmentWriter(part) as w:
        w.append(encode_batch([{"value": b"x"}]))
        with pytest.raises(OutputLockedError, match=str(part / ".lock")):
            SegmentWriter(part, base_offset=None)
    assert visible(part) == sorted([SEG0, segment_name(0, ".index"), segment_name(0, ".timeindex")])  # lock released
    out = tmp_path / "x.log"
    with OutputLock.for_file(out):
        with pytest.raises(OutputLockedError, match=str(out) + ".lock"):
            write_atomically(out, b"data")
    assert not out.exists()
    write_atomically(out, b"data")
    assert visible(tmp_path) == ["orders-0", "x.log"]


HOLD_LOCK = """
import sys, time
from kcodec.log.lock import OutputLock
OutputLock(sys.argv[1]).acquire()
print("locked", flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("target", ["dir", "file"])
def test_kcodec_write_fails_while_another_process_writes_the_same_output(tmp_path, target):
    part = tmp_path / "orders-0"
    part.mkdir()
    out = part if target == "dir" else tmp_path / SEG0
    lock = part / ".lock" if target == "dir" else tmp_path / (SEG0 + ".lock")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        src = jsonl(tmp_path / "in.jsonl", 5)
        cli = [sys.executable, "-m", "kcodec.cli", "write", str(out), "-i", str(src)]
        done = subprocess.run(cli, capture_output=True, text=True, timeout=120)
        assert done.returncode == 3 and done.stderr.count("\n") == 1 and str(lock) in done.stderr, done.stderr
        assert f"process {holder.pid}" in done.stderr
        assert not (part / SEG0).exists() and not (tmp_path / SEG0).exists()
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    done = subprocess.run(cli, capture_output=True, text=True, timeout=120)  # the holder is gone: it works
    assert done.returncode == 0, done.stderr
    assert len(list(read_batches(part / SEG0 if target == "dir" else out))) == 1


# ----------------------------------------------------------------------------- kcodec index on index files


def test_index_given_an_index_file_rebuilds_its_segment_and_a_lost_abort_drops_the_txnindex(tmp_path, capsys):
    seg = tmp_path / SEG0
    data = encode_batch(
        [{"value": b"a"}], base_offset=0, producer_id=7, producer_epoch=0, base_sequence=0, transactional=True
    )
    marker = encode_control_batch("abort", producer_id=7, producer_epoch=0, offset=1)
    seg.write_bytes(data + marker)
    assert run(capsys, "index", seg)[0] == 0
    kept = {s: (tmp_path / segment_name(0, s)).read_bytes() for s in (".index", ".timeindex", ".txnindex")}
    assert kept[".txnindex"]
    for s in (".index", ".timeindex", ".txnindex"):
        code, out, _ = run(capsys, "index", tmp_path / segment_name(0, s))
        assert code == 0 and str(seg) in out
        assert {s: (tmp_path / segment_name(0, s)).read_bytes() for s in kept} == kept
    code, _, err = run(capsys, "index", tmp_path / segment_name(5, ".timeindex"))
    assert code == 2 and "does not exist" in err and err.count("\n") == 1
    seg.write_bytes(data)  # the log lost its ABORT marker
    assert run(capsys, "index", tmp_path / segment_name(0, ".timeindex"))[0] == 0
    assert not (tmp_path / segment_name(0, ".txnindex")).exists()
    assert run(capsys, "index", seg, "--check")[0] == 0


# ----------------------------------------------------------------------------- offsets only go up


def test_write_into_a_partition_continues_after_its_last_offset_and_refuses_going_back(tmp_path, capsys):
    part = tmp_path / "orders-0"
    assert run(capsys, "write", part, "-i", jsonl(tmp_path / "a.jsonl", 5))[0] == 0
    assert run(capsys, "write", part, "-i", jsonl(tmp_path / "b.jsonl", 3))[0] == 0  # appends at 5
    assert offsets(part) == list(range(8))
    for base in (0, 7):
        code, _, err = run(capsys, "write", part, "-i", tmp_path / "b.jsonl", "--base-offset", base)
        assert code == 3 and "only go up" in err and err.count("\n") == 1
    assert offsets(part) == list(range(8))
    assert run(capsys, "write", part, "-i", tmp_path / "b.jsonl", "--base-offset", 20)[0] == 0
    assert offsets(part) == list(range(8)) + [20, 21, 22]


# ----------------------------------------------------------------------------- interrupted writes


def test_full_disk_mid_write_leaves_nothing_and_a_retry_works(tmp_path, capsys, monkeypatch):
    import kcodec.log.writer as writer

    part = tmp_path / "orders-0"
    src = jsonl(tmp_path / "in.jsonl", 40)
    real_seal = writer._OpenSegment.seal
    sealed = []

    def seal_then_fill_the_disk(self):
        if len(sealed) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        sealed.append(self.base_offset)
        return real_seal(self)

    monkeypatch.setattr(writer._OpenSegment, "seal", seal_then_fill_the_disk)
    code, _, err = run(capsys, "write", part, "-i", src, "--batch-size", 2, "--segment-bytes", 300)
    assert code == 3 and "No space left" in err and err.count("\n") == 1
    assert len(sealed) == 3 and visible(part) == []  # neither the 3 finished segments nor temporaries
    monkeypatch.setattr(writer._OpenSegment, "seal", real_seal)
    assert run(capsys, "write", part, "-i", src, "--batch-size", 2, "--segment-bytes", 300)[0] == 0
    assert offsets(part) == list(range(40))


def test_keyboard_interrupt_mid_write_leaves_nothing(tmp_path, monkeypatch):
    import kcodec.log.writer as writer

    part = tmp_path / "orders-0"
    real_write = writer._OpenSegment.write
    calls = []

    def write_then_interrupt(self, *a):
        calls.append(1)
        if len(calls) == 7:
            raise KeyboardInterrupt
        return real_write(self, *a)

    monkeypatch.setattr(writer._OpenSegment, "write", write_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        main(
            [
                "write",
                str(part),
                "-i",
                str(jsonl(tmp_path / "in.jsonl", 20)),
                "--batch-size",
                "2",
                "--segment-bytes",
                "300",
            ]
        )
    assert visible(part) == []


def test_killed_writer_leaves_no_segment_half_visible_and_a_rerun_succeeds(tmp_path):
    part = tmp_path / "orders-0"
    part.mkdir()
    cli = [sys.executable, "-m", "kcodec.cli", "write", str(part), "--batch-size", "1", "--segment-bytes", "200"]
    proc = subprocess.Popen(cli, stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = json.dumps({"value": "v" * 60, "timestamp": 1}) + "\n"
    for _ in range(3000):  # bounded (30 s at most): feed records until some segments are sealed
        proc.stdin.write(line * 5)
        proc.stdin.flush()
        if len(list(part.glob("*.log"))) >= 3 and list(part.glob("*.tmp")):
            break
        time.sleep(0.01)  # the writer's start-up (imports) must not have the whole input already piped
    else:
        pytest.fail("the writer sealed no segments")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    for log in part.glob("*.log"):  # what is visible as a segment is whole
        assert sum(1 for _ in read_batches(log, strict=True)) >= 1
    done = subprocess.run(cli, input=line * 3, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not list(part.glob("*.tmp")) and not (part / ".lock").exists()
    got = offsets(part)
    assert got == list(range(len(got)))


# ----------------------------------------------------------------------------- dump | write keeps transactions


def txn_log(path: Path) -> Path:
    entries = [
        encode_batch([{"value": b"plain"}], base_offset=0),
        encode_batch(
            [{"value": b"aborted"}],
            base_offset=1,
            producer_id=42,
            producer_epoch=3,
            base_sequence=5,
            transactional=True,
        ),
        encode_control_batch("abort", producer_id=42, producer_epoch=3, offset=2, coordinator_epoch=9, timestamp=77),
        encode_batch(
            [{"value": b"committed"}],
            base_offset=3,
            producer_id=42,
            producer_epoch=4,
            base_sequence=0,
            transactional=True,
        ),
        encode_control_batch("commit", producer_id=42, producer_epoch=4, offset=4),
    ]
    path.write_bytes(b"".join(entries))
    return path


def batch_state(path: Path):
    return [
        (
            b.base_offset,
            b.producer_id,
            b.producer_epoch,
            b.base_sequence,
            b.is_transactional,
            b.is_control,
            [(r.offset, r.value, r.control and (r.control.name, r.control.coordinator_epoch)) for r in b.records],
        )
        for b in read_batches(path)
    ]


@pytest.mark.parametrize("keep", [True, False])
def test_dump_json_through_write_keeps_producer_and_transaction_state(tmp_path, capsys, keep):
    (tmp_path / "src").mkdir()
    src = txn_log(tmp_path / "src" / SEG0)
    code, dumped, _ = run(capsys, "dump", src, "--json")
    assert code == 0
    (tmp_path / "dump.jsonl").write_text(dumped)
    out = tmp_path / "out.log"
    flags = ["--keep-offsets"] if keep else []
    assert run(capsys, "write", out, "-i", tmp_path / "dump.jsonl", *flags)[0] == 0
    assert batch_state(out) == batch_state(src)
    assert out.read_bytes() == src.read_bytes()
    code, _, err = run(capsys, "write", tmp_path / "v1.log", "-i", tmp_path / "dump.jsonl", "--magic", 1)
    assert code == 3 and "cannot keep" in err and err.count("\n") == 1


def test_write_refuses_a_control_batch_it_cannot_write_back(tmp_path, capsys):
    line = {
        "baseOffset": 0,
        "isControl": True,
        "isTransactional": True,
        "producerId": 1,
        "producerEpoch": 0,
        "records": [],
    }
    (tmp_path / "in.jsonl").write_text(json.dumps(line) + "\n")
    code, _, err = run(capsys, "write", tmp_path / "x.log", "-i", tmp_path / "in.jsonl")
    assert code == 3 and "control" in err and not (tmp_path / "x.log").exists()
    with pytest.raises(EncodeError):
        from kcodec.tools.records_io import parse_dumped_batch

        parse_dumped_batch({**line, "records": [{"control": {"typeName": "NOPE"}}, {"value": None}]}, "x", True)
