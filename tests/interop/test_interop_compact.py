"""kcodec compact against what nobody here wrote: a partition whose data batches kafka-python's record
builder wrote (gzip and plain, idempotent and transactional producers) is cleaned with --out; DuckDB, over
``kcodec dump --json`` of the original segments, computes the survivors of the simple rules (the last offset
per key in the cleaned range, no null keys, no data of aborted transactions, everything from the first
uncleanable offset on); kafka-python's and aiokafka's MemoryRecords read the cleaned segments, CRCs checked,
and must give exactly those records, offsets unchanged and in order."""

from __future__ import annotations

import struct

import pytest
from aiokafka.record.memory_records import MemoryRecords as AioMemoryRecords
from kafka.record import MemoryRecords as KpMemoryRecords
from kafka.record.default_records import DefaultRecordBatchBuilder

from kcodec.cli import main
from kcodec.tools.compact import compact_to
from tests.helpers.compact_logs import T0, config, marker, write_partition

duckdb = pytest.importorskip("duckdb")

GZIP = 1


def _kp_batch(offset: int, pairs, *, gzip=False, pid=-1, epoch=-1, seq=-1, txn=False) -> bytes:
    """kafka-python's DefaultRecordBatchBuilder, its base offset then set (outside the CRC's bytes)."""
    b = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=GZIP if gzip else 0,
        is_transactional=int(txn),
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        batch_size=1 << 20,
    )
    for i, (k, v) in enumerate(pairs):
        assert b.append(i, timestamp=T0 + offset + i, key=k, value=v, headers=[]) is not None
    raw = bytearray(b.build())
    struct.pack_into(">q", raw, 0, offset)
    return bytes(raw)


def _partition(path):
    keys = [b"user-%d" % (i % 7) for i in range(40)]
    seg0 = [
        _kp_batch(0, [(k, b"v%d" % i) for i, k in enumerate(keys[:10])], gzip=True),
        _kp_batch(10, [(None, b"no key"), (b"user-1", b"x")], pid=42, epoch=0, seq=0),
        _kp_batch(12, [(b"user-2", b"aborted"), (b"user-9", b"aborted")], pid=77, epoch=0, seq=0, txn=True),
        marker("abort", 14, 77),
    ]
    seg1 = [
        _kp_batch(15, [(b"user-3", b"committed"), (b"user-8", b"c")], pid=78, epoch=0, seq=0, txn=True),
        marker("commit", 17, 78),
        _kp_batch(18, [(k, b"w%d" % i) for i, k in enumerate(keys[10:30])]),
        _kp_batch(38, [(b"user-4", None)], gzip=True),  # a tombstone: kept on its first clean
    ]
    seg2 = [_kp_batch(39, [(b"user-5", b"active"), (b"user-0", b"active")])]  # the active segment
    return write_partition(path, [seg0, seg1, seg2])


def _client_records(memory_records_class, data: bytes):
    out = []
    mr = memory_records_class(data)
    while (batch := mr.next_batch()) is not None:
        assert batch.validate_crc()
        if not batch.is_control_batch:
            out += [(r.offset, r.key, r.value) for r in batch]
    return out


def _duckdb_survivors(dump_path, end_offset: int):
    sql = f"""
    WITH b AS (SELECT * FROM read_json('{dump_path}', format='newline_delimited')),
    data AS (
        SELECT b.producerId AS pid, b.isTransactional AS txn, r.offset AS "offset", r.key AS key, r.value AS value
        FROM b, unnest(b.records) AS u(r) WHERE NOT b.isControl
    ),
    markers AS (
        SELECT b.producerId AS pid, b.baseOffset AS "offset", b.records[1].control.typeName AS kind
        FROM b WHERE b.isControl
    ),
    verdict AS (   -- a transactional record belongs to the first marker of its producer after it
        SELECT d.*, (d.txn AND m.kind = 'ABORT') AS aborted
        FROM data d ASOF LEFT JOIN markers m ON d.pid = m.pid AND m."offset" >= d."offset"
    ),
    latest AS (
        SELECT key, max("offset") AS "offset" FROM verdict
        WHERE key IS NOT NULL AND NOT aborted AND "offset" < {end_offset} GROUP BY key
    )
    SELECT v."offset", v.key, v.value FROM verdict v
    WHERE v."offset" >= {end_offset}
       OR (NOT v.aborted AND v.key IS NOT NULL AND v."offset" = (SELECT "offset" FROM latest l WHERE l.key = v.key))
    ORDER BY v."offset"
    """
    rows = duckdb.sql(sql).fetchall()
    return [(o, None if k is None else bytes.fromhex(k), None if v is None else bytes.fromhex(v)) for o, k, v in rows]


@pytest.mark.parametrize("expiration_ms", [1, 86_400_000], ids=["producers-expired", "producers-active"])
def test_cleaned_segments_equal_duckdbs_survivors_as_kafka_python_and_aiokafka_read_them(
    tmp_path, capsys, expiration_ms
):
    part = _partition(tmp_path / "in" / "orders-0")
    dump = tmp_path / "dump.ndjson"
    lines = []
    for seg in part.segments:
        assert main(["dump", "--json", str(seg.log)]) == 0
        lines.append(capsys.readouterr().out)
    dump.write_text("".join(lines))

    # active producers keep their last batches as empty headers (records gone, offsets and sequences kept)
    result = compact_to(part, tmp_path / "out", config(producer_id_expiration_ms=expiration_ms))
    assert result.empty_batches_kept == (0 if expiration_ms == 1 else 2)
    assert result.end_offset == 39 and result.removed["aborted"] == 2 and result.removed["null_key"] == 1
    expected = _duckdb_survivors(dump, result.end_offset)
    # user-0..6 (user-4 as its tombstone), user-8 of the commit, the two records of the active segment
    assert len(expected) == 10 and (38, b"user-4", None) in expected

    out = tmp_path / "out" / "orders-0"
    data = b"".join(p.read_bytes() for p in sorted(out.glob("*.log")))
    for reader in (KpMemoryRecords, AioMemoryRecords):
        got = _client_records(reader, data)
        assert got == expected, reader
        assert [o for o, _, _ in got] == sorted(o for o, _, _ in got)
