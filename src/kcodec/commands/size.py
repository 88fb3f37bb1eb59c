"""``kcodec size``: bytes on disk for records of a given shape."""

from __future__ import annotations

import argparse

from kcodec.commands.common import EXIT_OK, UsageError, add_json, positive_int, print_json, wants_json


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
    from kcodec.tools.sizing import SizeQuery, size_on_disk

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


def add_parser(sub) -> None:
    p = sub.add_parser(
        "size",
        help="bytes on disk for records of a given shape",
        description="Bytes that records take on disk in each message format, from the "
        "generated size functions. A size of -1 means null.",
    )
    p.add_argument("--magic", type=int, choices=(0, 1, 2), help="one format (default: compare 0, 1 and 2)")
    p.add_argument("--key-size", type=_size_arg, required=True, metavar="K", help="key bytes, -1 for a null key")
    p.add_argument("--value-size", type=_size_arg, required=True, metavar="V", help="value bytes, -1 for a null value")
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
    p.set_defaults(func=cmd_size)
