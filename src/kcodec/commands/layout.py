"""``kcodec layout``: the field layout of an entity version; ``--diff`` compares two layouts,
``--svg`` draws one as a byte diagram."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from kcodec.commands.common import (
    EXIT_OK,
    UsageError,
    add_json,
    add_schemas_from,
    non_negative_int,
    print_json,
    schema_package,
    wants_json,
)


def _check_entity(entity: str, versions: dict) -> tuple[int, ...]:
    if entity not in versions:
        raise UsageError(f"unknown entity {entity!r}; known: {', '.join(sorted(versions))}")
    return versions[entity]


def _check_version(entity: str, version: int, versions: dict, where: str = "") -> None:
    valid = _check_entity(entity, versions)
    if version not in valid:
        raise UsageError(f"{entity} has no version {version}{where}; valid: {', '.join(map(str, valid))}")


def cmd_layout(args: argparse.Namespace) -> int:
    if args.diff is not None:
        return _cmd_diff(args)
    if args.new_schemas is not None:
        raise UsageError("--new-schemas only goes with --diff")
    if args.entity is None:
        raise UsageError("an ENTITY is required (or --diff)")
    from kcodec.tools.layout.diff import package_layouts

    package = schema_package(args)
    layouts = package_layouts(package)
    entity = package.entity(args.entity)  # Kafka's name (FetchResponse) or kcodec's (fetch_response)
    versions = _check_entity(entity, layouts.versions)
    if args.version is not None:
        _check_version(entity, args.version, layouts.versions)
        versions = (args.version,)
    if args.svg is not None:
        if len(versions) != 1:
            raise UsageError(
                f"--svg draws one version; {entity} has {', '.join(map(str, versions))}: pick one with --version"
            )
        from kcodec.tools.layout.svg import layout_svg

        out = Path(args.svg)
        out.write_text(layout_svg(layouts.layout(entity, versions[0]), layouts), encoding="utf-8")
        if args.json:
            print_json({"svg": str(out), "entity": entity, "version": versions[0]})
        else:
            print(f"wrote {out} ({entity} v{versions[0]})")
        return EXIT_OK
    tables = [layouts.layout(entity, v) for v in versions]
    if wants_json(args):
        print_json([lay.as_dict() for lay in tables] if len(tables) > 1 else tables[0].as_dict())
        return EXIT_OK
    from kcodec.tools.layout.view import render_layout

    width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None  # full rows in a pipe
    print("\n\n".join(render_layout(lay, markdown=args.format == "markdown", width=width) for lay in tables))
    return EXIT_OK


def _side(spec: str, default_entity: str | None) -> tuple[str, int]:
    """``N`` (a version of the default entity) or ``ENTITY:N``."""
    entity, sep, version = spec.rpartition(":")
    if not sep:
        entity, version = default_entity or "", spec
    if not entity:
        raise UsageError(f"--diff {spec!r}: say which entity (ENTITY:VERSION, or --diff ENTITY A B)")
    try:
        return entity, int(version)
    except ValueError:
        raise UsageError(f"--diff: {version!r} is not a version number (in {spec!r})") from None


def _cmd_diff(args: argparse.Namespace) -> int:
    from kcodec.tools.layout.diff import diff_layouts, layouts_from_schemas, package_layouts, render_diff

    if args.svg is not None or args.version is not None:
        raise UsageError("--diff takes its versions as arguments; it does not combine with --version or --svg")
    spec = list(args.diff)
    entity = args.entity
    if len(spec) == 3 and entity is None:
        entity, spec = spec[0], spec[1:]
    if len(spec) != 2:
        raise UsageError("--diff wants two sides: --diff ENTITY A B, ENTITY --diff A B, or --diff ENTITY:A ENTITY2:B")
    (ea, va), (eb, vb) = _side(spec[0], entity), _side(spec[1], entity)
    package = schema_package(args)
    ea, eb = package.entity(ea), package.entity(eb)  # Kafka's names (FetchResponse) too
    la = package_layouts(package)
    lb = la
    if args.new_schemas is not None:
        directory = Path(args.new_schemas)
        if not directory.is_dir():
            raise UsageError(f"--new-schemas {args.new_schemas}: no such directory")
        lb = layouts_from_schemas(directory)
    _check_version(ea, va, la.versions)
    _check_version(eb, vb, lb.versions, f" in {lb.source}" if lb is not la else "")
    d = diff_layouts(la.layout(ea, va), lb.layout(eb, vb), la, lb)
    if wants_json(args):
        print_json(d.as_dict())
    else:
        print(render_diff(d, markdown=args.format == "markdown"))
    return EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser(
        "layout",
        help="print an entity's field layout, diff two layouts, or draw one as SVG",
        description="Every field of an entity version: byte offset (or 'var'), size, type, "
        "version range, derived facts and doc. --diff compares two layouts (versions "
        "of one entity, two entities, or the layout a changed schema directory would "
        "generate); --svg draws a byte diagram.",
    )
    p.add_argument("entity", nargs="?", help="entity name, e.g. record_batch, legacy_message, record")
    p.add_argument("--version", type=non_negative_int, help="one version (default: every valid version)")
    p.add_argument("--format", choices=("table", "json", "markdown"), default="table", help="json: the same as --json")
    add_json(p, "the layout (or --diff) with every field's offset, size and type; --svg: the file written")
    p.add_argument(
        "--diff",
        nargs="+",
        metavar="SIDE",
        help="compare two layouts: --diff ENTITY A B (versions), ENTITY --diff A B, or "
        "--diff ENTITY:A OTHER:B (e.g. legacy_log_entry:1 record_batch:2); shows fields added, "
        "removed, moved (offset changed) and changed, and the overheads",
    )
    p.add_argument(
        "--new-schemas",
        metavar="DIR",
        help="with --diff: take side B from the layout DIR's schemas would generate (what "
        "regenerating after a schema change does)",
    )
    p.add_argument("--svg", metavar="OUT.svg", help="draw the layout as a byte diagram into OUT.svg")
    add_schemas_from(p, "the layouts (ENTITY may be Kafka's name: FetchResponse)")
    p.set_defaults(func=cmd_layout)
