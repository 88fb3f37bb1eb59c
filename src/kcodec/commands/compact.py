"""``kcodec compact PATH``: Kafka's log cleaner, offline (see :mod:`kcodec.tools.compact`): by default a dry
run saying what one cleaning round would remove and why; ``--out DIR`` writes the cleaned partition under
another log directory, ``--in-place`` swaps it in.

Exit status: 0 done; 2 bad usage; 3 damaged input (nothing written from it) or a lock another process holds."""

from __future__ import annotations

import argparse
import binascii
import time
from datetime import datetime, timezone
from pathlib import Path

from kcodec.commands.common import (
    EXIT_OK,
    UsageError,
    add_json,
    int32_size,
    json_line,
    kafka_release,
    non_negative_int,
    offset_int,
    positive_int,
    refuse_overlap,
)

DEFAULT_RELEASE = (4, 1)
_LISTED_TOMBSTONES = 20  # in text; --json lists them all


def _ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{value} is not between 0 and 1")
    return value


def _key(args: argparse.Namespace) -> bytes | None:
    if args.key is not None:
        return args.key.encode()
    if args.key_hex is not None:
        try:
            return bytes.fromhex(args.key_hex)
        except ValueError:
            raise UsageError(f"--key-hex {args.key_hex!r}: not hexadecimal bytes") from None
    return None


def _when(ms: int) -> str:
    try:
        return datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"


def _show_key(key: bytes) -> str:
    try:
        return repr(key.decode())
    except UnicodeDecodeError:
        return "0x" + binascii.hexlify(key).decode()


def cmd_compact(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.is_dir():
        raise UsageError(f"{path}: {'not a directory' if path.exists() else 'no such directory'}")
    if args.out is not None and args.in_place:
        raise UsageError("--out and --in-place exclude each other")
    from kcodec.tools.compact import CleanerConfig, compact_rounds
    from kcodec.tools.txn import txn_partitions

    parts, _ = txn_partitions(path, exclude=("__cluster_metadata",))
    is_log_dir = not (len(parts) == 1 and Path(parts[0].path).resolve() == path.resolve())
    if args.topic:
        parts = [p for p in parts if p.topic in args.topic]
    elif is_log_dir and (args.out is not None or args.in_place):
        raise UsageError(
            "name the compacted topics with --topic: a log directory does not say which topics have "
            "cleanup.policy=compact"
        )
    if args.out is not None:
        refuse_overlap([path], [args.out])
    config = CleanerConfig(
        now_ms=args.now if args.now is not None else int(time.time() * 1000),
        delete_retention_ms=args.delete_retention_ms,
        min_compaction_lag_ms=args.min_compaction_lag_ms,
        segment_bytes=args.segment_bytes,
        segment_index_bytes=args.segment_index_bytes,
        min_cleanable_dirty_ratio=args.min_cleanable_dirty_ratio,
        producer_id_expiration_ms=args.producer_id_expiration_ms,
        dedupe_buffer_size=args.dedupe_buffer_size,
        release=args.release,
    )
    key = _key(args)
    options = {"key": key, "first_dirty_offset": args.first_dirty_offset}
    mode = "in-place" if args.in_place else "out" if args.out is not None else "dry-run"
    out = None if args.out is None else Path(args.out)
    for part in parts:
        rounds = compact_rounds(part, config, out_log_dir=out, in_place=args.in_place, rounds=args.rounds, **options)
        for n, result in enumerate(rounds, start=1):
            if args.json:
                print(json_line({**_as_dict(result, mode), "round": n}))
            else:
                print("\n".join(_lines(result, mode, key, n if args.rounds > 1 else None)))
    return EXIT_OK


def _name(plan) -> str:
    part = plan.partition
    return f"{part.topic}-{part.partition}" if part.topic is not None else str(part.path)


def _as_dict(result, mode: str) -> dict:
    return {"kind": "partition", "mode": mode, **result.as_dict()}


def _lines(result, mode: str, key: bytes | None, round_number: int | None = None) -> list[str]:
    plan, config = result.plan, result.plan.config
    ratio = plan.dirty_ratio
    verdict = "a broker would pick it" if result.would_clean else "a broker would wait"
    name = _name(plan) + ("" if round_number is None else f" round {round_number}")
    lines = [
        f"{name}: log {plan.log_start_offset}..{plan.log_end_offset}, cleanable {plan.first_dirty_offset}.."
        f"{plan.first_uncleanable_offset} (first dirty from {plan.first_dirty_from}; stops at "
        f"{plan.uncleanable_reason}), dirty ratio {ratio:.2f} (min.cleanable.dirty.ratio "
        f"{config.min_cleanable_dirty_ratio}: {verdict})",
        f"  offset map: {result.map_entries} keys of {result.map_capacity}"
        + (" (full: the round ends early)" if result.map_full else "")
        + f"; this round cleans up to offset {result.end_offset}",
    ]
    parts = ", ".join(f"{n} {r}" for r, n in sorted(result.removed.items(), key=lambda kv: -kv[1]) if n)
    lines.append(
        f"  {'would remove' if mode == 'dry-run' else 'removed'} {result.records_removed} records"
        + (f" ({parts})" if parts else "")
        + f"; batches: {result.batches_kept_whole} kept byte for byte, {result.batches_rewritten} rewritten, "
        f"{result.empty_batches_kept} kept empty, {result.batches_removed} removed"
    )
    lines.append(
        f"  bytes {result.bytes_before} -> {result.bytes_after} in {result.segments_before} segments -> "
        f"{result.segments_after}"
    )
    for t in result.tombstones[:_LISTED_TOMBSTONES]:
        lines.append(
            f"  tombstone at offset {t.offset} key {_show_key(t.key)}: removable from {_when(t.removable_at_ms)} "
            f"({t.rule})"
        )
    if result.tombstone_count > _LISTED_TOMBSTONES:
        lines.append(f"  ... {result.tombstone_count - _LISTED_TOMBSTONES} more tombstones kept (--json lists them)")
    if key is not None:
        if not result.key_events:
            lines.append(f"  key {_show_key(key)}: no record")
        for e in result.key_events:
            what = "tombstone" if e.tombstone else "record"
            lines.append(
                f"  key {_show_key(key)}: {what} at offset {e.offset} {'kept' if e.kept else 'removed'} ({e.reason})"
            )
    return lines


def add_parser(sub) -> None:
    p = sub.add_parser(
        "compact",
        help="Kafka's log cleaner offline: what compaction keeps, drops and why (dry run, --out or --in-place)",
        description="Run one round of Kafka's log cleaner on a partition directory (or every partition of a log "
        "directory) as a broker of the given release would: the cleanable range from the first dirty offset "
        "(cleaner-offset-checkpoint) to the first uncleanable one (the active segment, min.compaction.lag.ms, "
        "the last stable offset), the latest offset per key wins, null-key records go, tombstones stay until "
        "their delete horizon, aborted transactions' data and finished markers go, empty batches keep active "
        "producers' last sequences. By default nothing is written: the report says what would be removed and "
        "why, bytes before and after, the dirty ratio, and when each kept tombstone becomes removable.",
    )
    p.add_argument("path", metavar="PATH", help="a partition directory (<topic>-<n>) or a broker log directory")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="report only (the default)")
    mode.add_argument("--out", metavar="DIR", help="write the cleaned partition(s) under the log directory DIR")
    mode.add_argument(
        "--in-place",
        action="store_true",
        help="swap the cleaned segments into PATH (Kafka's .cleaned -> .swap -> rename, under the log "
        "directory's and the partition's locks; refused while a broker holds the log directory)",
    )
    p.add_argument("--topic", action="append", metavar="T", help="only this topic's partitions (repeatable)")
    keys = p.add_mutually_exclusive_group()
    keys.add_argument("--key", metavar="K", help="say what happens to every record of key K (UTF-8 text)")
    keys.add_argument("--key-hex", metavar="HEX", help="--key as hexadecimal bytes")
    p.add_argument("--now", type=offset_int, metavar="MS", help="the cleaner's clock, epoch ms (default: now)")
    p.add_argument("--release", type=kafka_release, default=DEFAULT_RELEASE, metavar="X.Y",
                   help="the Kafka release whose cleaner runs (default 4.1; before 3.1 v2 batches carry no "
                   "delete horizon and every tombstone and marker goes by segment mtimes)")  # fmt: skip
    p.add_argument("--first-dirty-offset", type=offset_int, metavar="N",
                   help="where the dirty range starts (default: the log directory's cleaner-offset-checkpoint, "
                   "else the log start)")  # fmt: skip
    p.add_argument("--delete-retention-ms", type=non_negative_int, default=86_400_000, metavar="MS")
    p.add_argument("--min-compaction-lag-ms", type=non_negative_int, default=0, metavar="MS")
    p.add_argument("--segment-bytes", type=int32_size, default=1 << 30, metavar="N")
    p.add_argument("--segment-index-bytes", type=int32_size, default=10 * 1024 * 1024, metavar="N")
    p.add_argument("--min-cleanable-dirty-ratio", type=_ratio, default=0.5, metavar="R")
    p.add_argument("--producer-id-expiration-ms", type=non_negative_int, default=86_400_000, metavar="MS")
    p.add_argument("--dedupe-buffer-size", type=positive_int, default=128 * 1024 * 1024, metavar="BYTES",
                   help="the offset map's memory (log.cleaner.dedupe.buffer.size: 24 bytes a key at load "
                   "factor 0.9); a round stops where it fills")  # fmt: skip
    p.add_argument("--rounds", type=positive_int, default=1, metavar="N",
                   help="up to N cleaning rounds, each from where the last ended, while the offset map fills "
                   "(default 1, a broker's one pass; a dry run of more rounds cleans a temporary copy)")  # fmt: skip
    add_json(p, "one object per partition (per round with --rounds)")
    p.epilog = "exit status: 0 done; 2 bad usage; 3 damaged input or a lock held by another process"
    p.set_defaults(func=cmd_compact)
