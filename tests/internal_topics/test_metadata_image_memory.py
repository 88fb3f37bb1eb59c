"""``kcodec metadata image`` holds the image, not one thing per record: on a small log of zstd batches whose
every record is a problem (a version the schemas do not know), or that opens a KRaft transaction and never
ends it, or that names partitions with enormous replica lists, peak RSS (measured in a child) stays under a
bound far below what one thing kept per record takes. Problems are kept up to a count and then counted; an
open transaction's records wait in a temporary file; a broker-id list keeps its first entries and says so."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from kcodec.internal_topics.metadata.image import MAX_LIST, MAX_PROBLEMS
from kcodec.internal_topics.metadata.replay import replay_metadata
from kcodec.records.encode import NewRecord, encode_batch
from tests.helpers.bombs import peak_rss_mib
from tests.helpers.metadata_logs import metadata_value, partition

TOPIC = uuid.UUID(int=1)
BATCH = 20_000


def _log(root: Path, values: list[bytes]) -> Path:
    d = root / "__cluster_metadata-0"
    d.mkdir(parents=True)
    batches = [
        encode_batch(
            [NewRecord(value=v, timestamp=1) for v in values[i : i + 20_000]], base_offset=i, compression="zstd"
        )
        for i in range(0, len(values), 20_000)
    ]
    (d / "00000000000000000000.log").write_bytes(b"".join(batches))
    return d


def _image_peak(d: Path) -> tuple[str, float]:
    done, peak = peak_rss_mib(["metadata", "image", str(d)])
    assert done.returncode == 0, done.stderr
    return done.stderr, peak


@pytest.mark.parametrize("kind", ["problems", "open_transaction"])
def test_a_record_bomb_of_the_metadata_log_stays_bounded(tmp_path: Path, kind: str) -> None:
    """The smallest log that tells the two apart: the command's peak is about 38 MiB on a thousand records and
    on these alike; one thing kept per record (what the fixes ended) would add far more than the bound's
    margin, computed from what it took before."""
    if kind == "problems":  # topic_record version 99: one problem each; kept per record it took 920 MiB for
        # 2 M (about 450 B each): 86 MiB more for these 200 k, twice the bound's margin over 39 MiB
        values = [bytes([1, 2, 99])] * 200_000
        bound = 80
    else:  # a transaction begun and never ended: every record waits; held in memory that took 314 MiB for
        # 300 k of them (about 950 B each): 54 MiB more for these 60 k; 40 MiB now
        begin = metadata_value("begin_transaction_record", {"name": "t"})
        values = [begin] + [
            metadata_value("topic_record", {"name": f"t{i % 1000}", "topic_id": uuid.UUID(int=i)})
            for i in range(60_000)
        ]
        bound = 65
    d = _log(tmp_path, values)
    assert d.joinpath("00000000000000000000.log").stat().st_size < 2_500_000  # a small log
    _, peak = _image_peak(d)
    assert peak < bound, f"peak RSS {peak:.0f} MiB"


def test_the_problems_are_counted_past_the_bound(tmp_path: Path) -> None:
    d = _log(tmp_path, [bytes([1, 2, 99])] * (MAX_PROBLEMS + 5))
    image = replay_metadata(d)
    assert len(image.problems) == MAX_PROBLEMS and image.more_problems == 5
    assert image.as_dict()["moreProblems"] == 5


def test_an_open_transaction_is_applied_when_it_ends_and_not_before(tmp_path: Path) -> None:
    begin = metadata_value("begin_transaction_record", {"name": "t"})
    end = metadata_value("end_transaction_record", {})
    topics = [metadata_value("topic_record", {"name": f"t{i}", "topic_id": uuid.UUID(int=i + 1)}) for i in range(3)]
    assert len(replay_metadata(_log(tmp_path / "open", [begin, *topics])).topics) == 0
    assert len(replay_metadata(_log(tmp_path / "ended", [begin, *topics, end])).topics) == 3


def test_a_replica_list_keeps_its_first_entries_and_says_so(tmp_path: Path) -> None:
    replicas = list(range(1000, 1000 + MAX_LIST + 10))
    topic = metadata_value("topic_record", {"name": "t", "topic_id": TOPIC})
    image = replay_metadata(_log(tmp_path, [topic, metadata_value(*partition(TOPIC, 0, replicas)[:2])]))
    p = image.topics[str(TOPIC)] if str(TOPIC) in image.topics else next(iter(image.topics.values()))
    assert p.partitions[0].replicas == replicas[:MAX_LIST]
    assert any(f"replicas holds {len(replicas)} entries" in pr.reason for pr in image.problems)


def test_records_with_huge_replica_lists_stay_bounded(tmp_path: Path) -> None:
    """40 PartitionRecords of 100 k replicas each (800 kB a record, a 0.77 MB log): each decodes to about
    9 MiB of Python ints that only the cyclic collector frees, and it seldom ran: 298 MiB peak RSS before
    (100 of them: 410 MiB); the parses now collect what earlier ones left."""
    replicas = list(range(1, 100_001))
    values = [metadata_value("topic_record", {"name": "t", "topic_id": TOPIC})]
    values += [metadata_value(*partition(TOPIC, i, replicas)[:2]) for i in range(40)]
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    batches = [
        encode_batch([NewRecord(value=v, timestamp=1) for v in values[i : i + 20]], base_offset=i, compression="zstd")
        for i in range(0, len(values), 20)  # 16 MB a batch decompressed: under the 64 MiB cap
    ]
    (d / "00000000000000000000.log").write_bytes(b"".join(batches))
    _, peak = _image_peak(d)
    assert peak < 180, f"peak RSS {peak:.0f} MiB"
