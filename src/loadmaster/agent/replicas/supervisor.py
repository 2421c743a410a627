"""One incarnation of a replica on this node: started (or adopted), followed, checked, restarted on the
leader's command, stopped, and reported.

Reports are level-triggered: the supervisor knows the truth about its process (``ProcessTruth``) and,
whenever the truth or the stored replica changes, sends the report that makes the stored status say
the same (``report_for``); a report the server refused for a passing reason is simply sent again on
the next pass. The agent never restarts a process by itself: an exit is reported and the leader's
restart policy decides (it appends a ``restart`` command to ``status.commands``).

When a process counts as healthy: with a healthcheck, while the check passes; without one, once it has
kept running for ``healthy_after_s`` (Docker's rule for its restart policy: a start counts as
successful after 10 s up). Healthy at once would make the leader clear ``restart_count`` after every
restart of a process that exits right away (a Running-and-healthy report clears it), and the restart
budget would never run out: a crash loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from loadmaster.agent.host.address_pool import AddressPool
from loadmaster.agent.replicas.adoption import RunRecords
from loadmaster.agent.replicas.health import probe_passes
from loadmaster.agent.replicas.placement_env import assigned_address, placement_env
from loadmaster.agent.replicas.replica_launch import (
    health_policy,
    is_job_task,
    key_of,
    launch_spec,
    name_of,
    revision_of,
    status_of,
    stop_settings,
)
from loadmaster.agent.replicas.replica_reports import ProcessTruth, needs_report, report_for
from loadmaster.agent.runtime.protocol import Runtime, StartError, Unit

Report = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]
# How long a process without a healthcheck must keep running before it is reported healthy.
DEFAULT_HEALTHY_AFTER_S = 10.0


class ReplicaSupervisor:
    def __init__(
        self,
        replica: Mapping[str, Any],
        node: str,
        work_dir: Path,
        runtime: Runtime,
        records: RunRecords,
        report: Report,
        healthy_after_s: float = DEFAULT_HEALTHY_AFTER_S,
        address_pool: AddressPool | None = None,
    ) -> None:
        self.replica: Mapping[str, Any] = replica
        self.address_pool = address_pool
        self.healthy_after_s = healthy_after_s
        self.key = key_of(replica)
        self.revision = revision_of(replica)
        self.node = node
        self.work_dir = work_dir
        self.runtime = runtime
        self.records = records
        self._report = report
        self.truth = ProcessTruth()
        self.unit: Unit | None = None
        self.directory: Path = work_dir / "replicas" / name_of(replica)
        self.commands_done = int(status_of(replica).get("commands_done", 0) or 0)
        self._commands_seen = self.commands_done
        self.stopping = False
        self.assigned = True  # False once the store no longer places it here (deleted, moved, lost)
        self._lifecycle = asyncio.Lock()
        self._watchers: list[asyncio.Task[None]] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reporting: asyncio.Task[None] | None = None
        self._report_again = False
        self._accepted: dict[str, Any] | None = None  # the last report the server accepted

    # -- what the agent calls ------------------------------------------------------------------------

    def begin(self, adopted: Unit | None = None, vanished: bool = False) -> None:
        """Start the process, adopt ``adopted``, or (``vanished``) report that it ended unseen."""
        if adopted is not None:
            self._spawn(self._adopt(adopted))
        elif vanished:
            message = "the process ended while the agent was down (exit code unknown)"
            self.truth = ProcessTruth(state="exited", message=message)
            self.kick()
        else:
            self._spawn(self._locked(self._start))

    def consider(self, replica: Mapping[str, Any]) -> None:
        """The stored replica changed (or a pass came round): run new commands, report what differs.

        A copy older than the one a report answered with (a watch event still on its way) is ignored,
        or the agent would send the same report again on every pass until the event arrives."""
        if _revision(replica) >= _revision(self.replica) or name_of(replica) != name_of(self.replica):
            self.replica = replica
        self.directory = self.directory if self.unit else self.work_dir / "replicas" / name_of(replica)
        commands = status_of(replica).get("commands") or []
        pending = [c for c in commands if _command_id(c) > self._commands_seen]
        if pending and not self.stopping:
            self._commands_seen = max(_command_id(c) for c in pending)
            self._spawn(self._locked(lambda: self._execute(pending)))
        self.kick()

    def unassign(self) -> None:
        """The store no longer places it here: stop it, and report nothing more about it."""
        self.assigned = False
        self.begin_stop()

    @property
    def finished(self) -> bool:
        """Stopped and nothing left to report: the agent may forget it."""
        if self.truth.state != "stopped" or self._tasks:
            return False
        if self._reporting is not None and not self._reporting.done():
            return False
        return not self.assigned or not self._report_needed()

    def _report_body(self) -> dict[str, Any] | None:
        address = assigned_address(self.replica, self.address_pool)
        return report_for(self.truth, self.replica, self.commands_done, self.key, address)

    def _report_needed(self) -> bool:
        body = self._report_body()
        return body is not None and needs_report(body, self.replica, self._accepted)

    def begin_stop(self) -> None:
        if not self.stopping:
            self.stopping = True
            self._spawn(self._locked(self._stop))

    async def stopped(self) -> None:
        """Until a stop begun with ``begin_stop`` is done."""
        while self.truth.state != "stopped" or self._tasks:
            await asyncio.sleep(0.05)

    def kick(self) -> None:
        """Send the report the truth calls for, now or right after the one in flight."""
        if self._reporting is not None and not self._reporting.done():
            self._report_again = True
            return
        self._reporting = asyncio.ensure_future(self._sync_report())

    async def close(self) -> None:
        """Forget the tasks (the agent is shutting down; the process keeps running for the next agent)."""
        for task in [*self._tasks, *self._watchers, self._reporting]:
            if task is not None:
                task.cancel()
        await asyncio.gather(*self._tasks, *self._watchers, return_exceptions=True)

    # -- lifecycle -----------------------------------------------------------------------------------

    def _spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _locked(self, step: Callable[[], Awaitable[None]]) -> None:
        async with self._lifecycle:
            await step()

    async def _start(self) -> None:
        if self.stopping:
            return
        try:
            placement = placement_env(self.replica, self.address_pool)
            spec = launch_spec(self.replica, self.node, self.work_dir, placement)
            self.directory = spec.directory
            unit = await self.runtime.start(spec)
        except (StartError, ValueError) as exc:
            self.truth = ProcessTruth(state="start_failed", message=str(exc))
            self.kick()
            return
        self._running(unit, routable=True)

    async def _adopt(self, unit: Unit) -> None:
        # A remove_from_routing executed by the previous agent still holds until the next start, and
        # a process the previous agent had found healthy stays so (its stable time is behind it).
        status = status_of(self.replica)
        self._running(
            unit, routable=status.get("routable", True) is not False, healthy=status.get("healthy") is True
        )

    def _running(self, unit: Unit, routable: bool, healthy: bool = False) -> None:
        self.unit = unit
        signal_number, grace_s = stop_settings(self.replica)
        record = {"replica": name_of(self.replica), "stop_signal": signal_number, "stop_grace_s": grace_s}
        # Without its record the process still runs; only a later agent could not adopt it.
        with contextlib.suppress(OSError):
            self.records.save(self.key, {**self.runtime.record_of(unit), **record})
        policy = health_policy(self.replica)
        message = f"running as pid {unit.pid}"
        self.truth = ProcessTruth("running", unit.pid, healthy=healthy, routable=routable, message=message)
        self._watchers = [asyncio.ensure_future(self._follow(unit))]
        if policy is not None:
            self._watchers.append(asyncio.ensure_future(self._check_health(unit)))
        elif not healthy:
            self._watchers.append(asyncio.ensure_future(self._healthy_when_stable(unit)))
        self.kick()

    async def _healthy_when_stable(self, unit: Unit) -> None:
        await asyncio.sleep(self.healthy_after_s)
        if unit.is_running() and unit is self.unit and self.truth.state == "running":
            message = f"running as pid {unit.pid} for {self.healthy_after_s:g}s (no healthcheck)"
            self.truth = replace(self.truth, healthy=True, message=message)
            self.kick()

    async def _unwatch(self) -> None:
        for watcher in self._watchers:
            watcher.cancel()
        await asyncio.gather(*self._watchers, return_exceptions=True)
        self._watchers = []

    async def _follow(self, unit: Unit) -> None:
        exit_code = await unit.wait()
        if self.stopping or unit is not self.unit:
            return
        for watcher in self._watchers:
            if watcher is not asyncio.current_task():
                watcher.cancel()
        if is_job_task(self.replica) and exit_code == 0:
            self.truth = replace(self.truth, state="succeeded", exit_code=0, message="exited with code 0")
        else:
            shown = "an unknown code (adopted process)" if exit_code is None else f"code {exit_code}"
            message = f"exited with {shown}"
            self.truth = replace(
                self.truth, state="exited", exit_code=exit_code, healthy=False, message=message
            )
        self.kick()

    async def _check_health(self, unit: Unit) -> None:
        policy = health_policy(self.replica)
        assert policy is not None
        started = time.monotonic()
        failures = 0
        env = {str(k): str(v) for k, v in (self.replica.get("spec") or {}).get("env", {}).items()}
        while unit.is_running():
            passed = await probe_passes(policy, self.directory, env)
            if passed:
                failures = 0
            elif time.monotonic() - started >= policy.start_period_s:
                failures += 1  # failures during the start period do not count (Docker's rule)
            degraded = failures >= policy.retries
            healthy = passed
            if (healthy, degraded) != (self.truth.healthy, self.truth.degraded) and unit is self.unit:
                message = f"healthcheck failed {failures} time(s) in a row" if not passed else "healthy"
                self.truth = replace(self.truth, healthy=healthy, degraded=degraded, message=message)
                self.kick()
            await asyncio.sleep(policy.interval_s)

    async def _execute(self, commands: list[Mapping[str, Any]]) -> None:
        for command in sorted(commands, key=_command_id):
            if self.stopping:
                return
            if command.get("type") == "remove_from_routing":
                self.truth = replace(self.truth, routable=False, message="removed from routing")
            elif command.get("type") == "restart":
                await self._stop_unit()
                await self._start()
            self.commands_done = max(self.commands_done, _command_id(command))
        self.kick()

    async def _stop_unit(self) -> int | None:
        await self._unwatch()
        unit, self.unit = self.unit, None
        if unit is None:
            return self.truth.exit_code
        signal_number, grace_s = stop_settings(self.replica)
        return await self.runtime.stop(unit, signal_number, grace_s)

    async def _stop(self) -> None:
        exit_code = await self._stop_unit()
        self.records.forget(self.key)
        self.truth = ProcessTruth(state="stopped", exit_code=exit_code, message="stopped by the agent")
        self.kick()

    # -- reports -------------------------------------------------------------------------------------

    async def _sync_report(self) -> None:
        while self.assigned:
            self._report_again = False
            body = self._report_body()
            if body is not None and needs_report(body, self.replica, self._accepted):
                answer = await self._report(name_of(self.replica), body)
                if answer is not None:
                    self.replica, self._accepted = answer, body
            if not self._report_again:
                break


def _revision(replica: Mapping[str, Any]) -> int:
    revision = (replica.get("metadata") or {}).get("revision", 0)
    return revision if isinstance(revision, int) else 0


def _command_id(command: object) -> int:
    if isinstance(command, dict):
        with contextlib.suppress(TypeError, ValueError):
            return int(command.get("id", 0))
    return 0
