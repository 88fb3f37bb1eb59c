"""A partition directory read as a data engineer reads it: `kcodec.read_arrow(DIR)` and `Partition.read_arrow`
over every segment and an offset range (also of one file), and the topic and partition of each record read
through `Partition`."""

from __future__ import annotations

import json
import pickle

import pytest

import kcodec
from kcodec.cli import main

pa = pytest.importorskip("pyarrow")


@pytest.fixture
def partition(tmp_path):
    """payments-3: 40 records in batches of 4, rolled into several segments with their indexes."""
    lines = tmp_path / "in.jsonl"
    lines.write_text(
        "".join(json.dumps({"key": f"k{i}", "value": "v" * 40, "timestamp": 1000 + i}) + "\n" for i in range(40))
    )
    out = tmp_path / "payments-3"
    assert main(["write", str(out), "-i", str(lines), "--batch-size", "4", "--segment-bytes", "600"]) == 0
    assert len(list(out.glob("*.log"))) >= 3
    return out


def test_read_arrow_of_a_partition_directory_is_every_segment(partition):
    table = kcodec.read_arrow(partition)
    segments = [kcodec.read_arrow(log) for log in sorted(partition.glob("*.log"))]
    assert table.column("offset").to_pylist() == list(range(40))
    assert table.equals(pa.concat_tables(segments))
    assert kcodec.read_arrow(str(partition)).equals(table)  # a str names it too
    assert kcodec.read_arrow(partition.as_uri()).equals(table)  # and a file:// URI


@pytest.mark.parametrize("start, end", [(7, 23), (None, 5), (38, None), (0, 40), (12, 13)])
def test_read_arrow_of_an_offset_range(partition, start, end):
    expected = list(range(40))[start:end]
    table = kcodec.read_arrow(partition, start_offset=start, end_offset=end)
    assert table.column("offset").to_pylist() == expected
    assert table.column("key").to_pylist() == [f"k{o}".encode() for o in expected]
    assert kcodec.Partition(partition).read_arrow(start, end).equals(table)
    first = sorted(partition.glob("*.log"))[0]
    in_first = kcodec.read_arrow(first).column("offset").to_pylist()
    one = kcodec.read_arrow(first, start_offset=start, end_offset=end).column("offset").to_pylist()
    assert one == [o for o in in_first if o in expected]


def test_records_read_through_a_partition_know_their_topic_and_partition(partition):
    part = kcodec.Partition(partition)
    records = list(part.iter_records(start_offset=10, end_offset=14))
    assert [(r.topic, r.partition, r.offset) for r in records] == [("payments", 3, o) for o in range(10, 14)]
    plain = [r for b in kcodec.read_batches(sorted(partition.glob("*.log"))[0]) for r in b.records]
    assert list(part.iter_records(end_offset=len(plain))) == plain  # the same records, fields and all
    again = pickle.loads(pickle.dumps(records[0]))
    assert (again, again.topic, again.partition) == (records[0], "payments", 3)
    assert records[0].replace(value=b"x").topic == "payments"
    assert "topic='payments', partition=3" in repr(records[0])
