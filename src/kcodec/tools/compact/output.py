"""Where a cleaning round's segments go: a copy of the partition under another log directory (``--out``), or
the partition itself (``--in-place``), through Kafka's ``.cleaned`` -> ``.swap`` -> rename sequence
(:mod:`kcodec.log.swap`) under the partition's lock and the log directory's (a running broker holds the
latter). Either way the log directory's ``cleaner-offset-checkpoint`` then names the round's end as the
partition's first dirty offset, as the broker records it, so the next run continues from there."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

from kcodec.errors import KcodecError
from kcodec.log.lock import DIR_LOCK_NAME, OutputLock
from kcodec.log.names import parse_segment_name
from kcodec.log.partition import Partition
from kcodec.log.swap import recover_swaps, replace_segments, write_cleaned
from kcodec.log.writer import write_atomically
from kcodec.tools.compact.clean import CleanedSegment, CleanResult, clean_partition
from kcodec.tools.compact.config import CleanerConfig
from kcodec.tools.compact.plan import CLEANER_CHECKPOINT, plan_partition
from kcodec.tools.dump.files import dump_text_file

__all__ = ["compact_to", "compact_in_place", "compact_rounds", "record_first_dirty"]


def record_first_dirty(log_dir: Path, topic: str | None, partition: int | None, offset: int) -> None:
    """Set the partition's entry of ``log_dir``'s ``cleaner-offset-checkpoint`` (Kafka's CheckpointFile),
    keeping the others; written atomically."""
    if topic is None or partition is None:
        return
    path = Path(log_dir) / CLEANER_CHECKPOINT
    entries = {}
    if path.is_file():
        for e in dump_text_file(path, "offset-checkpoint").fields["entries"]:
            entries[(e["topic"], e["partition"])] = e["offset"]
    entries[(topic, partition)] = offset
    lines = ["0", str(len(entries))] + [f"{t} {p} {o}" for (t, p), o in sorted(entries.items())]
    write_atomically(path, ("\n".join(lines) + "\n").encode())


def compact_to(part: Partition, out_log_dir: Path, config: CleanerConfig, **options) -> CleanResult:
    """Write ``part`` cleaned into ``out_log_dir/<its name>/`` (which must not hold segments yet): the cleaned
    segments, the segments the round leaves alone and the partition's other files (checkpoints, producer
    snapshots, partition.metadata) copied as they are, mtimes kept."""
    src = Path(part.path)
    dst = Path(out_log_dir) / src.name
    dst.mkdir(parents=True, exist_ok=True)
    if any(dst.iterdir()):
        raise KcodecError(f"{dst} is not empty: --out writes a new partition directory")
    with OutputLock.for_directory(dst):
        plan = plan_partition(part, config, **_plan_options(options))
        cleaned_bases: set[int] = set()

        def write(seg: CleanedSegment) -> None:
            write_cleaned(dst, seg.base_offset, seg.data, seg.aborted, seg.mtime_ms)
            replace_segments(dst, seg.base_offset, [])
            cleaned_bases.update(s.base_offset for s in seg.sources)

        result = clean_partition(plan, on_segment=write, **_clean_options(options))
        for entry in sorted(src.iterdir()):
            if entry.name == DIR_LOCK_NAME or not entry.is_file():
                continue
            try:
                parsed = parse_segment_name(entry.name)
            except ValueError:
                parsed = None
            if parsed is not None and parsed.kind in ("log", "index", "timeindex", "txnindex"):
                if parsed.base_offset in cleaned_bases:
                    continue
            elif parsed is not None and parsed.kind != "snapshot":
                continue  # .deleted, .cleaned, .swap, .tmp: not part of the partition
            shutil.copy2(entry, dst / entry.name)
    record_first_dirty(Path(out_log_dir), part.topic, part.partition, result.end_offset)
    return result


def compact_in_place(part: Partition, config: CleanerConfig, **options) -> CleanResult:
    """Clean ``part`` where it is, holding its log directory's ``.lock`` (refused while a broker runs on it)
    and its own; what an interrupted earlier run left is completed first (:func:`recover_swaps`)."""
    directory = Path(part.path)
    log_dir = directory.resolve().parent
    with ExitStack() as locks:
        try:
            locks.enter_context(OutputLock.for_directory(log_dir))
        except PermissionError as exc:
            raise KcodecError(f"{log_dir}: cannot take its lock ({exc.strerror})") from None
        locks.enter_context(OutputLock.for_directory(directory))
        recover_swaps(directory)
        plan = plan_partition(part, config, **_plan_options(options))

        def swap(seg: CleanedSegment) -> None:
            write_cleaned(directory, seg.base_offset, seg.data, seg.aborted, seg.mtime_ms)
            replace_segments(directory, seg.base_offset, [s.base_offset for s in seg.sources])

        result = clean_partition(plan, on_segment=swap, **_clean_options(options))
        record_first_dirty(log_dir, part.topic, part.partition, result.end_offset)
    return result


def _plan_options(options: dict) -> dict:
    return {k: v for k, v in options.items() if k == "first_dirty_offset"}


def _clean_options(options: dict) -> dict:
    return {k: v for k, v in options.items() if k == "key"}


def compact_rounds(
    part: Partition,
    config: CleanerConfig,
    *,
    out_log_dir: Path | None = None,
    in_place: bool = False,
    rounds: int = 1,
    **options,
) -> Iterator[CleanResult]:
    """Up to ``rounds`` cleaning rounds of ``part``, each from where the last one ended, stopping early once
    a round's offset map did not fill (the dirty range is then cleaned): what a broker's cleaner does over
    successive passes when the map cannot hold the dirty range's keys. The first round is a dry run, writes
    to ``out_log_dir`` or cleans in place; later rounds clean what the first one wrote (``out_log_dir``), or
    for a dry run a temporary copy, which is removed after. Each round's result is yielded as it ends."""
    options = dict(options)
    with ExitStack() as scratch:
        for n in range(rounds):
            last = n == rounds - 1
            if in_place:
                result = compact_in_place(part, config, **options)
            elif out_log_dir is not None:
                result = compact_to(part, out_log_dir, config, **options)
            elif last:
                result = clean_partition(
                    plan_partition(part, config, **_plan_options(options)), **_clean_options(options)
                )
            else:  # a dry run that goes on: the round is written to a copy the next one cleans
                copy = Path(scratch.enter_context(tempfile.TemporaryDirectory(prefix="kcodec-compact-")))
                result = compact_to(part, copy, config, **options)
                out_log_dir = copy
            yield result
            if not result.map_full:
                return
            if out_log_dir is not None and not in_place:
                part, in_place = Partition(Path(out_log_dir) / Path(part.path).name), True
            options.pop("first_dirty_offset", None)  # the next round starts at the checkpoint just written
