"""``kcodec convert``: re-encode a log in another magic or compression codec, keeping offsets."""

from __future__ import annotations

import argparse
from pathlib import Path

from kcodec.commands.common import (
    EXIT_OK,
    add_json,
    allow_lossy_hint,
    compression_choices,
    existing_file,
    int32,
    print_json,
    refuse_overlap,
)
from kcodec.errors import EncodeError


def cmd_convert(args: argparse.Namespace) -> int:
    from kcodec.commands.progress import Progress, file_size  # not at start-up: --help stays as light
    from kcodec.log.writer import write_atomically
    from kcodec.records.reader import read_batches

    src, out = existing_file(Path(args.input)), Path(args.out)
    refuse_overlap([src], [out])
    reader = read_batches(src, verify_crc=not args.no_verify)
    chunks: list[bytes] = []
    batches, records = 0, 0
    with Progress(file_size(src), desc=src.name) as progress:
        for batch in reader:
            progress.to(batch.position + batch.size)
            _convert_one(batch, args, chunks)
            batches += 1
            records += len(batch.records)
    write_atomically(out, chunks)
    if args.json:
        print_json(
            {
                "input": str(src),
                "output": str(out),
                "records": records,
                "batches": batches,
                "magic": args.magic,
                "compression": args.compression,
                "inputBytes": src.stat().st_size,
                "outputBytes": sum(map(len, chunks)),
                "partialTailBytes": reader.partial_tail.size if reader.partial_tail else 0,
            }
        )
        return EXIT_OK
    tail = f"; ignored a partial batch of {reader.partial_tail.size} bytes at the end" if reader.partial_tail else ""
    print(
        f"converted {records} records in {batches} batches to magic {args.magic} / {args.compression}: "
        f"{src.stat().st_size} -> {sum(map(len, chunks))} bytes{tail}"
    )
    return EXIT_OK


def _convert_one(batch, args: argparse.Namespace, chunks: list[bytes]) -> None:
    from kcodec.records.encode import convert_batches

    try:
        chunks.append(
            convert_batches(
                [batch],
                magic=args.magic,
                compression=args.compression,
                compression_level=args.level,
                allow_lossy=args.allow_lossy,
            )
        )
    except EncodeError as exc:
        raise allow_lossy_hint(exc) from None


def add_parser(sub) -> None:
    p = sub.add_parser(
        "convert",
        help="re-encode a log in another magic / codec, keeping offsets",
        description="Up- or down-convert like a broker: every record keeps its offset and "
        "timestamp. Lossy conversions (headers or transactions into v0/v1, "
        "timestamps into v0, zstd below v2) are refused unless --allow-lossy.",
    )
    p.add_argument("input", metavar="IN")
    p.add_argument("out", metavar="OUT")
    p.add_argument("--magic", type=int, choices=(0, 1, 2), required=True)
    p.add_argument("--compression", choices=compression_choices(), default="none")
    p.add_argument("--level", type=int32, help="compression level")
    p.add_argument("--allow-lossy", action="store_true", help="drop what the target format cannot hold")
    p.add_argument("--no-verify", action="store_true", help="do not check CRCs of the input")
    add_json(p, "what was converted and the sizes before and after")
    p.set_defaults(func=cmd_convert)
