"""One Spark run of ``kcodec pipeline`` shown both ways: a test runs the command with ``--json``, then
again without it to check the text, and the second call gets the first run's summary instead of a
second Spark job, but only when ``kcodec pipeline`` asked for exactly the same run (the same
arguments to :func:`kcodec.spark.pipeline.run_pipeline`). ``--json`` only changes how the summary is
printed (kcodec.commands.pipeline), so the text is the same run's."""

from __future__ import annotations

from typing import Any

import pytest


class PipelineRuns:
    """Wraps ``kcodec.spark.pipeline.run_pipeline``: records each call and what it returned;
    :meth:`replay_next` makes the next call return the last summary when its arguments match."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import kcodec.spark.pipeline as pipeline

        self._real = pipeline.run_pipeline
        self.calls: list[tuple[tuple, dict[str, Any]]] = []
        self._summaries: list[Any] = []
        self._replay = False
        monkeypatch.setattr(pipeline, "run_pipeline", self._run)

    def replay_next(self) -> None:
        assert self._summaries, "no run to replay"
        self._replay = True

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        if self._replay:
            self._replay = False
            assert self.calls[-1] == self.calls[-2], f"not the same run: {self.calls[-2]} then {self.calls[-1]}"
            return self._summaries[-1]
        summary = self._real(*args, **kwargs)
        self._summaries.append(summary)
        return summary
