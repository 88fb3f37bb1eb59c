"""``kcodec write``: build a segment from JSON lines."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kcodec.commands.common import (
    EXIT_OK,
    UsageError,
    add_json,
    allow_lossy_hint,
    compression_choices,
    existing_file,
    int32,
    int32_size,
    offset_int,
    positive_int,
    print_json,
    refuse_overlap,
)
from kcodec.errors import EncodeError
from kcodec.log.names import TABLE_CATALOG_NAME


def record_groups(items, size: int):
    """(parts, dumped batch or None, record count): loose records in batches of ``size``; a batch of
    ``kcodec dump --json`` alone, as it was. A part is a record (a dict) or a run of a block's
    columns, ``(ArrowRows, (start, count))``."""
    from kcodec.tools.json_rows import RowsChunk
    from kcodec.tools.records_io import DumpedBatch

    parts: list = []
    pending = 0
    for item in items:
        if isinstance(item, DumpedBatch):
            if parts:
                yield parts, None, pending
                parts, pending = [], 0
            yield item.records, item, len(item.records)
        elif isinstance(item, RowsChunk):
            start = 0
            while start < item.count:
                n = min(size - pending, item.count - start)
                parts.append((item.rows, (start, n)))
                start += n
                pending += n
                if pending >= size:
                    yield parts, None, pending
                    parts, pending = [], 0
        else:
            parts.append(item)
            pending += 1
            if pending >= size:
                yield parts, None, pending
                parts, pending = [], 0
    if parts:
        yield parts, None, pending


def _batch_options(dumped, options: dict) -> dict:
    """encode_batch's options for one batch: --magic / --compression where given, else a dumped batch's own
    format and codec (and its LogAppendTime, delete horizon), else v2 uncompressed."""
    from kcodec.records.model import TimestampType

    magic = options["magic"]
    if magic is None:
        magic = dumped.magic if dumped is not None and dumped.magic is not None else 2
    compression = options["compression"]
    if compression is None:
        compression = dumped.compression if dumped is not None and dumped.compression is not None else "none"
    out = {**options, "magic": magic, "compression": compression}
    if dumped is not None and dumped.log_append_time is not None and magic >= 1:
        out.update(timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=dumped.log_append_time)
    if dumped is not None and dumped.delete_horizon_ms is not None and magic == 2:
        out["delete_horizon_ms"] = dumped.delete_horizon_ms
    return out


def encode_group(parts: list, dumped, next_offset: int, keep: bool, options: dict) -> tuple[bytes, int]:
    """One batch (or legacy message set) and the offset after it. A dumped batch keeps its
    producer id, epoch, sequence, transactional flag and control record, or is refused; its
    format and codec unless the command line names others. Runs of columns are written by the
    kernel's column encoder when the whole batch is columns (the bytes encode_batch makes of the
    same records), else turned into records."""
    from kcodec.errors import EncodeError
    from kcodec.records.arrow_encode import encode_parts, new_records
    from kcodec.records.encode import encode_batch, encode_control_batch, encode_v2_written

    options = _batch_options(dumped, options)
    records = parts
    if dumped is None and any(not isinstance(p, dict) for p in parts):
        if options["magic"] == 2 and not keep and all(not isinstance(p, dict) for p in parts):
            written = encode_parts(parts, next_offset)
            if written is not None:
                level = options["compression_level"]
                return encode_v2_written(written, compression=options["compression"], compression_level=level), (
                    next_offset + written[1]
                )
        records = [r for p in parts for r in ([p] if isinstance(p, dict) else new_records(*p))]
    if dumped is not None and dumped.keeps_producer_state and options["magic"] < 2:
        raise EncodeError(
            f"{dumped.where}: magic {options['magic']} cannot keep this batch's producer or transaction "
            "state (write it as magic 2)"
        )
    if dumped is not None and dumped.control is not None:
        c = dumped.control
        offset = c.offset if keep and c.offset is not None else next_offset
        marker = c.type_name.lower() in ("commit", "abort")
        data = encode_control_batch(
            c.type_name,
            producer_id=dumped.producer_id,
            producer_epoch=dumped.producer_epoch,
            coordinator_epoch=c.coordinator_epoch,
            offset=offset,
            timestamp=c.timestamp,
            partition_leader_epoch=dumped.partition_leader_epoch,
            transactional=dumped.transactional,
            value=None if marker else c.value,
        )
        return data, offset + 1
    state = {}
    if dumped is not None:
        state = dict(
            producer_id=dumped.producer_id,
            producer_epoch=dumped.producer_epoch,
            base_sequence=dumped.base_sequence,
            transactional=dumped.transactional,
            partition_leader_epoch=dumped.partition_leader_epoch if options["magic"] == 2 else -1,
        )
    data = encode_batch(records, base_offset=None if keep else next_offset, **options, **state)
    return data, _after(records, next_offset, keep)


def cmd_write(args: argparse.Namespace) -> int:
    if args.from_table is not None:
        return _from_table(args)
    if args.catalog is not None or args.catalog_name != TABLE_CATALOG_NAME:
        raise UsageError("--catalog and --catalog-name name the Iceberg catalog of --from-table")
    from kcodec.commands.progress import Progress, counted_lines, file_size  # not at start-up: --help stays as light
    from kcodec.log.index import build_indexes
    from kcodec.log.names import segment_name
    from kcodec.log.writer import SegmentWriter, write_atomically
    from kcodec.tools import json_rows
    from kcodec.tools.records_io import read_json_records

    out = Path(args.out)
    stdin = args.input in (None, "-")
    if not stdin:
        refuse_overlap([existing_file(args.input)], [out])
    # bytes: read_json_records says which line is not UTF-8 instead of failing inside the file's decoder
    source = sys.stdin.buffer if stdin else open(args.input, "rb")
    progress = Progress(None if stdin else file_size(args.input), desc=out.name)  # input bytes read
    try:
        name = args.input or "stdin"
        if not args.keep_offsets and args.magic in (None, 2) and json_rows.available():  # blocks as Arrow columns
            records = json_rows.read_json_items(source, args.encoding, name, progress)
        else:
            records = read_json_records(counted_lines(source, progress), args.encoding, args.keep_offsets, name)
        options = dict(
            magic=args.magic, compression=args.compression, compression_level=args.level, allow_lossy=args.allow_lossy
        )
        if out.suffix != ".log":  # a partition directory: segments roll, with their indexes
            out.mkdir(parents=True, exist_ok=True)
            batches = records_written = 0
            with SegmentWriter(
                out, base_offset=args.base_offset, segment_bytes=args.segment_bytes, keep_completed_on_error=False
            ) as writer:
                next_offset = writer.base_offset
                for chunk, dumped, count in record_groups(records, args.batch_size):
                    data, next_offset = encode_group(chunk, dumped, next_offset, args.keep_offsets, options)
                    writer.append(data)
                    batches += 1
                    records_written += count
            progress.close()
            segments = len(writer.completed)
            if args.json:
                print_json({"output": str(out), "records": records_written, "batches": batches, "segments": segments})
            else:
                print(f"wrote {records_written} records in {batches} batches to {out} ({segments} segment(s))")
            return EXIT_OK
        # one batch in memory at a time: each is written to the temporary as soon as it is encoded
        totals = {"records": 0, "batches": 0, "bytes": 0}

        def encoded():
            next_offset = args.base_offset or 0
            for chunk, dumped, count in record_groups(records, args.batch_size):
                data, next_offset = encode_group(chunk, dumped, next_offset, args.keep_offsets, options)
                totals["records"] += count
                totals["batches"] += 1
                totals["bytes"] += len(data)
                yield data

        write_atomically(out, encoded())
        progress.close()
        count, batches, size = totals["records"], totals["batches"], totals["bytes"]
        if args.index:
            base = _base_offset(out, args.base_offset or 0)
            index, timeindex = build_indexes(out, base)
            write_atomically(out.with_name(segment_name(base, ".index")), index)
            write_atomically(out.with_name(segment_name(base, ".timeindex")), timeindex)
        if args.json:
            print_json({"output": str(out), "records": count, "batches": batches, "bytes": size, "indexed": args.index})
        else:
            print(f"wrote {count} records in {batches} batches, {size} bytes, to {out}")
        return EXIT_OK
    except EncodeError as exc:
        raise allow_lossy_hint(exc) from None
    finally:
        progress.close()
        if source is not sys.stdin.buffer:
            source.close()


#: the options that say how to encode JSON records: a table's rows keep their batches' own
_ENCODING_OPTIONS = ("input", "magic", "compression", "level", "base_offset", "index", "allow_lossy")


def _from_table(args: argparse.Namespace) -> int:
    """``--from-table TABLE OUT``: the partition directories a table of records rows describes, under OUT."""
    from kcodec.tools.from_table import open_table, rebuild

    given = [f"--{name.replace('_', '-')}" for name in _ENCODING_OPTIONS if getattr(args, name) not in (None, False)]
    if args.keep_offsets or args.batch_size != 1000 or args.encoding != "utf8" or args.segment_bytes != 1 << 30:
        given.append("--keep-offsets/--batch-size/--encoding/--segment-bytes")
    if given:
        raise UsageError(f"--from-table keeps each batch as the table has it; it takes no {', '.join(given)}")
    out = Path(args.out)
    if out.suffix == ".log":
        raise UsageError(f"--from-table writes partition directories: OUT is a directory, not {out.name}")
    if args.catalog is None:
        refuse_overlap([args.from_table], [out])
    reports, lacking = rebuild(open_table(args.from_table, args.catalog, args.catalog_name), out)
    if args.json:
        print_json(
            {
                "table": args.from_table,
                "output": str(out),
                "partitions": [r.as_json() for r in reports],
                "columnsMissing": lacking,
            }
        )
        return EXIT_OK
    records, batches = sum(r.records for r in reports), sum(r.batches for r in reports)
    print(f"rebuilt {records:,} records in {batches:,} batches from {args.from_table} into {out}")
    head = ("topic-partition", "records", "batches", "identical", "re-encoded", "unchecked", "segments")
    rows = [
        (
            f"{r.topic}-{r.partition}",
            f"{r.records:,}",
            f"{r.batches:,}",
            f"{r.identical:,}",
            f"{r.reencoded:,}",
            f"{r.unchecked:,}",
            f"{len(r.segments)}, {_segments_state(r)}",
        )
        for r in reports
    ]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    for row in [head, *rows]:
        print(
            "  ".join(
                v.ljust(w) if i in (0, len(head) - 1) else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths))
            ).rstrip()
        )
    print(
        "identical: the batch's bytes are the source's (its stored CRC matches); re-encoded: CRC-valid, the same "
        "records, other bytes (a codec that compressed them differently)"
    )
    if lacking:
        checked = (
            "byte identity was not checked"
            if "crc" in lacking
            else "batches that needed them came back with the same records, counted re-encoded"
        )
        print(
            f"note: the table has no {', '.join(lacking)} column(s) (written before kcodec kept them): batches "
            f"were rebuilt CRC-valid with the same records; {checked}"
        )
    return EXIT_OK


def _segments_state(report) -> str:
    if report.segments_identical:
        return "byte-identical"
    if report.unchecked:
        return "not checked"
    if report.reencoded:
        return f"differ ({report.reencoded} re-encoded batch{'es' if report.reencoded > 1 else ''})"
    return f"differ from offset {report.moved} (the table lacks batches before it: control records, filtered rows)"


def _after(chunk, next_offset: int, keep: bool) -> int:
    if keep and chunk and "offset" in chunk[-1]:
        return chunk[-1]["offset"] + 1
    return next_offset + len(chunk)


def _base_offset(path: Path, default: int) -> int:
    from kcodec.log.names import parse_segment_name

    try:
        return parse_segment_name(path).base_offset
    except ValueError:
        raise UsageError(f"--index needs a segment name like {'0' * 20}.log, not {path.name}") from None


def add_parser(sub) -> None:
    from kcodec.tools.records_io import ENCODINGS

    p = sub.add_parser(
        "write",
        help="build a segment from JSON lines",
        description="Read records as JSON lines ({key, value, headers, timestamp}, or the batches "
        "`kcodec dump --json` prints) and write them as Kafka log entries. OUT.log is "
        "one file; any other OUT is a partition directory with rolling segments and "
        "index files. Files appear atomically. --from-table TABLE OUT rebuilds partition "
        "directories from a table of kcodec's records rows.",
    )
    p.add_argument("out", metavar="OUT", help="OUT.log, or a partition directory (with --from-table: a log directory)")
    p.add_argument(
        "--from-table",
        metavar="TABLE",
        help="rebuild partition directories under OUT from a table of kcodec's records rows: a Parquet folder "
        "(kcodec pipeline's DEST/records), a Delta table, an Iceberg .metadata.json, or with --catalog an "
        "Iceberg table name; offsets, timestamps, headers and batches as they were",
    )
    p.add_argument(
        "--catalog",
        metavar="URI",
        help="the pyiceberg catalog of an Iceberg --from-table: a URI (sqlite:///catalog.db, a REST URL ...) "
        "or a catalog name from pyiceberg's configuration",
    )
    p.add_argument(
        "--catalog-name",
        metavar="NAME",
        default=TABLE_CATALOG_NAME,
        help="the name the catalog at --catalog URI registered its tables under (SQL catalogs keep it; "
        f"default: {TABLE_CATALOG_NAME}, as kcodec pipeline --table-format iceberg registers them)",
    )
    p.add_argument("--input", "-i", metavar="FILE", help="JSON lines to read (default: stdin)")
    p.add_argument(
        "--magic",
        type=int,
        choices=(0, 1, 2),
        help="message format (default 2; a batch from `kcodec dump --json` keeps its dumped unless this is given)",
    )
    p.add_argument(
        "--compression",
        choices=compression_choices(),
        help="codec (default none; a batch from `kcodec dump --json` keeps its dumped unless this is given)",
    )
    p.add_argument("--level", type=int32, help="compression level (gzip 1-9, lz4 1-17, zstd -131072..22)")
    p.add_argument(
        "--batch-size", type=positive_int, default=1000, metavar="N", help="records per batch (default 1000)"
    )
    p.add_argument(
        "--base-offset",
        type=offset_int,
        metavar="OFFSET",
        help="first offset (default 0; a partition directory continues after its last offset, "
        "and refuses an OFFSET it already holds)",
    )
    p.add_argument("--keep-offsets", action="store_true", help="use each record's 'offset' field")
    p.add_argument(
        "--allow-lossy",
        action="store_true",
        help="drop what --magic cannot hold (timestamps in magic 0, headers below magic 2) instead of refusing",
    )
    p.add_argument(
        "--encoding",
        choices=ENCODINGS,
        default="utf8",
        help="how keys, values and header values are written in the JSON (default utf8)",
    )
    p.add_argument("--index", action="store_true", help="also write .index and .timeindex next to OUT.log")
    add_json(p, "what was written")
    p.add_argument(
        "--segment-bytes",
        type=int32_size,
        default=1 << 30,
        metavar="BYTES",
        help="roll segments at this size (partition directories; default 1 GiB)",
    )
    p.set_defaults(func=cmd_write)
