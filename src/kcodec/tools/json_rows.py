"""``kcodec write``'s fast path: JSON lines read by pyarrow's JSON reader into the Arrow columns the
kernel's column encoder takes (:mod:`kcodec.records.arrow_encode`), a block of lines at a time.

The typed reader takes only what :func:`~kcodec.tools.records_io.parse_record` would accept and
decode the same way: one JSON object per non-blank line with ``key``/``value`` strings (or null),
``headers`` as ``[[key, value], ...]`` pairs and an integer ``timestamp``; the fields parse_record
ignores may be there too. Anything else in a block (an unknown field, another type, headers as an
object, a batch line of ``kcodec dump --json``, text that is not valid hex, a blank line, a line holding
null, two objects on a line, duplicate names, a surrogate escape) hands the whole block to the existing per-line path,
which writes it, or words the error with its line number exactly as before. So the bytes written and
the errors are those of the per-line path; only the time differs.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from kcodec.records.arrow_encode import ArrowRows
from kcodec.tools.records_io import DumpedBatch, read_json_records

__all__ = ["RowsChunk", "available", "read_json_items", "BLOCK_BYTES"]

BLOCK_BYTES = 2 << 20  # input read (and held as columns) at a time: peak memory stays a few blocks
_IGNORED = frozenset(("offset", "timestampType", "sequence", "crc", "crcValid", "control"))  # parse_record drops them
# a blank line (the per-line path skips it, pyarrow too, unseen) or a line holding null (the per-line path
# refuses it, pyarrow reads a row of nulls): one search for both
_BLANK_OR_NULL_LINE = re.compile(rb"\n[ \t\r]*(?:\n|null)")
_SURROGATE = re.compile(rb"\\u[dD][89abAB]")  # lone surrogates: the per-line path words them, pyarrow differently


@dataclass
class RowsChunk:
    """``count`` loose records, in order, as writer columns (timestamps in microseconds)."""

    rows: ArrowRows
    count: int


def available() -> bool:
    """pyarrow is installed and the compiled kernel has the column encoder."""
    from kcodec.records.arrow_encode import kernel

    try:
        import pyarrow.json  # noqa: F401
    except ImportError:
        return False
    return kernel() is not None


def read_json_items(
    source: BinaryIO, encoding: str = "utf8", name: str = "input", progress: Any = None, block_bytes: int | None = None
) -> Iterator[dict | DumpedBatch | RowsChunk]:
    """What :func:`~kcodec.tools.records_io.read_json_records` yields for the lines of ``source`` (read as
    bytes), with blocks of plain records as :class:`RowsChunk` instead of one dict per record.
    ``progress`` (optional) gets ``add(bytes)`` per block read; blocks of ``block_bytes`` (default
    :data:`BLOCK_BYTES`)."""
    block_bytes = block_bytes or BLOCK_BYTES
    line = 1  # the number of the block's first line
    read_into = _reader(source)
    buf = bytearray(block_bytes)  # read into, again and again: the lines that end are scanned where they are
    held = 0  # bytes at buf's start: a line that has not ended yet
    while True:
        if held == len(buf):  # one line longer than the buffer: room for more of it
            buf.extend(bytes(len(buf)))
        got = read_into(memoryview(buf)[held:])
        if progress is not None and got:
            progress.add(got)
        end = held + got
        cut = buf.rfind(b"\n", held, end) + 1 if got else end  # at the end of input, what is left
        if got and cut == 0:  # no line ends in what was read: read on
            held = end
            continue
        if cut:
            ends_line = buf[cut - 1] == 0x0A
            chunk = _scanned(memoryview(buf)[:cut]) if encoding == "hex" else None
            if chunk is not None:  # every line taken: the scanner counted them
                newlines = chunk.count - (not ends_line)
                yield chunk
            else:
                block = bytes(memoryview(buf)[:cut])  # the general ways keep or split the text: their own copy
                newlines = block.count(b"\n")
                chunk = _columns(block, encoding, newlines + (not ends_line))
                if chunk is not None:
                    yield chunk
                else:
                    yield from read_json_records(block.split(b"\n"), encoding, False, name, first_line=line)
            line += newlines
        if not got:
            return
        buf[: end - cut] = buf[cut:end]  # the line not ended yet, to the front
        held = end - cut


def _reader(source: BinaryIO) -> Any:
    """``readinto(view) -> bytes read`` for ``source``: what is there, up to the view's size (a pipe's read of
    a whole block would wait for it, so a live producer's records would sit unwritten)."""
    into = getattr(source, "readinto1", None)
    if into is not None:
        return lambda view: into(view) or 0
    read = getattr(source, "read1", source.read)

    def copied(view: memoryview) -> int:
        data = read(len(view))
        view[: len(data)] = data
        return len(data)

    return copied


def _columns(block: bytes, encoding: str, lines: int) -> RowsChunk | None:
    """The block's ``lines`` records as columns, or None: the per-line path decides."""
    import pyarrow as pa
    import pyarrow.json as pj

    first_line = block[: block.find(b"\n")] if b"\n" in block else block
    if not first_line.strip() or first_line.lstrip().startswith(b"null") or _BLANK_OR_NULL_LINE.search(block):
        return None
    if not _utf8(block):
        return None
    if b"\\u" in block and _SURROGATE.search(block):
        return None
    try:
        table = pj.read_json(
            pa.py_buffer(block),
            read_options=pj.ReadOptions(use_threads=True, block_size=max(1 << 20, len(block) // 2 + 1)),
            parse_options=pj.ParseOptions(explicit_schema=_schema(), unexpected_field_behavior="infer"),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    if table.num_rows != lines or not set(table.column_names) <= set(_schema().names) | _IGNORED:
        return None
    table = table.combine_chunks()
    try:
        key = _bytes(table.column("key").chunk(0), encoding)
        value = _bytes(table.column("value").chunk(0), encoding)
        headers = _headers(table.column("headers").chunk(0), encoding)
        timestamp_us = _micros(table.column("timestamp").chunk(0))
    except _Unusual:
        return None
    return RowsChunk(ArrowRows(key=key, value=value, timestamp_us=timestamp_us, headers=headers), table.num_rows)


def _scanned(block: bytes | memoryview) -> RowsChunk | None:
    """Under hex, the columns :func:`_columns` gives (pyarrow's reader), from the compiled kernel's scanner
    when every line of the block has the one shape it takes (csrc/json_scan.c: the four fields in order,
    lowercase hex, ...), else None: :func:`_columns` takes the block (or leaves it to the per-line path)."""
    import pyarrow as pa

    from kcodec.records.arrow_encode import kernel

    scan = getattr(kernel(), "scan_hex_records", None)
    got = scan(block) if scan is not None else None
    if got is None:
        return None
    n, key, value, lists, pairs, micros = got

    def binary(spec, count: int, type_):
        if spec is None:
            return None if type_ is None else pa.nulls(count, pa.binary())
        valid, offsets, data, nulls = spec
        buffers = [None if valid is None else pa.py_buffer(valid), pa.py_buffer(offsets), pa.py_buffer(data)]
        return pa.Array.from_buffers(type_ or pa.binary(), count, buffers, null_count=nulls)

    headers = None
    if lists is not None:
        names, values = pairs
        m = len(names[1]) // 4 - 1
        structs = pa.StructArray.from_arrays(
            [binary(names, m, pa.string()), binary(values, m, pa.binary())], names=["key", "value"]
        )
        headers = pa.ListArray.from_arrays(
            pa.Array.from_buffers(pa.int32(), n + 1, [None, pa.py_buffer(lists)]), structs
        )
    timestamp_us = pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(micros)])
    rows = ArrowRows(key=binary(key, n, None), value=binary(value, n, None), timestamp_us=timestamp_us, headers=headers)
    return RowsChunk(rows, n)


def _utf8(block: bytes) -> bool:
    """The per-line path says where a line is not UTF-8; pyarrow's reader does not check strings."""
    if block.isascii():
        return True
    try:
        block.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _schema():
    import pyarrow as pa

    return pa.schema(
        [
            ("key", pa.string()),
            ("value", pa.string()),
            ("headers", pa.list_(pa.list_(pa.string()))),
            ("timestamp", pa.int64()),
        ]
    )


class _Unusual(Exception):
    """A column the per-line path should look at."""


def _bytes(arr, encoding: str):
    """A string column's values as the bytes they encode (None: every value null)."""
    import pyarrow as pa

    if arr.null_count == len(arr):
        return None
    if encoding == "utf8":
        return arr.cast(pa.binary())  # the same buffers: JSON text is UTF-8 already
    if encoding == "base64":
        return _per_value_base64(arr)
    import pyarrow.compute as pc

    if arr.offset or pc.any(pc.equal(pc.bit_wise_and(pc.binary_length(arr), 1), 1)).as_py():
        raise _Unusual  # an odd length: the per-line path says which
    valid, offsets, data = arr.buffers()[:3]
    ends = pa.Array.from_buffers(pa.int32(), len(arr) + 1, [None, offsets])
    first, last = ends[0].as_py(), ends[len(arr)].as_py()
    try:
        decoded = binascii.a2b_hex(memoryview(data)[first:last]) if last > first else b""
    except binascii.Error:
        raise _Unusual from None  # not hex (or spaced): the per-line path decides
    halves = pc.shift_right(pc.subtract(ends, pa.scalar(first, pa.int32())), pa.scalar(1, pa.int32()))
    return pa.Array.from_buffers(
        pa.binary(), len(arr), [valid, halves.buffers()[1], pa.py_buffer(decoded)], arr.null_count
    )


def _per_value_base64(arr):
    import base64

    import pyarrow as pa

    out: list[bytes | None] = []
    for text in arr.to_pylist():
        if text is None:
            out.append(None)
            continue
        try:
            out.append(base64.b64decode(text, validate=True))
        except (ValueError, binascii.Error):
            raise _Unusual from None
    return pa.array(out, pa.binary())


def _headers(arr, encoding: str):
    """``[[key, value], ...]`` lists as list<struct<key: string, value: binary>> (None: no headers)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if arr.null_count == len(arr) or len(arr.values) == 0:
        return None
    pairs = arr.flatten()  # list<string>, one per header
    if pairs.null_count or pc.any(pc.not_equal(pc.list_value_length(pairs), 2)).as_py():
        raise _Unusual  # a null header or not a pair
    keys = pc.list_element(pairs, 0)
    if keys.null_count:
        raise _Unusual  # a header key must be a string
    values = pc.list_element(pairs, 1)
    decoded = _bytes(values, encoding)
    if decoded is None:
        decoded = pa.nulls(len(values), pa.binary())
    structs = pa.StructArray.from_arrays([keys, decoded], names=["key", "value"])
    offsets = pc.subtract(arr.offsets, arr.offsets[0])  # no validity: a null headers is an empty list, as before
    return pa.ListArray.from_arrays(offsets, structs)


def _micros(arr):
    import pyarrow as pa
    import pyarrow.compute as pc

    if arr.null_count == len(arr):
        return None
    try:
        return pc.multiply_checked(arr, 1000)
    except pa.ArrowInvalid:
        raise _Unusual from None  # past int64 in microseconds: the per-line path words it
