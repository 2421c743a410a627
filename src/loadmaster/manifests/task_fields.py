"""The fields every schedulable unit shares: a deployment's service, a job, and their replicas.

What runs (``image`` and/or ``command``), what it needs (``resources``, ``gpus``, ports, volumes,
runtime, license tier, GPU models), where it may go (selectors, tolerations, affinity, spread) and how
it ranks (``priority``, ``queue``, ``preemptible``). The names are the scenario format's.
"""

from __future__ import annotations

from typing import Any

from loadmaster.core.model import DEFAULT_JOB_PRIORITY, DEFAULT_QUEUE, PROFILES, is_preemptible_by_default
from loadmaster.core.resources import GPU, MEMORY
from loadmaster.manifests.constraint_fields import (
    preferred_term,
    runtime_requirement,
    toleration,
    topology_spread_constraint,
    volume_claim,
)
from loadmaster.manifests.errors import Problems
from loadmaster.manifests.quantity_fields import duration, gpu_count, quantity, resources
from loadmaster.manifests.validation import (
    Reader,
    at,
    boolean,
    describe,
    dns_name,
    integer,
    list_of,
    one_of,
    ports,
    string_list,
    string_map,
    text,
)

# POSIX signal names, fixed here rather than read from the `signal` module so that validation does not
# depend on the platform the server runs on (the agent's platform decides what is delivered).
SIGNAL_NAMES = frozenset(
    [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ]
)


def signal_name(problems: Problems, path: str, value: object) -> str:
    if not isinstance(value, str) or value not in SIGNAL_NAMES:
        prefixed = f"SIG{value}" if isinstance(value, str) else ""
        hint = f" (did you mean {prefixed}?)" if prefixed in SIGNAL_NAMES else ""
        problems.add(path, f"unknown signal {describe(value)}{hint}: expected a name such as SIGTERM")
    return str(value)


TASK_FIELDS: dict[str, Reader] = {
    "image": text,
    "image_size": quantity(MEMORY),
    "command": string_list,
    "resources": resources(),
    "gpus": gpu_count,
    "node_selector": string_map,
    "tolerations": list_of(toleration),
    "preferred_node_affinity": list_of(preferred_term),
    "topology_spread_constraints": list_of(topology_spread_constraint),
    "ports": ports,
    "gpu_models": string_list,
    "license_tier": text,
    "runtime": runtime_requirement,
    "volumes": list_of(volume_claim),
    "labels": string_map,
    "env": string_map,
    "stop_signal": signal_name,
    "stop_grace_period": duration,
    "priority": integer(),
    "queue": dns_name,
    "preemptible": boolean,
    # The placement profile of this job or service (else its queue's, else the server's scheduler.profile).
    "profile": one_of(*PROFILES),
    # Opt in to the nodes' overcommit (B8): place against allocatable x the node's factor.
    "overcommit": boolean,
}


def check_task(problems: Problems, path: str, read: dict[str, Any], raw: object) -> None:
    """Rules across fields of one unit; ``read`` is what the readers returned for ``raw``."""
    if not isinstance(raw, dict):
        return
    if "image" not in raw and "command" not in raw:
        problems.add(path, "image or command is required")
    if "gpus" in raw and isinstance(raw.get("resources"), dict) and GPU in raw["resources"]:
        problems.add(at(path, "gpus"), "the GPU count is given twice: use gpus or resources.gpu, not both")
    if "image_size" in raw and "image" not in raw:
        problems.add(at(path, "image_size"), "image_size needs image")


def apply_ranking_defaults(read: dict[str, Any]) -> None:
    """Fill priority, queue and preemptible the way the scheduler would assume them.

    Filled in (rather than left implicit) so a stored object says what the scheduler uses and two
    specs that mean the same thing hash the same. preemptible defaults to priority < 100 (KAI).
    """
    read.setdefault("priority", DEFAULT_JOB_PRIORITY)
    read.setdefault("queue", DEFAULT_QUEUE)
    priority = read["priority"]
    if "preemptible" not in read and isinstance(priority, int):
        read["preemptible"] = is_preemptible_by_default(priority)
