"""A coverage-guided harness for atheris (libFuzzer for Python), where atheris installs.

    pip install atheris
    python -m kcodec.fuzz.atheris_harness [TARGET] [libFuzzer options...] [CORPUS_DIR]

TARGET is an entity version ("record_batch v2", quoted) or "segment"; default: all, chosen by the
input's first byte. Each input is used two ways, chosen by its second byte: as raw bytes given straight
to every decoder of the target (coverage guides the bytes), or as the choices Hypothesis draws a valid
value from, which the schema-aware mutators then damage (coverage guides the structure). A decoder
raising anything outside kcodec's error tree, or breaking a promise, is a crash for libFuzzer, which
saves the input; ``kcodec fuzz`` and tests/regressions/ take it from there.

Not needed by CI: ``kcodec fuzz`` (no atheris) is what the test suite runs.
"""

from __future__ import annotations

import random
import sys


def _reads(data: bytes, limit: int) -> bool:
    """A drawn value can break Kafka's rules (a control batch with a random key): only values the runtime
    reads are valid entries in a log."""
    from kcodec.errors import KcodecError
    from kcodec.records.decode import decode_entry

    try:
        decode_entry(data, verify_crc=True, max_decompressed_size=limit)
    except KcodecError:
        return False
    return True


class DecoderFailure(Exception):
    """What the harness raises for libFuzzer when a decoder failed unexpectedly."""


def main(argv: list[str] | None = None) -> None:
    import atheris

    argv = list(sys.argv if argv is None else argv)
    with atheris.instrument_imports():
        import kcodec.errors
        import kcodec.generated.fast
        import kcodec.records.decode
        import kcodec.records.reader
        import kcodec.records.resync  # noqa: F401  (instrumented for coverage)
    from kcodec.fuzz.mutators import Context, mutate
    from kcodec.fuzz.runner import FuzzConfig, Fuzzer, all_targets, parse_target
    from kcodec.fuzz.targets import SEGMENT, TOP_LEVEL, check_entity, check_segment

    targets = all_targets()
    if len(argv) > 1 and not argv[1].startswith("-") and argv[1] in targets:
        targets = [argv.pop(1)]
    fuzzer = Fuzzer(FuzzConfig(targets=targets, limit=1 << 18))
    ctx = Context(limit=1 << 18)
    limit = ctx.limit

    def one(data: bytes) -> None:
        if len(data) < 2:
            return
        target = targets[data[0] % len(targets)]
        entity, version = parse_target(target)
        structured, body = data[1] & 1, data[2:]
        if target == SEGMENT:
            result = check_segment(body, (), 0, limit=limit)
        else:
            assert version is not None, target  # every target but the segment names its version (all_targets)
            if not structured:
                result = check_entity(entity, version, body, limit=limit)
            else:
                fuzzer.rng = random.Random(body)
                sample = fuzzer.draw(entity, version)
                if sample is None:
                    return
                damaged, _, _ = mutate(random.Random(body[::-1]), sample, ctx)
                result = check_entity(entity, version, damaged, limit=limit)
                if (entity, version) in TOP_LEVEL and _reads(sample.enc.data, limit):
                    result.unexpected += check_segment(
                        sample.enc.data + damaged, ((0, len(sample.enc.data)),), len(sample.enc.data), limit=limit
                    ).unexpected
        if result.unexpected:
            u = result.unexpected[0]
            raise DecoderFailure(f"{target} / {u.decoder}: {u.error}: {u.message}\n{u.traceback}")

    atheris.Setup(argv, one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
