"""A KRaft ``.checkpoint`` is renamed into place only when Kafka has written all of it, ending with its
SnapshotFooter: a truncated one or one without its footer is refused by ``kcodec metadata image`` (one line
naming the file, exit 3), never replayed into a partial image with exit 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.errors import TruncatedError
from kcodec.internal_topics.metadata.replay import replay_metadata
from kcodec.records.reader import read_batches
from tests.helpers.metadata_logs import SNAPSHOT_END, write_metadata_dir


@pytest.fixture
def snapshot_only(tmp_path: Path) -> tuple[Path, Path]:
    """The metadata directory with only its snapshot (no segment to fall back on)."""
    d = write_metadata_dir(tmp_path)
    for log in d.glob("*.log"):
        log.unlink()
    return d, d / f"{SNAPSHOT_END:020d}-{1:010d}.checkpoint"


def _image(capsys, d: Path) -> tuple[int, str, str]:
    code = main(["metadata", "image", str(d)])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_whole_snapshot_replays(snapshot_only, capsys) -> None:
    d, _ = snapshot_only
    code, out, err = _image(capsys, d)
    assert code == 0, err


def test_a_truncated_checkpoint_is_refused(snapshot_only, capsys) -> None:
    d, snap = snapshot_only
    data = snap.read_bytes()
    snap.write_bytes(data[:-5])  # a partial footer batch at the end
    with pytest.raises(TruncatedError, match=snap.name):
        replay_metadata(d)
    code, out, err = _image(capsys, d)
    assert code == 3 and out == ""
    assert len(err.strip().splitlines()) == 1 and snap.name in err and "whole batch" in err


def test_a_checkpoint_without_its_footer_is_refused(snapshot_only, capsys) -> None:
    d, snap = snapshot_only
    data = snap.read_bytes()
    footer = list(read_batches(data))[-1]
    snap.write_bytes(data[: footer.position])  # whole batches, but the footer is gone
    with pytest.raises(TruncatedError, match="SnapshotFooter"):
        replay_metadata(d)
    code, out, err = _image(capsys, d)
    assert code == 3 and out == ""
    assert len(err.strip().splitlines()) == 1 and snap.name in err and "SnapshotFooter" in err


def test_damage_inside_a_checkpoint_is_refused_as_in_a_log(snapshot_only, capsys) -> None:
    d, snap = snapshot_only
    data = bytearray(snap.read_bytes())
    second = list(read_batches(bytes(data)))[1]
    data[second.position + 20] ^= 0xFF  # a CRC-covered byte of the records batch; the footer comes after
    snap.write_bytes(bytes(data))
    code, out, err = _image(capsys, d)
    assert code == 3 and out == "" and len(err.strip().splitlines()) == 1 and snap.name in err
