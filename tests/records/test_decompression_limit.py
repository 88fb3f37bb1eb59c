"""A batch kcodec's own decompression cap refuses is not damage: Kafka would read it. It is reported as
refused by the limit (with the limit and how to raise it), its bytes are kept (``verify --recover`` keeps
it and all after it), ``--skip-corrupt`` goes on at its end without resynchronising, and ``verify`` says
so apart from damage (exit 3 when nothing else is wrong, 1 when something is damaged)."""

from __future__ import annotations

import json

import pytest

from kcodec.cli import main
from kcodec.errors import DecompressionLimitError
from kcodec.records.encode import encode_batch
from kcodec.records.reader import read_batches
from kcodec.records.resync import find_next_entry
from kcodec.tools.verify import recover, valid_prefix, verify_source

LIMIT = 64 << 10  # the cap the tests set: the big batches inflate to about 200 KiB


def _big(base_offset: int, magic: int = 2, compression: str = "zstd") -> bytes:
    values = [{"value": bytes(50_000), "timestamp": 1} for _ in range(4)]
    return encode_batch(values, magic=magic, compression=compression, base_offset=base_offset)


def _small(base_offset: int) -> bytes:
    return encode_batch([{"value": b"v", "timestamp": 1}], base_offset=base_offset)


@pytest.fixture(params=[(2, "zstd"), (2, "gzip"), (1, "gzip")], ids=["v2-zstd", "v2-gzip", "v1-gzip"])
def segment(request):
    """small, big (refused under LIMIT), small: every byte valid."""
    magic, compression = request.param
    parts = [_small(0), _big(1, magic, compression), _small(5)]
    starts = [sum(map(len, parts[:i])) for i in range(len(parts))]
    return b"".join(parts), starts


def test_the_segment_is_valid_under_the_default_limit(segment):
    log, _ = segment
    assert len(list(read_batches(log))) == 3
    assert verify_source(log, "seg").ok


def test_without_skip_corrupt_the_limit_raises(segment):
    log, _ = segment
    with pytest.raises(DecompressionLimitError):
        list(read_batches(log, max_decompressed_size=LIMIT))


def test_skip_corrupt_reports_refused_and_goes_on_at_its_end(segment):
    log, starts = segment
    skipped, refused = [], []
    reader = read_batches(
        log, skip_corrupt=True, max_decompressed_size=LIMIT, on_skip=skipped.append, on_refused=refused.append
    )
    batches = list(reader)
    assert [b.position for b in batches] == [starts[0], starts[2]]
    assert skipped == [] and reader.skipped == []
    assert [(r.start, r.end, r.refused) for r in reader.refused] == [(starts[1], starts[2], True)]
    assert refused == reader.refused and str(LIMIT) in refused[0].reason
    # a caller that knows nothing of refusals still hears of it, through on_skip
    heard = []
    list(read_batches(log, skip_corrupt=True, max_decompressed_size=LIMIT, on_skip=heard.append))
    assert [r.refused for r in heard] == [True]


def test_a_refused_entry_is_a_resync_point(segment):
    log, starts = segment
    assert find_next_entry(log, starts[0] + 1, max_decompressed_size=LIMIT) == starts[1]


def test_verify_reports_refused_apart_from_damage(segment):
    log, starts = segment
    report = verify_source(log, "seg", max_decompressed_size=LIMIT)
    assert not report.ok and not report.damaged
    [problem] = report.problems
    assert problem.refused and problem.position == starts[1]
    assert "refused by the decompression limit" in problem.rule and "--max-decompressed-size" in problem.rule
    assert report.batches == 2 and report.bytes == len(log)


def test_recover_keeps_a_refused_batch_and_everything_after_it(segment, tmp_path):
    log, _ = segment
    src, out = tmp_path / "seg.log", tmp_path / "out.log"
    src.write_bytes(log)
    assert valid_prefix(src, max_decompressed_size=LIMIT) == (3, len(log), None)
    report = recover(src, out, max_decompressed_size=LIMIT)
    assert out.read_bytes() == log and report.dropped_bytes == 0 and report.refused == 1
    assert "refused by the decompression limit" in str(report)


def test_cli_verify_and_recover(segment, tmp_path, capsys):
    log, starts = segment
    src, out = tmp_path / "seg.log", tmp_path / "out.log"
    src.write_bytes(log)
    code = main(["verify", str(src), "--max-decompressed-size", str(LIMIT), "--recover", str(out)])
    stdout = capsys.readouterr().out
    assert code == 3 and "refused by the decompression limit" in stdout
    assert out.read_bytes() == log
    assert main(["verify", str(src)]) == 0
    # damage elsewhere still makes it exit 1, and the refused batch stays reported apart
    damaged = bytearray(log + _small(6))
    damaged[-1] ^= 0xFF
    src.write_bytes(bytes(damaged))
    capsys.readouterr()
    assert main(["verify", str(src), "--max-decompressed-size", str(LIMIT)]) == 1
    stdout = capsys.readouterr().out
    assert "refused by the decompression limit" in stdout and "Record is corrupt" in stdout


def test_cli_dump(segment, tmp_path, capsys):
    log, starts = segment
    src = tmp_path / "seg.log"
    src.write_bytes(log)
    assert main(["dump", str(src), "--max-decompressed-size", str(LIMIT)]) == 0  # shallow: nothing inflated
    assert sum(1 for line in capsys.readouterr().out.splitlines() if "position:" in line) == 3
    deep = ["--deep-iteration", "--max-decompressed-size", str(LIMIT)]
    assert main(["dump", str(src), *deep]) == 3
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--max-decompressed-size raises the limit" in err
    assert "--skip-corrupt" not in err
    assert main(["dump", str(src), "--skip-corrupt", *deep]) == 3
    out, err = capsys.readouterr()
    lines = out.splitlines()
    refused = [line for line in lines if line.startswith("Refused")]
    assert len(refused) == 1 and refused[0].startswith(f"Refused {starts[2] - starts[1]} bytes at position {starts[1]}")
    assert not any(line.startswith("Skipped") for line in lines)
    assert sum(1 for line in lines if "position:" in line) == 2
    assert "refused by the decompression limit" in err and "damaged" not in err
    assert main(["dump", "--json", str(src), "--skip-corrupt", "--max-decompressed-size", str(LIMIT)]) == 3
    objs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["position"] for o in objs] == starts
    assert objs[1]["refused"] and objs[1]["kind"] == "decompression_limit"
