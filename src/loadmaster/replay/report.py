"""``report.html``: one self-contained page comparing a replay's configs side by side.

Plotly draws the plots (its JavaScript is inlined once, so the page needs no network): utilisation,
pending jobs, GPU fragmentation and each queue's share over time, and the wait-time CDF; above them, the
summary's figures in a table, each cell of a later config with its difference to the first config
(better in green, worse in red: lower is better for waits, unplaced jobs, fragmentation, evictions,
moves and CPU time, higher for jobs placed and utilisation).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from loadmaster.replay.simulation import ReplayResult

HOURS = 3600.0
# (label, how to read it from a summary, True when higher is better)
ROWS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("jobs placed", ("placed",), True),
    ("never placed", ("never_placed",), False),
    ("wait p50 (s)", ("wait_s", "p50"), False),
    ("wait p95 (s)", ("wait_s", "p95"), False),
    ("wait p99 (s)", ("wait_s", "p99"), False),
    ("GPU utilisation", ("utilisation", "gpu"), True),
    ("CPU utilisation", ("utilisation", "cpu"), True),
    ("fragmented GPUs", ("fragmented_gpu",), False),
    ("evictions", ("evictions",), False),
    ("moves", ("moves",), False),
    ("scheduler CPU (s)", ("scheduler_cpu_s",), False),
)


def report_html(trace: str, results: Sequence[ReplayResult], summaries: Sequence[dict[str, Any]]) -> str:
    figures = [
        _over_time(results, "Allocated over time (share of capacity)", _utilisation_series),
        _over_time(results, "Pending jobs over time", _pending_series),
        _wait_cdf(results),
    ]
    if any(result.capacity["gpu"] for result in results):  # a CPU-only trace has nothing to fragment
        figures.append(_over_time(results, "Fragmented GPUs over time", _fragmentation_series))
    figures.append(_over_time(results, "Each queue's allocation over time (GPUs, or cores)", _queue_series))
    plots = "\n".join(
        f'<section class="plot">{figure.to_html(full_html=False, include_plotlyjs=False)}</section>'
        for figure in figures
    )
    title = f"loadmaster replay: {html.escape(trace)}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5rem; color: #1b1b1b; }}
table {{ border-collapse: collapse; margin: 1rem 0; }}
th, td {{ border: 1px solid #ccc; padding: 0.3rem 0.7rem; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }}
.better {{ color: #11663a; font-weight: 600; }} .worse {{ color: #a61b1b; font-weight: 600; }}
.plot {{ max-width: 1100px; }}
</style>
<script>{get_plotlyjs()}</script></head>
<body><h1>{title}</h1>
<p>{len(results)} config(s), the first is the baseline: later columns show their difference to it.</p>
{_table(summaries)}
{plots}
</body></html>
"""


def _table(summaries: Sequence[dict[str, Any]]) -> str:
    head = "".join(f"<th>{html.escape(str(s['name']))}</th>" for s in summaries)
    rows = []
    for label, path, higher_is_better in ROWS:
        cells = []
        base = _read(summaries[0], path)
        for index, summary in enumerate(summaries):
            value = _read(summary, path)
            cells.append(f"<td>{_cell(value, base if index else None, higher_is_better)}</td>")
        rows.append(f"<tr><td>{label}</td>{''.join(cells)}</tr>")
    return f'<table id="figures"><tr><th>figure</th>{head}</tr>{"".join(rows)}</table>'


def _read(summary: dict[str, Any], path: tuple[str, ...]) -> float | None:
    value: Any = summary
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return float(value) if isinstance(value, int | float) else None


def _cell(value: float | None, base: float | None, higher_is_better: bool) -> str:
    if value is None:
        return "-"
    text = f"{value:g}"
    if base is None or value == base:
        return text
    better = (value > base) == higher_is_better
    return f'{text} <span class="{"better" if better else "worse"}">({value - base:+g})</span>'


Series = list[tuple[str, list[float]]]


def _utilisation_series(result: ReplayResult) -> Series:
    gpu, cpu = result.capacity["gpu"], result.capacity["cpu"]
    series: Series = []
    if gpu:
        series.append(("GPU", [s.gpu_used / gpu for s in result.samples]))
    if cpu:
        series.append(("CPU", [s.cpu_used / cpu for s in result.samples]))
    return series


def _pending_series(result: ReplayResult) -> Series:
    return [("pending", [float(s.pending_jobs) for s in result.samples])]


def _fragmentation_series(result: ReplayResult) -> Series:
    return [("GPUs", [s.fragmented_gpu for s in result.samples])]


def _queue_series(result: ReplayResult) -> Series:
    queues = sorted({queue for sample in result.samples for queue in sample.queue_use})
    return [(queue, [s.queue_use.get(queue, 0.0) for s in result.samples]) for queue in queues]


def _over_time(results: Sequence[ReplayResult], title: str, series_of: Any) -> go.Figure:
    figure = go.Figure()
    for result in results:
        hours = [s.at_s / HOURS for s in result.samples]
        for label, values in series_of(result):
            figure.add_trace(
                go.Scatter(
                    x=hours, y=values, mode="lines", line_shape="hv", name=f"{result.config.name}: {label}"
                )
            )
    figure.update_layout(title=title, xaxis_title="virtual hours", height=380, margin={"t": 50, "b": 40})
    return figure


def _wait_cdf(results: Sequence[ReplayResult]) -> go.Figure:
    figure = go.Figure()
    for result in results:
        waits = sorted(job.placed_s - job.arrival_s for job in result.jobs if job.placed_s is not None)
        if waits:
            fractions = [(i + 1) / len(waits) for i in range(len(waits))]
            shifted = [1.0 + wait for wait in waits]  # a log axis has no 0: a wait of 0 s shows at 1
            figure.add_trace(go.Scatter(x=shifted, y=fractions, mode="lines", name=result.config.name))
    figure.update_layout(
        title="Wait time CDF (placed jobs)",
        xaxis_title="1 + wait (s)",
        yaxis_title="share of jobs",
        xaxis_type="log",
        height=380,
        margin={"t": 50, "b": 40},
    )
    return figure
