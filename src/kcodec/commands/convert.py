"""``kcodec convert``: re-encode a log in another magic or compression codec, keeping offsets."""

from __future__ import annotations

import argparse
from pathlib import Path

from kcodec.commands.common import (
    EXIT_OK,
    UsageError,
    add_json,
    allow_lossy_hint,
    compression_choices,
    existing_file,
    int32,
    int32_size,
    non_negative_int,
    offset_int,
    print_json,
    refuse_overlap,
)
from kcodec.errors import EncodeError


def cmd_convert(args: argparse.Namespace) -> int:
    from kcodec.commands.progress import Progress, file_size  # not at start-up: --help stays as light
    from kcodec.log.writer import write_atomically
    from kcodec.records.reader import read_batches

    if args.source_format == "0.7":
        return _convert_kafka07(args)
    for option in _KAFKA07_ONLY:
        if getattr(args, option) is not None:
            raise UsageError(f"--{option.replace('_', '-')} applies to --from 0.7")
    if args.compression is None:
        args.compression = "none"
    src, out = existing_file(Path(args.input)), Path(args.out)
    refuse_overlap([src], [out])
    reader = read_batches(src, verify_crc=not args.no_verify)
    chunks: list[bytes] = []
    batches, records = 0, 0
    with Progress(file_size(src), desc=src.name) as progress:
        for batch in reader:
            progress.to(batch.position + batch.size)
            _convert_one(batch, args, chunks)
            batches += 1
            records += len(batch.records)
    write_atomically(out, chunks)
    if args.json:
        print_json(
            {
                "input": str(src),
                "output": str(out),
                "records": records,
                "batches": batches,
                "magic": args.magic,
                "compression": args.compression,
                "inputBytes": src.stat().st_size,
                "outputBytes": sum(map(len, chunks)),
                "partialTailBytes": reader.partial_tail.size if reader.partial_tail else 0,
            }
        )
        return EXIT_OK
    tail = f"; ignored a partial batch of {reader.partial_tail.size} bytes at the end" if reader.partial_tail else ""
    print(
        f"converted {records} records in {batches} batches to magic {args.magic} / {args.compression}: "
        f"{src.stat().st_size} -> {sum(map(len, chunks))} bytes{tail}"
    )
    return EXIT_OK


_KAFKA07_ONLY = (
    "map",
    "translation_table",
    "consumer_offsets",
    "offsets_dir",
    "broker",
    "topic",
    "partition",
    "commit_timestamp",
    "offsets_partitions",
    "batch_records",
)


def _convert_kafka07(args: argparse.Namespace) -> int:
    """A Kafka 0.7 partition directory, or a broker's whole log directory of them, to logical offsets
    (:mod:`kcodec.tools.migrate07`)."""
    from kcodec.internal_topics.commits import DEFAULT_OFFSETS_PARTITIONS
    from kcodec.log.kafka07 import is_kafka07_partition_dir
    from kcodec.log.names import parse_partition_dir
    from kcodec.tools.migrate07 import (
        DEFAULT_BATCH_RECORDS,
        PartitionPlan,
        migrate_kafka07,
        migrate_kafka07_log_dir,
        plan_log_dir,
        read_consumer_positions,
        translate_positions,
        translation_table,
        write_consumer_offsets,
    )

    src, out = Path(args.input), Path(args.out)
    one = src.is_dir() and is_kafka07_partition_dir(src)
    if not one and not (src.is_dir() and any(is_kafka07_partition_dir(d) for d in src.iterdir())):
        raise UsageError(
            f"{src}: not a Kafka 0.7 partition directory (<topic>-<partition> holding .kafka segments) nor a log "
            "directory holding them"
        )
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"{out}: exists and is not an empty directory (a migration writes a new one)")
    if (args.consumer_offsets is None) != (args.offsets_dir is None):
        raise UsageError("--consumer-offsets (0.7's ZooKeeper positions) and --offsets-dir go together")
    if one and args.map:
        raise UsageError("--map renames the partitions of a log directory: for one partition, --topic/--partition")
    if not one and (args.topic or args.partition is not None):
        raise UsageError("--topic/--partition name one partition's new name: for a log directory, --map OLD=NEW")
    suffix = ".offsets.csv" if one else ".offsets"
    table = Path(args.translation_table) if args.translation_table else out.with_name(out.name + suffix)
    if table.exists() and (one or not table.is_dir() or any(table.iterdir())):
        raise UsageError(f"{table}: the translation table{'' if one else 's directory'} exists already")
    refuse_overlap([src], [out, table] + ([Path(args.offsets_dir)] if args.offsets_dir else []))
    if one:
        try:
            topic, partition = parse_partition_dir(src)
        except ValueError:
            raise UsageError(f"{src}: a 0.7 partition directory is named <topic>-<partition>") from None
        new = (args.topic or topic, partition if args.partition is None else args.partition)
        plans = [PartitionPlan(src, topic, partition, *new)]
    else:
        plans = plan_log_dir(src, _mapping(args.map or []))
    commits: list = []
    if args.consumer_offsets:  # translated first: a position that does not fit its log writes nothing
        positions = read_consumer_positions(existing_file(args.consumer_offsets))
        for plan in plans:
            commits += translate_positions(
                positions,
                translation_table(plan.source),
                source_topic=plan.source_topic,
                source_partition=plan.source_partition,
                broker=args.broker,
                topic=plan.topic,
                partition=plan.partition,
                commit_timestamp=args.commit_timestamp,
                offsets_partitions=args.offsets_partitions or DEFAULT_OFFSETS_PARTITIONS,
            )
    options = {
        "magic": args.magic,
        "compression": args.compression,
        "compression_level": args.level,
        "batch_records": args.batch_records or DEFAULT_BATCH_RECORDS,
    }
    if one:
        migrations = [migrate_kafka07(src, out, table, **options)]
    else:
        migrations = migrate_kafka07_log_dir(plans, out, table, **options)
    if commits:
        write_consumer_offsets(commits, args.offsets_dir)
    if args.json:
        commits_json = [
            {"group": c.group, "byteOffset": c.byte_offset, "offset": c.offset, "offsetsPartition": c.offsets_partition}
            for c in commits
        ]
        if one:
            print_json(migrations[0].as_dict() | {"commits": commits_json})
        else:
            print_json({"partitions": [m.as_dict() for m in migrations], "commits": commits_json})
        return EXIT_OK
    for m in migrations:
        for problem in m.problems:
            print(f"{m.source}: {problem}")
        print(
            f"migrated {m.messages} messages in {m.entries} 0.7 entries to {m.batches} batches (magic {args.magic}) "
            f"in {m.output}; offset translation table: {m.table_path}"
        )
    for c in commits:
        print(
            f"committed {c.group}: byte offset {c.byte_offset} -> offset {c.offset} "
            f"(__consumer_offsets-{c.offsets_partition})"
        )
    if args.consumer_offsets and not commits:
        print(f"no consumer positions of the migrated partitions in {args.consumer_offsets}")
    return EXIT_OK


def _mapping(specs: list[str]) -> dict[str, tuple[str, int]]:
    """``--map clicks-0=clicks-7`` (or ``clicks-0=7``, the same topic) as {"clicks-0": ("clicks", 7)}."""
    from kcodec.log.names import parse_partition_dir

    out: dict[str, tuple[str, int]] = {}
    for spec in specs:
        old, sep, new = spec.partition("=")
        try:
            topic, _ = parse_partition_dir(old)
            mapped = (topic, int(new)) if new.isdigit() else parse_partition_dir(new)
        except ValueError:
            mapped = None
        if not sep or mapped is None:
            raise UsageError(f"--map {spec!r}: expected OLD=NEW, e.g. clicks-0=clicks-7 or clicks-0=7")
        if old in out:
            raise UsageError(f"--map names {old} twice")
        out[old] = mapped
    return out


def _convert_one(batch, args: argparse.Namespace, chunks: list[bytes]) -> None:
    from kcodec.records.encode import convert_batches

    try:
        chunks.append(
            convert_batches(
                [batch],
                magic=args.magic,
                compression=args.compression,
                compression_level=args.level,
                allow_lossy=args.allow_lossy,
            )
        )
    except EncodeError as exc:
        raise allow_lossy_hint(exc) from None


def add_parser(sub) -> None:
    p = sub.add_parser(
        "convert",
        help="re-encode a log in another magic / codec, keeping offsets",
        description="Up- or down-convert like a broker: every record keeps its offset and "
        "timestamp. Lossy conversions (headers or transactions into v0/v1, "
        "timestamps into v0, zstd below v2) are refused unless --allow-lossy.",
    )
    p.add_argument(
        "input", metavar="IN", help="a log file; with --from 0.7, a 0.7 partition directory or a broker's log directory"
    )
    p.add_argument("out", metavar="OUT", help="the converted log; with --from 0.7, a new partition (or log) directory")
    p.add_argument("--magic", type=int, choices=(0, 1, 2), required=True)
    p.add_argument(
        "--compression",
        choices=compression_choices(),
        help="codec of the output (default none; with --from 0.7 each 0.7 set keeps its codec)",
    )
    p.add_argument(
        "--from",
        dest="source_format",
        choices=("0.7",),
        help="0.7: IN is a Kafka 0.7 partition (byte offsets) migrated to logical offsets",
    )
    k07 = p.add_argument_group("--from 0.7")
    k07.add_argument(
        "--translation-table",
        metavar="FILE",
        help="where to write the offset translation table (CSV byte_offset,offset,messages; default OUT.offsets.csv), "
        "for a log directory a directory of them (default OUT.offsets/)",
    )
    k07.add_argument(
        "--consumer-offsets",
        metavar="FILE",
        help="0.7 consumer positions: ZooKeeper paths /consumers/<group>/offsets/<topic>/<broker>-<partition> and "
        "their values (lines 'PATH VALUE', or a JSON object)",
    )
    k07.add_argument("--offsets-dir", metavar="DIR", help="where the __consumer_offsets-<p> commit records are written")
    k07.add_argument(
        "--broker", type=non_negative_int, help="the 0.7 broker this partition lived on (its positions are used)"
    )
    k07.add_argument(
        "--map",
        action="append",
        metavar="OLD=NEW",
        help="a log directory's partition OLD (topic-n) becomes NEW (topic-m, or m for the same topic); repeatable",
    )
    k07.add_argument("--topic", help="the topic the commits name (default: the 0.7 directory's topic)")
    k07.add_argument(
        "--partition", type=non_negative_int, help="the partition the commits name (default: the 0.7 partition)"
    )
    k07.add_argument("--commit-timestamp", type=offset_int, metavar="MS", help="the commits' timestamp (default: now)")
    k07.add_argument(
        "--offsets-partitions", type=int32_size, metavar="N", help="offsets.topic.num.partitions (default 50)"
    )
    k07.add_argument(
        "--batch-records", type=int32_size, metavar="N", help="plain 0.7 messages per output batch (default 1000)"
    )
    p.add_argument("--level", type=int32, help="compression level")
    p.add_argument("--allow-lossy", action="store_true", help="drop what the target format cannot hold")
    p.add_argument("--no-verify", action="store_true", help="do not check CRCs of the input")
    add_json(p, "what was converted and the sizes before and after")
    p.set_defaults(func=cmd_convert)
