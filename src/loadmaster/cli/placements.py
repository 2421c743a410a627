"""``up``'s last steps: wait until the applied workloads' replicas are all placed, then show where."""

from __future__ import annotations

import shlex
import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich import box
from rich.table import Table

from loadmaster.cli.invocation import as_typed
from loadmaster.cli.local_processes import Child
from loadmaster.cli.remote.client import ApiClient, CommandError
from loadmaster.cli.remote.connection import DEFAULT_DATA_DIR
from loadmaster.cli.views.columns import name_of, spec_of
from loadmaster.cli.views.kind_columns import latest_phase_condition
from loadmaster.cli.views.usage import replica_node, replica_phase
from loadmaster.manifests import DEPLOYMENT, JOB, Manifest, ReplicaPhase

PLACED_PHASES = frozenset({ReplicaPhase.SCHEDULED.value, ReplicaPhase.RUNNING.value})
POLL_S = 0.2
UNPLACED_SHOWN = 10


def expected_replicas(manifests: Sequence[Manifest]) -> tuple[set[tuple[str, str]], int]:
    """The (owner kind, owner) pairs to watch and how many replicas they make at least.

    Global services make one replica per Ready node, which is not known in advance: they count 0 here,
    and their replicas are still waited for once the server has created them.
    """
    owners: set[tuple[str, str]] = set()
    count = 0
    for manifest in manifests:
        if manifest.kind == DEPLOYMENT:
            owners.add((DEPLOYMENT, manifest.name))
            count += sum(
                int(s.get("replicas", 0)) for s in manifest.spec["services"] if s["placement"] != "global"
            )
        elif manifest.kind == JOB:
            owners.add((JOB, manifest.name))
            count += int(manifest.spec["tasks"])
    return owners, count


def _owned(replicas: Sequence[Mapping[str, Any]], owners: set[tuple[str, str]]) -> list[Mapping[str, Any]]:
    return [r for r in replicas if (spec_of(r).get("owner_kind"), spec_of(r).get("owner")) in owners]


def wait_until_placed(
    api: ApiClient,
    manifests: Sequence[Manifest],
    children: Sequence[Child],
    timeout_s: float,
    phases: Collection[str] = PLACED_PHASES,
    verb: str = "placed",
) -> list[Mapping[str, Any]]:
    """Poll the replicas until every one of the applied workloads is in ``phases`` (Scheduled or
    Running; a real agent's ``up`` waits for Running too: its processes have started)."""
    owners, expected = expected_replicas(manifests)
    deadline = time.monotonic() + timeout_s
    shown = -1
    while True:
        owned = _owned(api.get("/api/replicas").get("items", []), owners)
        placed = [r for r in owned if replica_phase(r) in phases]
        if len(placed) != shown:
            print(f"{verb} {len(placed)} of {max(expected, len(owned))} replicas", flush=True)
            shown = len(placed)
        if len(owned) >= expected and len(placed) == len(owned):
            return sorted(owned, key=name_of)
        for child in children:
            if child.exited() is not None:
                raise child.failure("waiting for placements")
        if time.monotonic() > deadline:
            raise CommandError(_not_placed_message(owned, expected, timeout_s, phases, verb))
        time.sleep(POLL_S)


def _not_placed_message(
    owned: Sequence[Mapping[str, Any]], expected: int, timeout_s: float, phases: Collection[str], verb: str
) -> str:
    waiting = [r for r in owned if replica_phase(r) not in phases]
    lines = [
        f"after {timeout_s:g}s, {len(waiting)} replica(s) are not {verb} ({len(owned)} of {expected} exist):"
    ]
    for replica in waiting[:UNPLACED_SHOWN]:
        condition = latest_phase_condition(replica)
        reason = condition.get("message") or condition.get("reason") or "no reason recorded yet"
        lines.append(f"  {name_of(replica)} {replica_phase(replica)}: {reason}")
    lines.append("(`loadmaster why <replica>` explains one in full)")
    return "\n".join(lines)


def placements_table(replicas: Sequence[Mapping[str, Any]]) -> Table:
    table = Table(
        box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold", title_justify="left"
    )
    for header in ("REPLICA", "OWNER", "PHASE", "NODE"):
        table.add_column(header, no_wrap=True)
    for replica in replicas:
        spec = spec_of(replica)
        owner = f"{str(spec.get('owner_kind', '')).lower()}/{spec.get('owner', '')}"
        table.add_row(name_of(replica), owner, replica_phase(replica), replica_node(replica) or "-")
    return table


def next_steps(
    command: str, url: str, data_dir: Path, examples: Path, *, custom_server: bool, stopped: bool
) -> str:
    """What to type next, each line runnable as printed in this directory (``command`` starts the CLI).

    After ``--exit`` nothing is running any more, so it says so and how to start it again first.
    """
    cwd = Path.cwd()
    token_file = shlex.quote(as_typed(data_dir / "admin-token", cwd))
    shop_example = examples / "02-shop.yaml" if (examples / "02-shop.yaml").exists() else examples
    if stopped:
        again = [command, "up"] + (
            ["--data-dir", shlex.quote(as_typed(data_dir, cwd))] if data_dir != DEFAULT_DATA_DIR else []
        )
        again += ["--listen", url.removeprefix("http://")] if custom_server else []
        lines = [
            f"\nstopped (--exit): the server at {url} and the simulated nodes are no longer running; "
            f"{data_dir} keeps the state.",
            f"to try the commands below, start it again: {' '.join(again)}",
            "then, in another shell in this directory:",
        ]
    else:
        lines = [
            f"\nloadmaster is running at {url} (API docs: {url}/docs); admin token: {token_file}",
            "in another shell in this directory:",
        ]
    if custom_server:
        lines.append(f"  export LOADMASTER_SERVER={url}")
    lines += [
        f'  export LOADMASTER_TOKEN="$(cat {token_file})"',
        "next:",
    ]
    steps = [
        ("get nodes", "nodes, state, CPU/memory/GPU used of allocatable"),
        ("get replicas -o wide", "every replica, its node and why it waits"),
        ("why train-resnet-0", "the full explanation of one placement"),
        ("status -w", "live view; Ctrl-C leaves it"),
        ("audit -f", "follow the decisions as they are made"),
        (f"preview -f {shlex.quote(as_typed(shop_example, cwd))}", "what applying it would change"),
    ]
    width = max(len(step) for step, _ in steps)
    lines += [f"  {command} {step.ljust(width)}  # {why}" for step, why in steps]
    if not stopped:
        lines.append("Ctrl-C stops the server and the simulated nodes; the data dir keeps the state.")
    return "\n".join(lines)
