"""Trace readers, registered by name: ``NAME[:VARIANT]`` -> a ``Trace``.

One small module each: ``openb`` (Alibaba GPU 2023), ``nasa-ipsc`` (NASA iPSC/860 1993, SWF gangs),
``alibaba-2017`` (Alibaba 2017 batch tasks), and a scenario file given by its path. A malformed row is a
``TraceFormatError`` naming the file, the line and the column. A timeline file is no ``Trace`` (it runs
the control plane over time): it loads as a ``TimelineTrace`` (``replay/timeline_replay.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from loadmaster.replay.timeline_replay import TimelineTrace, read_timeline_file
from loadmaster.replay.trace import Trace
from loadmaster.replay.traces.alibaba_2017 import read_alibaba_2017
from loadmaster.replay.traces.nasa_ipsc import read_nasa_ipsc
from loadmaster.replay.traces.openb import read_openb
from loadmaster.replay.traces.scenario_file import is_timeline_file, read_scenario_file

Reader = Callable[[Path, str | None], Trace]
READERS: dict[str, Reader] = {
    "openb": read_openb,
    "nasa-ipsc": read_nasa_ipsc,
    "alibaba-2017": read_alibaba_2017,
}


class UnknownTraceError(ValueError):
    """TRACE names no registered reader and no scenario or timeline file."""


def load_trace(spec: str, data: Path) -> Trace | TimelineTrace:
    """``spec``: ``NAME[:VARIANT]`` of a registered reader, or the path of a scenario or timeline file."""
    name, _, variant = spec.partition(":")
    if name in READERS:
        if not data.is_dir():
            raise UnknownTraceError(f"--data: {data} is not a folder (set it, or LOADMASTER_TRACES)")
        return READERS[name](data, variant or None)
    path = Path(spec)
    if path.is_file():
        return read_timeline_file(path) if is_timeline_file(path) else read_scenario_file(path)
    raise UnknownTraceError(f"{spec}: not a trace ({', '.join(READERS)}) nor a scenario or timeline file")
