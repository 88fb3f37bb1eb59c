"""``kcodec metadata image DIR [--at-offset N]`` and ``kcodec metadata diff DIR --from N --to M``: the KRaft
cluster image a ``__cluster_metadata`` partition directory holds as of an offset, and what changed between
two offsets (text, or one JSON document with --json).

Exit status: 0 done; 2 bad usage (also a DIR that is missing or not a directory); 3 not a metadata
directory, an offset the log does not reach, or damaged batches (one line on stderr naming the file and
byte position)."""

from __future__ import annotations

import argparse
from pathlib import Path

from kcodec.commands.common import EXIT_OK, UsageError, add_json, offset_int, print_json, require_extra
from kcodec.commands.object_store import REMOTE_SCHEMES, is_uri, scheme_of

ACTIONS = ("image", "diff")


def _check_options(args: argparse.Namespace) -> None:
    if args.action == "image":
        if args.from_offset is not None or args.to_offset is not None:
            raise UsageError("--from/--to are for metadata diff; metadata image takes --at-offset")
        return
    if args.at_offset is not None:
        raise UsageError("--at-offset is for metadata image; metadata diff takes --from and --to")
    if args.from_offset is None or args.to_offset is None:
        raise UsageError("metadata diff needs --from N and --to M")
    if args.from_offset > args.to_offset:
        raise UsageError(f"--from {args.from_offset} is after --to {args.to_offset}")


def _existing_directory(name: str) -> None:
    """DIR missing or not a directory is bad usage, as a missing input FILE is for every command: said as the
    user wrote it, a URI (``s3://b/__cluster_metadata-0``) too."""
    if is_uri(name):
        if scheme_of(name) in REMOTE_SCHEMES:
            require_extra("arrow", "pyarrow")
        from kcodec.log.fs import resolve

        fs, path = resolve(name)
        found, exists = fs.is_dir(path), fs.exists(path)
    else:
        found, exists = Path(name).is_dir(), Path(name).exists()
    if not found:
        raise UsageError(f"{name}: {'not a directory' if exists else 'no such directory'}")


def cmd_metadata(args: argparse.Namespace) -> int:
    _check_options(args)
    _existing_directory(args.directory)
    from kcodec.internal_topics.metadata.replay import replay_metadata

    if args.action == "image":
        image = replay_metadata(args.directory, args.at_offset)
        if args.json:
            print_json({"directory": args.directory, **image.as_dict()})
        else:
            from kcodec.internal_topics.metadata.text import image_lines

            print("\n".join(image_lines(image, args.directory)))
        return EXIT_OK
    from kcodec.internal_topics.metadata.diff import change_line, diff_images

    before = replay_metadata(args.directory, args.from_offset)
    after = replay_metadata(args.directory, args.to_offset)
    changes = diff_images(before, after)
    if args.json:
        print_json({"directory": args.directory, "from": before.offset, "to": after.offset, "changes": changes})
    else:
        print(f"Changes in {args.directory} from offset {before.offset} to offset {after.offset}:")
        print("\n".join(f"  {change_line(c)}" for c in changes) if changes else "  (none)")
    return EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser(
        "metadata",
        help="the KRaft cluster image of a __cluster_metadata directory as of an offset, or what changed",
        description="Replay a __cluster_metadata partition directory (the latest .checkpoint snapshot at or below "
        "the offset, then the log; KRaft transactions applied when they end, aborted ones dropped) into the "
        "cluster image: topics, partitions, brokers, controllers, features, configs, client quotas, producer ids, "
        "ACLs, SCRAM credentials (mechanism and iterations only), delegation tokens. 'image' prints it, 'diff' "
        "the changes between two offsets.",
    )
    p.add_argument("action", choices=ACTIONS, help="image: the image at an offset; diff: changes between two")
    p.add_argument(
        "directory",
        metavar="DIR",
        help="a __cluster_metadata-0 partition directory, or its URI (s3://, gs://, abfss://, hdfs://, file://)",
    )
    p.add_argument(
        "--at-offset",
        type=offset_int,
        metavar="N",
        help="image: as of offset N, every record at or below it (default: the whole log)",
    )
    p.add_argument("--from", dest="from_offset", type=offset_int, metavar="N", help="diff: the image at offset N ...")
    p.add_argument("--to", dest="to_offset", type=offset_int, metavar="M", help="diff: ... against the one at M")
    add_json(p, "the image (or the list of changes) as one document")
    p.epilog = (
        "exit status: 0 done; 2 bad usage (a DIR missing or not a directory too); 3 not a metadata directory, "
        "an offset the log does not reach, or damaged batches"
    )
    p.set_defaults(func=cmd_metadata)
