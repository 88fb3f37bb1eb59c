"""``kcodec generate``: regenerate generated/ from schemas/, or check it is fresh."""

from __future__ import annotations

import argparse
import sys
from importlib.util import find_spec
from pathlib import Path

from kcodec.commands.common import EXIT_CHECK_FAILED, EXIT_ERROR, EXIT_OK, packaged


def cmd_generate(args: argparse.Namespace) -> int:
    missing = [
        name
        for module, name in (("jinja2", "Jinja2"), ("yaml", "PyYAML"), ("ruff", "ruff"))
        if find_spec(module) is None
    ]
    if missing:  # the generator's own dependencies are an extra: reading logs never needs them
        print(f"kcodec generate needs {' and '.join(missing)}: pip install 'kcodec[generate]'", file=sys.stderr)
        return EXIT_ERROR
    from kcodec.codegen import generate

    schemas = Path(args.schemas) if args.schemas else packaged("schemas")
    out = Path(args.out) if args.out else packaged("generated")
    result = generate(schemas, out, check=args.check)
    if args.check:
        if result.stale:
            for name in result.written:
                print(f"stale: {out / name}", file=sys.stderr)
            for name in result.deleted:
                print(f"no longer produced: {out / name}", file=sys.stderr)
            print(f"kcodec: {out} is stale against {schemas}; run `kcodec generate`", file=sys.stderr)
            return EXIT_CHECK_FAILED
        print(f"{out} is fresh ({len(result.unchanged)} files, schemas sha256 {result.schema_sha256[:12]})")
        return EXIT_OK
    for name in result.written:
        print(f"wrote {out / name}")
    for name in result.deleted:
        print(f"deleted {out / name}")
    print(
        f"{len(result.written)} written, {len(result.unchanged)} unchanged, {len(result.deleted)} deleted "
        f"(schemas sha256 {result.schema_sha256[:12]})"
    )
    return EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser(
        "generate",
        help="regenerate generated/ from schemas/ (or check it is fresh)",
        description="Load and validate the YAML schemas and render the codecs into generated/.",
    )
    p.add_argument("--schemas", metavar="DIR", help="schema directory (default: the package's schemas/)")
    p.add_argument("--out", metavar="DIR", help="output directory (default: the package's generated/)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if the output is stale")
    p.set_defaults(func=cmd_generate)
