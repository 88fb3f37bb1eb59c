"""The records view's Arrow batches hold, for every row, its own Kafka batch's values (baseOffset, magic,
producer state, compression, position, crcValid) however many Kafka batches one Arrow batch spans and
wherever ``maxRowsPerBatch`` cuts them: checked against the records and batches read_batches decodes."""

from __future__ import annotations

import datetime

import pytest

pytest.importorskip("pyarrow")

from kcodec.records.encode import encode_batch
from kcodec.records.reader import read_batches


def _segment(tmp_path):
    parts, offset = [], 0
    for i, (n, codec) in enumerate([(3, "none"), (9, "gzip"), (1, "none"), (14, "zstd"), (5, "lz4")]):
        records = [
            {"key": b"k%d" % j, "value": None if j % 4 == 0 else b"v" * j, "timestamp": 1_700_000_000_000 + j}
            | ({"headers": [("h", b"%d" % j)]} if j % 2 else {})
            for j in range(offset, offset + n)
        ]
        state = {"producer_id": 40 + i, "producer_epoch": i, "base_sequence": offset} if i % 2 else {}
        parts.append(encode_batch(records, compression=codec, base_offset=offset, **state))
        offset += n
    data = b"".join(parts)
    path = tmp_path / "t-3" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(data)
    return path


def _expected(path, names):
    rows = []
    for b in read_batches(path):
        for r in b.records:
            every = {
                "key": r.key,
                "value": r.value,
                "offset": r.offset,
                "timestamp": datetime.datetime.fromtimestamp(r.timestamp / 1000, datetime.timezone.utc),
                "headers": [{"key": k, "value": v} for k, v in r.headers] or None,
                "topic": "t",
                "partition": 3,
                "magic": b.magic,
                "baseOffset": b.base_offset,
                "producerId": b.producer_id,
                "producerEpoch": b.producer_epoch,
                "baseSequence": b.base_sequence,
                "compression": b.compression,
                "batchPosition": b.position,
                "crcValid": b.crc_valid,
            }
            rows.append({n: every[n] for n in names})
    return rows


@pytest.mark.parametrize("max_rows", [1, 4, 10_000])
@pytest.mark.parametrize(
    "names",
    [
        ("offset", "baseOffset", "producerId", "compression", "batchPosition", "timestamp", "headers"),
        ("value", "magic", "producerEpoch", "baseSequence", "crcValid", "topic", "partition", "key"),
    ],
)
def test_every_row_has_its_batch_values(tmp_path, max_rows, names):
    from kcodec.spark.arrow import RECORD_COLUMNS
    from kcodec.spark.options import ReadOptions
    from kcodec.spark.planning import discover, plan
    from kcodec.spark.read import read_split

    path = _segment(tmp_path)
    opts = ReadOptions(str(path.parent), max_rows=max_rows)
    cols = [(c, True) for c in RECORD_COLUMNS if c.name in names]
    got = [
        row
        for split in plan(discover(str(path.parent)), opts)
        for rb in read_split(split, opts, cols)
        for row in rb.to_pylist()
    ]
    assert [list(row) for row in got[:1]] == [[c.name for c, _ in cols]]
    assert got == _expected(path, [c.name for c, _ in cols])
