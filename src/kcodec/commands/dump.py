"""``kcodec dump``: print a log as kafka-dump-log does. The arguments are parsed here; each input is
dumped by :func:`kcodec.tools.dump.run.dump_input`, which says what its exit status means.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext
from typing import TYPE_CHECKING

from kcodec.commands.common import (
    EXIT_OK,
    STDIN,
    STDIN_NAME,
    TOPIC_DECODER_OPTIONS,
    UsageError,
    add_json,
    add_max_decompressed_size,
    add_schemas_from,
    add_value_schemas,
    byte_limit,
    chosen_registry,
    kafka_release,
    non_negative_int,
    offset_int,
    schema_package,
    value_schemas,
)
from kcodec.commands.object_store import RemoteObject, add_storage_option, expand, file_size_of, storage_of
from kcodec.tools.dump.decoders import CONFLUENT, KAFKA_STRING_DECODER  # light: no decoder loads before one is named

if TYPE_CHECKING:
    from kcodec.tools.dump.run import DumpInput

JAVA_PORT = (4, 3)  # the first Kafka release whose kafka-dump-log is the Java tool (KAFKA-14579), the default


def dump_inputs(args: argparse.Namespace) -> list[str]:
    """The positional FILEs then those of every ``--files a,b`` (kafka-dump-log's spelling), in order."""
    names = list(args.files) + [n for group in args.files_option or [] for n in group]
    if not names:
        raise UsageError("no input: name FILEs, or --files FILE1,FILE2 as kafka-dump-log takes them")
    if names.count(STDIN) > 1:
        raise UsageError("standard input (-) can be read only once")
    return names


def _inputs(names: list[str], args: argparse.Namespace):
    """Each name as the files it stands for: standard input, a local file, an object or every object of a
    prefix (:func:`kcodec.commands.object_store.expand`)."""
    for name in names:
        yield from [STDIN] if name == STDIN else expand(name, storage_of(args))


def _schema_registry_decoding(args: argparse.Namespace, names: list[str]):
    """--key-decoder/--value-decoder confluent: the decoder over --schemas, or the ``_schemas-N`` directory
    beside the first input's partition directory."""
    from kcodec.tools.dump.values import SchemaRegistryDecoding
    from kcodec.values.decoder import ValueDecoder

    keys, values = args.key_decoder == CONFLUENT, args.value_decoder == CONFLUENT
    if not (keys or values):
        if args.schemas is not None:
            raise UsageError("--schemas names the schemas of --key-decoder/--value-decoder confluent")
        return None
    source = value_schemas(args.schemas, names, "dump")
    return SchemaRegistryDecoding(ValueDecoder(source), keys=keys, values=values)


def _data_decoders(args: argparse.Namespace, names: list[str]):
    from kcodec.tools.dump.decoders import DataDecoders

    if args.key_decoder is None and args.value_decoder is None:
        if args.schemas is not None:
            raise UsageError("--schemas names the schemas of --key-decoder/--value-decoder confluent")
        return None
    plain = [d for d in (args.key_decoder, args.value_decoder) if d not in (None, CONFLUENT)]
    if args.json and plain:
        raise UsageError(
            "--key-decoder/--value-decoder shape the text output (in --json, --bytes-encoding does); only "
            "confluent adds decoded fields to --json"
        )
    confluent = _schema_registry_decoding(args, names)
    try:
        return DataDecoders(args.key_decoder or "string", args.value_decoder or "string", confluent)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _registry_choice(args: argparse.Namespace, package) -> str | None:
    """The internal topic a kafka-dump-log decoder option names for every file (--offsets-decoder ...)."""
    chosen = chosen_registry(args, package)
    if chosen and (args.key_decoder or args.value_decoder):
        raise UsageError("a topic decoder (--offsets-decoder ...) decodes keys and values: drop --key/--value-decoder")
    return chosen


def _dump_input(item) -> DumpInput:
    """Standard input, a local file or an object as the dump reads it."""
    from kcodec.tools.dump.run import DumpInput

    if item == STDIN:
        return DumpInput(STDIN_NAME, stdin=True, source=lambda: nullcontext(sys.stdin.buffer))
    if isinstance(item, RemoteObject):
        return DumpInput(item.path, item.size, source=item.open, staged=item.staged)
    return DumpInput(item, file_size_of(item))


def cmd_dump(args: argparse.Namespace) -> int:
    from kcodec.commands.progress import Progress  # not at start-up: --help stays as light
    from kcodec.tools.dump.log import DeferredErrors
    from kcodec.tools.dump.run import DumpOptions, dump_input
    from kcodec.tools.dump.topics import DECODER_OPTIONS

    names = dump_inputs(args)
    if args.start_offset is not None and args.end_offset is not None and args.start_offset >= args.end_offset:
        raise UsageError(f"--start-offset {args.start_offset} is not before --end-offset {args.end_offset}")
    decoders = _data_decoders(args, names)
    topic_decoder = any(getattr(args, option) for option in DECODER_OPTIONS)
    package = schema_package(args)  # the internal topics' records: kcodec's schemas or --schemas-from
    opts = DumpOptions(
        schemas=package,
        json=args.json,
        bytes_encoding=args.bytes_encoding,
        deep_iteration=args.deep_iteration,
        # a decoder implies --print-data-log, as in Kafka
        print_data=args.print_data_log or decoders is not None or topic_decoder,
        skip_record_metadata=args.skip_record_metadata,
        data_decoders=decoders,
        chosen_registry=_registry_choice(args, package),
        max_bytes=args.max_bytes,
        max_decompressed_size=args.max_decompressed_size,
        max_message_size=args.max_message_size,
        verify_index_only=args.verify_index_only,
        index_sanity_check=args.index_sanity_check,
        as_log=args.as_log,
        as_kafka07=args.as_kafka07,
        skip_corrupt=args.skip_corrupt,
        start_offset=args.start_offset,
        end_offset=args.end_offset,
        from_time=args.from_time,
        progress=lambda size, name, enabled: Progress(size, desc=name, enabled=enabled),
    )
    if args.as_kafka07 is not None and args.as_log:
        raise UsageError("--as-log and --as-kafka07 name two different framings: choose one")
    deferred = DeferredErrors(legacy=args.kafka_version < JAVA_PORT)
    status = EXIT_OK
    try:
        for item in _inputs(names, args):  # a regular file, an object, or one line and exit 2
            status = max(status, dump_input(_dump_input(item), opts, deferred))
        return status
    finally:
        sys.stdout.flush()
        for line in deferred.lines():  # as DumpLogSegments: after all files
            print(line, file=sys.stderr)


def add_parser(sub) -> None:
    p = sub.add_parser(
        "dump",
        help="print batches and records as kafka-dump-log does (or NDJSON)",
        description="Print every batch of each file in kafka-dump-log.sh's format, so the output "
        "can be diffed against Kafka's own tool. CRCs are checked and shown "
        "(isvalid), not enforced.",
    )
    p.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="segment files (.log, .index, .timeindex, .txnindex), producer-state snapshots (.snapshot), KRaft "
        "snapshots (.checkpoint), leader-epoch-checkpoint, partition.metadata, offset checkpoints; a partition "
        "directory (its files by base offset); - reads log entries from standard input; an s3://, gs://, "
        "abfss://, hdfs:// or file:// URI names an object, or "
        "(ending in /) a partition prefix whose files are dumped in offset order",
    )
    p.add_argument(
        "--files",
        dest="files_option",
        action="append",
        type=lambda text: [n for n in text.split(",") if n],
        metavar="FILE1,FILE2",
        help="more files, comma-separated, as kafka-dump-log takes them (beside or instead of FILE)",
    )
    p.add_argument("--deep-iteration", action="store_true", help="print every record, not only batches")
    p.add_argument(
        "--print-data-log", action="store_true", help="print keys and payloads as UTF-8 (implies --deep-iteration)"
    )
    p.add_argument(
        "--skip-record-metadata",
        action="store_true",
        help="record lines hold only key and payload; as in Kafka, a control record's line is then empty",
    )
    for part in ("key", "value"):
        p.add_argument(
            f"--{part}-decoder",
            dest=f"{part}_decoder",
            metavar="DECODER",
            help=f"how {part}s print (implies --print-data-log): string (UTF-8, the default), hex, base64, "
            "json (checked, compact), confluent (Schema Registry framed Avro, Protobuf or JSON Schema, printed "
            "as JSON; in --json adds "
            f"{part}SchemaId, {part}Decoded, {part}Error), or module:callable taking bytes and returning str",
        )
        p.add_argument(  # kafka-dump-log's spelling: its value is optional there, naming StringDecoder
            f"--{part}-decoder-class",
            dest=f"{part}_decoder",
            nargs="?",
            const=KAFKA_STRING_DECODER,
            metavar="DECODER",
            help=f"kafka-dump-log's name for --{part}-decoder; Kafka's {KAFKA_STRING_DECODER} (the default "
            "without a value) is string",
        )
    add_value_schemas(p, "of --key/--value-decoder confluent")
    for option, topic in TOPIC_DECODER_OPTIONS:
        p.add_argument(
            f"--{option}-decoder",
            action="store_true",
            help=f"decode records as {topic}'s, as kafka-dump-log does (implies --print-data-log; files under "
            f"a {topic}-N directory are decoded so whenever data is printed)",
        )
    add_schemas_from(p, "decode the internal topics' records (and KRaft control records) with the schemas")
    p.add_argument(
        "--max-bytes",
        type=non_negative_int,
        metavar="BYTES",
        help="read only the batches within the first BYTES of each log file (no trailing-bytes report)",
    )
    p.add_argument(
        "--max-message-size",
        type=byte_limit,
        metavar="BYTES",
        help="largest batch read at an .index entry's position; a larger one stops that index "
        "with an error (default 5 MiB, as kafka-dump-log)",
    )
    p.add_argument(
        "--verify-index-only",
        action="store_true",
        help="for .index/.timeindex files: check the entries against the log without printing them",
    )
    p.add_argument(
        "--index-sanity-check",
        action="store_true",
        help="for .index/.timeindex files: only the checks a broker runs on start-up (size a multiple of the "
        "entry size, last offset not below the base, last timestamp not below the first); exit 1 if one fails",
    )
    window = p.add_argument_group("a window of each log (whole batches, as a fetch returns them)")
    window.add_argument("--start-offset", type=offset_int, metavar="OFFSET", help="from the batch that holds OFFSET")
    window.add_argument(
        "--end-offset", type=offset_int, metavar="OFFSET", help="up to the batches before OFFSET (exclusive)"
    )
    window.add_argument(
        "--from-time",
        type=offset_int,
        metavar="MS",
        help="from the first batch whose max timestamp is at least MS (epoch milliseconds), then all after it",
    )
    p.add_argument(
        "--kafka-version",
        type=kafka_release,
        default=JAVA_PORT,  # a tuple: argparse converts only string defaults, so nothing is imported for it
        metavar="X.Y",
        help="print the lines of that Kafka release's kafka-dump-log (default 4.3, the Java tool; 4.2 or "
        "older: the Scala tool's, with its stray } after a legacy record's CRC)",
    )
    p.add_argument(
        "--as-log",
        action="store_true",
        help="read every FILE as log entries whatever its name (a records blob, a copied segment)",
    )
    p.add_argument(
        "--as-kafka07",
        nargs="?",
        const=-1,
        type=offset_int,
        metavar="BASE",
        help="read every FILE (and - , standard input) as a Kafka 0.7 segment whatever its name; BASE is its "
        "byte offset (default: from a %%020d.kafka name, else 0)",
    )
    add_json(p, "one line per batch with its records, nulls as null (NDJSON)", bytes_encoding=True)
    add_storage_option(p)
    add_max_decompressed_size(p)
    p.add_argument(
        "--skip-corrupt",
        action="store_true",
        help="after a batch that does not decode, scan forward to the next position where a whole batch "
        "parses and its CRC holds; print each skipped byte range with the reason (exit 1 if any, --json too)",
    )
    p.epilog = (
        "exit status: 0 everything was read (a file kind dump does not know by its name is ignored, as "
        "kafka-dump-log ignores it; --as-log reads it); 1 --skip-corrupt skipped damaged bytes, or an index "
        "failed --index-sanity-check; 2 bad usage (also a FILE that is missing or not a regular file); 3 "
        "stopped at bytes that do not decode, or a decoder failed"
    )
    p.set_defaults(func=cmd_dump)
