"""``kcodec generate``: regenerate generated/ from schemas/, or check it is fresh."""

from __future__ import annotations

import argparse
import sys
from importlib.util import find_spec
from pathlib import Path

from kcodec.commands.common import EXIT_CHECK_FAILED, EXIT_ERROR, EXIT_OK, UsageError, packaged


def cmd_generate(args: argparse.Namespace) -> int:
    missing = [
        name
        for module, name in (("jinja2", "Jinja2"), ("yaml", "PyYAML"), ("ruff", "ruff"))
        if find_spec(module) is None
    ]
    if missing:  # the generator's own dependencies are an extra: reading logs never needs them
        print(f"kcodec generate needs {' and '.join(missing)}: pip install 'kcodec[generate]'", file=sys.stderr)
        return EXIT_ERROR
    if args.kafka_json is not None:
        return _generate_kafka_json(args)
    if args.skip_unsupported:
        raise UsageError("--skip-unsupported goes with --kafka-json")
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


def _generate_kafka_json(args: argparse.Namespace) -> int:
    """Kafka's JSON message definitions into a package of the user's (never kcodec's own generated/)."""
    if args.schemas is not None or args.check:
        raise UsageError("--kafka-json takes no --schemas or --check: its schemas are the JSON files")
    if args.out is None:
        raise UsageError("--kafka-json needs --out PKGDIR: the package to write (kcodec's own generated/ is not one)")
    out = Path(args.out)
    if not out.name.isidentifier():
        raise UsageError(f"--out {args.out}: the package name {out.name!r} is not a Python identifier")
    if out.resolve() == packaged("generated").resolve():
        raise UsageError(f"--out {args.out} is kcodec's own generated/; write Kafka's messages elsewhere")
    for d in args.kafka_json:
        if not Path(d).is_dir():
            raise UsageError(f"--kafka-json {d}: no such directory")
    from kcodec.codegen import write_package
    from kcodec.codegen.schema.kafka_json import load_kafka_json
    from kcodec.generated.registries import REGISTRIES

    loaded = load_kafka_json(args.kafka_json, skip_unsupported=args.skip_unsupported, registries=REGISTRIES)
    for problem in loaded.skipped:
        print(f"skipped {problem}", file=sys.stderr)
    for note in loaded.notes:
        print(f"note: {note}", file=sys.stderr)
    result = write_package(loaded.schemas, out)
    print(
        f"{len(loaded.messages)} Kafka messages ({len(loaded.schemas.entities)} entities with their structs) "
        f"into {out}: {len(result.written)} written, {len(result.unchanged)} unchanged, {len(result.deleted)} deleted"
        + (f"; {len({p.file for p in loaded.skipped})} file(s) skipped" if loaded.skipped else "")
    )
    return EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser(
        "generate",
        help="regenerate generated/ from schemas/ (or check it is fresh)",
        description="Load and validate the YAML schemas and render the codecs into generated/.",
    )
    p.add_argument("--schemas", metavar="DIR", help="schema directory (default: the package's schemas/)")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="output directory (default: the package's generated/); with --kafka-json the package to write",
    )
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if the output is stale")
    p.add_argument(
        "--kafka-json",
        nargs="+",
        metavar="DIR",
        help="read Kafka's JSON message definitions (*.json under each DIR, e.g. a Kafka source tree's "
        "clients/src/main/resources/common/message) instead of YAML schemas; needs --out PKGDIR",
    )
    p.add_argument(
        "--skip-unsupported",
        action="store_true",
        help="with --kafka-json: leave out the files holding what kcodec cannot map, listing each on stderr",
    )
    p.set_defaults(func=cmd_generate)
