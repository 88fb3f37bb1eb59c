"""One Spark task's work: read a split's batches, apply the options, and
yield Arrow record batches.

``onCorrupt=fail`` (the default) raises at the first batch that does not
decode, naming the segment and byte position. ``onCorrupt=skip`` drops what
does not decode and reports each skipped region: one line on the task's
stderr, and, with ``corruptReportPath``, one JSON line in a file of that
directory. The policy is the reader's (:mod:`kcodec.records.skipping`,
without resynchronising): a batch whose own bytes are bad (CRC, compression,
records) is skipped alone; when the framing itself is broken (a length or
magic that cannot be) the rest of the split is skipped, as no later batch
boundary can be trusted; the next split starts at an indexed position. A
stream's split reads on at the next whole entry instead (``Split.resync``), as
``read_batches`` does: its tail walked past the damage to the entries after
it. A file cut short is reported as a truncated region.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pyarrow.compute as pc

from kcodec.errors import DecodeError, KcodecError, TruncatedError
from kcodec.log.fs import PathGoneError, resolve
from kcodec.records.reader import read_batches
from kcodec.records.resync import SkippedRange
from kcodec.runtime.varint import INT64_MAX
from kcodec.spark.options import ReadOptions
from kcodec.spark.planning import Split

__all__ = ["CorruptSegmentError", "MAX_REPORTED", "OutOfRangeError", "Reporter", "split_batches", "read_split"]


class CorruptSegmentError(DecodeError):
    """A segment did not decode; the message names the file and byte position."""

    kind = "corrupt_segment"
    cause_kind: str | None = None  # the kind of the reader's error it wraps (set by _wrap)


#: skipped regions a split's report lists one by one (on stderr and in its report file); the ones after them
#: are counted, and said in one summary line (a damaged segment can hold millions of them)
MAX_REPORTED = 1000
MORE_KIND = "more"  # the ``kind`` of the summary line


class Reporter:
    """Collects what ``onCorrupt=skip`` skipped, for stderr and the report directory: the first
    ``MAX_REPORTED`` regions one by one, the rest counted (:attr:`more`, :attr:`more_bytes`,
    :attr:`more_records`) and said once, at :meth:`close`."""

    def __init__(self, split: Split, opts: ReadOptions):
        self.split, self.opts = split, opts
        self.skipped: list[dict] = []
        self.more = self.more_bytes = self.more_records = 0
        self.more_from: int | None = None  # the position of the first region counted, not listed
        self.more_rest = False  # one of them is the rest of the split (its size unknown)

    def _keep(self, item: dict) -> bool:
        """Whether ``item`` is listed (else it is counted)."""
        if len(self.skipped) < MAX_REPORTED:
            self.skipped.append(item)
            return True
        self.more += 1
        self.more_records += item.get("records") or 0
        self.more_bytes += item.get("bytes") or 0
        self.more_rest = self.more_rest or ("records" not in item and item.get("bytes") is None)
        if self.more_from is None:
            self.more_from = item["position"]
        return False

    def skip(self, position: int, size: int | None, kind: str, error: str) -> None:
        """Bytes passed over at ``position`` (``size`` None: the rest of the split), and why."""
        item = {
            "segment": self.split.log,
            "topic": self.split.topic,
            "partition": self.split.partition,
            "position": position,
            "bytes": size,
            "kind": kind,
            "error": error,
        }
        if not self._keep(item):
            return
        what = "the rest of the split" if size is None else f"{size} bytes"
        print(
            f"kcodec: onCorrupt=skip: skipped {what} at byte {position} of {self.split.log}: {error}",
            file=sys.stderr,
            flush=True,
        )

    def skip_records(self, batch, dropped: int, error: str, kind: str | None = None) -> None:
        """Records of an intact batch left out because a value does not fit its Spark column (or, ``kind``
        given, because they do not decode as what a view reads)."""
        item = {
            "segment": self.split.log,
            "topic": self.split.topic,
            "partition": self.split.partition,
            "position": batch.position,
            "baseOffset": batch.base_offset,
            "records": dropped,
            "kind": kind or OutOfRangeError.kind,
            "error": error,
        }
        if not self._keep(item):
            return
        print(
            f"kcodec: onCorrupt=skip: left out {dropped} record(s) of the batch at byte {batch.position} "
            f"of {self.split.log}: {error}",
            file=sys.stderr,
            flush=True,
        )

    def skipped_range(self, r: SkippedRange, shift: int = 0) -> None:
        self.skip(r.start + shift, None if r.rest else r.size, r.kind, r.reason)

    def summary(self) -> dict | None:
        """The line that stands for the regions counted, not listed (None when every one was listed)."""
        if not self.more:
            return None
        rest = ", one of them the rest of the split" if self.more_rest else ""
        return {
            "segment": self.split.log,
            "topic": self.split.topic,
            "partition": self.split.partition,
            "position": self.more_from,
            "bytes": self.more_bytes,
            "records": self.more_records,
            "regions": self.more,
            "kind": MORE_KIND,
            "error": (
                f"and {self.more} more skipped region(s) from byte {self.more_from} on ({self.more_bytes} bytes, "
                f"{self.more_records} record(s){rest}), not listed"
            ),
        }

    def close(self) -> None:
        summary = self.summary()
        if summary is not None:
            print(f"kcodec: onCorrupt=skip: {self.split.log}: {summary['error']}", file=sys.stderr, flush=True)
        if not self.skipped or not self.opts.corrupt_report_path:
            return
        fs, root = resolve(self.opts.corrupt_report_path, self.opts.storage)
        fs.makedirs(root)
        name = f"split-{self.split.index:05d}-{uuid.uuid4().hex[:12]}.jsonl"
        tmp = fs.join(root, "." + name + ".tmp")
        with fs.open_output(tmp) as f:
            for item in self.skipped if summary is None else [*self.skipped, summary]:
                f.write((json.dumps(item) + "\n").encode())
        fs.move(tmp, fs.join(root, name))


class OutOfRangeError(CorruptSegmentError):
    """A decoded value does not fit its Spark column (an offset past int64, a
    timestamp past what Spark's microsecond ``timestamp`` holds)."""

    kind = "out_of_range"


#: Kafka's ms timestamps Spark's ``timestamp`` (int64 microseconds) holds.
_TS_MS_MIN, _TS_MS_MAX = -(INT64_MAX // 1000), INT64_MAX // 1000


def _out_of_range(batch, offset: int, timestamp: int) -> tuple[str, str] | None:
    """(field, why) when a record's (or a batch row's) values cannot be a Spark row, else None."""
    if not -INT64_MAX - 1 <= offset <= INT64_MAX:
        return "offset", f"offset {offset} of the batch at offset {batch.base_offset} is past Spark's bigint"
    if not _TS_MS_MIN <= timestamp <= _TS_MS_MAX:
        return "timestamp", (
            f"timestamp {timestamp} ms of the batch at offset {batch.base_offset} is past Spark's timestamp"
        )
    return None


def _refuse(problem: tuple[str, str], batch, split: Split) -> OutOfRangeError:
    field, why = problem
    return OutOfRangeError(f"{split.log}: {why}", position=batch.position, base_offset=batch.base_offset, field=field)


def _fitting_records(batch, table, split: Split, opts: ReadOptions, reporter: Reporter):
    """The rows of ``table`` (a batch's Arrow record columns) whose values fit Spark's columns (offsets
    always do: the decoders refuse one past int64): onCorrupt=fail raises at the first that does not,
    skip leaves those out and reports them."""
    ts = table.column("timestamp")
    bounds: dict[str, Any] = pc.min_max(ts).as_py() if table.num_rows else {"min": None}
    if bounds["min"] is None or (_TS_MS_MIN <= bounds["min"] and bounds["max"] <= _TS_MS_MAX):
        return table
    bad = pc.or_(pc.less(ts, _TS_MS_MIN), pc.greater(ts, _TS_MS_MAX))
    first = ts[pc.index(bad, True).as_py()].as_py()
    problem = _out_of_range(batch, batch.base_offset, first)
    assert problem is not None  # `first` is past Spark's timestamp
    if opts.on_corrupt == "fail":
        raise _refuse(problem, batch, split)
    kept = table.filter(pc.invert(bad))
    reporter.skip_records(batch, table.num_rows - kept.num_rows, problem[1])
    return kept


def _fitting_batch(batch, split: Split, opts: ReadOptions, reporter: Reporter) -> bool:
    """Whether the batches view's row for ``batch`` fits Spark's columns (as :func:`_fitting_records`)."""
    problem = _out_of_range(batch, batch.last_offset, batch.max_timestamp)
    if problem is None:
        return True
    if opts.on_corrupt == "fail":
        raise _refuse(problem, batch, split)
    reporter.skip_records(batch, len(batch.records), problem[1])
    return False


def _whole_run(table, batches, start: int | None, end: int | None, spans_of) -> bool:
    """Whether every row of a run (its RecordBatch, its batches) is read as it is: no batch of it is cut by the
    split's offset range or holds records of an aborted transaction, and every timestamp fits Spark's."""
    if (start is not None and batches[0].base_offset < start) or (end is not None and batches[-1].last_offset >= end):
        return False
    if spans_of is not None and any(spans_of(b) for b in batches):
        return False
    bounds: dict[str, Any] = pc.min_max(table.column("timestamp")).as_py()
    return bounds["min"] is None or (_TS_MS_MIN <= bounds["min"] and bounds["max"] <= _TS_MS_MAX)


def _wrap(exc: KcodecError, split: Split) -> CorruptSegmentError:
    err = CorruptSegmentError(
        f"{split.log}: {exc.message}", position=exc.position, base_offset=exc.base_offset, field=exc.field
    )
    err.cause_kind = exc.kind
    return err


def _source(split: Split, storage=()):
    """(what read_batches reads, start, end, position shift) for the split's bytes: a
    local file is read in windows (read_batches' pread); a remote one's range is fetched with one ranged read."""
    fs, path = resolve(split.log, storage)
    if fs.local:
        return path, split.start, split.end, 0
    return fs.read_range(split.log, split.start, split.end), 0, None, split.start


def split_batches(
    split: Split, opts: ReadOptions, reporter: Reporter | None = None, decode=None, runs: bool = False, stored=False
) -> Iterator:
    """The decoded batches of ``split`` in order (positions in the segment file); ``decode`` is the
    reader's (:func:`~kcodec.records.columnar.entry_to_arrow` gives the records as Arrow columns). With
    ``runs`` (and the compiled kernel), runs of plain v2 data batches come decoded many at a time, each as
    (one RecordBatch of their records, their batches, each one's ``table`` a slice of it): :func:`_column_run`
    (``stored``: with a LogAppendTime batch's stored timestamps). A segment gone since the read was planned
    is a :class:`~kcodec.log.fs.PathGoneError` naming it."""
    try:
        yield from _split_batches(split, opts, reporter, decode, runs, stored)
    except FileNotFoundError as exc:
        if isinstance(exc, KcodecError):
            raise
        raise PathGoneError(
            f"kafka-segments: {split.log} is gone: deleted after the read was planned (retention?)"
        ) from None


def _column_run(reader, opts: ReadOptions, stored: bool):
    """``run`` for :meth:`~kcodec.records.reader.BatchReader.batch_runs`: the kernel's runs of v2 data batches
    as (RecordBatch, batches). Under onCorrupt=skip a run takes only batches whose CRC holds, so any other
    goes to the skipping walk as before (which looks inside it for the entry its damaged size swallowed)."""
    from kcodec.records.columnar import segment_run

    verify = opts.verify_crc or opts.on_corrupt != "fail"
    return segment_run(verify, reader.max_decompressed_size, reader.max_batch_size, None, batches=True, stored=stored)


def _walk(reader, opts: ReadOptions, runs: bool, shift: int, stored: bool) -> Iterator:
    run = _column_run(reader, opts, stored) if runs else None
    for item in reader.batch_runs(run) if run is not None else reader:
        if type(item) is tuple:
            table, batches = item
            at = 0
            for batch in batches:
                batch.arrow = table.slice(at, batch.record_count)
                at += batch.record_count
                batch.position += shift
        else:
            item.position += shift
        yield item


def _split_batches(split: Split, opts: ReadOptions, reporter: Reporter | None, decode, runs: bool, stored: bool):
    source, start, end, shift = _source(split, opts.storage)
    ropts = {**opts.reader_options(), "decode": decode}
    if opts.on_corrupt == "fail":
        try:
            reader = read_batches(source, start=start, end=end, strict=True, **ropts)
            yield from _walk(reader, opts, runs, shift, stored)
        except KcodecError as exc:
            raise _wrap(exc.at(shift), split) from exc
        return
    reporter = reporter or Reporter(split, opts)
    reader = read_batches(
        source,
        start=start,
        end=end,
        strict=False,
        skip_corrupt=True,
        resync=split.resync,
        on_skip=lambda r: reporter.skipped_range(r, shift),
        **ropts,
    )
    yield from _walk(reader, opts, runs, shift, stored)
    tail = reader.partial_tail
    if tail is not None:
        truncated = TruncatedError(
            f"input ends inside a log entry: {tail.size} bytes at the end do not hold a whole batch",
            position=tail.position + shift,
        )
        reporter.skip(tail.position + shift, tail.size, truncated.kind, str(truncated))


def aborted_spans(split: Split):
    """A function batch -> the (first, last) offset spans of the split's aborted transactions that cover part
    of that batch (empty for most); None when the split holds no aborted transaction."""
    by_pid: dict[int, list[tuple[int, int]]] = {}
    for pid, first, last in split.aborted:
        by_pid.setdefault(pid, []).append((first, last))

    def spans(batch) -> list[tuple[int, int]]:
        found = by_pid.get(batch.producer_id)
        if not found or batch.is_control:
            return []
        return [(f, last) for f, last in found if f <= batch.last_offset and last >= batch.base_offset]

    return spans if by_pid else None


def _aborted_filter(spans_of):
    """A function (batch, Arrow record columns) -> the rows not of aborted transactions (``spans_of``:
    :func:`aborted_spans`'s function)."""
    if spans_of is None:
        return None

    def keep(batch, table):
        hit = spans_of(batch)
        if not hit:
            return table
        offsets = table.column("offset")
        aborted = None
        for f, last in hit:
            inside = pc.and_(pc.greater_equal(offsets, f), pc.less_equal(offsets, last))
            aborted = inside if aborted is None else pc.or_(aborted, inside)
        return table.filter(pc.invert(aborted))

    return keep


def _typed_columns(columns, opts: ReadOptions, topic: str | None):
    """keyFormat/valueFormat=confluent: what turns the raw key/value columns into the typed ones."""
    if opts.value_format != "confluent" and opts.key_format != "confluent":
        return None
    from kcodec.spark.arrow import RECORD_COLUMNS
    from kcodec.spark.value_columns import TypedColumns, typed_parts

    raw = {c.name: c for c in RECORD_COLUMNS if c.name in ("key", "value")}
    return TypedColumns(columns, typed_parts(opts, [topic] if topic else None), raw)


def read_split(split: Split, opts: ReadOptions, columns) -> Iterator:
    """The Arrow record batches of one split, holding only ``columns`` ((Column, nullable) pairs)."""
    from kcodec.spark.arrow import BatchColumns, RecordColumns

    if split.empty:
        return
    reporter = Reporter(split, opts)
    start, end = split.start_offset, split.end_offset
    topic, partition, segment = split.topic, split.partition, split.log
    try:
        if opts.view == "batches":
            batch_rows = BatchColumns(columns)
            if opts.sizes:
                from kcodec.spark.cost_table import size_as
            for batch in split_batches(split, opts, reporter):
                if end is not None and batch.base_offset >= end:
                    break
                if start is not None and batch.last_offset < start:
                    continue
                if not _fitting_batch(batch, split, opts, reporter):
                    continue
                batch_rows.add(
                    batch, topic, partition, segment, size_as(batch, opts.size_sample) if opts.sizes else None
                )
                if len(batch_rows) >= opts.max_rows:
                    yield batch_rows.flush()
            rb = batch_rows.flush()
            if rb is not None:
                yield rb
            return
        from kcodec.records.columnar import entry_to_arrow

        typed = _typed_columns(columns, opts, topic)
        out = RecordColumns(typed.raw_columns if typed is not None else columns)
        spans_of = aborted_spans(split) if opts.read_committed else None
        aborted = _aborted_filter(spans_of)
        include_control = opts.include_control
        stored = any(c.name == "storedTimestampMs" for c, _ in out.columns)

        def add(table, pieces):
            """The rows of ``table`` (the records of ``pieces``' batches, so many of each) into Arrow batches
            of up to maxRowsPerBatch rows: a legal Kafka batch can hold millions of records (slices share the
            decoded columns, nothing is copied)."""
            done, i, used = 0, 0, 0
            while done < table.num_rows:
                take = min(table.num_rows - done, opts.max_rows - out.rows)
                chunk, left = [], take
                while left:
                    batch, count = pieces[i]
                    got = min(count - used, left)
                    chunk.append((batch, got))
                    left, used = left - got, used + got
                    if used == count:
                        i, used = i + 1, 0
                out.add_run(table.slice(done, take), chunk, topic, partition, segment)
                done += take
                if out.rows >= opts.max_rows:
                    rb = out.flush()
                    yield typed.finish(rb) if typed is not None and rb is not None else rb

        items = split_batches(split, opts, reporter, decode=entry_to_arrow, runs=True, stored=stored)
        for item in items:
            if type(item) is tuple:  # a run of v2 data batches: read whole unless a batch of it is cut or filtered
                table, batches = item
                if _whole_run(table, batches, start, end, spans_of):
                    yield from add(table, [(b, b.record_count) for b in batches])
                    continue
            else:
                batches = [item]
            for batch in batches:
                if end is not None and batch.base_offset >= end:
                    break
                if start is not None and batch.last_offset < start:
                    continue
                if batch.is_control and not include_control:
                    continue
                table = batch.table
                if (start is not None and batch.base_offset < start) or (end is not None and batch.last_offset >= end):
                    offsets = table.column("offset")
                    in_range = pc.less(offsets, end) if start is None else pc.greater_equal(offsets, start)
                    if start is not None and end is not None:
                        in_range = pc.and_(in_range, pc.less(offsets, end))
                    table = table.filter(in_range)
                if aborted is not None:
                    table = aborted(batch, table)
                table = _fitting_records(batch, table, split, opts, reporter)
                yield from add(table, [(batch, table.num_rows)])
            else:
                continue
            break  # a batch at or past the split's end offset: nothing after it is read
        rb = out.flush()
        if rb is not None:
            yield typed.finish(rb) if typed is not None else rb
    finally:
        reporter.close()
