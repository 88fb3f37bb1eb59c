"""``kcodec inspect``: an annotated hex view of real bytes, field by field."""

from __future__ import annotations

import argparse
import mmap
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from kcodec.commands.common import (
    EXIT_CHECK_FAILED,
    EXIT_OK,
    STDIN,
    STDIN_NAME,
    TOPIC_DECODER_OPTIONS,
    UsageError,
    add_json,
    add_max_decompressed_size,
    add_schemas_from,
    add_value_schemas,
    chosen_registry,
    existing_file,
    non_negative_int,
    offset_int,
    package_entity,
    positive_int,
    print_json,
    schema_package,
    value_schemas,
)
from kcodec.tools.dump.decoders import CONFLUENT  # light: no decoder loads before one is named


def _colour(choice: str) -> bool:
    if choice == "always":
        return True
    if choice == "never":
        return False
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def find_offset(inspector, buf, target: int) -> int:
    """Byte position of the entry holding offset ``target``; a usage error when none does."""
    pos, last_seen = inspector.position_of_offset(buf, target)
    if pos is not None:
        return pos
    where = f"; the last entry read ends at offset {last_seen}" if last_seen is not None else ""
    raise UsageError(f"no entry holds offset {target}{where}")


def _registry(args: argparse.Namespace, path, codecs) -> str | None:
    """The internal topic whose records' keys and values are read: the one a kafka-dump-log decoder option
    names, else the one the file's partition directory is named after (as ``codecs``' registries know it)."""
    from kcodec.tools.dump.topics import registry_for_path

    return chosen_registry(args, codecs) or registry_for_path(path, codecs.registries)


@contextmanager
def _opened(name: str) -> Iterator[BinaryIO]:
    """The bytes to inspect as a file that maps: FILE, or standard input spooled to a temporary file (so a
    long input is never held in memory)."""
    if name != STDIN:
        with open(name, "rb") as f:
            yield f
        return
    with tempfile.TemporaryFile(prefix="kcodec-stdin-") as f:
        shutil.copyfileobj(sys.stdin.buffer, f, 1 << 20)
        f.flush()
        f.seek(0)
        yield f


def cmd_inspect(args: argparse.Namespace) -> int:
    from kcodec.tools.inspect import Inspector

    path = STDIN_NAME if args.file == STDIN else existing_file(args.file)
    package = schema_package(args)  # whose schemas the records' keys and values (and --entity) are read with
    codecs = package.codecs
    if args.entity is not None:
        return _inspect_entity(args, path, package)
    registry = _registry(args, path, codecs)
    inspector = Inspector(
        expand=args.records,
        max_decompressed_size=args.max_decompressed_size,
        registry=registry,
        codecs=codecs,
        framed=_framed_parts(args, path, registry),
    )
    return _inspect_entries(args, path, inspector)


def _framed_parts(args: argparse.Namespace, path, registry: str | None):
    """--key-decoder/--value-decoder confluent: the records' Schema Registry framed keys and values, decoded
    with --schemas or the ``_schemas-N`` directory beside the file's partition directory (without one, the
    headers are still read)."""
    from kcodec.log.names import parse_partition_dir
    from kcodec.tools.inspect.values import FramedPart
    from kcodec.values.decoder import ValueDecoder
    from kcodec.values.sources import default_schemas_path

    parts = [part for part in ("key", "value") if getattr(args, f"{part}_decoder") == CONFLUENT]
    if not parts:
        if args.schemas is not None:
            raise UsageError("--schemas names the schemas of --key-decoder/--value-decoder confluent")
        return None
    if registry is not None:
        raise UsageError(f"{registry}'s keys and values are read by its own framing: drop --key/--value-decoder")
    local = path != STDIN_NAME
    found = args.schemas is not None or (local and default_schemas_path(str(path)) is not None)
    decoder = ValueDecoder(value_schemas(args.schemas, [str(path)], "inspect")) if found else None
    try:
        topic = parse_partition_dir(str(Path(path).parent))[0] if local else None
    except ValueError:
        topic = None
    return [FramedPart(part, decoder, topic) for part in parts]


def _inspect_entity(args: argparse.Namespace, path, package) -> int:
    """The whole file as one message of ``--entity NAME[:VERSION]`` (its latest version by default)."""
    from kcodec.tools.dump.topics import DECODER_OPTIONS
    from kcodec.tools.inspect import BAD, Inspector, render_text

    refused = [
        o for o, v in (("--at", args.at), ("--offset", args.offset), ("--batches", args.batches)) if v is not None
    ]
    refused += ["--" + o.replace("_", "-") for o in DECODER_OPTIONS if getattr(args, o, False)]
    refused += [f"--{o}" for o in ("key-decoder", "value-decoder", "schemas") if getattr(args, o.replace("-", "_"))]
    if refused:
        raise UsageError(f"--entity reads the whole file as one message: drop {', '.join(refused)}")
    entity, version = package_entity(package, args.entity, "--entity")
    if version is None:
        version = package.versions[entity][-1]
    inspector = Inspector(expand=True, max_decompressed_size=args.max_decompressed_size, codecs=package.codecs)
    with _opened(args.file) as f:
        data = f.read()
    span = inspector.inspect_entity(entity, version, data)
    if args.json:
        print_json(span.as_dict() | {"file": str(path)})
    else:
        print(render_text(span, colour=_colour(args.color), max_bytes=args.max_bytes))
        print(f"\n-- {path}: {entity} v{version}, {span.status}")
    return EXIT_CHECK_FAILED if span.status == BAD else EXIT_OK


def _inspect_entries(args: argparse.Namespace, path, inspector) -> int:
    from kcodec.log.kafka07 import is_kafka07_segment
    from kcodec.log.names import parse_segment_name
    from kcodec.tools.inspect import BAD, render_text

    # a Kafka 0.7 segment by its name (.kafka), its entries at byte offsets from the name's base
    kafka07_base = parse_segment_name(path).base_offset if is_kafka07_segment(path) else None

    colour = _colour(args.color)
    with _opened(args.file) as f:
        size = os.fstat(f.fileno()).st_size
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        buf = memoryview(mm) if mm is not None else memoryview(b"")
        try:
            start = 0
            if args.at is not None:
                if not 0 <= args.at < max(size, 1) or size == 0:
                    raise UsageError(f"--at {args.at} is outside the file ({size} bytes)")
                start = args.at
            elif args.offset is not None and kafka07_base is not None:
                start = args.offset - kafka07_base  # a 0.7 offset is a byte position: the entry starting there
                if not 0 <= start < size:
                    raise UsageError(f"--offset {args.offset} is outside the segment's byte offsets")
            elif args.offset is not None:
                start = find_offset(inspector, buf, args.offset)
            count = (
                args.batches
                if args.batches is not None
                else (1 if args.at is not None or args.offset is not None else None)
            )
            entries = damaged = 0
            end = start
            spans = (
                inspector.kafka07_entries(buf, kafka07_base, start, count)
                if kafka07_base is not None
                else inspector.entries(buf, start, count)
            )
            for span in spans:
                entries += 1
                damaged += span.status == BAD
                end = span.end
                if args.json:
                    d = span.as_dict(full=args.records)
                    d["file"] = str(path)
                    print_json(d)
                else:
                    if entries > 1:
                        print()
                    print(render_text(span, colour=colour, max_bytes=args.max_bytes))
            if not args.json:
                summary = (
                    f"{entries} entr{'y' if entries == 1 else 'ies'}, bytes {start}..{end - 1} of "
                    f"{size}: {damaged} damaged"
                    if entries
                    else f"no entries ({size} bytes)"
                )
                print(("\n" if entries else "") + f"-- {path}: {summary}")
        finally:
            buf.release()
            if mm is not None:
                try:
                    mm.close()
                except BufferError:  # a span still points into the map; the GC closes it
                    pass
    return EXIT_CHECK_FAILED if damaged else EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser(
        "inspect",
        help="annotated hex view of log entries: every field's bytes, name and value",
        description="Walk the schemas over real bytes: each field's byte range, raw bytes, schema path and "
        "decoded value, down into every varint of every record and inside compressed streams "
        "(positions there count from the start of the decompressed bytes, marked +). CRCs show "
        "stored and computed values; damaged fields are marked (!) where they are and inspection "
        "goes on as far as the bytes allow. Exit 1 if any entry is damaged.",
    )
    p.add_argument("file", metavar="FILE", help="a segment .log file or any records blob; - reads standard input")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--at", type=non_negative_int, metavar="POSITION", help="start at the entry at this byte position"
    )
    where.add_argument(
        "--offset",
        type=offset_int,
        metavar="OFFSET",
        help="start at the entry holding this offset (found by scanning entry headers)",
    )
    p.add_argument(
        "--batches",
        type=positive_int,
        metavar="N",
        help="show at most N entries (default: 1 with --at/--offset, else all)",
    )
    p.add_argument(
        "--records",
        action="store_true",
        help="expand every record into its fields (default: one summary line per record)",
    )
    p.add_argument(
        "--entity",
        metavar="NAME[:VERSION]",
        help="read the whole file as one message of this entity (default: its latest version), every field "
        "expanded; Kafka's names too (OffsetCommitValue:3, or any message of --schemas-from)",
    )
    _add_topic_options(p)
    for part in ("key", "value"):
        p.add_argument(
            f"--{part}-decoder",
            dest=f"{part}_decoder",
            choices=(CONFLUENT,),
            help=f"confluent: records' {part}s are Schema Registry framed: their header read field by field (magic, "
            "schema id, Protobuf's message-index path), their payload decoded as dump's --"
            f"{part}-decoder confluent does",
        )
    add_value_schemas(p, "of --key/--value-decoder confluent")
    add_schemas_from(p, "read internal topics' records and --entity with the schemas (Kafka's names accepted)")
    add_json(p, "one span tree per entry: start/end/path/hex/value/notes/status/children (NDJSON)")
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="ANSI colour (auto: only on a terminal and when NO_COLOR is unset)",
    )
    p.add_argument(
        "--max-bytes",
        type=non_negative_int,
        default=32,
        metavar="N",
        help="raw bytes shown per field before eliding (default 32; 0 shows all)",
    )
    add_max_decompressed_size(p, "streams")
    p.set_defaults(func=cmd_inspect)


def _add_topic_options(p) -> None:
    """kafka-dump-log's decoder options, as dump has them: records' keys and values read as that internal
    topic's."""
    topics = p.add_mutually_exclusive_group()
    for option, topic in TOPIC_DECODER_OPTIONS:
        topics.add_argument(
            f"--{option}-decoder",
            action="store_true",
            help=f"read records' keys and values as {topic}'s (files under a {topic}-N directory are read so "
            "without it)",
        )
