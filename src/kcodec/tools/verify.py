"""``kcodec verify``: every CRC and structural rule of a log, with each bad
batch's byte position, offset and the rule it breaks; ``--recover``: the
longest valid prefix of a damaged segment, as Kafka's log recovery keeps it.

Verification does not stop at the first damaged entry: it resynchronises at
the next valid batch (:mod:`kcodec.records.resync`) and reports each damaged
byte range, so one run shows everything that is wrong.

A batch whose CRC holds but that inflates past ``max_decompressed_size`` is not damage: kcodec's own cap
refused to look inside it. It is reported apart (:attr:`Problem.refused`, rule "refused by the
decompression limit"), checking goes on at its end, and ``--recover`` keeps it and what follows.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from kcodec.errors import KcodecError, record_corrupt_message
from kcodec.records.model import Batch
from kcodec.records.reader import read_batches, shrank_message
from kcodec.records.resync import find_next_entry
from kcodec.records.source import is_stream, open_input


@dataclass(frozen=True)
class Problem:
    position: int | None
    offset: int | None
    rule: str
    refused: bool = False  # kcodec's decompression cap refused the batch: not checked, not damaged
    offset_kind: str = "batch offset"  # a Kafka 0.7 entry's offset is a "byte offset"

    def __str__(self) -> str:
        where = []
        if self.position is not None:
            where.append(f"byte {self.position}")
        if self.offset is not None:
            where.append(f"{self.offset_kind} {self.offset}")
        return f"{', '.join(where) or 'input'}: {self.rule}"


#: problems kept per file, and per batch for its records: a batch of millions of records (a legal
#: record-count bomb) each breaking a rule, or a file of millions of damaged entries, is said as the first
#: ones and how many more, in bounded memory
MAX_PROBLEMS = 1000
MAX_RECORD_PROBLEMS = 10


@dataclass
class VerifyReport:
    source: str
    batches: int = 0
    records: int = 0
    bytes: int = 0
    problems: list[Problem] = field(default_factory=list)  # the first MAX_PROBLEMS
    more_problems: int = 0  # found after those
    more_damaged: bool = False  # one of those is damage (not a batch the decompression limit refused)

    def add(self, problem: Problem) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)
        else:
            self.more_problems += 1
            self.more_damaged = self.more_damaged or not problem.refused

    @property
    def problem_count(self) -> int:
        return len(self.problems) + self.more_problems

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict:
        """``kcodec verify --json``'s line for one file."""
        return {
            "file": self.source,
            "batches": self.batches,
            "records": self.records,
            "bytes": self.bytes,
            "valid": self.ok,
            "problems": [{"position": p.position, "offset": p.offset, "rule": p.rule} for p in self.problems],
            "moreProblems": self.more_problems,
        }

    @property
    def damaged(self) -> bool:
        """A problem other than a batch refused by the decompression limit."""
        return self.more_damaged or any(not p.refused for p in self.problems)


def batch_problems(batch: Batch) -> list[Problem]:
    """Rules a decoded batch can still break (the decoder already enforced framing)."""
    out = []
    more = 0  # record problems beyond MAX_RECORD_PROBLEMS

    def bad(rule: str) -> None:
        out.append(Problem(batch.position, batch.base_offset, rule))

    def bad_record(rule: str) -> None:
        nonlocal more
        if len(out) < MAX_RECORD_PROBLEMS:
            bad(rule)
        else:
            more += 1

    if not batch.crc_valid:
        bad(record_corrupt_message(batch.crc, batch.computed_crc))
    for i, r in enumerate(batch.records):
        if r.crc_valid is False and batch.compression != "none":
            bad_record(f"inner message {i} (offset {r.offset}) is corrupt (stored crc = {r.crc})")
    if batch.magic >= 2:
        span = batch.last_offset - batch.base_offset + 1
        if batch.record_count > span:
            bad(f"{batch.record_count} records do not fit the offset range [{batch.base_offset}, {batch.last_offset}]")
        previous = None
        for r in batch.records:
            if not batch.base_offset <= r.offset <= batch.last_offset:
                bad_record(
                    f"record offset {r.offset} lies outside the batch range [{batch.base_offset}, {batch.last_offset}]"
                )
            if previous is not None and r.offset <= previous:
                bad_record(f"record offsets go backwards ({previous} then {r.offset})")
            previous = r.offset
        if batch.is_transactional and batch.producer_id < 0:
            bad("a transactional batch needs a producer id")
        if batch.is_control and batch.record_count != 1 and batch.records:
            bad(f"a control batch holds exactly one record, not {batch.record_count}")
        if batch.is_control:
            for r in batch.records:
                rule = _kraft_control_damage(r)
                if rule is not None:
                    bad(rule)
    if more:
        bad(f"and {more} more record problem(s) in this batch")
    return out


def _kraft_control_damage(record) -> str | None:
    """What is wrong with a KRaft control record's value (LEADER_CHANGE, SNAPSHOT_HEADER, ...), which Kafka
    deserializes when it reads one: None when it decodes, or is not one (a transaction marker is decoded
    with its batch)."""
    from kcodec.internal_topics.registry import decode_control  # the internal topics' schemas load here

    c = record.control
    if c is None or c.is_transaction_marker:
        return None
    decoded = decode_control(c.type, record.value)
    if decoded is None or decoded.error is None:
        return None
    return f"the {c.name} control record at offset {record.offset} does not decode: {decoded.error}"


def _error_problem(exc: KcodecError) -> Problem:
    return Problem(exc.position, exc.base_offset, f"{exc.message}" + (f" [field {exc.field}]" if exc.field else ""))


def verify_source(
    source, name: str, *, strict: bool = True, max_decompressed_size: int | None = None, progress=None
) -> VerifyReport:
    """Check every entry; a damaged one is reported (with the byte range skipped to the next valid batch)
    and checking goes on after it. ``progress(position)`` is called after each batch."""
    report = VerifyReport(name)

    def on_skip(r) -> None:  # said as it is found: before the batch after it, in byte order
        report.add(_skipped_problem(r))

    reader = read_batches(
        source,
        verify_crc=False,
        strict=False,
        skip_corrupt=True,
        on_skip=on_skip,
        on_refused=on_skip,
        max_decompressed_size=max_decompressed_size,
    )
    last_offset = None
    for batch in reader:
        report.batches += 1
        report.records += len(batch.records)
        report.bytes = batch.position + batch.size
        if progress is not None:
            progress(report.bytes)
        for problem in batch_problems(batch):
            report.add(problem)
        if last_offset is not None and batch.last_offset <= last_offset:
            report.add(
                Problem(
                    batch.position,
                    batch.base_offset,
                    f"offsets out of order: last offset {batch.last_offset} follows {last_offset}",
                )
            )
        last_offset = batch.last_offset
    if reader.shrank_to is not None:
        report.add(Problem(reader.shrank_to, None, shrank_message(reader.shrank_to)))
    if reader.partial_tail is not None and strict:
        t = reader.partial_tail
        report.add(
            Problem(
                t.position, None, f"truncated: the last {t.size} bytes do not hold a whole batch (a partial write?)"
            )
        )
    return report


def refused_rule(r) -> str:
    """What to say of a batch kcodec's decompression cap refused (a :class:`SkippedRange` whose
    ``refused`` is true)."""
    return (
        f"refused by the decompression limit, not checked: {r.reason}; its bytes {r.start}..{r.end} "
        f"({r.size} bytes) are kept; raise the limit (--max-decompressed-size) to check it"
    )


def _skipped_problem(r) -> Problem:
    if r.refused:
        return Problem(r.start, r.base_offset, refused_rule(r), refused=True)
    # r.reason is the error's one-line text, with its own position; the problem is placed at the range start
    return Problem(r.start, r.base_offset, f"{r.reason}; skipped bytes {r.start}..{r.end} ({r.size} bytes)")


def verify_path(
    path: Path, *, strict: bool = True, max_decompressed_size: int | None = None, progress=None
) -> VerifyReport:
    return verify_source(path, str(path), strict=strict, max_decompressed_size=max_decompressed_size, progress=progress)


# ---------------------------------------------------------------------------- recovery


@dataclass
class RecoveryReport:
    """What ``recover`` kept and dropped. ``reason`` is the first problem (None when all was valid)."""

    source: str
    output: str
    total_bytes: int
    kept_batches: int = 0
    kept_bytes: int = 0
    damaged_ranges: int = 0  # damaged byte ranges in the dropped part (a partial tail is not one)
    readable_dropped: int = 0  # valid batches dropped because they came after the damage
    partial_tail: int = 0  # bytes at the very end that do not hold a whole batch
    reason: str | None = None
    refused: int = 0  # kept batches that the decompression limit refused: kept unchecked, never dropped

    @property
    def dropped_bytes(self) -> int:
        return self.total_bytes - self.kept_bytes

    @property
    def dropped_batches(self) -> int:
        return self.damaged_ranges + self.readable_dropped

    def as_dict(self) -> dict:
        return {
            "output": self.output,
            "keptBatches": self.kept_batches,
            "keptBytes": self.kept_bytes,
            "droppedBatches": self.dropped_batches,
            "droppedBytes": self.dropped_bytes,
            "partialTailBytes": self.partial_tail,
            "reason": self.reason,
        }

    def __str__(self) -> str:
        def n(k: int, what: str) -> str:
            return f"{k} {what}{'' if k == 1 else 'es' if what.endswith('h') else 's'}"

        head = f"{self.source}: kept {n(self.kept_batches, 'batch')} ({self.kept_bytes} bytes) in {self.output}"
        if self.refused:
            head += (
                f", {self.refused} of them refused by the decompression limit and kept unchecked "
                "(--max-decompressed-size raises it)"
            )
        if not self.dropped_bytes:
            return f"{head}; dropped nothing"
        parts = []
        if self.damaged_ranges:
            parts.append(n(self.damaged_ranges, "damaged range"))
        if self.readable_dropped:
            parts.append(f"{n(self.readable_dropped, 'valid batch')} after the damage")
        if self.partial_tail:
            parts.append(f"a partial batch of {self.partial_tail} bytes at the end")
        return (
            f"{head}; dropped {n(self.dropped_batches, 'batch')} and {self.dropped_bytes} bytes from byte "
            f"{self.kept_bytes} ({', '.join(parts)}); first problem: {self.reason}"
        )


def valid_prefix(source, *, max_decompressed_size: int | None = None) -> tuple[int, int, str | None]:
    """(batches, bytes, first problem) of the longest prefix whose entries all decode with valid CRCs (the
    outer and, for v0/v1 wrappers, every inner one): where Kafka's log recovery truncates a segment.
    A batch the decompression limit refuses (its CRC holds) is counted in and does not end the prefix."""
    return _valid_prefix(source, [], max_decompressed_size)


def _valid_prefix(source, refused: list, max_decompressed_size: int | None) -> tuple[int, int, str | None]:
    """:func:`valid_prefix`, the batches refused by the limit appended to ``refused``."""
    batches = kept = 0

    def on_refused(r) -> None:
        nonlocal batches, kept
        refused.append(r)
        batches, kept = batches + 1, r.end

    reader = read_batches(
        source, verify_crc=True, strict=False, max_decompressed_size=max_decompressed_size, on_refused=on_refused
    )
    try:
        for batch in reader:
            batches += 1
            kept = batch.position + batch.size
    except KcodecError as exc:
        return batches, kept, str(exc)
    if reader.partial_tail is not None:
        t = reader.partial_tail
        found = _next_valid(source, t.position + 1)
        if found is not None:  # not a partial write: a damaged size, with valid batches after it
            return (
                batches,
                kept,
                (
                    f"the entry at byte {t.position} claims more bytes than the {t.size} left, but a "
                    f"valid batch starts at byte {found}"
                ),
            )
        return batches, kept, f"truncated: the last {t.size} bytes (from byte {t.position}) do not hold a whole batch"
    return batches, kept, None


def _next_valid(source, start: int) -> int | None:
    if is_stream(source):
        return None  # already read: a stream cannot be looked at again
    with open_input(source) as opened:
        return find_next_entry(opened, start)


def recover(
    source: str | os.PathLike, output: str | os.PathLike, *, max_decompressed_size: int | None = None
) -> RecoveryReport:
    """Write the longest valid prefix of ``source`` to ``output`` atomically (``output`` holds the old
    content or all of the new, never a mix; it may be ``source`` itself) and say what was dropped."""
    source, output = Path(source), Path(output)
    total = source.stat().st_size
    refused: list = []
    batches, kept, reason = _valid_prefix(source, refused, max_decompressed_size)
    report = RecoveryReport(str(source), str(output), total, batches, kept, reason=reason, refused=len(refused))
    if kept < total:
        tail = read_batches(
            source,
            start=kept,
            verify_crc=True,
            strict=False,
            skip_corrupt=True,
            max_decompressed_size=max_decompressed_size,
        )
        report.readable_dropped = sum(1 for _ in tail) + len(tail.refused)
        report.damaged_ranges = len(tail.skipped) + tail.more_skipped
        report.partial_tail = tail.partial_tail.size if tail.partial_tail else 0
    with open(source, "rb") as f:
        _write_atomically(output, _chunks(f, kept))
    return report


def _chunks(f, n: int, size: int = 1 << 20):
    while n > 0:
        chunk = f.read(min(size, n))
        if not chunk:
            raise OSError(f"{f.name} shrank while it was being recovered")
        n -= len(chunk)
        yield chunk


def _write_atomically(path: Path, chunks) -> None:
    from kcodec.log.writer import write_atomically

    write_atomically(path, chunks)


_BYTE_OFFSET = "byte offset"  # Kafka 0.7's offsets are byte positions in the partition's log


def verify_kafka07(
    source,
    name: str,
    *,
    base_offset: int = 0,
    strict: bool = True,
    max_decompressed_size: int | None = None,
    progress=None,
) -> VerifyReport:
    """Check a Kafka 0.7 segment: every entry's framing, magic and codec, the CRC of every message (inner
    ones too), and the end (a torn tail is a problem unless not ``strict``: 0.7's recovery drops it).
    Entries count as batches, the messages a consumer sees as records; a problem's ``offset`` is the
    entry's byte offset. 0.7's framing has no way to find the next entry after damage: checking stops
    there and says how many bytes were left unchecked."""
    from kcodec.records.kafka07 import Kafka07Reader  # here: a Kafka 0.8+ log's check never needs it
    from kcodec.runtime.compression import DEFAULT_MAX_DECOMPRESSED_SIZE

    report = VerifyReport(name)
    limit = DEFAULT_MAX_DECOMPRESSED_SIZE if max_decompressed_size is None else max_decompressed_size
    with open_input(source) as opened:
        reader = Kafka07Reader(opened, base_offset=base_offset, verify_crc=False, max_decompressed_size=limit)
        try:
            for entry in reader:
                m = entry.message
                report.batches += 1
                report.records += len(entry.deep())
                report.bytes = m.position + m.size
                if progress is not None:
                    progress(report.bytes)
                if not m.crc_valid:
                    report.problems.append(
                        Problem(
                            m.position, m.offset, f"message is corrupt (stored crc = {m.crc})", offset_kind=_BYTE_OFFSET
                        )
                    )
                for inner in entry.messages:
                    if not inner.crc_valid:
                        report.problems.append(
                            Problem(
                                m.position,
                                m.offset,
                                f"inner message {inner.inner} is corrupt (stored crc = {inner.crc})",
                                offset_kind=_BYTE_OFFSET,
                            )
                        )
        except KcodecError as exc:
            left = opened.size - reader.end
            problem = _error_problem(exc)
            report.problems.append(
                Problem(
                    problem.position,
                    base_offset + reader.end,
                    f"{problem.rule}; {left} bytes from byte {reader.end} unchecked",
                    offset_kind=_BYTE_OFFSET,
                )
            )
            return report
    if reader.tail is not None and strict:
        t = reader.tail
        report.problems.append(
            Problem(
                t.position,
                base_offset + t.position,
                f"truncated: the last {t.size} bytes do not hold a whole message ({t.reason})",
                offset_kind=_BYTE_OFFSET,
            )
        )
    return report


def recover_kafka07(source: str | os.PathLike, output: str | os.PathLike) -> RecoveryReport:
    """Write what Kafka 0.7's recovery keeps of a segment (FileMessageSet.recover: entries until a size below
    the minimum, a short read or a bad CRC) to ``output`` atomically, and say what was dropped."""
    from kcodec.records.kafka07 import kafka07_valid_prefix

    source, output = Path(source), Path(output)
    total = source.stat().st_size
    with open_input(source) as opened:
        entries, kept, why = kafka07_valid_prefix(opened)
    report = RecoveryReport(str(source), str(output), total, entries, kept)
    if why is not None:
        report.reason = str(why) if isinstance(why, KcodecError) else f"truncated: {why.reason} at byte {why.position}"
        if isinstance(why, KcodecError):
            report.damaged_ranges = 1
        else:
            report.partial_tail = why.size
    with open(source, "rb") as f:
        _write_atomically(output, _chunks(f, kept))
    return report
