"""``kcodec schemas DIR``: the Schema Registry state found on disk in a ``_schemas`` topic (subjects,
versions, ids, types, deletions, damaged records), as text or one JSON document (--json).

Exit status: 0 read (damaged records are listed, the rest loaded); 2 bad usage (DIR missing or not a
directory); 3 no ``_schemas-N`` partition at DIR."""

from __future__ import annotations

import argparse
from pathlib import Path

from kcodec.commands.common import EXIT_OK, UsageError, add_json, print_json


def cmd_schemas(args: argparse.Namespace) -> int:
    directory = Path(args.directory)
    if not directory.is_dir():  # as a missing input FILE is for every command: bad usage
        raise UsageError(f"{directory}: {'not a directory' if directory.exists() else 'no such directory'}")
    from kcodec.tools.registry_report import registry_json, registry_lines
    from kcodec.values.registry_topic import read_registry_topic

    state = read_registry_topic(args.directory, args.topic)
    if args.json:
        print_json(registry_json(state, args.directory))
    else:
        print("\n".join(registry_lines(state, args.directory)))
    return EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser(
        "schemas",
        help="the Schema Registry state in a _schemas topic on disk: subjects, versions, ids, types, deletions",
        description="Read a Schema Registry's _schemas topic (a partition directory, or a log directory holding "
        "one) as the registry replays it: the last record per key wins, a null value hard-deletes a version, "
        "deleted:true and DELETE_SUBJECT soft-delete. Damaged batches and records that do not parse are listed; "
        "the rest still load.",
    )
    p.add_argument("directory", metavar="DIR", help="a _schemas-0 partition directory, or a log directory holding one")
    p.add_argument("--topic", metavar="NAME", help="the registry's topic (kafkastore.topic) when not _schemas")
    add_json(p, "one document: subjects with versions, ids, types, deletions; damaged records")
    p.set_defaults(func=cmd_schemas)
