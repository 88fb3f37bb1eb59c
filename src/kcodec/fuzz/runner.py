"""The loop behind ``kcodec fuzz``.

Each round draws a valid value of a target's entity version from the
schema's Hypothesis strategy (through ``fuzz_one_input``, so a seed fixes the
whole run), encodes it with field spans, and decodes the valid bytes and
``mutations_per_value`` damaged copies through every decoder of the target
(:mod:`.targets`). Every input is one iteration; its outcome is ``decoded``,
a decode error kind, ``unexpected`` (an exception outside kcodec's error tree,
or a broken promise) or ``hang`` (over one second). Unexpected and hanging
inputs are saved as reproducers (``.bin`` with a ``.json`` note) when a
directory is given.

``jobs > 1`` runs that many worker processes with seeds ``seed``,
``seed + 1``, ...; a worker killed by a signal (a crash in compiled code) is
reported as unexpected, its input in flight saved.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import resource
import signal
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kcodec.fuzz.encoder import encode_tree
from kcodec.fuzz.mutators import Context, Sample, mutate, remember
from kcodec.fuzz.targets import SEGMENT, TOP_LEVEL, Result, Unexpected, check_entity, check_segment

__all__ = ["FuzzConfig", "FuzzStats", "fuzz", "all_targets", "HANG_SECONDS"]

HANG_SECONDS = 1.0  # an input taking longer is a hang
# where the decoding logic is: whole entries and logs most, fixed-size index entries least
#: how many draws a target's first visit tries before giving up (a value drawn from too few bytes fails)
FIRST_VISIT_DRAWS = 8

TARGET_WEIGHTS = {
    "record_batch": 4.0,
    "legacy_log_entry": 3.0,
    SEGMENT: 4.0,
    "legacy_message": 2.0,
    "record": 2.0,
    "record_header": 1.0,
    "control_record_key": 0.5,
    "end_txn_marker": 0.5,
    "offset_index_entry": 0.25,
    "time_index_entry": 0.25,
    "aborted_txn_entry": 0.25,
}
HARD_TIMEOUT = 30.0  # a runaway input is interrupted after this long


def all_targets() -> list[str]:
    """Every entity version ("record_batch v2", ...) and the multi-entry ``segment`` (when the package
    fuzzed has the log entries: a package of Kafka's messages has none)."""
    from kcodec.fuzz.targets import package

    decoders = package().fast_decoders
    return [f"{e} v{v}" for e, v in sorted(decoders)] + ([SEGMENT] if TOP_LEVEL <= set(decoders) else [])


def parse_target(name: str) -> tuple[str, int | None]:
    if name == SEGMENT:
        return SEGMENT, None
    entity, _, version = name.partition(" v")
    return entity, int(version) if version else None


@dataclass
class FuzzConfig:
    targets: list[str] = field(default_factory=all_targets)
    iterations: int | None = 10_000  # inputs in all (None: run until ``seconds``)
    seconds: float | None = None  # time budget
    seed: int = 0
    save_dir: str | None = None
    limit: int = 1 << 20  # max_decompressed_size given to the decoders; bombs are sized from it
    mutations_per_value: int = 24
    reference_every: int = 4  # construct reference on one input in N (it is the slow one)
    jobs: int = 1
    value_bytes: int = 24  # Hypothesis strategy limits while fuzzing (bytes per field, items per array)
    value_items: int = 5


@dataclass
class FuzzStats:
    iterations: int = 0
    seconds: float = 0.0
    outcomes: Counter = field(default_factory=Counter)
    by_target: Counter = field(default_factory=Counter)
    by_mutator: Counter = field(default_factory=Counter)
    unexpected: list = field(default_factory=list)  # first examples: dicts
    disagreements: int = 0
    disagreement_examples: list = field(default_factory=list)
    slowest: float = 0.0
    slowest_input: str = ""  # target and mutation of the slowest input
    peak_rss_kib: int = 0
    saved: list = field(default_factory=list)
    crashed_workers: int = 0

    @property
    def rate(self) -> float:
        return self.iterations / self.seconds if self.seconds else 0.0

    @property
    def failed(self) -> bool:
        return bool(self.outcomes["unexpected"] or self.outcomes["hang"] or self.crashed_workers)

    def merge(self, other: FuzzStats) -> None:
        self.iterations += other.iterations
        self.outcomes.update(other.outcomes)
        self.by_target.update(other.by_target)
        self.by_mutator.update(other.by_mutator)
        self.unexpected += other.unexpected[: max(0, 20 - len(self.unexpected))]
        self.disagreements += other.disagreements
        self.disagreement_examples += other.disagreement_examples[: max(0, 5 - len(self.disagreement_examples))]
        if other.slowest > self.slowest:
            self.slowest, self.slowest_input = other.slowest, other.slowest_input
        self.peak_rss_kib = max(self.peak_rss_kib, other.peak_rss_kib)
        self.saved += other.saved
        self.crashed_workers += other.crashed_workers

    def to_json(self) -> dict:
        d = {k: (dict(v) if isinstance(v, Counter) else v) for k, v in vars(self).items()}
        d["rate"] = self.rate
        return d

    @classmethod
    def from_json(cls, d: dict) -> FuzzStats:
        d = dict(d)
        d.pop("rate", None)
        s = cls(**d)
        s.outcomes, s.by_target, s.by_mutator = Counter(s.outcomes), Counter(s.by_target), Counter(s.by_mutator)
        return s


class _Timeout(BaseException):
    """Raised by the watchdog inside a runaway decoder (a BaseException: no decoder swallows it)."""


def _alarm(signum, frame):
    raise _Timeout()


class Fuzzer:
    def __init__(self, config: FuzzConfig, progress: Callable[[FuzzStats], None] | None = None):
        from kcodec.fuzz.targets import package

        self.config = config
        self.rng = random.Random(config.seed)
        self.schemas = package().codecs.schema_set()
        self.ctx = Context(limit=config.limit)
        self.stats = FuzzStats()
        self.progress = progress
        self._drawers: dict = {}
        self.recent: deque = deque(maxlen=16)  # top-level samples, for segments
        self.meta: dict = {}  # what a reproducer needs besides its bytes (a segment's intact entries)
        self.inflight: int | None = None  # fd of the file holding the input being decoded
        if config.save_dir:
            Path(config.save_dir).mkdir(parents=True, exist_ok=True)
            path = Path(config.save_dir) / f".inflight-{os.getpid()}"
            self.inflight = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)

    # ------------------------------------------------------------------ values

    def _drawer(self, entity: str, version: int):
        key = (entity, version)
        if key not in self._drawers:
            from hypothesis import HealthCheck, given, settings

            from kcodec.fuzz.strategies import entity_strategy

            box: list = []

            @settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))
            @given(entity_strategy(self.schemas, entity, version))
            def draw(value):
                box.append(value)

            self._drawers[key] = (draw, box)
        return self._drawers[key]

    def draw(self, entity: str, version: int) -> Sample | None:
        from kcodec.fuzz.strategies import Limits

        draw, box = self._drawer(entity, version)
        box.clear()
        saved = Limits.bytes, Limits.items
        Limits.bytes, Limits.items = self.config.value_bytes, self.config.value_items
        try:
            draw.hypothesis.fuzz_one_input(self.rng.randbytes(self.rng.choice((256, 1024, 4096))))
        except Exception:
            return None
        finally:
            Limits.bytes, Limits.items = saved
        if not box:
            return None
        return Sample.of(entity, version, encode_tree(self.schemas, entity, version, box[-1]))

    # ------------------------------------------------------------------ the loop

    def done(self, start: float) -> bool:
        c = self.config
        if c.iterations is not None and self.stats.iterations >= c.iterations:
            return True
        return c.seconds is not None and time.monotonic() - start >= c.seconds

    def warm_up(self) -> None:
        """Import and compile every decoder once, so that no first input pays for it (and looks like a hang)."""
        from kcodec.fuzz.targets import check_entity, check_segment, package

        source = package()
        for e, v in source.fast_decoders:
            for data in (bytes(64), b"\xff" * 64):
                check_entity(e, v, data, limit=self.config.limit)
            source.module.codec(e, v)
        if SEGMENT in self.config.targets:
            check_segment(b"", (), 0, limit=self.config.limit)

    def run(self) -> FuzzStats:
        c = self.config
        self.warm_up()
        start = last = time.monotonic()
        old = signal.signal(signal.SIGALRM, _alarm)
        try:
            weights = [TARGET_WEIGHTS.get(parse_target(t)[0], 1.0) for t in c.targets]
            # every target once, in a seeded order, before the weighted draws: a bounded run reaches each one
            # however many entities the schemas hold (rare ones otherwise depend on the seed)
            unvisited = list(c.targets)
            self.rng.shuffle(unvisited)
            misses: Counter = Counter()
            while not self.done(start):
                first_visit = bool(unvisited)
                target = unvisited.pop() if unvisited else self.rng.choices(c.targets, weights)[0]
                if target == SEGMENT:
                    self.segment_round(start)
                else:
                    entity, version = parse_target(target)
                    assert version is not None, target  # every target but the segment names its version
                    drew = self.entity_round(target, entity, version, start)
                    if first_visit and not drew and misses[target] < FIRST_VISIT_DRAWS:
                        # a large entity's value may not fit the bytes drawn for it: the first visit tries again
                        misses[target] += 1
                        unvisited.insert(0, target)
                now = time.monotonic()
                if self.progress and now - last >= 1.0:
                    last = now
                    self.stats.seconds = now - start
                    self.progress(self.stats)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
            if self.inflight is not None:
                os.close(self.inflight)
                assert c.save_dir is not None  # the in-flight file is only kept under a save_dir
                os.unlink(Path(c.save_dir) / f".inflight-{os.getpid()}")
        self.stats.seconds = time.monotonic() - start
        self.stats.peak_rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return self.stats

    def entity_round(self, target: str, entity: str, version: int, start: float) -> bool:
        """One drawn value of the target and its damaged copies; False when no value could be drawn."""
        s = self.draw(entity, version)
        if s is None:
            return False
        top = (entity, version) in TOP_LEVEL
        if top:
            remember(self.ctx, s)
            self._recent(s)
        self.one(
            target,
            s.enc.data,
            "none",
            "valid encoding",
            lambda data, ref: check_entity(entity, version, data, limit=self.config.limit, reference=ref, valid=True),
        )
        for _ in range(self.config.mutations_per_value):
            if self.done(start):
                return True
            data, names, note = mutate(self.rng, s, self.ctx)
            self.one(
                target,
                data,
                names,
                note,
                lambda data, ref: check_entity(entity, version, data, limit=self.config.limit, reference=ref),
            )
        return True

    def _recent(self, s: Sample) -> None:
        """Keep a top-level sample for segments if the runtime reads it (a drawn value can break Kafka's
        rules: a control batch with a random key, a v1 wrapper whose offset is below its inner ones)."""
        from kcodec.errors import KcodecError
        from kcodec.records.decode import decode_entry

        try:
            decode_entry(s.enc.data, 0, verify_crc=True, max_decompressed_size=self.config.limit)
        except KcodecError:
            return
        self.recent.append(s)

    def segment_round(self, start: float) -> None:
        while len(self.recent) < 4:
            e, v = self.rng.choice(sorted(TOP_LEVEL))
            s = self.draw(e, v)
            if s is not None:
                remember(self.ctx, s)
                self._recent(s)
        for _ in range(max(1, self.config.mutations_per_value // 4)):
            if self.done(start):
                return
            entries = self.rng.sample(list(self.recent), self.rng.randint(2, min(5, len(self.recent))))
            k = self.rng.randrange(len(entries))
            damaged, names, note = mutate(self.rng, entries[k], self.ctx)
            parts, intact, pos, first = [], [], 0, 0
            for i, s in enumerate(entries):
                data = damaged if i == k else s.enc.data
                if i == k:
                    first = pos
                else:
                    intact.append((pos, len(data)))
                parts.append(data)
                pos += len(data)
            blob = b"".join(parts)
            if self.rng.random() < 0.15:  # the log itself cut short
                cut = self.rng.randrange(len(blob) + 1)
                blob = blob[:cut]
                intact = [(p, n) for p, n in intact if p + n <= cut]
                starts = [0]
                for part in parts:
                    starts.append(starts[-1] + len(part))
                first = min(first, max(p for p in starts if p <= cut))  # the entry the cut goes through
                note += f"; log cut at byte {cut}"
            note = f"entry {k} of {len(entries)} damaged: {note}"
            self.meta = {"intact": intact, "first_damage": first}
            self.one(
                SEGMENT,
                blob,
                names,
                note,
                lambda data, ref: check_segment(data, tuple(intact), first, limit=self.config.limit),
            )
            self.meta = {}

    def one(self, target: str, data: bytes, mutator: str, note: str, check) -> None:
        st = self.stats
        reference = st.iterations % max(1, self.config.reference_every) == 0
        if self.inflight is not None:
            header = json.dumps({"target": target, "mutator": mutator, "note": note}).encode() + b"\n"
            os.pwrite(self.inflight, header + data, 0)
            os.ftruncate(self.inflight, len(header) + len(data))
        t0 = time.perf_counter()
        result = self._timed(check, data, reference)
        elapsed = time.perf_counter() - t0
        if result is not None and elapsed > HANG_SECONDS:
            t1 = time.perf_counter()  # once more: a busy machine is not a hang
            result = self._timed(check, data, reference)
            elapsed = min(elapsed, time.perf_counter() - t1)
        st.iterations += 1
        st.by_target[target] += 1
        for name in mutator.split("+"):
            st.by_mutator[name] += 1
        if elapsed > st.slowest:
            st.slowest, st.slowest_input = elapsed, f"{target}: {mutator}: {note}"[:300]
        if result is None or elapsed > HANG_SECONDS:
            st.outcomes["hang"] += 1
            self.report(
                "hang",
                target,
                data,
                mutator,
                note,
                [Unexpected("all", "Hang", f"took {elapsed:.2f} s (limit {HANG_SECONDS} s)", "")],
            )
            return
        if result.unexpected:
            st.outcomes["unexpected"] += 1
            self.report("unexpected", target, data, mutator, note, result.unexpected)
        else:
            st.outcomes[result.outcome] += 1
        if result.disagreement:
            st.disagreements += 1
            if len(st.disagreement_examples) < 5:
                st.disagreement_examples.append(
                    {
                        "target": target,
                        "mutator": mutator,
                        "note": note,
                        "detail": result.disagreement,
                        "input": data[:4096].hex(),
                    }
                )

    def _timed(self, check, data: bytes, reference: bool) -> Result | None:
        signal.setitimer(signal.ITIMER_REAL, HARD_TIMEOUT)
        try:
            return check(data, reference)
        except _Timeout:
            return None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def report(self, outcome: str, target: str, data: bytes, mutator: str, note: str, problems: list) -> None:
        st = self.stats
        first = problems[0]
        example = {
            "outcome": outcome,
            "target": target,
            "mutator": mutator,
            "note": note,
            "decoder": first.decoder,
            "error": first.error,
            "message": first.message,
            "traceback": first.traceback,
            "seed": self.config.seed,
            "iteration": st.iterations,
            "limit": self.config.limit,
            **self.meta,
        }
        if len(st.unexpected) < 20:
            st.unexpected.append(dict(example, input=data[:4096].hex()))
        if self.config.save_dir:
            st.saved.append(save_reproducer(self.config.save_dir, data, example))


def save_reproducer(directory: str | os.PathLike, data: bytes, meta: dict) -> str:
    """``<outcome>-<target>-<sha1>.bin`` and a ``.json`` note beside it; returns the .bin path."""
    digest = hashlib.sha1(data).hexdigest()[:12]
    stem = f"{meta['outcome']}-{meta['target'].replace(' ', '-')}-{digest}"
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{stem}.bin").write_bytes(data)
    (d / f"{stem}.json").write_text(json.dumps(meta, indent=2) + "\n")
    return str(d / f"{stem}.bin")


# ---------------------------------------------------------------------------- parallel


def _worker(config: FuzzConfig, queue) -> None:
    def progress(stats: FuzzStats) -> None:
        queue.put(("progress", os.getpid(), stats.iterations, dict(stats.outcomes)))

    try:
        stats = Fuzzer(config, progress).run()
        queue.put(("done", os.getpid(), stats.to_json()))
    except BaseException as exc:
        queue.put(("error", os.getpid(), f"{type(exc).__name__}: {exc}"))


def fuzz(config: FuzzConfig, progress: Callable[[FuzzStats], None] | None = None) -> FuzzStats:
    """Run the fuzzer (in ``config.jobs`` processes) and return the merged statistics."""
    if config.jobs <= 1:
        return Fuzzer(config, progress).run()
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    workers = []
    for k in range(config.jobs):
        share = (
            None
            if config.iterations is None
            else (config.iterations // config.jobs + (1 if k < config.iterations % config.jobs else 0))
        )
        wc = FuzzConfig(**{**asdict(config), "seed": config.seed + k, "iterations": share, "jobs": 1})
        p = ctx.Process(target=_worker, args=(wc, queue), daemon=True)
        p.start()
        workers.append(p)
    start = time.monotonic()
    # Process.pid is an int once started (typeshed says int | None)
    live: dict[int | None, tuple[int, dict]] = {p.pid: (0, {}) for p in workers}
    total = FuzzStats()
    finished: set[int | None] = set()
    errors = []
    last = 0.0
    while len(finished) < len(workers):
        try:
            msg = queue.get(timeout=0.5)
        except Exception:
            msg = None
        if msg is not None:
            kind, pid = msg[0], msg[1]
            if kind == "progress":
                live[pid] = (msg[2], msg[3])
            elif kind == "done":
                total.merge(FuzzStats.from_json(msg[2]))
                finished.add(pid)
                live[pid] = (0, {})
            else:
                errors.append(msg[2])
                finished.add(pid)
        for p in workers:
            if p.pid not in finished and not p.is_alive() and queue.empty():
                p.join()
                finished.add(p.pid)
                total.crashed_workers += 1
                total.outcomes["unexpected"] += 1
                example = {
                    "outcome": "unexpected",
                    "target": "?",
                    "decoder": "worker",
                    "error": f"worker exited with status {p.exitcode}",
                    "message": "",
                    "traceback": "",
                }
                if config.save_dir:
                    inflight = Path(config.save_dir) / f".inflight-{p.pid}"
                    if inflight.exists():
                        head, _, data = inflight.read_bytes().partition(b"\n")
                        meta = json.loads(head or b"{}")
                        example.update(
                            target=meta.get("target", "?"),
                            mutator=meta.get("mutator"),
                            note=meta.get("note"),
                            outcome="crash",
                        )
                        total.saved.append(save_reproducer(config.save_dir, data, example))
                        inflight.unlink()
                total.unexpected.append(example)
        now = time.monotonic()
        if progress and now - last >= 1.0:
            last = now
            view = FuzzStats()
            view.merge(total)
            view.iterations += sum(n for n, _ in live.values())
            for _, outcomes in live.values():
                view.outcomes.update(outcomes)
            view.seconds = now - start
            progress(view)
    for p in workers:
        p.join(timeout=5)
    if errors:
        raise RuntimeError("fuzz worker failed: " + "; ".join(errors))
    total.seconds = time.monotonic() - start
    total.peak_rss_kib = max(total.peak_rss_kib, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return total


def format_summary(stats: FuzzStats) -> str:
    lines = [
        f"{stats.iterations} iterations in {stats.seconds:.1f} s ({stats.rate:.0f}/s); "
        f"slowest input {stats.slowest * 1000:.0f} ms; peak memory {stats.peak_rss_kib / 1024:.0f} MiB",
        f"slowest: {stats.slowest_input}",
    ]
    kinds = sorted(stats.outcomes.items(), key=lambda kv: (kv[0] in ("unexpected", "hang"), -kv[1]))
    lines.append("outcomes: " + ", ".join(f"{k} {v}" for k, v in kinds))
    for k in ("unexpected", "hang"):
        if k not in stats.outcomes:
            lines.append(f"  {k} 0")
    lines.append("by target: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.by_target.items())))
    lines.append("by mutator: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.by_mutator.items())))
    if stats.disagreements:
        lines.append(
            f"fast and construct decoders disagreed on {stats.disagreements} inputs (first: "
            f"{stats.disagreement_examples[0]['target']}: {stats.disagreement_examples[0]['detail']})"
        )
    for ex in stats.unexpected[:10]:
        lines.append(
            f"UNEXPECTED {ex.get('outcome')} in {ex.get('target')} / {ex.get('decoder')}: "
            f"{ex.get('error')}: {ex.get('message')} [{ex.get('mutator')}: {ex.get('note')}]"
        )
    for path in stats.saved[:20]:
        lines.append(f"saved {path}")
    return "\n".join(lines)
