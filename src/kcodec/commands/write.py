"""``kcodec write``: build a segment from JSON lines."""

from __future__ import annotations

import argparse
import sys
from itertools import islice
from pathlib import Path

from kcodec.commands.common import (
    EXIT_OK,
    UsageError,
    allow_lossy_hint,
    compression_choices,
    int32,
    int32_size,
    offset_int,
    positive_int,
)
from kcodec.errors import EncodeError


def _batches(records, size: int):
    it = iter(records)
    while True:
        chunk = list(islice(it, size))
        if not chunk:
            return
        yield chunk


def cmd_write(args: argparse.Namespace) -> int:
    from kcodec.log.files import segment_name
    from kcodec.log.index import build_indexes
    from kcodec.log.writer import SegmentWriter, write_atomically
    from kcodec.records.encode import encode_batch
    from kcodec.tools.records_io import read_json_records

    # bytes: read_json_records says which line is not UTF-8 instead of failing inside the file's decoder
    source = sys.stdin.buffer if args.input in (None, "-") else open(args.input, "rb")
    try:
        records = read_json_records(source, args.encoding, args.keep_offsets, args.input or "stdin")
        next_offset = args.base_offset
        out = Path(args.out)
        options = dict(
            magic=args.magic, compression=args.compression, compression_level=args.level, allow_lossy=args.allow_lossy
        )
        if out.suffix != ".log":  # a partition directory: segments roll, with their indexes
            out.mkdir(parents=True, exist_ok=True)
            batches = records_written = 0
            with SegmentWriter(out, base_offset=args.base_offset, segment_bytes=args.segment_bytes) as writer:
                for chunk in _batches(records, args.batch_size):
                    data = encode_batch(chunk, base_offset=None if args.keep_offsets else next_offset, **options)
                    writer.append(data)
                    batches += 1
                    records_written += len(chunk)
                    next_offset = _after(chunk, next_offset, args.keep_offsets)
            print(f"wrote {records_written} records in {batches} batches to {out} ({len(writer.completed)} segment(s))")
            return EXIT_OK
        chunks, count, batches = [], 0, 0
        for chunk in _batches(records, args.batch_size):
            chunks.append(encode_batch(chunk, base_offset=None if args.keep_offsets else next_offset, **options))
            count += len(chunk)
            batches += 1
            next_offset = _after(chunk, next_offset, args.keep_offsets)
        write_atomically(out, chunks)
        size = sum(map(len, chunks))
        if args.index:
            base = _base_offset(out, args.base_offset)
            index, timeindex = build_indexes(out, base)
            write_atomically(out.with_name(segment_name(base, ".index")), index)
            write_atomically(out.with_name(segment_name(base, ".timeindex")), timeindex)
        print(f"wrote {count} records in {batches} batches, {size} bytes, to {out}")
        return EXIT_OK
    except EncodeError as exc:
        raise allow_lossy_hint(exc) from None
    finally:
        if source is not sys.stdin.buffer:
            source.close()


def _after(chunk, next_offset: int, keep: bool) -> int:
    if keep and chunk and "offset" in chunk[-1]:
        return chunk[-1]["offset"] + 1
    return next_offset + len(chunk)


def _base_offset(path: Path, default: int) -> int:
    from kcodec.log.files import parse_segment_name

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
        "index files. Files appear atomically.",
    )
    p.add_argument("out", metavar="OUT", help="OUT.log, or a partition directory")
    p.add_argument("--input", "-i", metavar="FILE", help="JSON lines to read (default: stdin)")
    p.add_argument("--magic", type=int, choices=(0, 1, 2), default=2)
    p.add_argument("--compression", choices=compression_choices(), default="none")
    p.add_argument("--level", type=int32, help="compression level (gzip 1-9, lz4 1-17, zstd -131072..22)")
    p.add_argument(
        "--batch-size", type=positive_int, default=1000, metavar="N", help="records per batch (default 1000)"
    )
    p.add_argument("--base-offset", type=offset_int, default=0, metavar="OFFSET")
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
    p.add_argument(
        "--segment-bytes",
        type=int32_size,
        default=1 << 30,
        metavar="BYTES",
        help="roll segments at this size (partition directories; default 1 GiB)",
    )
    p.set_defaults(func=cmd_write)
