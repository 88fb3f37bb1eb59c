"""``kcodec fuzz``: damaged inputs from the schemas through every decoder.

Exit status: 0 no unexpected exception and no hang; 1 at least one (each is
saved with --save-crashes); 2 bad usage; 3 the fuzzer itself cannot run (it
needs hypothesis: ``pip install kcodec[fuzz]``).
"""

from __future__ import annotations

import argparse
import os

from kcodec.commands.common import (
    EXIT_CHECK_FAILED,
    EXIT_OK,
    UsageError,
    add_max_decompressed_size,
    add_schemas_from,
    non_negative_int,
    positive_float,
    positive_int,
    require_extra,
    schema_package,
)


def cmd_fuzz(args: argparse.Namespace) -> int:
    if args.backend:
        os.environ["KCODEC_BACKEND"] = args.backend  # read when the decoders are first imported
    require_extra("fuzz", "hypothesis")
    _keep_hypothesis_out_of_cwd()
    from kcodec.fuzz.targets import use_package

    package = schema_package(args)
    use_package(package if args.schemas_from else None)  # the user's Kafka codecs, or kcodec's own
    try:
        return _run(args, package)
    finally:
        use_package(None)  # a library caller running commands in one process gets kcodec's own back


def _keep_hypothesis_out_of_cwd() -> None:
    """Hypothesis caches what it computes (its Unicode tables) in ``./.hypothesis`` unless told otherwise: kcodec
    fuzz keeps it in the user's cache directory (``$XDG_CACHE_HOME/kcodec/hypothesis``, ``~/.cache/...``), so
    running it leaves nothing where it runs; ``HYPOTHESIS_STORAGE_DIRECTORY`` still chooses."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    from hypothesis.configuration import set_hypothesis_home_dir

    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    set_hypothesis_home_dir(os.path.join(cache, "kcodec", "hypothesis"))


def _run(args: argparse.Namespace, package) -> int:
    from kcodec.fuzz.runner import FuzzConfig, all_targets, format_summary, fuzz

    targets = all_targets()
    if args.entity:
        chosen = []
        for name in args.entity:
            entity, sep, version = name.partition(" v")
            wanted = package.entity(entity) + sep + version  # Kafka's names too: "FetchRequest v12"
            match = [t for t in targets if t == wanted or t.split(" v")[0] == wanted]
            if not match:
                raise UsageError(f"--entity {name}: not one of {', '.join(targets)}")
            chosen += [t for t in match if t not in chosen]
        targets = chosen
    iterations = args.iterations
    if iterations is None and args.time is None:
        iterations = 10_000
    config = FuzzConfig(
        targets=targets,
        iterations=iterations,
        seconds=args.time,
        seed=args.seed,
        save_dir=args.save_crashes,
        limit=args.max_decompressed_size,
        jobs=args.jobs,
        reference_every=args.reference_every,
    )
    from kcodec.commands.progress import Progress

    with Progress(config.iterations, unit="it", enabled=not args.quiet) as bar:

        def progress(stats) -> None:
            bad = stats.outcomes["unexpected"] + stats.outcomes["hang"]
            bar.note(f"{stats.outcomes['decoded']} decoded, {bad} unexpected or hanging")
            bar.to(stats.iterations)

        stats = fuzz(config, progress)
    print(format_summary(stats))
    if args.json:
        import json

        with open(args.json, "w") as f:
            json.dump(stats.to_json(), f, indent=2)
    return EXIT_CHECK_FAILED if stats.failed else EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser(
        "fuzz",
        help="damage inputs drawn from the schemas and check that every decoder copes",
        description="Draw valid values of every entity version from the schemas, encode them "
        "(knowing every field's bytes), damage them (bit flips inside fields, length "
        "and count lies with and without recomputed CRCs, truncation at field "
        "boundaries, over-long varints, codec swaps, damaged and oversized compressed "
        "streams, splices across magics) and decode them with every decoder. Reports "
        "iterations per second and the count of each outcome.",
        epilog="exit status: 0 no unexpected exception and no hang; 1 some (saved with "
        "--save-crashes); 2 bad usage; 3 cannot run (needs the fuzz extra)",
    )
    p.add_argument(
        "--entity",
        action="append",
        metavar="E",
        help="an entity (all its versions), 'entity vN', or 'segment' (mixed-magic logs); repeatable; default: all",
    )
    p.add_argument(
        "--iterations", type=non_negative_int, metavar="N", help="inputs to try (default 10000 unless --time)"
    )
    p.add_argument(
        "--time", type=positive_float, metavar="SECONDS", help="time budget (with --iterations: whichever ends first)"
    )
    p.add_argument("--seed", type=non_negative_int, default=0, metavar="S", help="fixes the whole run (default 0)")
    p.add_argument(
        "--save-crashes", metavar="DIR", help="save each unexpected or hanging input as DIR/*.bin with a .json note"
    )
    p.add_argument("--jobs", type=positive_int, default=1, metavar="N", help="worker processes (seeds S, S+1, ...)")
    add_max_decompressed_size(
        p, default=1 << 20, help="decompression cap given to the decoders; bombs are sized from it (default 1 MiB)"
    )
    p.add_argument(
        "--reference-every",
        type=positive_int,
        default=4,
        metavar="N",
        help="also decode one input in N with the (slow) construct reference (default 4)",
    )
    p.add_argument(
        "--backend",
        choices=("auto", "python", "c"),
        help="decoders to fuzz: the compiled kernel when built (auto), pure Python, or the kernel",
    )
    p.add_argument("--json", metavar="FILE", help="write the statistics as JSON")
    add_schemas_from(p, "fuzz the entities (and their decoders)")
    p.add_argument("--quiet", action="store_true", help="no progress bar (shown only on a terminal)")
    p.set_defaults(func=cmd_fuzz)
