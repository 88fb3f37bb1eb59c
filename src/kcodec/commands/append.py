"""``kcodec append IN OUT_DIR --kafka VERSION``: what a broker of that Kafka release stores and answers
for a producer's requests (see :mod:`kcodec.tools.broker_append`).

Exit status: 0 every request stored (a duplicate answered with its original offsets counts); 1 a request
was refused (its Kafka error printed); 2 bad usage (an unknown release or topic config); 3 input kcodec
cannot frame (the requests answered before it stay stored)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

from kcodec.commands.common import (
    EXIT_CHECK_FAILED,
    EXIT_OK,
    UsageError,
    add_json,
    compression_choices,
    existing_file,
    int_option,
    json_line,
    positive_int,
    refuse_overlap,
)

JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")


def _requests(args: argparse.Namespace, path: Path | None) -> Iterator[bytes]:
    """The producer's requests from ``path`` (None: standard input), one at a time: a file of batches split
    as a producer sends them, or JSON lines encoded as ``kcodec write`` encodes them (base offset 0, as a
    client's batches are)."""
    suffix = "" if path is None else path.suffix
    as_json = args.input_format == "json" or (args.input_format is None and suffix in JSON_SUFFIXES)
    if not as_json:
        from kcodec.records.log_validator import split_requests

        yield from split_requests(sys.stdin.buffer if path is None else path)
        return
    from kcodec.commands.write import encode_group, record_groups
    from kcodec.tools.records_io import read_json_records

    options = dict(magic=args.magic, compression=args.compression, compression_level=None, allow_lossy=False)
    with nullcontext(sys.stdin.buffer) if path is None else open(path, "rb") as lines:
        items = read_json_records(lines, args.encoding, False, "stdin" if path is None else str(path))
        for chunk, dumped, _ in record_groups(items, args.batch_size):
            yield encode_group(chunk, dumped, 0, False, options)[0]


def _answer_line(a) -> str:
    if a.error != "NONE":
        head = f"request {a.request}: {a.error} ({a.code}): {a.message}; nothing appended"
        errors = "".join(f"\n  record {i}: {m}" for i, m in a.record_errors)
        return head + errors
    if a.duplicate:
        return f"request {a.request}: NONE, duplicate of offsets {a.base_offset}..{a.last_offset}; nothing appended"
    how = "in place" if a.in_place else "rebuilt"
    return (
        f"request {a.request}: NONE base offset {a.base_offset}, last offset {a.last_offset}, {a.records} records, "
        f"{how} ({a.stored_bytes} bytes); log append time {a.log_append_time}, max timestamp {a.max_timestamp} "
        f"at offset {a.offset_of_max_timestamp}"
    )


def cmd_append(args: argparse.Namespace) -> int:
    from kcodec.records.broker_releases import UnknownReleaseError, broker_release
    from kcodec.records.log_validator import topic_config
    from kcodec.tools.broker_append import BrokerPartition

    source = None if args.input == "-" else existing_file(args.input)
    out = Path(args.out)
    if source is not None:
        refuse_overlap([source], [out])
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: not a directory (OUT_DIR is a partition directory)")
    try:
        release = broker_release(args.kafka)
        config = topic_config(release, args.topic_config or [])
    except (UnknownReleaseError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    refused = stored = duplicates = records = count = 0
    with BrokerPartition(out, release, config, leader_epoch=args.leader_epoch) as partition:
        first_offset = partition.log_end_offset
        for request in _requests(args, source):  # one request in memory at a time
            count += 1
            answer = partition.append(request, now=args.now)
            if answer.error != "NONE":
                refused += 1
            elif answer.duplicate:
                duplicates += 1
            else:
                stored += 1
                records += answer.records
            if args.json:
                shown = answer.as_dict()
                if not args.explain:
                    shown.pop("explain", None)
                print(json_line({"kind": "answer", **shown}))
            else:
                print(_answer_line(answer))
                if args.explain:
                    print("\n".join(f"  rule: {why}" for why in answer.explain))
        end = partition.log_end_offset
    summary = {
        "kafka": args.kafka,
        "rules": release.name,
        "requests": count,
        "stored": stored,
        "duplicates": duplicates,
        "refused": refused,
        "records": records,
        "firstOffset": first_offset,
        "logEndOffset": end,
        "directory": str(out),
    }
    if args.json:
        print(json_line({"kind": "summary", **summary}))
    else:
        print(
            f"Kafka {args.kafka} (the rules of {release.name}): {count} requests, {stored} stored "
            f"({records} records), {duplicates} duplicates, {refused} refused; log end offset {end} in {out}"
        )
    return EXIT_CHECK_FAILED if refused else EXIT_OK


def add_parser(sub) -> None:
    from kcodec.tools.records_io import ENCODINGS

    p = sub.add_parser(
        "append",
        help="store a producer's batches as a broker of a given Kafka release would",
        description="Validate a producer's requests as the leader of Kafka VERSION does (LogValidator: "
        "offsets from the log end offset, in-place assignment or a rebuild, timestamps, message format, "
        "size limits; the producer's epoch and sequences) and append what it would store to OUT_DIR, a "
        "partition directory (continued if it holds a log). Prints the broker's answer per request: the "
        "base offset, or Kafka's error code and name; a refused request stores nothing.",
    )
    p.add_argument(
        "input", metavar="IN", help="a file of producer batches (base offset 0), or JSON lines; - for standard input"
    )
    p.add_argument("out", metavar="OUT_DIR", help="the partition directory to append to")
    p.add_argument("--kafka", required=True, metavar="VERSION", help="the broker's release: 0.8 .. 4.x, or current")
    p.add_argument(
        "--topic-config",
        action="append",
        metavar="KEY=VALUE",
        help="a topic config (compression.type, message.format.version, message.timestamp.type, "
        "message.timestamp.*.max.ms, max.message.bytes, segment.bytes, cleanup.policy); repeatable",
    )
    p.add_argument("--now", type=int_option(0), metavar="MS", help="the broker's clock in ms (default: now)")
    p.add_argument(
        "--leader-epoch", type=int_option(0, (1 << 31) - 1), default=0, metavar="N", help="partition leader epoch"
    )
    p.add_argument("--explain", action="store_true", help="name the rule behind each decision")
    p.add_argument(
        "--input-format",
        choices=("batches", "json"),
        help="IN's format (default: json for .json/.jsonl/.ndjson, else batches)",
    )
    p.add_argument("--magic", type=int, choices=(0, 1, 2), help="JSON input: the producer's message format")
    p.add_argument("--compression", choices=compression_choices(), help="JSON input: the producer's codec")
    p.add_argument("--batch-size", type=positive_int, default=1000, metavar="N", help="JSON input: records per batch")
    p.add_argument("--encoding", choices=ENCODINGS, default="utf8", help="JSON input: how bytes are written")
    add_json(p, "one answer per request and a summary")
    p.set_defaults(func=cmd_append)
