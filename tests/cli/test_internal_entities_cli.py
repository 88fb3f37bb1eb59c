"""The entity commands on Kafka's internal records: ``kcodec layout`` of a group coordinator record (tagged
fields and the tagged section listed), ``layout --diff`` across OffsetCommitValue's move to flexible
versions (Kafka 4.1's v4), and ``kcodec fuzz`` drawing, damaging and decoding the new entities."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kcodec.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_layout_of_a_consumer_group_member_record(capsys) -> None:
    code, out, err = run(capsys, "layout", "consumer_group_member_metadata_value")
    assert code == 0, err
    assert "consumer_group_member_metadata_value v0" in out
    assert "string (compact length, nullable)" in out  # instance_id, compact in a flexible version
    rows = {line.split()[2]: line for line in out.splitlines() if line.strip().startswith("variable")}
    assert "tag 0, tagged versions 0+" in rows["classic_member_metadata"]
    assert "_tagged_fields" in rows


def test_layout_json_of_a_streams_record(capsys) -> None:
    code, out, _ = run(capsys, "layout", "streams_group_topology_value", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["entity"] == "streams_group_topology_value" and doc["version"] == 0
    assert [f["name"] for f in doc["fields"]] == ["epoch", "subtopologies", "_tagged_fields"]
    assert doc["fields"][0]["offset"] == 0 and doc["fields"][1]["offset"] == 4
    assert "compact count" in doc["fields"][1]["type"]


def test_layout_diff_across_the_flexible_offset_commit_value(capsys) -> None:
    code, out, err = run(capsys, "layout", "--diff", "offset_commit_value:3", "offset_commit_value:4")
    assert code == 0, err
    assert "offset_commit_value v3 → offset_commit_value v4" in out
    assert "overhead: 22 → 22..30 bytes" in out  # the tagged section's count, a uvarint of 1..5 bytes
    rows = {}
    for line in out.splitlines():
        words = line.split()
        if words and words[0] in ("changed", "added"):
            rows[words[1]] = line
        elif words:
            rows.setdefault(words[0], line)
    assert "string (int16 length) → string (compact length)" in rows["metadata"]
    assert rows["metadata"].startswith("changed") and rows["_tagged_fields"].startswith("added")
    assert rows["leader_epoch"].split()[:3] == ["leader_epoch", "8", "4"]  # unchanged: offset 8, 4 bytes


@pytest.mark.parametrize(
    "entity",
    [
        "consumer_group_member_metadata_value",
        "streams_group_topology_value",
        "share_group_state_partition_metadata_value",
    ],
)
def test_fuzz_on_a_new_entity(tmp_path: Path, capsys, entity: str) -> None:
    stats = tmp_path / "stats.json"
    argv = ["fuzz", "--entity", entity, "--iterations", "120", "--seed", "3", "--json", str(stats), "--quiet"]
    code, _, err = run(capsys, *argv)
    assert code == 0, err
    doc = json.loads(stats.read_text())
    assert doc["by_target"] == {f"{entity} v0": 120}
    assert doc["unexpected"] == [] and doc["disagreements"] == 0
    assert doc["outcomes"]["decoded"] > 0 and len(doc["outcomes"]) > 1  # whole values and typed refusals
