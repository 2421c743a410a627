"""``loadmaster agent --simulate``: N nodes that register, heartbeat and run whatever is assigned to them.

One process speaks for every simulated node. It registers them (retrying while the server is not
reachable yet, so it can start before the server), heartbeats each one every ``heartbeat_s`` (a node
the server forgot, say after a restart on a fresh data dir, is registered again), and leaves the
replicas to ``ReplicaReporter``. A refusal that retrying cannot fix (a wrong token, a refused shape)
ends the agent with ``AgentFatalError`` carrying one line for the user.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from loadmaster.agent.link.api import AgentApi, AgentApiError, AgentFatalError
from loadmaster.agent.link.pacing import for_each_bounded, sleep_or_stop
from loadmaster.agent.link.retries import StopRequestedError, retrying
from loadmaster.agent.simulation.assignments import ReplicaReporter
from loadmaster.agent.simulation.settings import AgentSettings


class ServerUnreachableError(Exception):
    """Some nodes could not be registered: the server did not answer (worth trying again)."""


class SimulatedNodes:
    def __init__(self, api: AgentApi, settings: AgentSettings, say: Callable[[str], None]) -> None:
        self.api = api
        self.settings = settings
        self.say = say
        self.heartbeats_sent = 0
        self.reporter = ReplicaReporter(api, frozenset(settings.names), settings, say)

    async def run(self, stop: asyncio.Event) -> None:
        """Register, then heartbeat and report until ``stop`` is set; ``AgentFatalError`` if refused."""
        if not await self._register_all(stop):
            return
        names = self.settings.names
        shown = names[0] if len(names) == 1 else f"{names[0]}..{names[-1]}"
        self.say(f"registered {len(names)} node(s) ({shown}) at {self.api.server}")
        workers = [
            asyncio.create_task(self._heartbeat_loop(stop), name="heartbeats"),
            asyncio.create_task(self.reporter.run(stop), name="replicas"),
        ]
        stopping = asyncio.create_task(stop.wait(), name="stop")
        done, _ = await asyncio.wait([stopping, *workers], return_when=asyncio.FIRST_COMPLETED)
        for task in [stopping, *workers]:
            task.cancel()
        await asyncio.wait([stopping, *workers])
        for task in done:
            # A loop that ended by itself failed: its exception is the agent's result.
            error = None if task is stopping or task.cancelled() else task.exception()
            if error is not None:
                raise error

    async def _register_all(self, stop: asyncio.Event) -> bool:
        """True once every node is registered; False if asked to stop first."""
        pending = list(self.settings.names)

        async def register_pending() -> None:
            nonlocal pending
            failures = await for_each_bounded(pending, self._register, self.settings.concurrency)
            pending = [name for name, error in zip(pending, failures, strict=True) if error is not None]
            if pending:
                raise ServerUnreachableError(next(error for error in failures if error is not None))

        def on_retry(error: BaseException | None, seconds: float) -> None:
            self.say(f"cannot reach the server at {self.api.server}: {error}; retrying in {seconds:.1f}s")

        try:
            await retrying(stop, lambda error: isinstance(error, ServerUnreachableError), on_retry)(
                register_pending
            )
        except StopRequestedError:
            return False
        return True

    async def _register(self, name: str) -> str | None:
        """None when registered; the reason when the server was unreachable (worth retrying)."""
        try:
            await self.api.register(self.settings.shape.registration(name))
        except AgentApiError as exc:
            if exc.status is None or exc.status >= 500:
                return exc.message
            raise AgentFatalError(f"the server refused to register node {name}: {exc.message}") from exc
        return None

    async def _heartbeat_loop(self, stop: asyncio.Event) -> None:
        while not await sleep_or_stop(stop, self.settings.heartbeat_s):
            names = self.settings.names
            failures = await for_each_bounded(names, self._heartbeat, self.settings.concurrency)
            failed = [(name, failure) for name, failure in zip(names, failures, strict=True) if failure]
            if failed:
                # One line per round, not one per node: a down server would otherwise print N lines.
                self.say(f"heartbeat failed for {len(failed)} node(s), e.g. {failed[0][0]}: {failed[0][1]}")

    async def _heartbeat(self, name: str) -> str | None:
        """None when the heartbeat (or a needed re-registration) went through, else what went wrong."""
        try:
            await self.api.heartbeat(name)
        except AgentApiError as exc:
            if exc.status in (401, 403):
                raise AgentFatalError(f"heartbeat for {name} refused: {exc.message}") from exc
            if exc.status != 404:
                return exc.message
            # The server does not know the node (deleted, or a fresh data dir): say who we are again.
            self.say(f"node {name} is unknown to the server; registering it again")
            return await self._register(name)
        self.heartbeats_sent += 1
        return None
