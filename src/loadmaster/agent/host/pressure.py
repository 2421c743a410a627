"""How loaded the machine is: ``{cpu, memory}`` as fractions of 0..1, for the node's ``status.pressure``.

cgroup v2 where it is mounted (the agent's own cgroup: what a container or slice may use), else the
whole machine from /proc.
- cpu = busy time / (elapsed time x cores) between two samples. cgroup v2: ``usage_usec`` of
  ``cpu.stat``; /proc: the non-idle jiffies of /proc/stat's ``cpu`` line over all of them.
- memory = cgroup v2: ``memory.current / memory.max`` (the machine's total when ``max``);
  /proc: ``1 - MemAvailable / MemTotal`` from /proc/meminfo.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


def _own_cgroup_v2() -> Path | None:
    if not (CGROUP_ROOT / "cgroup.controllers").exists():
        return None
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                path = CGROUP_ROOT / line[3:].lstrip("/")
                return path if (path / "cpu.stat").exists() else None
    except OSError:
        return None
    return None


def _meminfo() -> dict[str, int]:
    values: dict[str, int] = {}
    for line in Path("/proc/meminfo").read_text().splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts:
            values[key] = int(parts[0]) * 1024
    return values


class PressureSampler:
    def __init__(self) -> None:
        self.cgroup = _own_cgroup_v2()
        self.source = "cgroup v2" if self.cgroup else "/proc"
        self._last = self._cpu_counters()

    def _cpu_counters(self) -> tuple[float, float]:
        """``(busy, total)`` in seconds of CPU, cumulative."""
        if self.cgroup is not None:
            for line in (self.cgroup / "cpu.stat").read_text().splitlines():
                if line.startswith("usage_usec"):
                    busy = int(line.split()[1]) / 1e6
                    return busy, time.monotonic() * (os.cpu_count() or 1)
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        total = sum(fields[:8])
        hertz = os.sysconf("SC_CLK_TCK")
        return (total - idle) / hertz, total / hertz

    def _memory(self) -> float:
        info = _meminfo()
        if self.cgroup is not None:
            current = int((self.cgroup / "memory.current").read_text())
            limit_text = (self.cgroup / "memory.max").read_text().strip()
            limit = info.get("MemTotal", 1) if limit_text == "max" else int(limit_text)
            return current / max(limit, 1)
        return 1 - info.get("MemAvailable", 0) / max(info.get("MemTotal", 1), 1)

    def sample(self) -> dict[str, float]:
        """``{cpu, memory}`` since the previous sample (the first one: since the sampler was made)."""
        busy, total = self._cpu_counters()
        last_busy, last_total = self._last
        self._last = (busy, total)
        cpu = (busy - last_busy) / (total - last_total) if total > last_total else 0.0
        return {
            "cpu": round(min(max(cpu, 0.0), 1.0), 4),
            "memory": round(min(max(self._memory(), 0.0), 1.0), 4),
        }
