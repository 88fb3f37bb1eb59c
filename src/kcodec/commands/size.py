"""``kcodec size``: bytes on disk for records of a given shape."""

from __future__ import annotations

import argparse

from kcodec.commands.common import (
    EXIT_OK,
    UsageError,
    add_json,
    add_schemas_from,
    existing_file,
    package_entity,
    positive_int,
    print_json,
    schema_package,
    wants_json,
)


def _size_arg(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a size is an integer (-1 for null), not {text!r}") from None
    if n < -1:
        raise argparse.ArgumentTypeError("a size is >= 0, or -1 for null")
    return n


def _header_arg(text: str) -> tuple[int, int]:
    try:
        k, v = text.split(":")
        key, value = int(k), int(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--header takes KEY_SIZE:VALUE_SIZE, e.g. 1:8, not {text!r}") from None
    if key < 0 or value < -1:
        raise argparse.ArgumentTypeError("a header key size is >= 0; its value size >= 0 or -1 for null")
    return key, value


def cmd_size(args: argparse.Namespace) -> int:
    if args.message is not None:
        return _message_size(args)
    if args.value is not None or args.schemas_from is not None:
        raise UsageError("--value and --schemas-from size a --message NAME:VERSION")
    if args.key_size is None or args.value_size is None:
        raise UsageError("--key-size and --value-size are required (or --message NAME:VERSION --value FILE)")
    from kcodec.records.sizing import SizeQuery, size_on_disk

    query = SizeQuery(args.key_size, args.value_size, args.records, tuple(args.header or ()))
    magics = [args.magic] if args.magic is not None else [0, 1, 2]
    if query.headers and any(m < 2 for m in magics):
        if args.magic is not None:
            raise UsageError("headers need magic 2 (v0 and v1 messages have no headers)")
        magics = [2]
    results = [size_on_disk(m, query) for m in magics]
    if wants_json(args):
        out = [r.as_dict(breakdown=args.breakdown) for r in results]
        print_json(out[0] if len(out) == 1 else out)
        return EXIT_OK
    from kcodec.tools.layout.view import render_sizes

    print(render_sizes(query, results, breakdown=args.breakdown))
    return EXIT_OK


def _message_size(args: argparse.Namespace) -> int:
    """The exact bytes of one message (any entity: a Kafka message from --schemas-from, or kcodec's own)
    given as Kafka's JSON, per field with --breakdown."""
    import json
    import sys

    from kcodec.internal_topics.json_converter import from_kafka_json

    record_options = [o for o, v in (("--key-size", args.key_size), ("--value-size", args.value_size)) if v is not None]
    record_options += [o for o, v in (("--magic", args.magic), ("--header", args.header)) if v is not None]
    if record_options or args.records != 1:
        raise UsageError(f"--message sizes one message: {', '.join(record_options) or '--records'} size record batches")
    if args.value is None:
        raise UsageError("--message needs --value FILE: the message as Kafka's JSON (- reads standard input)")
    package = schema_package(args)
    entity, version = package_entity(package, args.message, "--message")
    if version is None:
        raise UsageError(f"--message {args.message!r}: say NAME:VERSION, e.g. FetchRequest:12")
    text = sys.stdin.read() if args.value == "-" else existing_file(args.value).read_text(encoding="utf-8")
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--value {args.value}: not JSON ({exc})") from None
    value = from_kafka_json(entity, version, obj, package.codecs.schema_set())
    codec = package.module.codec(entity, version)
    total = len(codec.build(value))  # building checks every value (nulls, ranges); the size functions do not
    fields = codec.field_sizes(value) if args.breakdown else {}
    if wants_json(args):
        out = {"entity": entity, "version": version, "bytes": total}
        print_json(out | ({"fields": fields} if args.breakdown else {}))
        return EXIT_OK
    print(f"{entity} v{version}: {total} bytes")
    width = max((len(k) for k in fields), default=0)
    for k, v in fields.items():
        print(f"  {k:<{width}}  {v:>8}")
    return EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser(
        "size",
        help="bytes on disk for records of a given shape",
        description="Bytes that records take on disk in each message format, from the "
        "generated size functions. A size of -1 means null.",
    )
    p.add_argument("--magic", type=int, choices=(0, 1, 2), help="one format (default: compare 0, 1 and 2)")
    p.add_argument("--key-size", type=_size_arg, metavar="K", help="key bytes, -1 for a null key (required)")
    p.add_argument("--value-size", type=_size_arg, metavar="V", help="value bytes, -1 for a null value (required)")
    p.add_argument("--records", type=positive_int, default=1, metavar="R", help="number of records (default 1)")
    p.add_argument(
        "--header",
        type=_header_arg,
        action="append",
        metavar="K:V",
        help="a header with a K-byte key and a V-byte value (-1: null); repeatable; magic 2 only",
    )
    p.add_argument("--breakdown", action="store_true", help="show the bytes of every field")
    p.add_argument("--format", choices=("table", "json"), default="table", help="json: the same as --json")
    add_json(p, "the sizes per magic (with --breakdown, per field)")
    p.add_argument(
        "--message",
        metavar="NAME:VERSION",
        help="instead of records: the exact bytes of one message or entity (FetchRequest:12, "
        "offset_commit_value:3) given by --value",
    )
    p.add_argument("--value", metavar="FILE", help="with --message: the message as Kafka's JSON (- for stdin)")
    add_schemas_from(p, "with --message: the message's schemas")
    p.set_defaults(func=cmd_size)
