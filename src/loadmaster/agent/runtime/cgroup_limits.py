"""CPU and memory limits through a delegated cgroup v2 subtree, where the machine offers one.

A cgroup v2 hierarchy (``/sys/fs/cgroup/cgroup.controllers`` exists) whose cgroup holding the agent is
writable by it (systemd's ``Delegate=yes``, a container's own namespace, or root) lets the agent give
every replica a cgroup of its own::

    <agent's cgroup>/                 cgroup.subtree_control: +cpu +memory
        agent/                        the agent itself (cgroup v2 allows processes only in leaves)
        replica-<key>/                cpu.max, memory.max; the replica's process group

- cpu.max = ``"<quota> <period>"`` with period 100,000 us and quota = cpu cores x period: the replica gets
  at most its requested cores of CPU time per period (CFS bandwidth control), e.g. 0.5 cpu ->
  ``"50000 100000"``.
- memory.max = the memory request in bytes: past it the kernel reclaims, then OOM-kills inside the cgroup.

The process is moved right after it is spawned (as ``prlimit`` is for RLIMIT_AS), before it runs
anything but its first instructions. Anything missing (cgroup v1, as on the machine this was built on; a
cgroup not writable; other processes sharing the agent's cgroup, so its controllers cannot be
delegated) makes ``detect`` answer None and the driver falls back to RLIMIT_AS for memory, saying so in
``describe node``.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF_CGROUP = Path("/proc/self/cgroup")
CPU_PERIOD_US = 100_000
_CONTROLLERS = ("cpu", "memory")


class CgroupV2Limits:
    """Per-replica cgroups under the agent's own, with cpu.max and memory.max."""

    def __init__(self, base: Path) -> None:
        self.base = base

    @classmethod
    def detect(cls, root: Path = CGROUP_ROOT, self_cgroup: Path = PROC_SELF_CGROUP) -> CgroupV2Limits | None:
        """The agent's delegated subtree, set up (the agent moved into its ``agent/`` leaf, cpu and
        memory enabled for children), or None when this machine does not allow it."""
        try:
            if not (root / "cgroup.controllers").is_file():
                return None  # cgroup v1 or none: no unified hierarchy
            base = root / _own_path(self_cgroup.read_text()).lstrip("/")
            offered = (base / "cgroup.controllers").read_text().split()
            if not all(c in offered for c in _CONTROLLERS) or not os.access(base, os.W_OK):
                return None
            leaf = base / "agent"
            leaf.mkdir(exist_ok=True)
            (leaf / "cgroup.procs").write_text(f"{os.getpid()}\n")
            (base / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in _CONTROLLERS) + "\n")
        except (OSError, ValueError):
            return None  # e.g. EBUSY: other processes share the agent's cgroup, nothing to delegate
        return cls(base)

    def place(self, key: str, pid: int, cpu: float | None, memory_bytes: int | None) -> None:
        """Move ``pid`` into the replica's cgroup with its limits; a process already gone is no error."""
        group = self.base / f"replica-{_safe(key)}"
        group.mkdir(exist_ok=True)
        (group / "cpu.max").write_text(cpu_max(cpu) + "\n")
        (group / "memory.max").write_text(("max" if memory_bytes is None else str(memory_bytes)) + "\n")
        with contextlib.suppress(ProcessLookupError, FileNotFoundError):
            (group / "cgroup.procs").write_text(f"{pid}\n")

    def release(self, key: str) -> None:
        """Remove the replica's cgroup once its processes are gone (the kernel refuses while any remain)."""
        with contextlib.suppress(OSError):
            (self.base / f"replica-{_safe(key)}").rmdir()


def cpu_max(cpu: float | None) -> str:
    """cpu.max for ``cpu`` cores: ``"<quota> <period>"``, quota = cores x period (at least 1,000 us, the
    kernel's minimum), or ``"max <period>"`` without a request."""
    if cpu is None:
        return f"max {CPU_PERIOD_US}"
    return f"{max(1_000, round(cpu * CPU_PERIOD_US))} {CPU_PERIOD_US}"


def _own_path(proc_self_cgroup: str) -> str:
    """The unified hierarchy's line of /proc/self/cgroup is ``0::/path``."""
    for line in proc_self_cgroup.splitlines():
        if line.startswith("0::"):
            return line[3:]
    raise ValueError("no cgroup v2 entry in /proc/self/cgroup")


def _safe(key: str) -> str:
    """A replica key as a directory name (incarnations look like ``web-0@3``)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in key)
