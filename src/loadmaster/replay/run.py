"""One ``loadmaster replay``: a trace, once per config, into ``OUT/summary.json`` and ``OUT/report.html``.

The first config is the baseline (the defaults when none is given). ``window`` keeps the jobs arriving in
``[start, end)`` of the trace's time and stops the replay at ``end``. A timeline file runs through the
timeline harness instead (``timeline_replay.py``), to its last step.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loadmaster.replay.figures import summary_of
from loadmaster.replay.report import report_html
from loadmaster.replay.run_config import RunConfig
from loadmaster.replay.simulation import Progress, Replay, ReplayResult
from loadmaster.replay.timeline_replay import TimelineTrace, replay_timeline, timeline_for
from loadmaster.replay.trace import Trace

AnyTrace = Trace | TimelineTrace


@dataclass(frozen=True, slots=True)
class Window:
    start_s: float = 0.0
    end_s: float | None = None

    @classmethod
    def parse(cls, text: str) -> Window:
        """``START:END`` in seconds, either side may be empty (``:3600``, ``86400:``)."""
        start, sep, end = text.partition(":")
        if not sep:
            raise ValueError(f"--window: expected START:END in seconds, got {text!r}")
        try:
            window = cls(float(start) if start else 0.0, float(end) if end else None)
        except ValueError:
            raise ValueError(f"--window: START and END must be numbers of seconds, got {text!r}") from None
        if window.end_s is not None and window.end_s <= window.start_s:
            raise ValueError(f"--window: END must be after START, got {text!r}")
        return window

    def apply(self, trace: Trace) -> Trace:
        jobs = trace.jobs.between(self.start_s, self.end_s)
        return Trace(trace.name, trace.nodes, jobs, trace.queues)


def end_of(trace: AnyTrace) -> float:
    """Where the progress bar ends: the last arrival of a trace, the last step of a timeline."""
    if isinstance(trace, TimelineTrace):
        return trace.end_s
    return trace.jobs.last_arrival_s


def replay_all(
    trace: AnyTrace,
    configs: Sequence[RunConfig],
    out: Path,
    window: Window = Window(),
    progress_of: Callable[[RunConfig, AnyTrace], Progress | None] = lambda config, trace: None,
) -> dict[str, Any]:
    """Run every config, write the two files, return the summary."""
    names = [config.name for config in configs]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"two configs are named {', '.join(duplicates)}: give each its own name:")
    if isinstance(trace, TimelineTrace):
        if window != Window():
            raise ValueError("--window: a timeline runs to its last step; the window is for traces")
        for config in configs:
            timeline_for(trace, config)  # a config the timeline cannot take fails before any run
    results: list[ReplayResult] = []
    for config in configs:
        if isinstance(trace, TimelineTrace):
            results.append(replay_timeline(trace, config, progress_of(config, trace)))
        else:
            windowed = window.apply(trace)
            results.append(Replay(windowed, config, until_s=window.end_s).run(progress_of(config, windowed)))
    summaries = [summary_of(result) for result in results]
    summary = {"trace": trace.name, "configs": summaries}
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    (out / "report.html").write_text(report_html(trace.name, results, summaries))
    return summary
