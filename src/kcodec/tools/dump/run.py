"""One input of ``kcodec dump``, dumped by its file kind from a :class:`DumpOptions`.

The command parses arguments, resolves names into :class:`DumpInput` (standard input, a local
file, an object) and calls :func:`dump_input` for each; everything printed for a file, and the
exit status it earns, is decided here. Exit status: 0 all read; 1 ``--skip-corrupt`` skipped
damaged bytes or an index failed its sanity check; 3 dump stopped at bytes it could not decode,
or a batch was refused by the decompression limit and nothing was damaged (a batch kcodec's own
cap refuses is never taken for damage).
"""

from __future__ import annotations

import codecs
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack, nullcontext
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from kcodec.errors import (
    EXIT_CHECK_FAILED,
    EXIT_ERROR,
    EXIT_OK,
    CrcMismatchError,
    DecodeError,
    DecompressionLimitError,
    EncodeError,
    KcodecError,
    UsageError,
)
from kcodec.log.names import parse_partition_dir, parse_segment_name
from kcodec.records.decode import decode_entry, decode_entry_header
from kcodec.records.reader import read_batches, shrank_message
from kcodec.records.resync import SkippedRange, find_next_entry
from kcodec.records.source import open_input
from kcodec.runtime.compression import DEFAULT_MAX_DECOMPRESSED_SIZE
from kcodec.tools.dump.decoders import STRING, DataDecoders, DecoderError
from kcodec.tools.dump.files import FileKind, dump_producer_snapshot, dump_text_file, file_kind
from kcodec.tools.dump.index import dump_index_lines, sanity_check_index
from kcodec.tools.dump.log import (
    DeferredErrors,
    as_ndjson,
    batch_json,
    batch_ndjson_bytes,
    dump_log_lines,
    formats_columns,
)
from kcodec.tools.dump.topics import registry_for_path

# Loaded where they are used, for the files that need them (a data segment's dump needs none): the internal
# topics' decoders (kcodec.tools.dump.internal), Schema Registry values (kcodec.tools.dump.values), Kafka 0.7
# (kcodec.records.kafka07, kcodec.tools.dump.kafka07) and the index reader (kcodec.log.index).

__all__ = ["DumpInput", "DumpOptions", "dump_input"]

RAISE_LIMIT = " (not damage: --max-decompressed-size raises the limit)"


class _NoProgress:
    def to(self, position: int) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass
class DumpOptions:
    """What ``kcodec dump`` was asked, checked by the command (its option names in brackets)."""

    schemas: Any  # the SchemaPackage read: kcodec's or --schemas-from's (its codecs load when a file needs them)
    json: bool = False  # [--json]
    bytes_encoding: str = "hex"  # [--bytes-encoding]
    deep_iteration: bool = False  # [--deep-iteration]
    print_data: bool = False  # [--print-data-log, or implied by a decoder]
    skip_record_metadata: bool = False  # [--skip-record-metadata]
    data_decoders: DataDecoders | None = None  # [--key-decoder / --value-decoder]
    chosen_registry: str | None = None  # [--offsets-decoder ...]: the internal topic every file is read as
    max_bytes: int | None = None  # [--max-bytes]
    max_decompressed_size: int | None = None  # [--max-decompressed-size]
    max_message_size: int | None = None  # [--max-message-size]
    verify_index_only: bool = False  # [--verify-index-only]
    index_sanity_check: bool = False  # [--index-sanity-check]
    as_log: bool = False  # [--as-log]
    #: [--as-kafka07 [BASE]]: read every input (standard input too) as a Kafka 0.7 segment; BASE is its byte
    #: offset (None: not asked; -1: the file's name says, else 0)
    as_kafka07: int | None = None
    skip_corrupt: bool = False  # [--skip-corrupt]
    start_offset: int | None = None  # [--start-offset]: from the batch holding it
    end_offset: int | None = None  # [--end-offset] (exclusive): up to the batch before the one starting there
    from_time: int | None = None  # [--from-time]: from the first batch whose max timestamp is at least it
    #: a progress bar for a file: (size or None, name, enabled) -> an object with .to(position) and .close()
    progress: Callable[[int | None, str, bool], Any] = lambda size, name, enabled: _NoProgress()


@dataclass
class DumpInput:
    """One file to dump: standard input, a local file or an object (``remote``), as the user named it."""

    shown: PurePath  # the name printed: a local file's Path (the file read), or an object's URI
    size: int | None = None  # None for standard input (and empty files: no progress to show)
    stdin: bool = False
    #: the bytes to read: a path, a binary stream or a random-access file (an object's), entered for the dump
    source: Callable[[], AbstractContextManager[Any]] | None = None
    #: a local copy of a small remote file (an index, a checkpoint), for the dumps that read files whole
    staged: Callable[[], AbstractContextManager[Path]] | None = None

    def open(self) -> AbstractContextManager[Any]:
        return self.source() if self.source is not None else nullcontext(self.shown)


def dump_input(item: DumpInput, opts: DumpOptions, deferred: DeferredErrors) -> int:
    """Dump one input by its kind; the exit status it earns."""
    path = Path("<stdin>") if item.stdin else item.shown
    kind = FileKind.LOG if item.stdin or opts.as_log else file_kind(path)
    if opts.as_kafka07 is not None:
        kind = FileKind.KAFKA07
    if kind == FileKind.UNKNOWN:  # as kafka-dump-log: named, passed over, no trace in the exit status
        if not opts.json:
            print(f"Dumping {path}")
        sys.stdout.flush()
        print(f"Ignoring unknown file {path}", file=sys.stderr)
        return EXIT_OK
    if kind == FileKind.KAFKA07:
        with item.open() as source:
            return _dump_kafka07(path, source, opts)
    if kind not in (FileKind.LOG, FileKind.KRAFT_SNAPSHOT):
        if item.staged is None:
            assert isinstance(path, Path)  # only an object is staged; a local file is read where it is
            return _dump_other(path, kind, opts, deferred)
        with item.staged() as local:  # an object's index is not checked against its log (that reads it all)
            try:
                return _dump_other(local, kind, opts, deferred, shown=item.shown)
            except (KcodecError, UsageError, OSError) as exc:
                raise _named_as_given(exc, local, item.shown) from None
    with ExitStack() as opened:
        source = opened.enter_context(item.open())
        if item.stdin and opts.max_bytes is not None:
            source = _Bounded(source, opts.max_bytes)
        return _dump_log(path, kind, source, item, opts, deferred)


def _named_as_given(exc: Exception, local: Path, shown: PurePath) -> Exception:
    """An error about the local copy of an object, naming the object's URI, as the user gave it."""
    text = (exc.message if isinstance(exc, KcodecError) else str(exc)).replace(str(local), str(shown))
    if isinstance(exc, KcodecError):
        return exc.replace(message=text)
    if isinstance(exc, UsageError):
        return UsageError(text)
    return KcodecError(f"{shown}: {text}" if str(shown) not in text else text)


def _registry(opts: DumpOptions, path: PurePath) -> str | None:
    """The registry decoding this file's records: the one a kafka-dump-log decoder option names, else (when
    data is printed) the one of the internal topic the file's partition directory is named after."""
    if opts.chosen_registry:
        return opts.chosen_registry
    if (opts.print_data or opts.json) and opts.data_decoders is None:
        return registry_for_path(path, opts.schemas.registries)
    return None


def _internal_decoders(registry: str, opts: DumpOptions):
    """The text dump's decoders of an internal topic's keys and values, with the package's codecs."""
    from kcodec.tools.dump.internal import InternalDecoders

    return InternalDecoders(registry, opts.schemas.codecs)


def _column_decoder():
    """:func:`kcodec.records.columnar.column_decoder`: ``dump --json`` then formats records from columns
    instead of Record objects."""
    try:
        from kcodec.records.columnar import column_decoder
    except ImportError:
        return None
    return column_decoder()


def _records_or_header(damage: dict[int, DecodeError]):
    """A reader's ``decode`` for the deep text dump: the entry decoded, or, when its records do not decode,
    its header alone (:func:`decode_entry_header`), what stopped the records kept in ``damage`` by position:
    the header is printed before the damage is reported, as kafka-dump-log prints it before it iterates."""

    def decode(entry: bytes, position: int, *, verify_crc: bool, max_decompressed_size: int):
        try:
            return decode_entry(entry, position, verify_crc=verify_crc, max_decompressed_size=max_decompressed_size)
        except DecompressionLimitError:
            raise  # kcodec's own cap, not damage: reported as refused
        except DecodeError as exc:
            try:
                header = decode_entry_header(
                    entry, position, verify_crc=verify_crc, max_decompressed_size=max_decompressed_size
                )
            except DecodeError:
                raise exc from None  # the header itself is damaged: no batch to show
            damage[position] = exc
            return header

    return decode


def _skipped_line(r: SkippedRange) -> str:
    return f"Skipped {r.size} corrupt bytes at position {r.start}..{r.end}: {r.reason}"


def _dump_log(path: PurePath, kind: str, source, item: DumpInput, opts: DumpOptions, deferred: DeferredErrors) -> int:
    status = EXIT_OK

    def print_skipped(r) -> None:  # printed where the bytes were, between the batches around them
        if opts.json:
            fields = {"position": r.start, "size": r.size, "skipped": True, "kind": r.kind, "reason": r.reason}
            print(as_ndjson({"file": str(path), **fields}))
        else:
            print(_skipped_line(r))

    def print_refused(r) -> None:  # kcodec's own cap, not damage: said apart, bytes kept
        if opts.json:
            fields = {"position": r.start, "size": r.size, "refused": True, "kind": r.kind, "reason": r.reason}
            print(as_ndjson({"file": str(path), **fields}))
        else:
            print(f"Refused {r.size} bytes at position {r.start}..{r.end}: {r.reason}{RAISE_LIMIT}")

    registry = _registry(opts, path)
    confluent = opts.data_decoders.confluent if opts.data_decoders is not None else None
    print_data = opts.print_data
    if kind == FileKind.KRAFT_SNAPSHOT and registry is None and opts.data_decoders is None:
        # a KRaft snapshot holds cluster metadata wherever it lies: --cluster-metadata-decoder by default
        registry, print_data = "cluster_metadata", True
    deep = opts.deep_iteration or print_data
    damage: dict[int, DecodeError] = {}  # deep text dump: batches whose header is shown, records not decoded
    damaged_records: list[SkippedRange] = []
    if opts.json:  # a JSON line carries its records (what `kcodec write` reads back)
        columns = formats_columns(opts.bytes_encoding) and not registry and not confluent
        decode = _column_decoder() if columns else None
    else:  # as kafka-dump-log: every header the size field frames; records only under deep iteration
        decode = _records_or_header(damage) if deep else decode_entry_header

    def records_damaged(batch) -> str | None:
        """After a batch's header: the line printed instead of its records when they do not decode."""
        exc = damage.pop(batch.position, None)
        if exc is None:
            return None
        if not opts.skip_corrupt:
            raise exc
        damaged_records.append(SkippedRange.from_error(batch.position, batch.position + batch.size, exc))
        return _skipped_line(damaged_records[-1])

    reader: Any = read_batches(
        source,
        end=opts.max_bytes,
        verify_crc=False,
        max_decompressed_size=opts.max_decompressed_size,  # None: the reader's default cap
        skip_corrupt=opts.skip_corrupt,
        on_skip=print_skipped if opts.skip_corrupt else None,
        on_refused=print_refused if opts.skip_corrupt else None,
        decode=decode,
    )
    if opts.start_offset is not None or opts.end_offset is not None or opts.from_time is not None:
        reader = _Window(reader, opts)
    # the lines themselves show progress when they scroll on the terminal
    progress = opts.progress(None if item.stdin else item.size, path.name, not sys.stdout.isatty())
    topic = _topic_of(path)
    data_decoders = opts.data_decoders.for_topic(topic) if opts.data_decoders is not None else None
    file_decoders = _internal_decoders(registry, opts) if registry else data_decoders
    try:
        if opts.json:  # the exit status below is the same as text mode's
            _print_json(path, reader, registry, opts, progress, topic)
        else:
            pairs: list[tuple[int, int]] = []
            for line in dump_log_lines(
                path,
                reader,
                deep,
                print_data,
                opts.skip_record_metadata,
                progress.to,
                pairs,
                file_decoders or STRING,
                report_tail=opts.max_bytes is None,  # Kafka reports trailing bytes only when it read them all
                legacy=deferred.legacy,
                damaged=records_damaged,
            ):
                print(line)
            if isinstance(reader, _Window):  # a window starts where it starts: not a gap after offset -1
                pairs = [pair for pair in pairs if pair[0] != -1]
            deferred.add_non_consecutive(path, pairs)
    except KcodecError as exc:
        sys.stdout.flush()
        damaged = not (opts.skip_corrupt or isinstance(exc, (DecoderError, EncodeError, DecompressionLimitError)))
        hint = " (--skip-corrupt reads on past damaged batches)" if damaged else ""
        if isinstance(exc, DecompressionLimitError):
            hint = RAISE_LIMIT
        if isinstance(exc, DecodeError) and not item.stdin and (exc.position or 0) < _FIRST_ENTRY:
            from kcodec.records.kafka07 import looks_like_kafka07

            with open_input(source) as opened:
                if looks_like_kafka07(opened):
                    hint = " (its bytes are Kafka 0.7 log entries: 0.7 segments are named .kafka)"
        print(f"kcodec dump: {path}: {exc}{hint}", file=sys.stderr)
        status = EXIT_ERROR
    finally:
        progress.close()
    summary = confluent.take_summary(opts.json) if confluent is not None else None
    if summary:
        sys.stdout.flush()
        print(f"kcodec dump: {path}: {summary}", file=sys.stderr)
    if reader.shrank_to is not None:
        print(f"kcodec dump: {path}: {shrank_message(reader.shrank_to)}", file=sys.stderr)
    may_hint = not item.stdin and opts.max_bytes is None and not opts.skip_corrupt and not opts.json
    if reader.partial_tail is not None and may_hint and status == EXIT_OK:
        _hint_hidden_batches(path, source, reader.partial_tail.position)
    skipped = reader.skipped + damaged_records
    if skipped:
        n = sum(r.size for r in skipped) + reader.more_skipped_bytes
        count = len(skipped) + reader.more_skipped
        print(f"kcodec dump: {path}: skipped {count} damaged range(s), {n} bytes", file=sys.stderr)
        status = max(status, EXIT_CHECK_FAILED)
    elif reader.refused:
        n = sum(r.size for r in reader.refused)
        print(
            f"kcodec dump: {path}: {len(reader.refused)} batch(es), {n} bytes, refused by the decompression "
            f"limit and not shown{RAISE_LIMIT}",
            file=sys.stderr,
        )
        status = max(status, EXIT_ERROR)
    return status


def _topic_of(path: PurePath) -> str | None:
    """The topic a segment's partition directory is named after (``orders-0/...`` -> orders)."""
    try:
        return parse_partition_dir(str(path.parent))[0]
    except ValueError:
        return None


def _print_json(path: PurePath, reader, registry: str | None, opts: DumpOptions, progress, topic: str | None) -> None:
    confluent = opts.data_decoders.confluent if opts.data_decoders is not None else None
    scratch = bytearray()  # the text of a piece of records, its memory reused from batch to batch
    for batch in reader:
        progress.to(batch.position + batch.size)
        if confluent is not None:  # decoded keys/values added to each record
            from kcodec.tools.dump.values import batch_ndjson_with_values

            for piece in batch_ndjson_with_values(batch, str(path), opts.bytes_encoding, confluent, topic):
                sys.stdout.write(piece)
            sys.stdout.write("\n")
            continue
        if registry:
            from kcodec.tools.dump.internal import record_json_fields

            out = batch_json(batch, str(path), opts.bytes_encoding)
            if not batch.is_control:  # typed key and value objects instead of hex
                for rec_json, rec in zip(out["records"], batch.records):
                    rec_json.update(record_json_fields(registry, rec, opts.schemas.codecs))
            print(as_ndjson(out))
            continue
        # a batch of millions of records streams
        _write_pieces(batch_ndjson_bytes(batch, str(path), encoding=opts.bytes_encoding, scratch=scratch))
    if reader.partial_tail is not None and opts.max_bytes is None:
        t = reader.partial_tail
        print(as_ndjson({"file": str(path), "position": t.position, "size": t.size, "partialBatch": True}))


def _write_pieces(pieces) -> None:
    """A line of text given in pieces (str, or UTF-8 bytes) to stdout, in order with what print() wrote: bytes
    straight to its binary buffer when it has one that takes UTF-8 (no str made of them)."""
    out = sys.stdout
    binary = getattr(out, "buffer", None)
    if binary is not None and codecs.lookup(getattr(out, "encoding", None) or "ascii").name == "utf-8":
        out.flush()  # what print() holds goes first
        for piece in pieces:
            binary.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
        binary.write(b"\n")
        return
    for piece in pieces:
        out.write(piece if isinstance(piece, str) else bytes(piece).decode("utf-8"))
    out.write("\n")


_FIRST_ENTRY = 64  # damage this close to the start: maybe no Kafka 0.8+ entry at all


def _dump_kafka07(path: PurePath, source, opts: DumpOptions) -> int:
    """A Kafka 0.7 segment, as 0.7's DumpLogSegments printed it (kcodec.tools.dump.kafka07)."""
    unsupported = [
        option
        for option, given in (
            ("--skip-corrupt", opts.skip_corrupt),  # 0.7's framing has nothing to resynchronise on
            ("--max-bytes", opts.max_bytes is not None),
            ("--key-decoder/--value-decoder", opts.data_decoders is not None),
            ("a topic decoder", opts.chosen_registry is not None),
            ("--verify-index-only", opts.verify_index_only),  # 0.7 has no index
            ("--index-sanity-check", opts.index_sanity_check),
        )
        if given
    ]
    if unsupported:
        return _refuse(path, f"{', '.join(unsupported)} does not apply to a Kafka 0.7 segment")
    from kcodec.records.kafka07 import Kafka07Reader
    from kcodec.tools.dump.kafka07 import kafka07_entry_json, kafka07_entry_lines, kafka07_tail_json, kafka07_tail_line

    base = _kafka07_base(path, opts.as_kafka07)
    with open_input(source) as opened:
        reader = Kafka07Reader(
            opened, base_offset=base, verify_crc=False, deep=True, max_decompressed_size=_limit(opts)
        )
        if not opts.json:
            print(f"Dumping {path}")
            print(f"Starting offset: {base}")
        try:
            for entry in reader:
                if opts.json:
                    print(as_ndjson(kafka07_entry_json(entry, str(path), opts.bytes_encoding)))
                else:
                    for line in kafka07_entry_lines(entry, opts.deep_iteration, opts.print_data):
                        print(line)
        except KcodecError as exc:
            hint = ""
            if (exc.position or 0) < _FIRST_ENTRY and find_next_entry(opened, 0) == 0:
                hint = " (its bytes are Kafka 0.8+ log entries: " + (
                    "drop --as-kafka07)" if opts.as_kafka07 is not None else "such segments are named .log)"
                )
            return _refuse(path, f"{exc}{hint}")
    if opts.json:
        if reader.tail is not None:
            print(as_ndjson(kafka07_tail_json(reader.tail, str(path))))
    else:
        for line in kafka07_tail_line(reader, base):
            print(line)
    return EXIT_OK


def _kafka07_base(path: PurePath, asked: int | None) -> int:
    """A 0.7 segment's byte offset: --as-kafka07's BASE, else its name's (standard input and other names: 0)."""
    if asked is not None and asked >= 0:
        return asked
    try:
        return parse_segment_name(path).base_offset
    except ValueError:
        if asked is None:
            raise
        return 0


def _limit(opts: DumpOptions) -> int:
    return DEFAULT_MAX_DECOMPRESSED_SIZE if opts.max_decompressed_size is None else opts.max_decompressed_size


def _refuse(name: PurePath, message: str, status: int = EXIT_ERROR) -> int:
    """Say on stderr why ``name`` is not dumped (or not all of it); the exit status it earns."""
    sys.stdout.flush()
    print(f"kcodec dump: {name}: {message}", file=sys.stderr)
    return status


def _dump_other(
    path: Path, kind: str, opts: DumpOptions, deferred: DeferredErrors, shown: PurePath | None = None
) -> int:
    """Every file kcodec dump recognises by name but a log (an unknown name is ignored before, as
    kafka-dump-log ignores it): indexes, checkpoints, metadata, snapshots, read from the
    local ``path``. ``shown`` is the name printed for it (an object's URI for its local copy)."""
    name = path if shown is None else shown

    def refuse(message: str, status: int = EXIT_ERROR) -> int:
        return _refuse(name, message.replace(str(path), str(name)), status)  # the URI, not the local copy

    if kind == FileKind.PRODUCER_SNAPSHOT:
        return _dump_producer_snapshot(path, opts, name)
    if kind in FileKind.TEXT:
        try:
            parsed = dump_text_file(path, kind)
        except KcodecError as exc:
            return refuse(str(exc))
        if opts.json:
            print(as_ndjson({"file": str(name), "kind": kind, **parsed.fields}))
        else:
            print("\n".join([f"Dumping {name}", *parsed.lines]))
        return EXIT_OK
    _index_base_offset(path)  # .index / .timeindex / .txnindex from here on
    if opts.json:
        return refuse("--json prints log files only; index files print as text")
    if opts.index_sanity_check and kind in ("index", "timeindex"):
        print(f"Dumping {name}")
        from kcodec.log.index import read_offset_index

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
            path, verify_only=opts.verify_index_only, max_message_size=opts.max_message_size, shown=name
        )
    except KcodecError as exc:
        return refuse(str(exc))
    print("\n".join(dumped.lines))
    for problem in deferred.add_index_problems(path, dumped.problems):
        print(f"{problem.kind}: {problem.message}", file=sys.stderr)
    return refuse(dumped.refused) if dumped.refused else EXIT_OK


def _dump_producer_snapshot(path: Path, opts: DumpOptions, name: PurePath) -> int:
    """DumpLogSegments.dumpProducerIdSnapshot; a CRC that does not hold is a failed check (exit 1), other damage
    refused input (exit 3)."""
    try:
        parsed = dump_producer_snapshot(path)
    except KcodecError as exc:  # the error names the file: as the user gave it, not its local copy
        sys.stdout.flush()
        print(f"kcodec dump: {str(exc).replace(str(path), str(name))}", file=sys.stderr)
        return EXIT_CHECK_FAILED if isinstance(exc, CrcMismatchError) else EXIT_ERROR
    if not opts.json:
        print(f"Dumping {name}")
    for line, entry in parsed:  # one producer at a time: a snapshot of millions streams
        print(as_ndjson({"file": str(name), "kind": FileKind.PRODUCER_SNAPSHOT, **entry}) if opts.json else line)
    return EXIT_OK


def _index_base_offset(path: Path) -> int:
    """An index's entries are relative to the base offset its name holds: another name is a usage error."""
    try:
        return parse_segment_name(path).base_offset
    except ValueError:
        raise UsageError(
            f"{path}: an index file is named after its segment's base offset, like {'0' * 20}{path.suffix}"
        ) from None


def _hint_hidden_batches(path: PurePath, source, start: int) -> None:
    """Kafka stops at an entry that claims more bytes than are left; say so when valid batches follow it."""
    with open_input(source) as opened:
        found = find_next_entry(opened, start + 1)
    if found is not None:
        print(
            f"kcodec dump: {path}: the entry at byte {start} claims more bytes than are left, but a valid batch "
            f"starts at byte {found}: --skip-corrupt reads on",
            file=sys.stderr,
        )


class _Window:
    """The batches of a reader within --start-offset, --end-offset and --from-time, whole batches as a fetch
    returns them (the partition source's window); reading stops at the first batch past the end."""

    def __init__(self, reader, opts: DumpOptions):
        self.reader, self.opts = reader, opts
        self.stopped = False

    def __iter__(self):
        start, end, since = self.opts.start_offset, self.opts.end_offset, self.opts.from_time
        for batch in self.reader:
            if end is not None and batch.base_offset >= end:
                self.stopped = True  # the rest of the file is not read: nothing is said about its end
                return
            if start is not None and batch.last_offset < start:
                continue
            if since is not None:
                if batch.max_timestamp < since:
                    continue
                since = None  # then everything after it, as a read from the offset for a time
            yield batch

    def __getattr__(self, name: str):
        if name == "partial_tail" and self.stopped:
            return None
        return getattr(self.reader, name)


class _Bounded:
    """A binary stream that ends after ``limit`` bytes: --max-bytes on standard input."""

    def __init__(self, stream, limit: int):
        self.stream, self.left = stream, limit

    def read(self, n: int = -1) -> bytes:
        n = self.left if n is None or n < 0 else min(n, self.left)
        data = self.stream.read(n) if n else b""
        self.left -= len(data)
        return data
