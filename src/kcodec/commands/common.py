"""What every subcommand shares: exit statuses, the usage error, packaged paths, checks of
inputs and options that more than one command takes.

Exit status: 0 success; 1 a check failed (``generate --check`` found stale
files, ``verify`` found a bad batch); 2 bad usage (also an input FILE that does
not exist or is a directory, see :func:`existing_file`); 3 kcodec refused the
input (bad schema, bad value, undecodable bytes) or cannot run (an optional
dependency missing, see :func:`require_extra`).
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import importlib.util
import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from kcodec.errors import (  # noqa: F401 (the statuses and the usage error every command imports from here)
    EXIT_CHECK_FAILED,
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    KcodecError,
    UsageError,
)
from kcodec.runtime.compression import CODECS, DEFAULT_MAX_DECOMPRESSED_SIZE

# kafka-dump-log's topic decoder options (--offsets-decoder ...) and the internal topic each reads
TOPIC_DECODER_OPTIONS = (
    ("offsets", "__consumer_offsets"),
    ("transaction-log", "__transaction_state"),
    ("share-group-state", "__share_group_state"),
    ("cluster-metadata", "__cluster_metadata"),
    ("remote-log-metadata", "__remote_log_metadata"),
)


def packaged(name: str) -> Path:
    """The directory of a package shipped inside kcodec (schemas, generated), found without importing it:
    ``kcodec generate`` must run when the generated package is stale and refuses to import."""
    spec = importlib.util.find_spec(f"kcodec.{name}")
    if spec is None or not spec.submodule_search_locations:
        raise KcodecError(f"kcodec.{name} is not installed with this kcodec")
    return Path(list(spec.submodule_search_locations)[0])


STDIN = "-"  # the FILE that names standard input (dump, verify, inspect; write's --input)
STDIN_NAME = Path("<stdin>")  # what is printed for it


def existing_file(name: str | Path) -> Path:
    """``name`` as a path, or a usage error when it is not a regular file, said as the user wrote it:
    the one rule every command applies to an input FILE."""
    path = Path(name)
    if path.is_file():
        return path
    if path.is_dir():
        raise UsageError(f"{name}: is a directory")
    if path.exists():
        raise UsageError(f"{name}: not a regular file")
    raise UsageError(f"{name}: no such file")


INT32_MAX, INT64_MAX = (1 << 31) - 1, (1 << 63) - 1


def int_option(minimum: int | None = None, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` for an integer option in [minimum, maximum]: a value out of range is a usage
    error when the command line is parsed, never a crash deep inside the command."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is below the least allowed value, {minimum}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{value} is above the largest allowed value, {maximum}")
        return value

    return parse


positive_int = int_option(1)
non_negative_int = int_option(0)
int32 = int_option(-(1 << 31), INT32_MAX)
#: a Kafka offset (an int64 that is never negative)
offset_int = int_option(0, INT64_MAX)
#: a size in bytes that Kafka keeps in an int32 (segment.bytes, index.interval.bytes)
int32_size = int_option(1, INT32_MAX)
#: a cap in bytes on what kcodec allocates (a decompressed region)
byte_limit = int_option(1, INT64_MAX)


def kafka_release(text: str) -> tuple[int, int]:
    """An argparse ``type`` for a Kafka release ``X.Y`` (``--kafka-version``, ``--release``), as a tuple."""
    from kcodec.tools.compact.config import parse_release

    try:
        return parse_release(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a Kafka release like 3.0 or 4.2") from None


def positive_float(text: str) -> float:
    """An argparse ``type`` for a finite number > 0 (a time budget)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text} must be a number greater than 0")
    return value


def allow_lossy_hint(exc: KcodecError) -> KcodecError:
    """An encoder's refusal said in command-line terms: the library's ``allow_lossy=True`` is ``--allow-lossy``."""
    return exc.replace(message=exc.message.replace("pass allow_lossy=True", "pass --allow-lossy"))


def _real(path: str | os.PathLike) -> str:
    """The path a local name finally points at (symlinks resolved, even for a file not yet
    written); a URI stays as written, without a trailing slash."""
    from kcodec.log.fs import resolve

    fs, name = resolve(os.fspath(path))
    return os.path.realpath(name) if fs.local else name.rstrip("/")


def _within(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def refuse_overlap(inputs: Iterable[str | os.PathLike], outputs: Iterable[str | os.PathLike]) -> None:
    """A usage error when an output is, or lies inside, or contains an input: writing it would
    replace or delete what the command is still reading. An input may be a glob: every match
    counts, and so does an output the pattern would match."""
    from kcodec.log.fs import has_glob, resolve

    reads: list[tuple[str, str]] = []
    for given in inputs:
        text = os.fspath(given)
        fs, name = resolve(text)
        if has_glob(name):
            reads += [(text, _real(m)) for m in fs.glob(name)]
            reads.append((text, _real(name)))  # the pattern itself, matched against outputs below
        else:
            reads.append((text, _real(text)))
    for given in outputs:
        out = _real(given)
        for text, real in reads:
            if has_glob(real):
                hit = fnmatch.fnmatchcase(out, real)  # an output the pattern would read next time
            else:
                hit = _within(out, real) or _within(real, out)
            if hit:
                raise UsageError(f"output {given} overlaps input {text}: writing it would destroy what is read")


def compression_choices() -> tuple[str, ...]:
    """The compression codecs the runtime implements, in id order: what --compression may name."""
    return tuple(CODECS[i] for i in sorted(CODECS))


def add_max_decompressed_size(
    parser, what: str = "batches", default: int | None = DEFAULT_MAX_DECOMPRESSED_SIZE, help: str | None = None
) -> None:
    """``--max-decompressed-size BYTES``: the cap on what one compressed region may inflate to
    (None leaves it to the readers, whose default is the runtime's)."""
    parser.add_argument(
        "--max-decompressed-size",
        type=byte_limit,
        default=default,
        metavar="BYTES",
        help=help
        or f"refuse compressed {what} that inflate past this (default {DEFAULT_MAX_DECOMPRESSED_SIZE >> 20} MiB)",
    )


def add_json(parser, what: str, *, bytes_encoding: bool = False) -> None:
    """``--json``: every reporting command's one spelling for machine-readable output (its fields are
    in docs/commands.md, section "JSON output"); ``bytes_encoding`` adds ``--bytes-encoding`` for commands
    whose JSON holds record bytes, in the encodings ``kcodec write --encoding`` reads."""
    parser.add_argument("--json", action="store_true", help=f"JSON: {what} (fields: see docs/commands.md)")
    if bytes_encoding:
        from kcodec.tools.records_io import DUMP_ENCODING, ENCODINGS

        parser.add_argument(
            "--bytes-encoding",
            choices=ENCODINGS,
            default=DUMP_ENCODING,
            help="keys, values and header values in --json as hex (default), utf8 (refused for bytes that are "
            "not UTF-8) or base64; kcodec write reads them back",
        )


def wants_json(args: argparse.Namespace) -> bool:
    """--json, or the older ``--format json`` of layout and size (kept as its synonym)."""
    return bool(getattr(args, "json", False) or getattr(args, "format", None) == "json")


def json_line(obj) -> str:
    """One JSON document on one line (NDJSON when a command prints one per input)."""
    from kcodec.tools.dump.log import as_ndjson

    return as_ndjson(obj)


def print_json(obj) -> None:
    print(json_line(obj))


class MissingExtra(KcodecError):
    """An optional dependency a command needs is not installed: one line naming the pip command, exit 3
    (as any refusal, the command could not run), the same for every command and extra."""


def require_extra(extra: str, *modules: str) -> None:
    """MissingExtra unless every one of ``modules`` imports; ``extra`` is the kcodec extra providing them."""
    from kcodec.errors import needs_extra

    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            raise MissingExtra(needs_extra(module, extra)) from None


def add_schemas_from(parser, what: str) -> None:
    """``--schemas-from PKGDIR``: a package ``kcodec generate --kafka-json DIR --out PKGDIR`` wrote (the
    user's Kafka version) instead of kcodec's own generated codecs."""
    parser.add_argument(
        "--schemas-from",
        metavar="PKGDIR",
        help=f"{what} from the package `kcodec generate --kafka-json DIR --out PKGDIR` wrote from a Kafka "
        "source tree or release (default: kcodec's own schemas)",
    )


def add_value_schemas(parser, what: str) -> None:
    """``--schemas PATH|URL``: the schemas of ``--key/--value-decoder confluent`` (:func:`value_schemas`)."""
    parser.add_argument(
        "--schemas",
        metavar="PATH|URL",
        help=f"the schemas {what}: a _schemas-N partition directory (or a log directory "
        "holding one), a directory of <id>.avsc/.proto/.json files, a GET /schemas export (JSON), or a registry URL "
        "(asked only for the ids met, once each); default: the _schemas-N directory beside the input's partition "
        "directory",
    )


def value_schemas(spec: str | None, names: list[str], command: str):
    """The schema source of ``--schemas`` (``spec``), else of the ``_schemas-N`` directory beside the first
    local input's partition directory; damaged ``_schemas`` records are said once on stderr."""
    import sys

    from kcodec.values.sources import default_schemas_path, open_schema_source

    if spec is None:
        local = next((n for n in names if n != STDIN and "://" not in n), None)
        spec = default_schemas_path(local) if local is not None else None
        if spec is None:
            raise UsageError(
                "--value-decoder/--key-decoder confluent needs schemas: no _schemas-N directory beside the input's "
                "partition directory; name one with --schemas DIR, a schema export, a directory of <id>.avsc/"
                ".proto/.json files, or a registry URL"
            )
    source = open_schema_source(spec)
    damaged = source.damaged
    if damaged:  # the rest of the topic loaded: say so once, the listing is kcodec schemas'
        print(
            f"kcodec {command}: {spec}: {len(damaged)} damaged _schemas record(s) or batch(es) left out "
            f"(kcodec schemas {spec} lists them)",
            file=sys.stderr,
        )
    return source


def package_entity(package, spec: str, option: str) -> tuple[str, int | None]:
    """``NAME[:VERSION]`` as (kcodec's entity name, version or None), NAME being Kafka's name (FetchRequest)
    or kcodec's; a usage error when the package has no such entity or version."""
    name, sep, version_text = spec.rpartition(":")
    if not sep:
        name, version_text = spec, ""
    elif not version_text.isdigit():
        raise UsageError(f"{option} {spec!r}: say NAME:VERSION, e.g. FetchRequest:12")
    entity = package.entity(name)
    if entity not in package.versions:
        where = package.source if package.source != "generated" else "kcodec's schemas (Kafka's: --schemas-from)"
        raise UsageError(f"{option} {name}: not an entity of {where}")
    if not version_text:
        return entity, None
    version = int(version_text)
    if version not in package.versions[entity]:
        valid = ", ".join(map(str, package.versions[entity]))
        raise UsageError(f"{entity} has no version {version}; valid: {valid}")
    return entity, version


def chosen_registry(args: argparse.Namespace, source) -> str | None:
    """The internal topic's registry a kafka-dump-log decoder option (--offsets-decoder ...) names, or None;
    a usage error when ``source`` (a --schemas-from package) has none of its records."""
    from kcodec.tools.dump.topics import DECODER_OPTIONS

    chosen = [registry for option, registry in DECODER_OPTIONS.items() if getattr(args, option, False)]
    if len(chosen) > 1:
        names = ", ".join("--" + option.replace("_", "-") for option in DECODER_OPTIONS)
        raise UsageError(f"name one of {names}")
    if chosen and chosen[0] not in source.registries:
        raise UsageError(
            f"--schemas-from {args.schemas_from} has no {chosen[0]} records: generate it from the Kafka "
            "directories that define them"
        )
    return chosen[0] if chosen else None


def schema_package(args: argparse.Namespace):
    """The :class:`~kcodec.tools.schema_package.SchemaPackage` a command reads: ``--schemas-from`` or kcodec's."""
    from kcodec.tools.schema_package import is_generated_package, load_package, packaged_package

    given = getattr(args, "schemas_from", None)
    if given is None:
        return packaged_package()
    directory = Path(given)
    if not directory.is_dir():
        raise UsageError(f"--schemas-from {given}: no such directory")
    if not is_generated_package(directory):
        hint = (
            f": generate one first, kcodec generate --kafka-json {given} --out PKGDIR"
            if any(directory.glob("*.json"))
            else ""
        )
        raise UsageError(f"--schemas-from {given}: not a package kcodec generated{hint}")
    return load_package(directory)
