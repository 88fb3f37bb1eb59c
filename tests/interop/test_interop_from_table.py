"""Segments rebuilt from a table (``kcodec write --from-table``) as librdkafka reads them: each rebuilt v2
batch produced raw to librdkafka's mock cluster and consumed by its consumer (CRCs checked), against what
kafka-python reads from the original segments. The mock broker assigns a produced batch's offsets by its
record count, not its lastOffsetDelta, so batches with gaps (read back by kafka-python and aiokafka in
tests/tools/test_from_table.py) and batches with producer state stay out."""

from __future__ import annotations

from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("deltalake")

from kafka.record import MemoryRecords as KpMemoryRecords  # noqa: E402

from kcodec.records.reader import read_batches  # noqa: E402
from kcodec.tools.from_table import open_table, rebuild  # noqa: E402
from tests.helpers.client_logs import client_log  # noqa: E402
from tests.helpers.librdkafka_mock import (  # noqa: E402
    ck,
    consume_with_librdkafka,
    mock_cluster,
    unique_topic,
)
from tests.helpers.paths import TESTS  # noqa: E402
from tests.helpers.records_table import records_table, write_table  # noqa: E402

SAMPLES = TESTS.parent / "samples" / "data"


def kafka_python_reading(directory: Path) -> list[tuple]:
    """(key, value, headers, timestamp) of the v2 batches the mock broker takes as they are (see above), as
    kafka-python reads them."""
    out = []
    for seg in sorted(directory.glob("*.log")):
        records = KpMemoryRecords(seg.read_bytes())
        while records.has_next():
            batch = records.next_batch()
            if batch.magic != 2 or batch.producer_id != -1:
                continue
            recs = list(batch)
            if batch.last_offset - batch.base_offset + 1 == len(recs):
                out += [(r.key, r.value, list(r.headers), r.timestamp) for r in recs]
    return out


def produce_raw(mock, topic: str, data: bytes) -> None:
    with mock.wire() as wire:
        wire.ensure_topic(topic)
        result = wire.produce(topic, 0, data, version=3)
    assert result.error_code == 0, f"the mock broker refused a rebuilt batch: error {result.error_code}"


@pytest.mark.parametrize("source", ["orders-1", "python-clients"])
def test_librdkafka_reads_rebuilt_segments(source, tmp_path, monkeypatch):
    from tests.helpers import librdkafka_mock

    monkeypatch.setattr(librdkafka_mock, "CONSUME_MAX_POLLS", 1000)  # orders-1 has 500 records
    if source == "python-clients":
        src = tmp_path / "src" / "compacted-0"
        client_log(src)
    else:
        src = SAMPLES / source
    table, _ = write_table("delta", records_table(src), tmp_path / "lake")
    (report,), _ = rebuild(open_table(table), tmp_path / "out")
    rebuilt = Path(report.directory)

    want = kafka_python_reading(src)
    assert want == kafka_python_reading(rebuilt)
    topic = unique_topic("kc-from-table")
    with mock_cluster() as mock:
        end = 0
        for seg in sorted(rebuilt.glob("*.log")):
            data = seg.read_bytes()
            for b in read_batches(seg, strict=True):
                if b.magic == 2 and b.producer_id == -1 and b.last_offset - b.base_offset + 1 == len(b.records):
                    produce_raw(mock, topic, data[b.position : b.position + b.size])
                    end += len(b.records)
        got = consume_with_librdkafka(mock, topic, end_offset=end)
    assert len(got) == len(want) > 0
    for g, (key, value, headers, ts) in zip(got, want):
        assert (g.key, g.value, g.headers, g.timestamp[1]) == (key, value, headers, ts)
        assert g.timestamp[0] in (ck.TIMESTAMP_CREATE_TIME, ck.TIMESTAMP_LOG_APPEND_TIME)
