"""One write task's rows, column-wise: Arrow record batches routed to topic-partitions, cut
into batches by the writer's rules and encoded by the compiled kernel (:mod:`kcodec.records.arrow_encode`).

The rules are those of :mod:`kcodec.spark.write` and :mod:`kcodec.spark.sink`, applied to whole
columns: a batch closes once it holds ``records_per_batch`` records or ``batch_bytes`` of payload
(key and value bytes, header key characters and value bytes), or before the next record would take
it past ``kafka.batch.size`` as the producer estimates it. Rows that name a partition or carry a key
are grouped per topic-partition and cut with cumulative sums; keyless rows placed by the sticky rule,
and ``kafka.batch.size``, need the rows one at a time (their partition or size depends on the batches
closed before them), which a loop over plain integers does. A batch may gather rows of several Arrow
batches; it is encoded in parts, one per Arrow batch, into one set of records.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import accumulate

from kcodec.errors import EncodeError
from kcodec.records.arrow_encode import ArrowRows, encode_rows, kernel, new_records, partitions_for_keys
from kcodec.records.encode import encode_batch, encode_v2_written
from kcodec.records.framing import V2_OVERHEAD
from kcodec.spark.sink import Router, v2_fixed_size, v2_size

__all__ = ["TaskStages", "arrow_rows", "row_sizes"]


@dataclass
class Stage:
    """What a task stages for one topic-partition: the open batch's rows and the file's counts."""

    topic: str
    partition: int
    path: str
    out: object
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
            + sum(len(hk) + (len(hv) if hv else 0) for hk, hv in hs)
        )
        fixed.append(v2_fixed_size(r.key, r.value, hs))
        millis.append(r.timestamp)
    return payload, fixed, millis


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
        names = rb.schema.names
        rows = arrow_rows(rb, opts.keep_offsets)
        kept = None  # None: every row; else the int64 indices of rows that are not control records
        if "isControl" in names:
            control = pc.fill_null(rb.column("isControl"), False)
            if pc.any(control).as_py():
                kept = pc.indices_nonzero(pc.invert(control)).cast(pa.int64())
        topics = None if opts.topic is not None else rb.column("topic")
        self._check_rows(n, kept, topics, rows.offset)
        sticky, parts = self._partitions(rb, rows, topics)
        payload, fixed, millis = row_sizes(rows, n)
        if sticky is not None or opts.batch_limit is not None:
            self._add_one_by_one(rows, kept, topics, parts, sticky, payload, fixed, millis)
        else:
            self._add_grouped(rows, n, kept, topics, parts, payload)

    def _check_rows(self, n: int, kept, topics, offsets) -> None:
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

    def _partitions(self, rb, rows: ArrowRows, topics) -> tuple:
        """(sticky, partitions): partitions as an int64 Arrow array or one int; sticky None when no
        row is placed by the sticky rule, else a bool list (those rows' partitions are left to it)."""
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
        keyed = routed
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
        if not pc.any(sticky).as_py():
            return None, parts
        return sticky.to_pylist(), parts

    def _add_grouped(self, rows: ArrowRows, n: int, kept, topics, parts, payload) -> None:
        """Rows whose topic-partitions are known: per topic-partition, batches cut by cumulative sums."""
        import pyarrow as pa

        if topics is None and isinstance(parts, int):
            self._add_run(self.stage(self.opts.topic, parts), rows, kept, payload)
            return
        idx = pa.array(range(n), pa.int64()) if kept is None else kept
        if topics is None:
            topics = pa.array([self.opts.topic] * n, pa.string())
        if isinstance(parts, int):
            parts = pa.array([parts] * n, pa.int64())
        table = pa.table({"t": topics.take(idx), "p": parts.take(idx), "i": idx})
        groups = table.group_by(["t", "p"], use_threads=False).aggregate([("i", "list")])
        for topic, partition, members in zip(
            groups.column("t").to_pylist(),
            groups.column("p").to_pylist(),
            groups.column("i_list").chunks[0]
            if groups.column("i_list").num_chunks == 1
            else groups.column("i_list").combine_chunks(),
            strict=True,
        ):
            self._add_run(self.stage(topic, partition), rows, members.values, payload)

    def _add_run(self, st: Stage, rows: ArrowRows, members, payload) -> None:
        """Append rows (``members``: int64 indices, or None for every row) to ``st``, flushing each
        batch that fills: the batch closes at the first row that brings it to records_per_batch
        records or batch_bytes of payload."""
        opts = self.opts
        if members is None:
            m, sizes = len(payload), payload
        else:
            m = len(members)
            sizes = [payload[i] for i in members.to_pylist()]
        cum = array("q", accumulate(sizes))
        pos = 0
        while pos < m:
            before = cum[pos - 1] if pos else 0
            by_count = pos + (opts.records_per_batch - st.pending) - 1
            by_bytes = bisect_left(cum, before + opts.batch_bytes - st.pending_bytes, pos)
            end = min(by_count, by_bytes, m - 1)
            sel = (pos, end - pos + 1) if members is None else members.slice(pos, end - pos + 1)
            self._append(st, rows, sel, end - pos + 1, cum[end] - before)
            if end == by_count or end == by_bytes:
                self.flush(st)
            pos = end + 1

    def _add_one_by_one(self, rows: ArrowRows, kept, topics, parts, sticky, payload, fixed, millis) -> None:
        """The writer's rules row by row (the sticky partitioner, kafka.batch.size)."""
        opts, router = self.opts, self.router
        order = range(len(payload)) if kept is None else kept.to_pylist()
        topic_of = None if topics is None else topics.to_pylist()
        part_of = parts if isinstance(parts, int) else parts.to_pylist()
        limit = opts.batch_limit
        for i in order:
            topic = opts.topic if topic_of is None else topic_of[i]
            routed = sticky is not None and sticky[i]
            if routed:
                partition = router.partition(topic, None)
            else:
                partition = part_of if isinstance(part_of, int) else part_of[i]
            st = self.stage(topic, partition)
            if limit is not None:  # the producer's batch.size: close the batch before it overflows
                ts = millis[i]
                while st.pending and V2_OVERHEAD + st.batch_v2 + v2_size(st.pending, ts - st.first_ts, fixed[i]) > (
                    limit
                ):
                    self.flush(st)
                    if routed:
                        router.batch_closed(topic, st.partition)
                        st = self.stage(topic, router.partition(topic, None))
                if not st.pending:
                    st.batch_v2, st.first_ts = 0, ts
                st.batch_v2 += v2_size(st.pending, ts - st.first_ts if st.pending else 0, fixed[i])
            self._append_row(st, rows, i, payload[i])
            if st.pending >= opts.records_per_batch or st.pending_bytes >= opts.batch_bytes:
                self.flush(st)
                if routed:
                    router.batch_closed(topic, st.partition)

    def _append(self, st: Stage, rows: ArrowRows, sel, count: int, nbytes: int) -> None:
        st.parts.append((rows, sel))
        st.pending += count
        st.pending_bytes += nbytes

    def _append_row(self, st: Stage, rows: ArrowRows, i: int, nbytes: int) -> None:
        if st.parts and st.parts[-1][0] is rows and isinstance(st.parts[-1][1], list):
            st.parts[-1][1].append(i)
        else:
            st.parts.append((rows, [i]))
        st.pending += 1
        st.pending_bytes += nbytes

    # ------------------------------------------------------------------ batches out

    def flush(self, st: Stage) -> None:
        """Encode the open batch of ``st`` and append it to its staging file."""
        if not st.pending:
            return
        parts = [(rows, _selection(sel)) for rows, sel in st.parts]
        opts = self.opts
        base = None if opts.keep_offsets else st.next_rel
        written = _written(parts, base) if opts.magic == 2 else None
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


def _written(parts: list, base: int | None) -> tuple | None:
    """One batch's records from its parts, as the kernel's record writers return them; None when a
    part is left to the Python writer."""
    data, count, previous, base_ts, max_ts = [], 0, None, None, -1
    for rows, sel in parts:
        w = encode_rows(rows, sel, base_offset=base, previous_offset=previous, base_timestamp=base_ts)
        if w is None:
            return None
        if not w[1]:
            continue
        if base_ts is None:
            base, base_ts = w[2], w[4]
        data.append(w[0])
        count += w[1]
        previous = w[3]
        max_ts = max(max_ts, w[5])
    return (b"".join(data), count, base, previous, base_ts, max_ts)
