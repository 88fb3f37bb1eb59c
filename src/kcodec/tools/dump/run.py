"""One input of ``kcodec dump``, dumped by its file kind from a :class:`DumpOptions`.

The command parses arguments, resolves names into :class:`DumpInput` (standard input, a local
file, an object) and calls :func:`dump_input` for each; everything printed for a file, and the
exit status it earns, is decided here. Exit status: 0 all read; 1 ``--skip-corrupt`` skipped
damaged bytes or an index failed its sanity check; 3 dump stopped at bytes it could not decode,
or a batch was refused by the decompression limit and nothing was damaged (a batch kcodec's own
cap refuses is never taken for damage).
"""

from __future__ import annotations

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
    DecompressionLimitError,
    EncodeError,
    KcodecError,
    UsageError,
)
from kcodec.log.index import read_offset_index
from kcodec.log.names import parse_partition_dir, parse_segment_name
from kcodec.records.reader import read_batches, shrank_message
from kcodec.records.resync import find_next_entry
from kcodec.records.source import open_input
from kcodec.tools.dump.decoders import STRING, DataDecoders, DecoderError
from kcodec.tools.dump.files import FileKind, dump_producer_snapshot, dump_text_file, file_kind
from kcodec.tools.dump.index import dump_index_lines, sanity_check_index
from kcodec.tools.dump.internal import InternalDecoders, record_json_fields, registry_for_path
from kcodec.tools.dump.log import DeferredErrors, as_ndjson, batch_json, batch_ndjson, dump_log_lines
from kcodec.tools.dump.values import batch_ndjson_with_values

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

    codecs: Any  # the internal topics' codecs: kcodec's schemas or --schemas-from's
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
    skip_corrupt: bool = False  # [--skip-corrupt]
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
    if kind == FileKind.UNKNOWN:
        return _refuse(path, _UNKNOWN_KIND)
    if kind not in (FileKind.LOG, FileKind.KRAFT_SNAPSHOT):
        if item.staged is None:
            assert isinstance(path, Path)  # only an object is staged; a local file is read where it is
            return _dump_other(path, kind, opts, deferred)
        with item.staged() as local:  # an object's index is not checked against its log (that reads it all)
            return _dump_other(local, kind, opts, deferred, shown=item.shown)
    with ExitStack() as opened:
        source = opened.enter_context(item.open())
        if item.stdin and opts.max_bytes is not None:
            source = _Bounded(source, opts.max_bytes)
        return _dump_log(path, kind, source, item, opts, deferred)


def _registry(opts: DumpOptions, path: PurePath) -> str | None:
    """The registry decoding this file's records: the one a kafka-dump-log decoder option names, else (when
    data is printed) the one of the internal topic the file's partition directory is named after."""
    if opts.chosen_registry:
        return opts.chosen_registry
    if (opts.print_data or opts.json) and opts.data_decoders is None:
        return registry_for_path(path, opts.codecs)
    return None


def _column_decoder():
    """:func:`kcodec.records.columnar.entry_to_arrow` when the kernel decodes v2 records into columns (and
    pyarrow is there): ``dump --json`` then formats records from columns instead of Record objects."""
    try:
        import pyarrow  # noqa: F401

        from kcodec.records.columnar import entry_to_arrow, kernel_columns
    except ImportError:
        return None
    return entry_to_arrow if kernel_columns() else None


def _dump_log(path: PurePath, kind: str, source, item: DumpInput, opts: DumpOptions, deferred: DeferredErrors) -> int:
    status = EXIT_OK

    def print_skipped(r) -> None:  # printed where the bytes were, between the batches around them
        if opts.json:
            fields = {"position": r.start, "size": r.size, "skipped": True, "kind": r.kind, "reason": r.reason}
            print(as_ndjson({"file": str(path), **fields}))
        else:
            print(f"Skipped {r.size} corrupt bytes at position {r.start}..{r.end}: {r.reason}")

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
    reader = read_batches(
        source,
        end=opts.max_bytes,
        verify_crc=False,
        max_decompressed_size=opts.max_decompressed_size,  # None: the reader's default cap
        skip_corrupt=opts.skip_corrupt,
        on_skip=print_skipped if opts.skip_corrupt else None,
        on_refused=print_refused if opts.skip_corrupt else None,
        decode=_column_decoder()
        if opts.json and opts.bytes_encoding == "hex" and not registry and not confluent
        else None,
    )
    # the lines themselves show progress when they scroll on the terminal
    progress = opts.progress(None if item.stdin else item.size, path.name, not sys.stdout.isatty())
    topic = _topic_of(path)
    data_decoders = opts.data_decoders.for_topic(topic) if opts.data_decoders is not None else None
    file_decoders = InternalDecoders(registry, opts.codecs) if registry else data_decoders
    try:
        if opts.json:  # the exit status below is the same as text mode's
            _print_json(path, reader, registry, opts, progress, topic)
        else:
            pairs: list[tuple[int, int]] = []
            for line in dump_log_lines(
                path,
                reader,
                opts.deep_iteration,
                print_data,
                opts.skip_record_metadata,
                progress.to,
                pairs,
                file_decoders or STRING,
                report_tail=opts.max_bytes is None,  # Kafka reports trailing bytes only when it read them all
                legacy=deferred.legacy,
            ):
                print(line)
            deferred.add_non_consecutive(path, pairs)
    except KcodecError as exc:
        sys.stdout.flush()
        damaged = not (opts.skip_corrupt or isinstance(exc, (DecoderError, EncodeError, DecompressionLimitError)))
        hint = " (--skip-corrupt reads on past damaged batches)" if damaged else ""
        if isinstance(exc, DecompressionLimitError):
            hint = RAISE_LIMIT
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
    if reader.skipped:
        n = sum(r.size for r in reader.skipped)
        print(f"kcodec dump: {path}: skipped {len(reader.skipped)} damaged range(s), {n} bytes", file=sys.stderr)
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
    for batch in reader:
        progress.to(batch.position + batch.size)
        if confluent is not None:  # decoded keys/values added to each record
            for piece in batch_ndjson_with_values(batch, str(path), opts.bytes_encoding, confluent, topic):
                sys.stdout.write(piece)
            sys.stdout.write("\n")
            continue
        if registry or opts.bytes_encoding != "hex":
            out = batch_json(batch, str(path), opts.bytes_encoding)
            if registry and not batch.is_control:  # typed key and value objects instead of hex
                for rec_json, rec in zip(out["records"], batch.records):
                    rec_json.update(record_json_fields(registry, rec, opts.codecs))
            print(as_ndjson(out))
            continue
        for piece in batch_ndjson(batch, str(path)):  # a batch of millions of records streams
            sys.stdout.write(piece)
        sys.stdout.write("\n")
    if reader.partial_tail is not None and opts.max_bytes is None:
        t = reader.partial_tail
        print(as_ndjson({"file": str(path), "position": t.position, "size": t.size, "partialBatch": True}))


_UNKNOWN_KIND = (
    "not a file kind kcodec dump knows by its name (.log, .index, .timeindex, .txnindex, .snapshot, "
    ".checkpoint, leader-epoch-checkpoint, partition.metadata); --as-log reads it as log entries"
)


def _refuse(name: PurePath, message: str, status: int = EXIT_ERROR) -> int:
    """Say on stderr why ``name`` is not dumped (or not all of it); the exit status it earns."""
    sys.stdout.flush()
    print(f"kcodec dump: {name}: {message}", file=sys.stderr)
    return status


def _dump_other(
    path: Path, kind: str, opts: DumpOptions, deferred: DeferredErrors, shown: PurePath | None = None
) -> int:
    """Every file kcodec dump recognises by name but a log (an unknown name is refused before: kafka-dump-log
    ignores it, leaving no trace in the exit status): indexes, checkpoints, metadata, snapshots, read from the
    local ``path``. ``shown`` is the name printed for it (an object's URI for its local copy)."""
    name = path if shown is None else shown

    def refuse(message: str, status: int = EXIT_ERROR) -> int:
        return _refuse(name, message, status)

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
    except KcodecError as exc:  # the error names the file
        sys.stdout.flush()
        print(f"kcodec dump: {exc}", file=sys.stderr)
        return EXIT_CHECK_FAILED if isinstance(exc, CrcMismatchError) else EXIT_ERROR
    if opts.json:
        for entry in parsed.fields["entries"]:
            print(as_ndjson({"file": str(name), "kind": FileKind.PRODUCER_SNAPSHOT, **entry}))
    else:
        print("\n".join([f"Dumping {name}", *parsed.lines]))
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


class _Bounded:
    """A binary stream that ends after ``limit`` bytes: --max-bytes on standard input."""

    def __init__(self, stream, limit: int):
        self.stream, self.left = stream, limit

    def read(self, n: int = -1) -> bytes:
        n = self.left if n is None or n < 0 else min(n, self.left)
        data = self.stream.read(n) if n else b""
        self.left -= len(data)
        return data
