"""``kcodec dump --json`` formats v2 data records from the kernel's Arrow columns: the same bytes as
formatting Record objects, on every codec, with nulls, escaped header keys, LogAppendTime, producer
sequences, control batches, v1 entries and damage in the same file."""

from __future__ import annotations

import contextlib
import io

import pytest

pytest.importorskip("pyarrow")

from kcodec.cli import main
from kcodec.records import columnar
from kcodec.records.encode import encode_batch, encode_control_batch
from kcodec.records.model import TimestampType
from kcodec.tools.dump import log as dump_tool
from kcodec.tools.dump import run as dump_run


def _records(first: int, n: int) -> list[dict]:
    out = []
    for i in range(first, first + n):
        headers = [("h", bytes([i % 256]) * 3), ('q"\\é\n\u2028', None), ("", b"")][: i % 4]
        out.append(
            {
                "key": None if i % 5 == 0 else b"\x00k%d\xff" % i,
                "value": None if i % 7 == 0 else bytes(range(i % 50)),
                "headers": headers,
                "timestamp": 1_700_000_000_000 + i * 3,
            }
        )
    return out


def _log() -> bytes:
    parts = []
    offset = 0
    for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
        parts.append(encode_batch(_records(offset, 30), compression=codec, base_offset=offset))
        offset += 30
    parts.append(
        encode_batch(_records(offset, 5), base_offset=offset, producer_id=9, producer_epoch=2, base_sequence=2**31 - 3)
    )
    offset += 5
    parts.append(encode_control_batch("COMMIT", producer_id=9, producer_epoch=2, offset=offset))
    offset += 1
    parts.append(
        encode_batch(
            _records(offset, 4),
            base_offset=offset,
            timestamp_type=TimestampType.LOG_APPEND_TIME,
            log_append_time=1_800_000_000_000,
        )
    )
    offset += 4
    legacy = [{k: v for k, v in r.items() if k != "headers"} for r in _records(offset, 6)]
    parts.append(encode_batch(legacy, magic=1, compression="gzip", base_offset=offset))
    return b"".join(parts)


def _dump(path, *extra) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["dump", "--json", *extra, str(path)])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("damage", [False, True])
def test_columns_and_records_print_the_same_bytes(tmp_path, monkeypatch, damage):
    if columnar.fast_decoders().kernel is None:
        pytest.skip("no compiled kernel: dump --json formats Records only")
    data = bytearray(_log())
    if damage:  # a CRC that fails in the second batch (printed with crcValid false), and a partial tail
        data[int.from_bytes(data[8:12], "big") + 12 + 70] ^= 0x55
        data += data[:40]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(data))

    formatted = []
    real = dump_tool._column_record_pieces
    monkeypatch.setattr(
        dump_tool, "_column_record_pieces", lambda t, *rest: formatted.append(t.num_rows) or real(t, *rest)
    )
    fast = _dump(path, "--skip-corrupt")
    assert sum(formatted) >= 150  # the plain v2 batches went through the columns
    monkeypatch.setattr(dump_run, "_column_decoder", lambda: None)
    slow = _dump(path, "--skip-corrupt")
    assert fast == slow
    assert fast[0] == 0 and fast[1].count("\n") >= 9
    assert ('"crcValid":false' in fast[1]) == damage


@pytest.mark.parametrize("per_piece", [1, 3, 4096])
def test_a_batch_in_pieces_prints_what_its_records_print(per_piece):
    """A batch's records from its columns, cut into pieces of a few records (a batch of millions never
    becomes one string), joined: the bytes of formatting its Record objects."""
    if columnar.fast_decoders().kernel is None:
        pytest.skip("no compiled kernel: dump --json formats Records only")
    from kcodec.records.decode import decode_entry

    data = encode_batch(_records(3, 23), compression="lz4", base_offset=3)
    columns = columnar.entry_to_arrow(data, 0, verify_crc=True)
    assert not columns.records and columns.table.num_rows == 23
    fast = "".join(dump_tool.batch_ndjson(columns, "f.log", records_per_piece=per_piece))
    slow = "".join(dump_tool.batch_ndjson(decode_entry(data, 0, verify_crc=True), "f.log", records_per_piece=per_piece))
    assert fast == slow == dump_tool.as_ndjson(dump_tool.batch_json(decode_entry(data, 0), "f.log"))
