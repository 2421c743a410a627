"""The process driver (as Nomad's raw_exec): a replica is a process group of its own.

Each replica's command runs in a new session (so it is its own process group, and a signal to the group
reaches everything it started), cwd its own directory, stdout and stderr appended to ``output.log``
there (``process_logs`` rotates it by copy-and-truncate, which the child never notices). The
environment is the agent's own (PATH, HOME ...) minus its token, plus the spec's ``env`` and
``LOADMASTER_REPLICA`` / ``LOADMASTER_NODE``.

Limits: where the machine delegates a cgroup v2 subtree to the agent, cpu.max and memory.max per replica
(``cgroup_limits``). Elsewhere memory by ``RLIMIT_AS`` (the address space, so a program that reserves
much more than it touches needs headroom in its request) and CPU not limited. Either is applied to the
child right after it is spawned: a ``preexec_fn`` would force a full fork of the agent for every start
(measured: 21 ms against 2.3 ms per start), and the limit then holds from the child's first moments.

Exit codes follow the shell's convention: a process ended by signal N exits 128+N (SIGKILL: 137).
A process adopted from an earlier agent is not this agent's child, so its exit code cannot be read:
``wait`` then returns None.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import signal
import time
from typing import Any

import psutil

from loadmaster.agent.runtime.cgroup_limits import CgroupV2Limits
from loadmaster.agent.runtime.protocol import LaunchSpec, StartError, Unit

LOG_FILE = "output.log"
# An adopted process is polled this often: there is no child exit notification for it.
ADOPTED_POLL_S = 0.5
# After SIGKILL a process group is gone within milliseconds; this bounds the wait if the kernel is slow.
KILL_WAIT_S = 5.0
# Never handed to the replica: it is the agent's credential, not the workload's.
_PRIVATE_ENV = ("LOADMASTER_TOKEN",)


def exit_code_of(returncode: int) -> int:
    """Python's ``-N`` (killed by signal N) as the shell's ``128+N``; a normal exit code unchanged."""
    return 128 - returncode if returncode < 0 else returncode


class ChildProcess:
    """A process this agent started: its exit code comes from ``waitpid``."""

    def __init__(self, process: asyncio.subprocess.Process, started_at: float) -> None:
        self._process = process
        self._started_at = started_at

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def started_at(self) -> float:
        return self._started_at

    def is_running(self) -> bool:
        return self._process.returncode is None

    async def wait(self) -> int | None:
        return exit_code_of(await self._process.wait())


class AdoptedProcess:
    """A process an earlier agent started: followed by polling its pid (and start time, against reuse)."""

    def __init__(self, process: psutil.Process) -> None:
        self._process = process

    @property
    def pid(self) -> int:
        return int(self._process.pid)

    @property
    def started_at(self) -> float:
        return float(self._process.create_time())

    def is_running(self) -> bool:
        try:
            return bool(self._process.is_running()) and self._process.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    async def wait(self) -> int | None:
        while self.is_running():
            await asyncio.sleep(ADOPTED_POLL_S)
        return None


def _limit_memory(pid: int, memory_bytes: int | None) -> None:
    if memory_bytes is None:
        return
    # Already ended (ProcessLookupError): its exit is reported as any other.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        resource.prlimit(pid, resource.RLIMIT_AS, (memory_bytes, memory_bytes))


def _environment(spec: LaunchSpec) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _PRIVATE_ENV}
    env.update(spec.env)
    env.update(LOADMASTER_REPLICA=spec.replica, LOADMASTER_NODE=spec.node)
    return env


def _signal_group(pid: int, signal_number: int) -> None:
    # Already gone raises ProcessLookupError (a zombie leader's group may raise PermissionError: gone too).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal_number)


RLIMIT_ONLY = "memory: RLIMIT_AS; cpu: not limited (no delegated cgroup v2 subtree on this machine)"
CGROUP_V2 = "cpu: cgroup v2 cpu.max; memory: cgroup v2 memory.max"


class ProcessRuntime:
    driver = "process"

    def __init__(self, cgroups: CgroupV2Limits | None = None) -> None:
        self.cgroups = cgroups
        self.limits = CGROUP_V2 if cgroups is not None else RLIMIT_ONLY
        self._cgroup_of: dict[int, str] = {}  # pid -> the key of the cgroup it was placed in

    async def start(self, spec: LaunchSpec) -> Unit:
        try:
            spec.directory.mkdir(parents=True, exist_ok=True)
            log = open(spec.directory / LOG_FILE, "ab")  # noqa: SIM115 (handed to the child, closed below)
        except OSError as exc:
            raise StartError(f"cannot prepare {spec.directory}: {exc.strerror or exc}") from None
        try:
            process = await asyncio.create_subprocess_exec(
                *spec.command,
                cwd=spec.directory,
                env=_environment(spec),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise StartError(f"command not found: {spec.command[0]}") from None
        except PermissionError:
            raise StartError(f"command not executable: {spec.command[0]}") from None
        except OSError as exc:
            raise StartError(f"cannot run {spec.command[0]}: {exc.strerror or exc}") from None
        finally:
            log.close()
        if self.cgroups is None:
            _limit_memory(process.pid, spec.memory_bytes)
        else:
            try:
                self.cgroups.place(spec.key, process.pid, spec.cpu, spec.memory_bytes)
                self._cgroup_of[process.pid] = spec.key
            except OSError:
                _limit_memory(process.pid, spec.memory_bytes)  # the cgroup went away: the fallback
        try:
            started_at = float(psutil.Process(process.pid).create_time())
        except psutil.Error:
            started_at = time.time()  # it already ended; the next wait() reports how
        return ChildProcess(process, started_at)

    async def stop(self, unit: Unit, signal_number: int, grace_s: float) -> int | None:
        """``signal_number`` to the group, up to ``grace_s`` for the process to end, then SIGKILL. The
        group is SIGKILLed in any case once its leader ended, so nothing the replica started outlives it.
        The exit code, None when it is unknown (an adopted unit, or one that outlived SIGKILL's wait)."""
        _signal_group(unit.pid, signal_number)
        waiting = asyncio.ensure_future(unit.wait())
        try:
            exit_code = await asyncio.wait_for(asyncio.shield(waiting), timeout=max(grace_s, 0.0))
        except TimeoutError:
            _signal_group(unit.pid, signal.SIGKILL)
            try:
                exit_code = await asyncio.wait_for(waiting, timeout=KILL_WAIT_S)
            except TimeoutError:
                exit_code = None
        _signal_group(unit.pid, signal.SIGKILL)
        key = self._cgroup_of.pop(unit.pid, None)
        if key is not None and self.cgroups is not None:
            self.cgroups.release(key)
        return exit_code

    def adopt(self, record: dict[str, Any]) -> Unit | None:
        try:
            process = psutil.Process(int(record["pid"]))
            same = abs(process.create_time() - float(record["started_at"])) < 0.01
        except (psutil.Error, KeyError, TypeError, ValueError):
            return None
        unit = AdoptedProcess(process)
        if not (same and unit.is_running()):
            return None
        if isinstance(record.get("cgroup"), str):  # released when this agent stops it
            self._cgroup_of[unit.pid] = record["cgroup"]
        return unit

    def record_of(self, unit: Unit) -> dict[str, Any]:
        record: dict[str, Any] = {"pid": unit.pid, "started_at": unit.started_at}
        if unit.pid in self._cgroup_of:
            record["cgroup"] = self._cgroup_of[unit.pid]
        return record
