"""Progress bars for long commands: shown on a terminal only, never in a pipe, a file or CI.

The bar is tqdm's (the ``progress`` extra: ``pip install 'kcodec[progress]'``), imported only when a
bar may be shown; without tqdm there is no bar and nothing else changes. A bar appears only once the
work has run for ``KCODEC_PROGRESS_DELAY`` seconds (default 1), so quick commands print nothing extra,
and it is erased when the work ends.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # threading loads only when a Spark bar is drawn
    import threading

DEFAULT_DELAY = 1.0  # seconds before a bar appears


def _wanted() -> bool:
    """A person is watching: stderr is a terminal, and no CI runner says it is one (CI=true)."""
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


def _delay() -> float:
    try:
        return max(0.0, float(os.environ.get("KCODEC_PROGRESS_DELAY", DEFAULT_DELAY)))
    except ValueError:
        return DEFAULT_DELAY


def _width() -> dict:
    """Follow the terminal's size as it changes; a terminal that reports none (0 x 0, as a bare
    pseudo-terminal does) gets 80 x 24 rather than tqdm hiding the bar."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
        known = size.columns > 0 and size.lines > 0
    except (OSError, AttributeError, ValueError):
        known = False
    return {"dynamic_ncols": True} if known else {"ncols": 80, "nrows": 24}


class Progress:
    """A bar counting ``unit`` up to ``total`` (None: a count with its rate, no ETA); a no-op when
    no bar is wanted (``enabled=False``: say, the output itself scrolls on the terminal) or tqdm is
    missing. Use as a context manager, or call ``close``."""

    def __init__(self, total: int | None, *, unit: str = "B", desc: str | None = None, enabled: bool = True):
        self._bar = None
        if not (enabled and _wanted()):
            return
        try:
            from tqdm import tqdm
        except ImportError:  # the progress extra is optional
            return
        self._bar = tqdm(
            total=total or None,
            unit=unit,
            unit_scale=unit != "task",  # a few hundred tasks read better as 12/200 than 12.0/200
            unit_divisor=1024 if unit == "B" else 1000,
            desc=desc,
            delay=_delay(),
            leave=False,
            file=sys.stderr,
            **_width(),
        )

    def to(self, done: int) -> None:
        """The work is done up to ``done`` units (a byte position)."""
        if self._bar is not None and done > self._bar.n:
            self._bar.update(done - self._bar.n)

    def add(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def note(self, text: str) -> None:
        """A short status after the bar (counts the bar itself does not show)."""
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=False)

    def echo(self, line: str) -> None:
        """Print ``line`` on stdout above the bar (the bar is redrawn under it)."""
        if self._bar is not None:
            self._bar.write(line, file=sys.stdout)
        else:
            print(line)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def file_size(path) -> int | None:
    """The size of ``path`` in bytes, the total of a bar over it; None when it has none (a pipe)."""
    try:
        return os.stat(path).st_size or None
    except (OSError, TypeError, ValueError):
        return None


def counted_lines(lines: Iterable[bytes], progress: Progress) -> Iterator[bytes]:
    """``lines`` as they are, each counted in bytes on ``progress``."""
    for line in lines:
        progress.add(len(line))
        yield line


class SparkStages:
    """A bar of the tasks of Spark's running stages, read from its status tracker twice a second by a
    background thread while the ``with`` block runs; nothing (no thread) when no bar is wanted."""

    def __init__(self, interval: float = 0.5):
        self.interval = interval
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> SparkStages:
        if _wanted():
            import threading

            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._watch, name="kcodec-spark-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._thread is not None:
            assert self._stop is not None  # set with the thread
            self._stop.set()
            self._thread.join()

    def _watch(self) -> None:
        bar: Progress | None = None
        shown: str | None = None
        stop = self._stop
        assert stop is not None  # the thread runs between __enter__ and __exit__
        try:
            while not stop.wait(self.interval):
                try:
                    stages = _running_stages()
                except Exception:  # Spark starting (a context with no JVM side yet) or stopping: look again
                    continue
                if not stages:
                    continue
                label = "stage " + ",".join(str(s.stageId) for s in stages)
                if bar is None or label != shown:  # a new bar for each set of stages: their task counts differ
                    if bar is not None:
                        bar.close()
                    bar, shown = Progress(sum(s.numTasks for s in stages), unit="task", desc=label), label
                bar.to(sum(s.numCompletedTasks for s in stages))
                bar.note(f"{sum(s.numActiveTasks for s in stages)} running")
        finally:
            if bar is not None:
                bar.close()


def _running_stages() -> list:
    """The active stages of the running SparkContext (none before it exists)."""
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is None:
        return []
    tracker = sc.statusTracker()
    return [s for s in map(tracker.getStageInfo, tracker.getActiveStageIds()) if s is not None]
