"""``kcodec dump``: batches and records printed as Kafka's DumpLogSegments
(kafka-dump-log.sh) prints them, so the output diffs against Kafka's tool,
or as NDJSON for scripts.

Two generations of the tool differ in small ways, and ``legacy=True`` selects the older: the Scala
``kafka.tools.DumpLogSegments`` of Kafka up to 4.2, against the Java
``org.apache.kafka.tools.DumpLogSegments`` that Kafka 4.3 ported it to (KAFKA-14579). The Java tool
drops the stray ``}`` after a legacy record's CRC, starts ``--skip-record-metadata`` data lines with
``| `` even without a key, tracks non-consecutive offsets from -1 (so a file whose first record is not
offset 0 reports ``-1 is followed by N``) and prints them in ascending order, where the Scala tool
printed the latest pair first. Both print index mismatches, time-index errors and non-consecutive
offsets on stderr after all files, under absolute paths (:class:`DeferredErrors`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath

from kcodec.errors import KcodecError
from kcodec.log.kraft_snapshots import KRAFT_SNAPSHOT_SUFFIX
from kcodec.records.model import Batch, Record, TimestampType
from kcodec.tools.dump.decoders import STRING, DataDecoders, DecoderError
from kcodec.tools.dump.files import kraft_snapshot_line
from kcodec.tools.records_io import DUMP_ENCODING, encode_bytes

_SEGMENT_NAME = re.compile(r"^(\d{20})\.(log|checkpoint)$")


def _bool(b: bool) -> str:
    return "true" if b else "false"


def batch_line(batch: Batch) -> str:
    if batch.magic >= 2:
        horizon = (
            "OptionalLong.empty" if batch.delete_horizon_ms is None else f"OptionalLong[{batch.delete_horizon_ms}]"
        )
        head = (
            f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset} count: {batch.record_count} "
            f"baseSequence: {batch.base_sequence} lastSequence: {batch.last_sequence} "
            f"producerId: {batch.producer_id} producerEpoch: {batch.producer_epoch} "
            f"partitionLeaderEpoch: {batch.partition_leader_epoch} "
            f"isTransactional: {_bool(batch.is_transactional)} isControl: {_bool(batch.is_control)} "
            f"deleteHorizonMs: {horizon}"
        )
    else:
        head = f"offset: {batch.last_offset}"
    return (
        f"{head} position: {batch.position} {batch.timestamp_type.kafka_name}: {batch.max_timestamp} "
        f"size: {batch.size} magic: {batch.magic} compresscodec: {batch.compression} crc: {batch.crc} "
        f"isvalid: {_bool(batch.crc_valid)}"
    )


def record_line(
    batch: Batch,
    record: Record,
    print_data: bool,
    skip_metadata: bool = False,
    decoders: DataDecoders = STRING,
    legacy: bool = False,
) -> str:
    """One ``| offset: ...`` line. As DumpLogSegments, ``skip_metadata`` drops the metadata and with it the
    control-record part (a control record's line is then empty), and data is never printed for control
    batches; ``decoders`` turn key and value bytes into text (default: UTF-8, as Kafka's StringDecoder);
    ``legacy`` prints the Scala tool's line (Kafka up to 4.2)."""
    parts = []
    if not skip_metadata:
        key_size = -1 if record.key is None else len(record.key)
        value_size = -1 if record.value is None else len(record.value)
        parts.append(
            f"offset: {record.offset} {batch.timestamp_type.kafka_name}: {record.timestamp} "
            f"keySize: {key_size} valueSize: {value_size}"
        )
        if batch.magic >= 2:
            parts.append(f"sequence: {record.sequence} headerKeys: [{','.join(k for k, _ in record.headers)}]")
        else:
            brace = "}" if legacy else ""  # the Scala tool's stray brace, gone in the Java port
            parts.append(f"isValid: {_bool(bool(record.crc_valid))} crc: {record.crc}{brace}")
        if batch.is_control and record.control is not None:
            c = record.control
            if c.is_transaction_marker:
                parts.append(f"endTxnMarker: {c.name} coordinatorEpoch: {c.coordinator_epoch}")
            else:  # KRaft control records print their JSON (SnapshotHeader {...}), others their type
                from kcodec.tools.dump.internal import control_text

                # with --schemas-from, an internal topic's decoders carry the user's schemas
                source = getattr(decoders, "source", None)
                try:
                    text = control_text(c.type, record.value, *([source] if source else []))
                except KcodecError as exc:  # damage, said as a decoder's failure: the batch itself reads
                    raise DecoderError(
                        f"the {c.name} control record at offset {record.offset} does not decode: {exc}"
                    ) from None
                parts.append(text or f"controlType: {c.name}({c.type})")
    if print_data and not batch.is_control:
        key, payload = decoders.parse(record)
        if key is not None:
            parts.append(f"key: {key}")
        if payload is not None:
            parts.append(f"payload: {payload}")
    if legacy and skip_metadata and parts and record.key is None:
        return " " + parts[0]  # the Scala tool's " payload: ..." with no "| " when there is no key
    return "| " + " ".join(parts) if parts else ""


def _record_field(offset: int, name: str) -> str:
    """Where a record's bytes are, in the error that says they do not print."""
    return f"record at offset {offset}: {name}"


def _header_field(key: str) -> str:
    return f"header {key!r}"


def record_json(record: Record, encoding: str = DUMP_ENCODING) -> dict:
    """One record as ``kcodec dump --json`` prints it; bytes in ``encoding`` (records_io.ENCODINGS)."""
    where = record.offset
    out = {
        "offset": record.offset,
        "timestamp": record.timestamp,
        "timestampType": record.timestamp_type.kafka_name,
        "key": encode_bytes(record.key, encoding, _record_field(where, "key")),
        "value": encode_bytes(record.value, encoding, _record_field(where, "value")),
        "headers": [[k, encode_bytes(v, encoding, _record_field(where, _header_field(k)))] for k, v in record.headers],
        "sequence": record.sequence,
    }
    if record.crc is not None:
        out["crc"], out["crcValid"] = record.crc, record.crc_valid
    if record.control is not None:
        c = record.control
        control: dict[str, object] = {"type": c.type, "typeName": c.name, "version": c.version}
        if c.is_transaction_marker:
            control.update(coordinatorEpoch=c.coordinator_epoch, valueVersion=c.marker_version)
        out["control"] = control
    return out


def batch_json(batch: Batch, file: str | None = None, encoding: str = DUMP_ENCODING) -> dict:
    """One batch line of ``kcodec dump --json``; ``bytesEncoding`` is there when bytes are not hex."""
    out: dict[str, object] = {
        "file": file,
        "position": batch.position,
        "size": batch.size,
        "magic": batch.magic,
        "baseOffset": batch.base_offset,
        "lastOffset": batch.last_offset,
        "crc": batch.crc,
        "crcValid": batch.crc_valid,
        "compression": batch.compression,
        "timestampType": batch.timestamp_type.kafka_name,
        "maxTimestamp": batch.max_timestamp,
        "recordCount": batch.record_count,
    }
    if batch.magic >= 2:
        out.update(
            partitionLeaderEpoch=batch.partition_leader_epoch,
            baseTimestamp=batch.base_timestamp,
            producerId=batch.producer_id,
            producerEpoch=batch.producer_epoch,
            baseSequence=batch.base_sequence,
            isTransactional=batch.is_transactional,
            isControl=batch.is_control,
            deleteHorizonMs=batch.delete_horizon_ms,
        )
    if encoding != DUMP_ENCODING:
        out["bytesEncoding"] = encoding
    out["records"] = [record_json(r, encoding) for r in batch.records]
    return out


def batch_ndjson(
    batch: Batch, file: str | None = None, records_per_piece: int = 4096, encoding: str = DUMP_ENCODING
) -> Iterator[str]:
    """``as_ndjson(batch_json(batch, file, encoding))`` in pieces, a few thousand records at a time: a batch
    can hold millions of records (a record-count bomb), which as one string would take gigabytes."""
    for piece in batch_ndjson_bytes(batch, file, records_per_piece, encoding):
        yield piece if isinstance(piece, str) else bytes(piece).decode("utf-8")


def batch_ndjson_bytes(
    batch: Batch,
    file: str | None = None,
    records_per_piece: int = 4096,
    encoding: str = DUMP_ENCODING,
    scratch: bytearray | None = None,
) -> Iterator[str | memoryview]:
    """The pieces of :func:`batch_ndjson`; those of the records of a batch decoded into columns (see
    :func:`formats_columns`) as views of UTF-8 bytes in ``scratch`` (kept by the caller from batch to
    batch), each valid until the next piece is asked for; the others as str. Nothing is yielded when a
    record is refused (bytes that are not UTF-8 under utf8): the error is raised before the batch's first
    piece, as :func:`batch_json` raises it."""
    # records the kernel decoded into Arrow columns (kcodec.records.columnar.ColumnBatch, its records empty)
    table = None if batch.records else getattr(batch, "table", None)
    pieces: Iterator[str | bytes | memoryview]
    if table is not None:
        _check_column_records(table, encoding)
        pieces = _column_record_pieces(table, records_per_piece, encoding, scratch)
    else:
        pieces = _record_pieces(batch.records, records_per_piece, encoding)
    head = as_ndjson({**batch_json(replace(batch, records=()), file, encoding), "records": None})
    yield head[: -len("null}")] + "["
    first = True
    for text in pieces:
        if len(text):
            if not first:
                yield ","
            yield text
            first = False
    yield "]}"


def _record_pieces(records, records_per_piece: int, encoding: str) -> Iterator[str]:
    """Comma-joined pieces of ``records``' lines. Under utf8 every record is formatted here, before the
    first piece: a record whose bytes are not UTF-8 raises before anything of its batch is printed."""
    lines: Iterable[str] = (as_ndjson(record_json(r, encoding)) for r in records)
    if encoding == "utf8":
        lines = list(lines)

    def pieces() -> Iterator[str]:
        piece: list[str] = []
        for line in lines:
            piece.append(line)
            if len(piece) == records_per_piece:
                yield ",".join(piece)
                piece = []
        if piece:
            yield ",".join(piece)

    return pieces()


def log_start_offset(path: PurePath) -> int | None:
    m = _SEGMENT_NAME.match(path.name)
    return int(m.group(1)) if m else None


@dataclass
class DumpResult:
    lines: list[str] = field(default_factory=list)  # what goes to stdout
    warnings: list[str] = field(default_factory=list)  # what goes to stderr


def dump_log_lines(
    path: PurePath,
    batches,
    deep: bool,
    print_data: bool,
    skip_metadata: bool = False,
    progress=None,
    non_consecutive: list | None = None,
    decoders: DataDecoders = STRING,
    report_tail: bool = True,
    legacy: bool = False,
    damaged: Callable[[Batch], str | None] | None = None,
) -> Iterator[str]:
    """Kafka's dumpLog for one file, line by line; ``batches`` is a BatchReader.
    Pairs of non-consecutive record offsets are appended to ``non_consecutive`` as the tool ``legacy``
    selects finds them (see the module's docstring).
    ``report_tail=False`` leaves out the "invalid bytes at the end" line, as Kafka does under --max-bytes.
    ``damaged``, called after each header under deep iteration, gives the line printed instead of the
    batch's records when they do not decode (None when they do), or raises to stop there."""
    yield f"Dumping {path}"
    start = log_start_offset(path)
    if start is not None:
        yield f"Log starting offset: {start}"
    elif path.suffix == KRAFT_SNAPSHOT_SUFFIX:
        snapshot = kraft_snapshot_line(path)
        if snapshot is not None:
            yield snapshot
    last = -1
    pairs = non_consecutive if non_consecutive is not None else []
    for batch in batches:
        if progress:
            progress(batch.position + batch.size)
        yield batch_line(batch)
        if deep or print_data:
            instead = damaged(batch) if damaged is not None else None
            if instead is not None:
                yield instead
                continue
            for r in batch.records:
                # the Scala tool let the first record set the start; the Java port counts from -1
                if r.offset != last + 1 and not (legacy and last == -1):
                    pairs.append((last, r.offset))
                last = r.offset
                yield record_line(batch, r, print_data, skip_metadata, decoders, legacy)
    if batches.partial_tail is not None and report_tail:
        yield f"Found {batches.partial_tail.size} invalid bytes at the end of {path.name}"


@dataclass
class DeferredErrors:
    """What DumpLogSegments prints on stderr once all files are dumped, keyed by absolute path: index
    entries whose batch ends elsewhere, the three time-index errors, non-consecutive record offsets."""

    legacy: bool = False
    index_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_index: dict[str, dict[str, list[tuple[int, int]]]] = field(default_factory=dict)
    non_consecutive: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    TIME_INDEX_KINDS = ("timestamp_mismatch", "timestamp_order", "offset_not_found")

    def add_index_problems(self, path: Path, problems) -> list:
        """Keep the IndexProblems Kafka reports at the end; return the others (kcodec's own checks)."""
        others = []
        for p in problems:
            key = str(Path(p.file).absolute())
            if p.kind == "offset_mismatch":
                self.index_mismatches.setdefault(key, []).append((p.index_value, p.log_value))
            elif p.kind in self.TIME_INDEX_KINDS:
                log_value = -1 if p.log_value is None else p.log_value
                self.time_index.setdefault(key, {}).setdefault(p.kind, []).append((p.index_value, log_value))
            else:
                others.append(p)
        return others

    def add_non_consecutive(self, path: PurePath, pairs: list[tuple[int, int]]) -> None:
        """``path``: a local file's (keyed by its absolute path) or an object's URI (absolute already)."""
        if pairs:
            key = str(path.absolute()) if isinstance(path, Path) else str(path)
            self.non_consecutive.setdefault(key, []).extend(pairs)

    def _ordered(self, pairs: list[tuple[int, int]], descending: bool = False) -> list[tuple[int, int]]:
        if self.legacy:
            return pairs[::-1]  # the Scala tool prepended each pair to a list
        return sorted(dict(pairs).items(), reverse=descending)  # the Java port's TreeMap: one pair per key

    def lines(self) -> list[str]:
        out = []
        for name, pairs in self.index_mismatches.items():
            out.append(f"Mismatches in :{name}")
            out += [f"  Index offset: {i}, log offset: {o}" for i, o in self._ordered(pairs, descending=True)]
        errors = self.time_index
        for name, kinds in errors.items():
            if "timestamp_mismatch" in kinds:
                out.append(f"Found timestamp mismatch in :{name}")
                out += [f"  Index timestamp: {i}, log timestamp: {t}" for i, t in kinds["timestamp_mismatch"]]
        for name, kinds in errors.items():
            if "timestamp_order" in kinds:
                out.append(f"Found out of order timestamp in :{name}")
                out += [
                    f"  Index timestamp: {i}, Previously indexed timestamp: {t}" for i, t in kinds["timestamp_order"]
                ]
        for kinds in errors.values():
            if "offset_not_found" in kinds:
                out.append("The following indexed offsets are not found in the log.")
                out += [f"Indexed offset: {i}, found log offset: {o}" for i, o in kinds["offset_not_found"]]
        for name, pairs in self.non_consecutive.items():
            out.append(f"Non-consecutive offsets in {name}")
            out += [f"  {a} is followed by {b}" for a, b in self._ordered(pairs)]
        return out


#: the encodings as csrc/json_lines.c numbers them, and the timestamp types -1, 0, 1 as Kafka names them
_KERNEL_ENCODINGS = {"hex": 0, "base64": 1, "utf8": 2}
_TYPE_NAMES = tuple(TimestampType(t).kafka_name.encode() for t in (-1, 0, 1))


def _json_kernel():
    """The compiled kernel's record formatter (csrc/json_lines.c), or None."""
    from kcodec.generated.fast.kernel import compiled_kernel

    return getattr(compiled_kernel(), "json_records", None)


def formats_columns(encoding: str) -> bool:
    """Whether :func:`batch_ndjson_bytes` prints a batch decoded into columns in ``encoding``: hex always
    (by Arrow's string kernels where the compiled kernel's formatter is missing), base64 and utf8 with the
    compiled kernel's formatter."""
    return encoding == "hex" or _json_kernel() is not None


def _kernel_columns(table) -> tuple:
    """The record columns of ``table`` as the kernel's json_records takes them."""
    from kcodec.records.arrow_encode import ArrowRows

    def ints(name: str) -> tuple:
        array = _one(table.column(name))
        valid, data = array.buffers()[:2]
        return (valid, data, array.offset, len(array), array.type.bit_width // 8)

    key, value, _, headers, _ = ArrowRows(
        key=_one(table.column("key")), value=_one(table.column("value")), headers=_one(table.column("headers"))
    ).buffers()
    return (ints("offset"), ints("timestamp"), ints("timestampType"), key, value, headers, ints("sequence"))


def _check_column_records(table, encoding: str) -> None:
    """Raise what :func:`record_json` raises for the first record of ``table`` whose bytes do not print in
    ``encoding`` (utf8: bytes that are not UTF-8)."""
    if encoding != "utf8":
        return
    json_records = _json_kernel()
    if json_records is None:
        return
    got = json_records(*_kernel_columns(table), _TYPE_NAMES, _KERNEL_ENCODINGS[encoding], 0, table.num_rows, None)
    if got is None:  # rows the kernel leaves to Python: their Records raise it
        for record in _table_records(table):
            record_json(record, encoding)
    elif got is not True:
        row, field = got
        record = next(_table_records(table.slice(row, 1)))
        if field < 2:
            data, name = (record.key, "key") if field == 0 else (record.value, "value")
        else:
            header, data = record.headers[field - 2]
            name = _header_field(header)
        encode_bytes(data, encoding, _record_field(record.offset, name))
        raise AssertionError(f"the kernel and encode_bytes disagree on {name} of row {row}")  # pragma: no cover


def _table_records(table) -> Iterator[Record]:
    """The Records of a table's rows (the rows the kernel's formatter leaves to Python)."""
    for row in table.to_pylist():
        headers = tuple((h["key"], h["value"]) for h in row["headers"])
        yield Record(
            row["offset"],
            row["timestamp"],
            TimestampType(row["timestampType"]),
            row["key"],
            row["value"],
            headers,
            row["sequence"],
        )


def _column_record_pieces(
    table, rows_per_piece: int, encoding: str = DUMP_ENCODING, scratch: bytearray | None = None
) -> Iterator[str | memoryview]:
    """``as_ndjson(record_json(r, encoding))`` of each record of a v2 data batch, from its Arrow record
    columns (:func:`kcodec.records.columnar.schema`) instead of Record objects: the same bytes; comma-joined
    pieces of up to ``rows_per_piece`` records each, written by the compiled kernel's formatter as UTF-8
    into ``scratch`` (a view of it, released once the next piece is asked for; no Python object per record).
    Rows it leaves to Python, and every row where it is missing, are formatted by Arrow's string kernels
    (hex), else from their Records."""
    json_records = _json_kernel()
    columns = _kernel_columns(table) if json_records is not None else None
    out = bytearray() if scratch is None else scratch
    for start in range(0, table.num_rows, rows_per_piece):
        count = min(rows_per_piece, table.num_rows - start)
        got = None
        if columns is not None:
            got = json_records(*columns, _TYPE_NAMES, _KERNEL_ENCODINGS[encoding], start, count, out)
        if isinstance(got, int):
            with memoryview(out) as whole, whole[:got] as piece:
                yield piece  # released here: the next piece overwrites the scratch
        elif encoding == "hex":
            yield _records_text(table.slice(start, count))
        else:
            yield ",".join(as_ndjson(record_json(r, encoding)) for r in _table_records(table.slice(start, count)))


def _hex_strings(array):
    """A binary (or string) Arrow array as a string array of its values in hex: one hex() of the data
    buffer, with every offset doubled."""
    import pyarrow as pa
    import pyarrow.compute as pc

    validity, offsets_buffer, data = array.buffers()
    ends = pa.Array.from_buffers(pa.int32(), len(array) + 1, [None, offsets_buffer], offset=array.offset)
    first, last = (ends[0].as_py(), ends[len(array)].as_py()) if len(array) else (0, 0)
    text = memoryview(data)[first:last].hex().encode("ascii") if data is not None and last > first else b""
    doubled = pc.shift_left(pc.subtract(ends, pa.scalar(first, pa.int32())), pa.scalar(1, pa.int32()))
    bitmap = None if not array.null_count else array.is_valid().buffers()[1]
    return pa.Array.from_buffers(pa.string(), len(array), [bitmap, doubled.buffers()[1], pa.py_buffer(text)])


def _json_bytes(array) -> list:
    """Segments of ``"hex"`` of each value, ``null`` where null."""
    import pyarrow.compute as pc

    hexes = _hex_strings(array)
    if not array.null_count:
        return ['"', hexes, '"']
    return [pc.fill_null(pc.binary_join_element_wise('"', hexes, '"', ""), "null")]


def _records_text(table) -> str:
    import pyarrow as pa
    import pyarrow.compute as pc

    n = table.num_rows
    if n == 0:
        return ""
    join = pc.binary_join_element_wise
    headers = _one(table.column("headers"))
    structs = headers.flatten()  # the headers of these rows only
    keys = structs.field("key").dictionary_encode()  # few distinct keys: each quoted once by the one JSON writer
    quoted = pa.array([json.dumps(k, ensure_ascii=False) for k in keys.dictionary.to_pylist()], pa.string())
    pairs = join("[", quoted.take(keys.indices), ",", *_json_bytes(structs.field("value")), "]", "")
    spans = pc.subtract(headers.offsets, headers.offsets[0])
    per_record = pc.binary_join(pa.ListArray.from_arrays(spans, pairs), ",")
    type_names = {int(t): t.kafka_name for t in TimestampType}
    types = _one(table.column("timestampType"))
    low, high = pc.min_max(types).values()
    if low == high:
        names: list = [type_names[low.as_py()]]
    else:
        names = [pa.array([type_names[t] for t in types.to_pylist()], pa.string())]

    def text(name: str) -> list:
        return [pc.cast(_one(table.column(name)), pa.string())]

    parts = [
        '{"offset":',
        *text("offset"),
        ',"timestamp":',
        *text("timestamp"),
        ',"timestampType":"',
        *names,
        '","key":',
        *_json_bytes(_one(table.column("key"))),
        ',"value":',
        *_json_bytes(_one(table.column("value"))),
        ',"headers":[',
        per_record,
        '],"sequence":',
        *text("sequence"),
        "},",  # every record ends with a comma: the joined text is the data buffer, less its last byte
    ]
    merged: list = []
    for p in parts:  # adjacent literals as one
        if isinstance(p, str) and merged and isinstance(merged[-1], str):
            merged[-1] += p
        else:
            merged.append(p)
    lines = join(*merged, "")
    ends = pa.Array.from_buffers(pa.int32(), n + 1, [None, lines.buffers()[1]], offset=lines.offset)
    first, last = ends[0].as_py(), ends[n].as_py()
    return memoryview(lines.buffers()[2])[first : last - 1].tobytes().decode("utf-8")


def _one(column):
    """One array from a column of a table (a chunked array) or an array."""
    return column.combine_chunks() if hasattr(column, "combine_chunks") else column


def as_ndjson(obj: dict) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


__all__ = [
    "batch_line",
    "record_line",
    "batch_json",
    "record_json",
    "dump_log_lines",
    "DeferredErrors",
    "batch_ndjson",
    "batch_ndjson_bytes",
    "formats_columns",
    "as_ndjson",
    "TimestampType",
]
