"""``kcodec layout``: the field layout of an entity version."""
from __future__ import annotations

import argparse
import json

from ..cli import EXIT_OK, UsageError


def cmd_layout(args: argparse.Namespace) -> int:
    from ..generated import ENTITY_VERSIONS, layout

    if args.entity not in ENTITY_VERSIONS:
        raise UsageError(f"unknown entity {args.entity!r}; known: {', '.join(sorted(ENTITY_VERSIONS))}")
    versions = ENTITY_VERSIONS[args.entity]
    if args.version is not None:
        if args.version not in versions:
            raise UsageError(f"{args.entity} has no version {args.version}; valid: "
                             f"{', '.join(map(str, versions))}")
        versions = (args.version,)
    layouts = [layout(args.entity, v) for v in versions]
    if args.format == "json":
        print(json.dumps([lay.as_dict() for lay in layouts] if len(layouts) > 1 else layouts[0].as_dict(),
                         indent=2))
        return EXIT_OK
    from ..layout_view import render_layout

    print("\n\n".join(render_layout(lay, markdown=args.format == "markdown") for lay in layouts))
    return EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser("layout", help="print an entity's field layout",
                       description="Every field of an entity version: byte offset (or 'var'), size, type, "
                                   "version range, derived facts and doc.")
    p.add_argument("entity", help="entity name, e.g. record_batch, legacy_message, record")
    p.add_argument("--version", type=int, help="one version (default: every valid version)")
    p.add_argument("--format", choices=("table", "json", "markdown"), default="table")
    p.set_defaults(func=cmd_layout)
