"""``kcodec dump`` and ``kcodec verify``: print a log as kafka-dump-log does; check every rule.

Exit status: 0 all read (dump) / all valid (verify); 1 verify found a problem,
or ``dump --skip-corrupt`` skipped damaged bytes; 2 bad usage; 3 dump stopped
at bytes it could not decode (the one-line error on stderr says where and why),
or a batch was refused by ``--max-decompressed-size`` and nothing was damaged
(a batch kcodec's own cap refuses is never taken for damage: ``--skip-corrupt``
and ``verify`` report it and go on at its end, ``verify --recover`` keeps it).
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path

from kcodec.commands.common import (
    EXIT_CHECK_FAILED,
    EXIT_ERROR,
    EXIT_OK,
    TOPIC_DECODER_OPTIONS,
    UsageError,
    add_json,
    add_max_decompressed_size,
    add_schemas_from,
    byte_limit,
    chosen_registry,
    non_negative_int,
    print_json,
    refuse_overlap,
    schema_package,
)
from kcodec.commands.object_store import RemoteObject, add_storage_option, display, expand, file_size_of, storage_of
from kcodec.errors import DecompressionLimitError, EncodeError, KcodecError

JAVA_PORT = (4, 3)  # the first Kafka release whose kafka-dump-log is the Java tool (KAFKA-14579), the default


STDIN = "-"


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


def _data_decoders(args: argparse.Namespace):
    from kcodec.tools.dump_decoders import DataDecoders

    if args.key_decoder is None and args.value_decoder is None:
        return None
    if args.json:
        raise UsageError("--key-decoder/--value-decoder shape the text output; in --json, --bytes-encoding does")
    try:
        return DataDecoders(args.key_decoder or "string", args.value_decoder or "string")
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _internal_registry(args: argparse.Namespace, path: Path, print_data: bool, source) -> str | None:
    """The registry decoding this file's records: the one a kafka-dump-log decoder option names, else (when
    data is printed) the one of the internal topic the file's partition directory is named after."""
    from kcodec.tools.dump_internal import registry_for_path

    chosen = chosen_registry(args, source)
    if chosen and (args.key_decoder or args.value_decoder):
        raise UsageError("a topic decoder (--offsets-decoder ...) decodes keys and values: drop --key/--value-decoder")
    if chosen:
        return chosen
    if print_data and not (args.key_decoder or args.value_decoder):
        return registry_for_path(path, source)
    return None


class _Bounded:
    """A binary stream that ends after ``limit`` bytes: --max-bytes on standard input."""

    def __init__(self, stream, limit: int):
        self.stream, self.left = stream, limit

    def read(self, n: int = -1) -> bytes:
        n = self.left if n is None or n < 0 else min(n, self.left)
        data = self.stream.read(n) if n else b""
        self.left -= len(data)
        return data


def cmd_dump(args: argparse.Namespace) -> int:
    from kcodec.tools.dump import DeferredErrors
    from kcodec.tools.dump_internal import DECODER_OPTIONS

    names = dump_inputs(args)
    decoders = _data_decoders(args)
    topic_decoder = any(getattr(args, option) for option in DECODER_OPTIONS)
    # a decoder implies --print-data-log, as in Kafka
    print_data = args.print_data_log or decoders is not None or topic_decoder
    legacy = args.kafka_version < JAVA_PORT
    deferred = DeferredErrors(legacy=legacy)
    try:
        return _dump_all(args, names, decoders, print_data, deferred)
    finally:
        sys.stdout.flush()
        for line in deferred.lines():  # as DumpLogSegments: after all files
            print(line, file=sys.stderr)


def _column_decoder():
    """:func:`kcodec.records.columnar.entry_to_arrow` when the kernel decodes v2 records into columns (and
    pyarrow is there): ``dump --json`` then formats records from columns instead of Record objects."""
    try:
        import pyarrow  # noqa: F401

        from kcodec.records.columnar import entry_to_arrow, kernel_columns
    except ImportError:
        return None
    return entry_to_arrow if kernel_columns() else None


def _dump_all(args: argparse.Namespace, names: list[str], decoders, print_data: bool, deferred) -> int:
    from kcodec.commands.progress import Progress  # not at start-up: --help stays as light
    from kcodec.records.reader import read_batches, shrank_message
    from kcodec.tools.dump import as_ndjson, batch_json, batch_ndjson, dump_log_lines
    from kcodec.tools.dump_decoders import STRING, DecoderError
    from kcodec.tools.dump_files import FileKind, file_kind
    from kcodec.tools.dump_internal import InternalDecoders, record_json_fields

    codecs = schema_package(args).codecs  # the internal topics' records: kcodec's schemas or --schemas-from
    status = EXIT_OK
    for item in _inputs(names, args):  # a regular file, an object, or one line and exit 2
        stdin = item == STDIN
        path = Path("<stdin>") if stdin else display(item)
        kind = FileKind.LOG if stdin or args.as_log else file_kind(path)
        if kind not in (FileKind.LOG, FileKind.KRAFT_SNAPSHOT):
            status = max(status, _dump_other_input(item, kind, args, deferred))
            continue
        opened = ExitStack()  # an object's file, closed when its dump is done

        def print_skipped(r, path=path) -> None:  # printed where the bytes were, between the batches around them
            if args.json:
                print(
                    as_ndjson(
                        {
                            "file": str(path),
                            "position": r.start,
                            "size": r.size,
                            "skipped": True,
                            "kind": r.kind,
                            "reason": r.reason,
                        }
                    )
                )
            else:
                print(f"Skipped {r.size} corrupt bytes at position {r.start}..{r.end}: {r.reason}")

        def print_refused(r, path=path) -> None:  # kcodec's own cap, not damage: said apart, bytes kept
            if args.json:
                print(
                    as_ndjson(
                        {
                            "file": str(path),
                            "position": r.start,
                            "size": r.size,
                            "refused": True,
                            "kind": r.kind,
                            "reason": r.reason,
                        }
                    )
                )
            else:
                print(f"Refused {r.size} bytes at position {r.start}..{r.end}: {r.reason}{_RAISE_LIMIT}")

        registry = _internal_registry(args, path, print_data or args.json, codecs)
        file_print_data = print_data
        if kind == FileKind.KRAFT_SNAPSHOT and registry is None and decoders is None:
            # a KRaft snapshot holds cluster metadata wherever it lies: --cluster-metadata-decoder by default
            registry, file_print_data = "cluster_metadata", True
        source = (
            sys.stdin.buffer if stdin else opened.enter_context(item.open()) if isinstance(item, RemoteObject) else path
        )
        if stdin and args.max_bytes is not None:
            source = _Bounded(source, args.max_bytes)
        reader = read_batches(
            source,
            end=args.max_bytes,
            verify_crc=False,
            max_decompressed_size=args.max_decompressed_size,
            skip_corrupt=args.skip_corrupt,
            on_skip=print_skipped if args.skip_corrupt else None,
            on_refused=print_refused if args.skip_corrupt else None,
            decode=_column_decoder() if args.json and args.bytes_encoding == "hex" and not registry else None,
        )
        # the lines themselves show progress when they scroll on the terminal
        progress = Progress(None if stdin else file_size_of(item), desc=path.name, enabled=not sys.stdout.isatty())
        file_decoders = InternalDecoders(registry, codecs) if registry else decoders
        try:
            if args.json:  # the exit status below is the same as text mode's
                for batch in reader:
                    progress.to(batch.position + batch.size)
                    if registry or args.bytes_encoding != "hex":
                        out = batch_json(batch, str(path), args.bytes_encoding)
                        if registry and not batch.is_control:  # typed key and value objects instead of hex
                            for rec_json, rec in zip(out["records"], batch.records):
                                rec_json.update(record_json_fields(registry, rec, codecs))
                        print(as_ndjson(out))
                        continue
                    for piece in batch_ndjson(batch, str(path)):  # a batch of millions of records streams
                        sys.stdout.write(piece)
                    sys.stdout.write("\n")
                if reader.partial_tail is not None and args.max_bytes is None:
                    t = reader.partial_tail
                    print(as_ndjson({"file": str(path), "position": t.position, "size": t.size, "partialBatch": True}))
            else:
                pairs: list[tuple[int, int]] = []
                for line in dump_log_lines(
                    path,
                    reader,
                    args.deep_iteration,
                    file_print_data,
                    args.skip_record_metadata,
                    progress.to,
                    pairs,
                    file_decoders or STRING,
                    report_tail=args.max_bytes is None,  # Kafka reports trailing bytes only when it read them all
                    legacy=deferred.legacy,
                ):
                    print(line)
                deferred.add_non_consecutive(path, pairs)
        except KcodecError as exc:
            sys.stdout.flush()
            damaged = not (args.skip_corrupt or isinstance(exc, (DecoderError, EncodeError, DecompressionLimitError)))
            hint = " (--skip-corrupt reads on past damaged batches)" if damaged else ""
            if isinstance(exc, DecompressionLimitError):
                hint = _RAISE_LIMIT
            print(f"kcodec dump: {path}: {exc}{hint}", file=sys.stderr)
            status = EXIT_ERROR
        finally:
            progress.close()
        if reader.shrank_to is not None:
            print(f"kcodec dump: {path}: {shrank_message(reader.shrank_to)}", file=sys.stderr)
        may_hint = not stdin and args.max_bytes is None and not args.skip_corrupt and not args.json
        if reader.partial_tail is not None and may_hint and status == EXIT_OK:
            _hint_hidden_batches(path, source, reader.partial_tail.position)
        if reader.skipped:
            n = sum(r.size for r in reader.skipped)
            print(f"kcodec dump: {path}: skipped {len(reader.skipped)} damaged range(s), {n} bytes", file=sys.stderr)
            status = max(status, EXIT_CHECK_FAILED)
        elif reader.refused:
            n = sum(r.size for r in reader.refused)
            print(
                f"kcodec dump: {path}: {len(reader.refused)} batch(es), {n} bytes, refused by the decompression "
                f"limit and not shown{_RAISE_LIMIT}",
                file=sys.stderr,
            )
            status = max(status, EXIT_ERROR)
        opened.close()
    return status


_RAISE_LIMIT = " (not damage: --max-decompressed-size raises the limit)"


def _dump_other_input(item, kind: str, args: argparse.Namespace, deferred) -> int:
    """:func:`_dump_other` of a local file, or of an object's local copy (these files are small) shown by its URI;
    an object's index is not checked against its log (that would read the whole log)."""
    if not isinstance(item, RemoteObject) or kind == "unknown":
        return _dump_other(display(item), kind, args, deferred)
    with item.staged() as local:
        return _dump_other(local, kind, args, deferred, shown=item.path)


def _dump_other(path: Path, kind: str, args: argparse.Namespace, deferred, shown=None) -> int:
    """Every file kcodec dump recognises by name but a log: indexes, checkpoints, metadata, snapshots;
    an unknown name is refused (kafka-dump-log ignores it, leaving no trace in the exit status). ``shown`` is
    the name printed for ``path`` (an object's URI for its local copy)."""
    from kcodec.log.index import read_offset_index
    from kcodec.tools.dump import as_ndjson
    from kcodec.tools.dump_files import FileKind, dump_text_file
    from kcodec.tools.dump_index import dump_index_lines, sanity_check_index

    name = path if shown is None else shown

    def refuse(message: str, status: int = EXIT_ERROR) -> int:
        sys.stdout.flush()
        print(f"kcodec dump: {name}: {message}", file=sys.stderr)
        return status

    if kind == FileKind.UNKNOWN:
        return refuse(
            "not a file kind kcodec dump knows by its name (.log, .index, .timeindex, .txnindex, .snapshot, "
            ".checkpoint, leader-epoch-checkpoint, partition.metadata); --as-log reads it as log entries"
        )
    if kind == FileKind.PRODUCER_SNAPSHOT:
        return _dump_producer_snapshot(path, args, name)
    if kind in FileKind.TEXT:
        try:
            parsed = dump_text_file(path, kind)
        except KcodecError as exc:
            return refuse(str(exc))
        if args.json:
            print(as_ndjson({"file": str(name), "kind": kind, **parsed.fields}))
        else:
            print("\n".join([f"Dumping {name}", *parsed.lines]))
        return EXIT_OK
    _index_base_offset(path)  # .index / .timeindex / .txnindex from here on
    if args.json:
        return refuse("--json prints log files only; index files print as text")
    if args.index_sanity_check and kind in ("index", "timeindex"):
        print(f"Dumping {name}")
        if kind == "index" and not read_offset_index(path):  # Kafka says so before any check
            print(f"{name} is empty.")
            return EXIT_OK
        failure = sanity_check_index(path)
        if failure is not None:
            return refuse(f"failed sanity check: {failure.replace(str(path.absolute()), str(name))}", EXIT_CHECK_FAILED)
        print(f"{name} passed sanity check.")
        return EXIT_OK
    try:
        dumped = dump_index_lines(
            path, verify_only=args.verify_index_only, max_message_size=args.max_message_size, shown=name
        )
    except KcodecError as exc:
        return refuse(str(exc))
    print("\n".join(dumped.lines))
    for problem in deferred.add_index_problems(path, dumped.problems):
        print(f"{problem.kind}: {problem.message}", file=sys.stderr)
    return refuse(dumped.refused) if dumped.refused else EXIT_OK


def _dump_producer_snapshot(path: Path, args: argparse.Namespace, name=None) -> int:
    """DumpLogSegments.dumpProducerIdSnapshot; a CRC that does not hold is a failed check (exit 1), other damage
    refused input (exit 3)."""
    from kcodec.errors import CrcMismatchError
    from kcodec.tools.dump import as_ndjson
    from kcodec.tools.dump_files import FileKind, dump_producer_snapshot

    name = path if name is None else name
    try:
        parsed = dump_producer_snapshot(path)
    except KcodecError as exc:  # the error names the file
        sys.stdout.flush()
        print(f"kcodec dump: {exc}", file=sys.stderr)
        return EXIT_CHECK_FAILED if isinstance(exc, CrcMismatchError) else EXIT_ERROR
    if args.json:
        for entry in parsed.fields["entries"]:
            print(as_ndjson({"file": str(name), "kind": FileKind.PRODUCER_SNAPSHOT, **entry}))
    else:
        print("\n".join([f"Dumping {name}", *parsed.lines]))
    return EXIT_OK


def _index_base_offset(path: Path) -> int:
    """An index's entries are relative to the base offset its name holds: another name is a usage error."""
    from kcodec.log.files import parse_segment_name

    try:
        return parse_segment_name(path).base_offset
    except ValueError:
        raise UsageError(
            f"{path}: an index file is named after its segment's base offset, like {'0' * 20}{path.suffix}"
        ) from None


def _hint_hidden_batches(path: Path, source, start: int) -> None:
    """Kafka stops at an entry that claims more bytes than are left; say so when valid batches follow it."""
    from kcodec.records.resync import find_next_entry
    from kcodec.records.source import open_input

    with open_input(source) as opened:
        found = find_next_entry(opened, start + 1)
    if found is not None:
        print(
            f"kcodec dump: {path}: the entry at byte {start} claims more bytes than are left, but a valid batch "
            f"starts at byte {found}: --skip-corrupt reads on",
            file=sys.stderr,
        )


def cmd_verify(args: argparse.Namespace) -> int:
    from kcodec.commands.progress import Progress  # not at start-up: --help stays as light
    from kcodec.tools.verify import recover, verify_source

    # a prefix stands for its segments' logs, each the newest copy of its base offset
    items = [item for name in args.files for item in expand(name, storage_of(args), logs_only=True)]
    if args.recover and len(items) != 1:
        raise UsageError("--recover takes one input file")
    if args.recover and isinstance(items[0], RemoteObject):
        raise UsageError("--recover truncates a local copy of a local file: copy the object down first")
    damaged = refused = False
    for item in items:
        path = display(item)
        if args.recover:
            refuse_overlap([path], [args.recover])
        with ExitStack() as opened, Progress(file_size_of(item), desc=path.name) as progress:
            source = opened.enter_context(item.open()) if isinstance(item, RemoteObject) else path
            report = verify_source(
                source,
                str(path),
                strict=not args.lenient,
                max_decompressed_size=args.max_decompressed_size,
                progress=progress.to,
            )
        damaged = damaged or report.damaged
        refused = refused or not report.ok  # a problem that is no damage: a batch the decompression limit refused
        if not args.json:
            for problem in report.problems:
                print(f"{path}: {problem}")
            verdict = "valid" if report.ok else f"{len(report.problems)} problem(s)"
            print(f"{path}: {report.batches} batches, {report.records} records, {report.bytes} bytes: {verdict}")
        recovered = (
            recover(path, args.recover, max_decompressed_size=args.max_decompressed_size) if args.recover else None
        )
        if args.json:
            print_json(report.as_dict() | ({"recovered": recovered.as_dict()} if recovered else {}))
        elif recovered:
            print(recovered)
    return EXIT_CHECK_FAILED if damaged else EXIT_ERROR if refused else EXIT_OK


def _kafka_version(text: str) -> tuple[int, int]:
    try:
        major, minor = (int(part) for part in text.split("."))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a Kafka release like 4.2 or 4.3") from None
    return major, minor


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
        "snapshots (.checkpoint), leader-epoch-checkpoint, partition.metadata, offset checkpoints; - reads log "
        "entries from standard input; an s3://, gs://, abfss://, hdfs:// or file:// URI names an object, or "
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
            metavar="DECODER",
            help=f"how {part}s print (implies --print-data-log): string (UTF-8, the default), hex, base64, "
            "json (checked, compact), or module:callable taking bytes and returning str",
        )
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
        "entry size, last offset not below the base, entries in order); exit 1 if one fails",
    )
    p.add_argument(
        "--kafka-version",
        type=_kafka_version,
        default="{}.{}".format(*JAVA_PORT),  # argparse passes a string default through type=
        metavar="X.Y",
        help="print the lines of that Kafka release's kafka-dump-log (default 4.3, the Java tool; 4.2 or "
        "older: the Scala tool's, with its stray } after a legacy record's CRC)",
    )
    p.add_argument(
        "--as-log",
        action="store_true",
        help="read every FILE as log entries whatever its name (a records blob, a copied segment)",
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
        "exit status: 0 everything was read; 1 --skip-corrupt skipped damaged bytes, or an index failed "
        "--index-sanity-check; 2 bad usage (also a FILE that is missing or not a regular file); 3 stopped at "
        "bytes that do not decode, a decoder failed, or a file kind dump does not know by its name"
    )
    p.set_defaults(func=cmd_dump)

    p = sub.add_parser(
        "verify",
        help="check every CRC and structural rule; exit 0 only when all is valid",
        description="Check each file: CRCs (v2 batches and every v0/v1 message, inner ones "
        "too), lengths, counts, offsets, codecs. Prints each bad batch with its byte "
        "position, offset and the rule broken; exit 1 if any.",
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="log files; an s3://, gs://, abfss://, hdfs:// or file:// URI names an object, or a partition prefix "
        "whose segments (the newest copy per base offset) are checked in order",
    )
    add_storage_option(p)
    p.add_argument(
        "--lenient", action="store_true", help="accept a partial batch at the end of a file, as Kafka's readers do"
    )
    p.add_argument(
        "--recover",
        metavar="OUT",
        help="write the longest valid prefix of the file to OUT (atomically; OUT may not be the file itself: "
        "the dropped bytes would be gone), "
        "as Kafka's log recovery truncates a segment, and say how many batches and bytes were dropped",
    )
    add_max_decompressed_size(p, default=None)
    add_json(p, "one line per FILE with its counts and problems (NDJSON)")
    p.epilog = (
        "exit status: 0 valid; 1 a problem was found (the recovered copy is written all the same); 2 bad usage; "
        "3 no damage, but a batch was refused by --max-decompressed-size (reported as 'refused by the "
        "decompression limit', kept by --recover)"
    )
    p.set_defaults(func=cmd_verify)
