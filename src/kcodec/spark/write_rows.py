"""One write task's rows, column-wise: Arrow record batches routed to topic-partitions, cut
into batches by the writer's rules and encoded by the compiled kernel (:mod:`kcodec.records.arrow_encode`).

The rules are those of :mod:`kcodec.spark.write` and :mod:`kcodec.spark.sink`: a batch closes once
it holds ``records_per_batch`` records or ``batch_bytes`` of payload (key and value bytes, header key
characters and value bytes), or before the next record would take it past ``kafka.batch.size`` as
the producer estimates it. Per-row sizes come from the kernel in one pass (``columns_sizes_v2``);
the rules run over runs of rows bound for one stage (``cut_run``), one call per batch. Rows whose
partition is known (the option or column, or their key) are grouped per topic-partition, one run
each; where the sticky rule places rows of a topic (no key, no partition) that topic's rows go in
row order, a run per stretch bound for one partition or for the sticky one. Topics share no stages,
so each is routed on its own. A batch may gather rows of several Arrow batches: it is encoded in
parts, one per Arrow batch, into one set of records.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import BinaryIO

from kcodec.errors import EncodeError
from kcodec.records.arrow_encode import (
    ArrowRows,
    encode_parts,
    kernel,
    new_records,
    partitions_for_keys,
    selection_arg,
)
from kcodec.records.encode import encode_batch, encode_v2_written
from kcodec.records.framing import V2_OVERHEAD
from kcodec.records.sizing import v2_fixed_size_of, v2_record_size
from kcodec.spark.sink import Router

__all__ = ["TaskStages", "arrow_rows", "row_sizes", "cut_run"]


@dataclass
class Stage:
    """What a task stages for one topic-partition: the open batch's rows and the file's counts."""

    topic: str
    partition: int
    path: str
    out: BinaryIO  # the staging file, open for writing
    parts: list = field(default_factory=list)  # the open batch: (ArrowRows, selection) per Arrow batch
    pending: int = 0
    pending_bytes: int = 0
    next_rel: int = 0
    records: int = 0
    first: int | None = None
    last: int | None = None
    batch_v2: int = 0  # the open batch's records as v2 encodes them (kafka.batch.size)
    first_ts: int = -1


def arrow_rows(rb, keep_offsets: bool) -> ArrowRows:
    """The writer's columns of an Arrow record batch (timestamps as int64 microseconds)."""
    import pyarrow as pa

    names = rb.schema.names

    def column(name):
        return rb.column(name) if name in names else None

    ts = column("timestamp")
    if ts is not None:
        ts = ts.cast(pa.timestamp("us", tz=ts.type.tz)).cast(pa.int64())
    headers = column("headers")
    if headers is not None:
        value_type = headers.type.value_type.field("value").type
        value_type = pa.string() if pa.types.is_large_string(value_type) or value_type == pa.string() else pa.binary()
        want = pa.list_(pa.struct([("key", pa.string()), ("value", value_type)]))
        if headers.type != want:
            headers = headers.cast(want)
    offsets = column("offset").cast(pa.int64()) if keep_offsets else None
    return ArrowRows(column("key"), column("value"), ts, headers, offsets)


def row_sizes(rows: ArrowRows, n: int) -> tuple:
    """Per row: payload bytes (batchBytes), v2 bytes past attributes and deltas (kafka.batch.size),
    timestamp in ms; int64 sequences."""
    k = kernel()
    if k is not None:
        b = rows.buffers()
        return tuple(array("q", part) for part in k.columns_sizes_v2(b[0], b[1], b[2], b[3], n))
    payload, fixed, millis = array("q"), array("q"), array("q")
    for r in new_records(rows, (0, n)):
        hs = r.headers
        payload.append(
            (len(r.key) if r.key else 0)
            + (len(r.value) if r.value else 0)
            + sum(len(hk or "") + (len(hv) if hv else 0) for hk, hv in hs)
        )
        # a null header key has no size: encoding the row refuses it (EncodeError)
        fixed.append(0 if any(hk is None for hk, _ in hs) else v2_fixed_size_of(r.key, r.value, hs))
        millis.append(r.timestamp)
    return payload, fixed, millis


def cut_run(sizes: tuple, selection, pos: int, state: tuple, records_per_batch: int, batch_bytes: int, room):
    """The writer's batch rules over rows bound for one stage, from ``pos`` of ``selection``:
    ``(end, closed, pending, pending_bytes, batch_v2, first_ts)``; rows [pos, end) join the open
    batch (``state``: its pending records, payload bytes, v2 estimate, first timestamp), which
    closes (``closed``) before a row that takes its v2 estimate past ``room`` (kafka.batch.size less
    the batch header; None: no such rule) or after the row that brings it to ``records_per_batch``
    records or ``batch_bytes`` of payload."""
    k = kernel()
    payload, fixed, millis = sizes
    if k is not None:
        return k.cut_run(
            payload, fixed, millis, selection_arg(selection), pos, state, records_per_batch, batch_bytes, room
        )
    pending, pending_bytes, batch_v2, first_ts = state
    order = range(selection[0], selection[0] + selection[1]) if isinstance(selection, tuple) else selection.to_pylist()
    for i in range(pos, len(order)):
        r = order[i]
        if room is not None:
            ts = millis[r]
            if pending and batch_v2 + v2_record_size(pending, ts - first_ts, fixed[r]) > room:
                return (i, True, pending, pending_bytes, batch_v2, first_ts)
            if not pending:
                batch_v2, first_ts = 0, ts
            batch_v2 += v2_record_size(pending, ts - first_ts if pending else 0, fixed[r])
        pending += 1
        pending_bytes += payload[r]
        if pending >= records_per_batch or pending_bytes >= batch_bytes:
            return (i + 1, True, pending, pending_bytes, batch_v2, first_ts)
    return (len(order), False, pending, pending_bytes, batch_v2, first_ts)


class TaskStages:
    """A task's stages (one per topic-partition), fed Arrow record batches."""

    def __init__(self, opts, router: Router, open_stage):
        self.opts = opts
        self.router = router
        self.open_stage = open_stage  # (topic, partition) -> Stage
        self.stages: dict[tuple[str, int], Stage] = {}

    def stage(self, topic: str, partition: int) -> Stage:
        st = self.stages.get((topic, partition))
        if st is None:
            st = self.stages[(topic, partition)] = self.open_stage(topic, partition)
        return st

    # ------------------------------------------------------------------ rows in

    def add(self, rb) -> None:
        """Route and stage the rows of one Arrow record batch."""
        import pyarrow as pa
        import pyarrow.compute as pc

        opts = self.opts
        n = rb.num_rows
        rows = arrow_rows(rb, opts.keep_offsets)
        kept = None  # None: every row; else the int64 indices of rows that are not control records
        control = None
        if "isControl" in rb.schema.names:
            control = pc.fill_null(rb.column("isControl"), False)
            if not pc.any(control).as_py():
                control = None
            else:
                kept = pc.indices_nonzero(pc.invert(control)).cast(pa.int64())
                if not len(kept):
                    return
        topics = None if opts.topic is not None else rb.column("topic")
        self._check_rows(kept, topics, rows.offset)
        sticky, parts = self._partitions(rb, rows, topics, control)
        sizes = row_sizes(rows, n)
        for topic, members in self._by_topic(n, kept, topics):
            if sticky is not None and pc.any(sticky if members is None else sticky.take(members)).as_py():
                self._add_in_order(topic, rows, n, members, parts, sticky, sizes)
            else:
                self._add_grouped(topic, rows, n, members, parts, sizes)

    def _check_rows(self, kept, topics, offsets) -> None:
        """A null topic or kept offset: the row the writer stops at."""
        import pyarrow.compute as pc

        def first_null(arr):
            if arr is None or not arr.null_count:
                return None
            at = pc.indices_nonzero(pc.is_null(arr if kept is None else arr.take(kept)))
            if not len(at):
                return None
            i = at[0].as_py()
            return i if kept is None else kept[i].as_py()

        bad_topic, bad_offset = first_null(topics), first_null(offsets)
        if bad_topic is not None and (bad_offset is None or bad_topic <= bad_offset):
            raise EncodeError(f"row {bad_topic}: null topic; the topic option sets one for every row (as in Spark)")
        if bad_offset is not None:
            raise EncodeError(f"row {bad_offset}: keepOffsets needs an offset in every row")

    def _partitions(self, rb, rows: ArrowRows, topics, control) -> tuple:
        """(sticky, partitions): partitions as an int64 Arrow array or one int; sticky None when no
        row is placed by the sticky rule, else a bool Arrow array (those rows' partitions are left to it).
        Control rows (``control``: a bool array, or None) are skipped, so they are placed nowhere."""
        import pyarrow as pa
        import pyarrow.compute as pc

        opts = self.opts
        if opts.partition is not None:
            return None, opts.partition
        n = rb.num_rows
        if "partition" in rb.schema.names:
            parts = rb.column("partition").cast(pa.int64())
            if not parts.null_count:
                return None, parts
            routed = pc.is_null(parts)
        else:
            parts = pa.nulls(n, pa.int64())
            routed = pa.array([True] * n)
        if control is not None:
            routed = pc.and_(routed, pc.invert(control))
        if opts.ignore_keys or rows.key is None:
            keyed = pa.array([False] * n)
        else:
            keyed = pc.and_(routed, pc.is_valid(rows.key))
        if pc.any(keyed).as_py():
            names = [opts.topic] if topics is None else pc.unique(topics.filter(keyed)).to_pylist()
            for topic in names:
                placed = partitions_for_keys(rows.key, self.router.count(topic)).cast(pa.int64())
                where = keyed if topics is None else pc.and_(keyed, pc.equal(topics, topic))
                parts = pc.if_else(where, placed, parts)
        sticky = pc.and_(routed, pc.invert(keyed))
        return (sticky if pc.any(sticky).as_py() else None), parts

    def _by_topic(self, n: int, kept, topics):
        """(topic, members) in order of first appearance: the rows of each topic, as int64 indices
        (None: every row). Topics share no stages, so each is routed on its own."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if topics is None:
            yield self.opts.topic, kept
            return
        mine = topics if kept is None else topics.take(kept)
        names = pc.unique(mine).to_pylist()
        if len(names) == 1:
            yield names[0], kept
            return
        every = pa.array(range(n), pa.int64()) if kept is None else kept
        for topic in names:
            yield topic, every.filter(pc.equal(mine, topic))

    def _add_grouped(self, topic: str, rows: ArrowRows, n: int, members, parts, sizes) -> None:
        """Rows whose partitions are known: each partition's rows in one run."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if isinstance(parts, int):
            self._run(topic, self.stage(topic, parts), rows, members, sizes)
            return
        mine = parts if members is None else parts.take(members)
        if pc.count_distinct(mine).as_py() == 1:
            self._run(topic, self.stage(topic, mine[0].as_py()), rows, members, sizes)
            return
        every = pa.array(range(n), pa.int64()) if members is None else members
        groups = pa.table({"p": mine, "i": every}).group_by("p", use_threads=False).aggregate([("i", "list")])
        lists = groups.column("i_list").combine_chunks()
        for i, partition in enumerate(groups.column("p").to_pylist()):
            self._run(topic, self.stage(topic, partition), rows, lists[i].values, sizes)

    def _add_in_order(self, topic: str, rows: ArrowRows, n: int, members, parts, sticky, sizes) -> None:
        """Rows some of which the sticky rule places: in row order, a run per stretch of rows bound
        for one partition or for the sticky one (which moves as its batches close)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        every = pa.array(range(n), pa.int64()) if members is None else members
        mine_sticky = sticky if members is None else sticky.take(members)
        mine_parts = pc.fill_null(parts if members is None else parts.take(members), -1)
        m = len(every)
        change = pc.or_(
            pc.not_equal(mine_sticky.slice(1), mine_sticky.slice(0, m - 1)),
            pc.not_equal(mine_parts.slice(1), mine_parts.slice(0, m - 1)),
        )
        starts = [0] + [i + 1 for i in pc.indices_nonzero(change).to_pylist()] + [m]
        flags, targets = mine_sticky.to_pylist(), mine_parts.to_pylist()
        for a, b in zip(starts, starts[1:]):
            run = every.slice(a, b - a)
            if flags[a]:
                self._run(topic, None, rows, run, sizes)
            else:
                self._run(topic, self.stage(topic, targets[a]), rows, run, sizes)

    def _run(self, topic: str, st: Stage | None, rows: ArrowRows, members, sizes) -> None:
        """Append rows (``members``: int64 indices, None: every row) to ``st``, flushing each batch
        that closes (:func:`cut_run`); ``st`` None: the sticky partition's stage, which moves on
        to the next partition each time one of its batches closes."""
        opts = self.opts
        selection = (0, len(sizes[0])) if members is None else members
        m = selection[1] if members is None else len(members)
        room = None if opts.batch_limit is None else opts.batch_limit - V2_OVERHEAD
        pos = 0
        while pos < m:
            stage = st or self.stage(topic, self.router.partition(topic, None))
            state = (stage.pending, stage.pending_bytes, stage.batch_v2, stage.first_ts)
            end, closed, *after = cut_run(sizes, selection, pos, state, opts.records_per_batch, opts.batch_bytes, room)
            if end > pos:
                stage.parts.append((rows, (pos, end - pos) if members is None else members.slice(pos, end - pos)))
            stage.pending, stage.pending_bytes, stage.batch_v2, stage.first_ts = after
            if closed:
                self.flush(stage)
                if st is None:
                    self.router.batch_closed(topic, stage.partition)
            pos = end

    # ------------------------------------------------------------------ batches out

    def flush(self, st: Stage) -> None:
        """Encode the open batch of ``st`` and append it to its staging file."""
        if not st.pending:
            return
        parts = [(rows, _selection(sel)) for rows, sel in st.parts]
        opts = self.opts
        base = None if opts.keep_offsets else st.next_rel
        written = encode_parts(parts, base) if opts.magic == 2 else None
        if written is not None:
            data = encode_v2_written(written, compression=opts.compression, compression_level=opts.compression_level)
            first, last = written[2], written[3]
        else:  # magic 0/1, no kernel, or rows the Python writer words
            records = [r for rows, sel in parts for r in new_records(rows, sel)]
            data = encode_batch(
                records,
                magic=opts.magic,
                compression=opts.compression,
                compression_level=opts.compression_level,
                base_offset=base,
                allow_lossy=True,
            )
            first, last = records[0].offset, records[-1].offset
        if opts.keep_offsets:
            st.first = first if st.first is None else st.first
            st.last = last
        else:
            st.next_rel += st.pending
        st.out.write(data)
        st.records += st.pending
        st.parts, st.pending, st.pending_bytes = [], 0, 0

    def finish(self) -> None:
        for st in self.stages.values():
            self.flush(st)


def _selection(sel):
    """A part's rows as encode_rows takes them (lists of row numbers become int64 arrays)."""
    if isinstance(sel, list):
        import pyarrow as pa

        return pa.array(sel, pa.int64())
    return sel
