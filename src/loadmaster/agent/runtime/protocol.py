"""The seam between the node agent and what actually runs a replica.

The agent decides *what* should run (assignments, restarts, stops, health); a ``Runtime`` only knows
*how*: start a launch spec, stop a running unit with a signal and a grace period, and recognise a unit
started by an earlier agent (adoption). The process driver implements it today; a container driver
can implement the same four calls later without the agent changing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


class StartError(Exception):
    """The runtime could not start the unit (a missing executable, an unwritable directory): the
    message is one line for the replica's condition. Restarting would fail the same way."""


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    key: str  # the incarnation (or the replica's name when it has none): what the agent keys work by
    replica: str  # the replica's name when it started (LOADMASTER_REPLICA)
    node: str
    command: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    directory: Path = Path(".")  # the unit's own directory: cwd and logs
    memory_bytes: int | None = None  # the limit applied, when the runtime can apply one
    cpu: float | None = None


class Unit(Protocol):
    """One running replica as the runtime sees it."""

    @property
    def pid(self) -> int: ...

    @property
    def started_at(self) -> float: ...  # the process's start time (epoch seconds), pid reuse guard

    def is_running(self) -> bool: ...

    async def wait(self) -> int | None:
        """Until it ends; its exit code (128+N for signal N), None when unknown (adopted)."""
        ...


class Runtime(Protocol):
    driver: str  # "process"
    limits: str  # what limits it applies here, for `describe node`

    async def start(self, spec: LaunchSpec) -> Unit: ...

    async def stop(self, unit: Unit, signal_number: int, grace_s: float) -> int | None: ...

    def adopt(self, record: dict[str, Any]) -> Unit | None:
        """The unit a record (``record_of``) names, if it is still the same one and running."""
        ...

    def record_of(self, unit: Unit) -> dict[str, Any]: ...
