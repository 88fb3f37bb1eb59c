"""``kcodec verify``: every CRC and structural rule of a log, with each bad
batch's byte position, offset and the rule it breaks."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .errors import KcodecError
from .runtime.model import Batch
from .runtime.reader import read_batches


@dataclass(frozen=True)
class Problem:
    position: int | None
    offset: int | None
    rule: str

    def __str__(self) -> str:
        where = []
        if self.position is not None:
            where.append(f"byte {self.position}")
        if self.offset is not None:
            where.append(f"batch offset {self.offset}")
        return f"{', '.join(where) or 'input'}: {self.rule}"


@dataclass
class VerifyReport:
    source: str
    batches: int = 0
    records: int = 0
    bytes: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def batch_problems(batch: Batch) -> list[Problem]:
    """Rules a decoded batch can still break (the decoder already enforced framing)."""
    out = []

    def bad(rule: str) -> None:
        out.append(Problem(batch.position, batch.base_offset, rule))

    if not batch.crc_valid:
        bad(f"Record is corrupt (stored crc = {batch.crc}, CRC of the bytes differs)")
    for i, r in enumerate(batch.records):
        if r.crc_valid is False and batch.compression != "none":
            bad(f"inner message {i} (offset {r.offset}) is corrupt (stored crc = {r.crc})")
    if batch.magic >= 2:
        span = batch.last_offset - batch.base_offset + 1
        if batch.record_count > span:
            bad(f"{batch.record_count} records do not fit the offset range [{batch.base_offset}, {batch.last_offset}]")
        previous = None
        for r in batch.records:
            if not batch.base_offset <= r.offset <= batch.last_offset:
                bad(f"record offset {r.offset} lies outside the batch range [{batch.base_offset}, {batch.last_offset}]")
            if previous is not None and r.offset <= previous:
                bad(f"record offsets go backwards ({previous} then {r.offset})")
            previous = r.offset
        if batch.is_transactional and batch.producer_id < 0:
            bad("a transactional batch needs a producer id")
        if batch.is_control and batch.record_count != 1 and batch.records:
            bad(f"a control batch holds exactly one record, not {batch.record_count}")
    return out


def verify_source(source, name: str, *, strict: bool = True) -> VerifyReport:
    report = VerifyReport(name)
    reader = read_batches(source, verify_crc=False, strict=False)
    last_offset = None
    try:
        for batch in reader:
            report.batches += 1
            report.records += len(batch.records)
            report.bytes = batch.position + batch.size
            report.problems += batch_problems(batch)
            if last_offset is not None and batch.last_offset <= last_offset:
                report.problems.append(Problem(batch.position, batch.base_offset,
                                               f"offsets out of order: last offset {batch.last_offset} follows "
                                               f"{last_offset}"))
            last_offset = batch.last_offset
    except KcodecError as exc:
        report.problems.append(Problem(exc.position, exc.base_offset,
                                       f"{exc.message}" + (f" [field {exc.field}]" if exc.field else "")))
        return report
    if reader.partial_tail is not None and strict:
        t = reader.partial_tail
        report.problems.append(Problem(t.position, None, f"truncated: the last {t.size} bytes do not hold a whole "
                                                         "batch (a partial write?)"))
    return report


def verify_path(path: Path, *, strict: bool = True) -> VerifyReport:
    return verify_source(path, str(path), strict=strict)
