"""``kcodec dump --json`` records printed by the compiled kernel's formatter (csrc/json_lines.c) from a
batch's Arrow columns: the same bytes as formatting Record objects through ``json.dumps``, in every
``--bytes-encoding``, on random records with awkward header keys (quotes, backslashes, control characters,
non-ASCII, bytes that are not UTF-8), nulls, empty values and every length modulo 3 and 16; the same error,
at the same place in the output, for bytes that are not UTF-8 under utf8."""

from __future__ import annotations

import contextlib
import io
import random

import pytest

pytest.importorskip("pyarrow")

from kcodec.cli import main
from kcodec.errors import EncodeError
from kcodec.records import columnar
from kcodec.records.decode import decode_entry
from kcodec.records.encode import encode_batch
from kcodec.records.model import TimestampType
from kcodec.tools.dump import log as dump_tool
from kcodec.tools.dump import run as dump_run

pytestmark = pytest.mark.skipif(
    dump_tool._json_kernel() is None or not columnar.kernel_columns(), reason="no compiled kernel formatter"
)

_KEYS = ["h", "", 'q"', "back\\slash", "tab\there", "nl\n", "\x00\x01\x1f", "\x7f", "é", "\u2028\u2029", "😀", "Zz"]
_TEXT = ["", "plain", 'a "quoted" \\ text', "\n\r\t\b\f", "\x00\x1f\x7f", "é€😀", "\u2028", "x" * 40]


def _bytes(rng: random.Random, utf8: bool) -> bytes | None:
    if rng.random() < 0.15:
        return None
    if utf8:
        return "".join(rng.choice(_TEXT) for _ in range(rng.randrange(4))).encode()
    return rng.randbytes(rng.choice([0, 1, 2, 3, 4, 5, 15, 16, 17, 31, 32, 33, rng.randrange(300)]))


def _records(rng: random.Random, n: int, utf8: bool) -> list[dict]:
    return [
        {
            "key": _bytes(rng, utf8),
            "value": _bytes(rng, utf8),
            "headers": [(rng.choice(_KEYS), _bytes(rng, utf8)) for _ in range(rng.randrange(4))],
            "timestamp": rng.choice([-1, 0, 1_700_000_000_000 + rng.randrange(10**6)]),
        }
        for _ in range(n)
    ]


def _batches(seed: int, utf8: bool) -> list[bytes]:
    rng = random.Random(seed)
    out, offset = [], rng.randrange(2**40)
    for k in range(6):
        n = rng.randrange(1, 40)
        options: dict = {"compression": rng.choice(["none", "gzip", "lz4", "zstd"]), "base_offset": offset}
        if k == 2:
            options.update(producer_id=7, producer_epoch=1, base_sequence=rng.randrange(2**31 - 100))
        if k == 3:
            options.update(timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=1_800_000_000_000)
        data = encode_batch(_records(rng, n, utf8), **options)
        if options["compression"] == "none":  # a header key whose bytes are not UTF-8 (read with U+FFFD)
            data = data.replace(b"\x04Zz", b"\x04\xff\xfe")
        out.append(data)
        offset += n + rng.randrange(3)
    return out


def _printed(batch, encoding: str, per_piece: int = 4096) -> str:
    return "".join(dump_tool.batch_ndjson(batch, "f.log", per_piece, encoding))


@pytest.mark.parametrize("encoding", ["hex", "base64", "utf8"])
@pytest.mark.parametrize("seed", range(6))
def test_kernel_prints_what_records_print(seed, encoding):
    for data in _batches(seed, utf8=encoding == "utf8"):
        columns = columnar.entry_to_arrow(data, 0, verify_crc=False)
        assert not columns.records and columns.table.num_rows  # the kernel's columns, not Records
        records = decode_entry(data, 0, verify_crc=False)
        want = dump_tool.as_ndjson(dump_tool.batch_json(records, "f.log", encoding))
        assert _printed(columns, encoding) == want
        assert _printed(columns, encoding, per_piece=7) == want


def test_a_piece_view_is_released_when_the_next_is_asked_for():
    data = _batches(1, utf8=False)[0]
    table = columnar.entry_to_arrow(data, 0).table
    scratch = bytearray()
    pieces = dump_tool._column_record_pieces(table, 2, "hex", scratch)
    first = next(pieces)
    text = bytes(first)
    next(pieces)
    with pytest.raises(ValueError):
        bytes(first)  # released: it can never show the next piece's bytes as its own
    assert text.startswith(b'{"offset":')


def test_bytes_that_are_not_utf8_raise_before_the_batch_prints():
    rng = random.Random(5)
    records = _records(rng, 12, utf8=True)
    records[9]["headers"] = [("ok", b"fine"), ("bad", b"ab\xc3(")]
    data = encode_batch(records, base_offset=40)
    columns = columnar.entry_to_arrow(data, 0)
    pieces = dump_tool.batch_ndjson(columns, "f.log", 3, "utf8")
    with pytest.raises(EncodeError) as fast:
        next(pieces)  # not even the batch's head
    with pytest.raises(EncodeError) as slow:
        dump_tool.batch_json(decode_entry(data, 0), "f.log", "utf8")
    assert str(fast.value) == str(slow.value)
    assert "record at offset 49: header 'bad' is not UTF-8 (byte 0xc3 at 2)" in str(fast.value)


def _dump(path, *extra) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["dump", "--json", *extra, str(path)])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("encoding", ["hex", "base64", "utf8"])
def test_the_command_prints_the_same_with_and_without_the_kernel(tmp_path, monkeypatch, encoding):
    data = b"".join(_batches(11, utf8=encoding == "utf8"))
    if encoding == "utf8":  # a value that is not UTF-8 in the last batch: the batches before it print
        data += encode_batch([{"key": b"k", "value": b"\xff"}], base_offset=10**12)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    fast = _dump(path, "--bytes-encoding", encoding)
    monkeypatch.setattr(dump_run, "_column_decoder", lambda: None)
    slow = _dump(path, "--bytes-encoding", encoding)
    assert fast == slow
    assert fast[1].count("\n") == 6
    assert (fast[0] != 0) == (encoding == "utf8")


def test_the_command_writes_bytes_to_a_binary_stdout(tmp_path, monkeypatch):
    """With a real stdout (a binary buffer under a UTF-8 text layer) the kernel's bytes go to the buffer, in
    order with what print() wrote before them (a skipped range's line)."""
    data = b"".join(_batches(3, utf8=False))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"\xff" * 70 + data)  # damage first: a skipped range, printed by print()

    def run(decoder: bool) -> bytes:
        raw = io.BytesIO()
        text = io.TextIOWrapper(raw, encoding="utf-8", newline="\n", write_through=False)
        if not decoder:
            monkeypatch.setattr(dump_run, "_column_decoder", lambda: None)
        with contextlib.redirect_stdout(text), contextlib.redirect_stderr(io.StringIO()):
            main(["dump", "--json", "--skip-corrupt", str(path)])
        text.flush()
        return raw.getvalue()

    fast, slow = run(True), run(False)
    assert fast == slow
    assert fast.startswith(b'{"file":') and b'"skipped":true' in fast.split(b"\n")[0]


def test_rows_the_kernel_leaves_to_python():
    """A null in an integer column or a null header: the kernel says None (those rows are printed the Python
    way), never text json.dumps would not print."""
    import pyarrow as pa

    data = _batches(2, utf8=False)[0]
    table = columnar.entry_to_arrow(data, 0).table
    kernel = dump_tool._json_kernel()
    args = dump_tool._kernel_columns(table)
    assert isinstance(kernel(*args, dump_tool._TYPE_NAMES, 0, 0, table.num_rows, bytearray()), int)
    offsets = table.column("offset").to_pylist()
    nulled = table.set_column(0, "offset", pa.array([None, *offsets[1:]], pa.int64()))
    assert kernel(*dump_tool._kernel_columns(nulled), dump_tool._TYPE_NAMES, 0, 0, 1, bytearray()) is None
    assert isinstance(kernel(*dump_tool._kernel_columns(nulled), dump_tool._TYPE_NAMES, 0, 1, 1, bytearray()), int)


@pytest.mark.parametrize("encoding", ["hex", "base64", "utf8"])
def test_an_empty_batch_prints_no_records(encoding):
    data = encode_batch([], base_offset=5)
    want = dump_tool.as_ndjson(dump_tool.batch_json(decode_entry(data, 0), "f.log", encoding))
    assert _printed(columnar.entry_to_arrow(data, 0), encoding) == want
    assert want.endswith('"records":[]}')
