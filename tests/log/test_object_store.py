"""Partition directories on object stores and in Kafka tiered storage's layout:
``s3a://`` is S3, endpoint and credentials come from options, segments are
read with ranged reads, and of several tiered copies of a base offset the
newest is read and the others are reported."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kcodec.log.files import list_segments
from kcodec.log.fs import resolve, storage_options
from kcodec.log.names import parse_partition_dir, skip_reason
from kcodec.log.partition import Partition
from tests.helpers.s3server import kafka_uuid, start_server, tiered_name

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "data"


def _records(part: Partition) -> list[tuple]:
    return [(r.offset, r.key, r.value) for b in part.iter_batches() for r in b.records]


def _tiered_copy(src: Path, dest: Path, segment_ids: dict[str, str]) -> None:
    """``src``'s segments under ``dest`` named as tiered storage names them (one segment id per base offset)."""
    dest.mkdir(parents=True, exist_ok=True)
    for f in sorted(src.iterdir()):
        stem = f.name.split(".", 1)[0]
        shutil.copy(f, dest / tiered_name(f.name, segment_ids.setdefault(stem, kafka_uuid())))


def test_tiered_layout_newest_copy_per_base_offset(tmp_path):
    topic_id = kafka_uuid()
    tiered = tmp_path / f"orders-0-{topic_id}"
    ids: dict[str, str] = {}
    _tiered_copy(SAMPLES / "orders-0", tiered, ids)
    # an earlier upload of the first segment (a retried copy): half of it, older
    stale_id = kafka_uuid()
    first = sorted((SAMPLES / "orders-0").glob("*.log"))[0]
    stale = tiered / tiered_name(first.name, stale_id)
    stale.write_bytes(first.read_bytes()[: first.stat().st_size // 2])
    shutil.copy(first.with_suffix(".index"), tiered / tiered_name(first.with_suffix(".index").name, stale_id))
    old = (tiered / tiered_name(first.name, ids[first.stem])).stat().st_mtime - 3600
    os.utime(stale, (old, old))

    assert parse_partition_dir(tiered) == ("orders", 0)
    listing = list_segments(resolve(str(tiered))[0], tiered)
    assert [s.base_offset for s in listing.segments] == [0, 301]
    assert listing.skipped == [stale.name]
    assert "older tiered-storage copy" in skip_reason(stale.name)
    seg = listing.segments[0]
    assert seg.has(".index") and Path(seg.index).name == tiered_name(first.with_suffix(".index").name, ids[first.stem])
    part = Partition(tiered)
    assert (part.topic, part.partition) == ("orders", 0)
    assert _records(part) == _records(Partition(SAMPLES / "orders-0"))


@pytest.fixture(scope="module")
def s3():
    server, s3 = start_server()
    try:
        yield s3
    finally:
        server.stop()


@pytest.mark.parametrize("scheme", ["s3", "s3a"])
def test_partition_on_s3_with_ranged_reads(s3, scheme):
    bucket = s3.bucket(f"kcodec-{scheme}")
    s3.upload(SAMPLES / "orders-0", f"{bucket}/logs/orders-0")
    storage = storage_options(s3.options())
    fs, path = resolve(f"{scheme}://{bucket}/logs/orders-0", storage)
    assert not fs.local and path.startswith(f"{scheme}://")
    remote = list_segments(fs, path)
    local = list_segments(resolve(str(SAMPLES / "orders-0"))[0], SAMPLES / "orders-0")
    assert [(s.base_offset, s.size, s.listed_indexes) for s in remote.segments] == [
        (s.base_offset, s.size, s.listed_indexes) for s in local.segments
    ]
    assert _records(Partition(path, fs)) == _records(Partition(SAMPLES / "orders-0"))
    # a byte range of a segment: one ranged read, batch positions in the file
    seg, lseg = remote.segments[0], local.segments[0]
    positions = [b.position for b in lseg.batches()]
    start, end = positions[1], positions[3]
    assert [(b.position, b.base_offset) for b in seg.batches(start, end)] == [
        (b.position, b.base_offset) for b in lseg.batches(start, end)
    ]
    assert seg.entry_at(start) == lseg.entry_at(start)


def test_storage_options_any_case_and_hadoop_names():
    picked = storage_options({"S3.Endpoint": "http://h:1", "fs.s3a.access.key": "k", "path": "/x", "verifyCrc": "1"})
    assert picked == (("fs.s3a.access.key", "k"), ("s3.endpoint", "http://h:1"))


def test_azure_uris_name_the_container_path():
    pytest.importorskip("pyarrow")
    from kcodec.log.fs import ArrowFS

    try:
        fs = ArrowFS("abfss://logs@acct.dfs.core.windows.net/")
    except (ImportError, OSError, ValueError) as exc:  # a pyarrow built without Azure
        pytest.skip(f"pyarrow has no Azure filesystem: {exc}")
    uri = "abfss://logs@acct.dfs.core.windows.net/kafka/orders-0/00000000000000000000.log"
    assert fs._p(uri) == "logs/kafka/orders-0/00000000000000000000.log"
    assert fs._uri(fs._p(uri)) == uri
