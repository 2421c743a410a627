"""A cycle's decisions as replica updates: evictions and moves go Terminating with their reason;
the scale-up template tiers; the Phase condition's one-line message."""

from __future__ import annotations

import pytest

from loadmaster.core.model import SchedulerConfig, Task
from loadmaster.core.working.decisions import Decision
from loadmaster.cycle import CyclePlan
from loadmaster.manifests import WorkerTemplate
from loadmaster.placement.diagnosis import Explanation
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.phase_condition import explanation_message
from loadmaster.runtime.scheduling.cycle_writes import plan_writes
from loadmaster.runtime.scheduling.scale_up.scale_up import choose_templates
from loadmaster.store.codec import decode
from tests.controlplane.conftest import add_nodes, apply, clock_of, deployment, settle

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("decision", "reason", "message"),
    [
        pytest.param(
            Decision("preempt", "evict", "shop-api-0", "n1", reason="for job ml (priority 90)"),
            "Evicted",
            "evicted from n1 by preempt: for job ml (priority 90)",
            id="evict",
        ),
        pytest.param(
            Decision("consolidate", "move", "shop-api-0", "n2", from_node="n1"),
            "Moved",
            "moving from n1 to n2 by consolidate",
            id="move",
        ),
    ],
)
async def test_evictions_and_moves_take_the_replica_to_terminating_with_their_reason(
    plane: ControlPlane, decision: Decision, reason: str, message: str
) -> None:
    await add_nodes(plane, "n1", "n2")
    await apply(plane, deployment(replicas=1))
    await settle(plane)
    assert plane.model is not None
    build = plane.model.build(clock_of(plane).now())
    writes = plan_writes(CyclePlan({}, [decision], {}), build, clock_of(plane).now())
    (update,) = writes.updates
    stored = decode(update.put.value)
    assert stored["status"]["phase"] == "Terminating"
    condition = stored["status"]["conditions"][-1]
    assert (condition["reason"], condition["message"]) == (reason, message)
    assert update.audit is not None and update.audit.type == decision.kind
    assert update.put.expect_revision == build.replicas["shop-api-0"].revision


def template(
    name: str, cpu: int, memory_gi: int, cost: float = 0.0, labels: dict[str, str] | None = None
) -> WorkerTemplate:
    resources = {"cpu": cpu * 1000, "memory": memory_gi * 2**30}
    return WorkerTemplate(name, resources, resources, labels or {}, cost=cost)


TEMPLATES = [
    template("small", 2, 8),
    template("exact", 4, 16),
    template("big", 16, 64),
    template("cheap-big", 32, 128, cost=-1),
]


@pytest.mark.parametrize(
    ("request_", "selector", "expected"),
    [
        pytest.param({"cpu": 4000, "memory": 16 * 2**30}, {}, ("exact", "exact"), id="exact-shape-wins"),
        pytest.param({"cpu": 3000}, {}, ("cheap-big", "smallest_fit"), id="cheapest-fitting-before-smallest"),
        pytest.param({"cpu": 64000}, {}, ("cheap-big", "largest"), id="nothing-fits-so-the-largest"),
        pytest.param(
            {"cpu": 1000}, {"tier": "gpu"}, ("cheap-big", "largest"), id="a-selector-no-template-has"
        ),
    ],
)
def test_scale_up_picks_exact_then_smallest_fit_then_largest(
    request_: dict[str, int], selector: dict[str, str], expected: tuple[str, str]
) -> None:
    task = Task("r", "j", request_, node_selector=selector)
    (choice,) = choose_templates([task], TEMPLATES, SchedulerConfig())
    assert choice is not None and (choice.template, choice.tier) == expected


def test_smallest_fit_among_equal_costs_is_the_smallest_template() -> None:
    (choice,) = choose_templates([Task("r", "j", {"cpu": 3000})], TEMPLATES[:3], SchedulerConfig())
    assert choice is not None and (choice.template, choice.tier) == ("exact", "smallest_fit")


def test_the_phase_message_gives_the_counts_and_the_first_hint() -> None:
    explanation = Explanation({"capacity": 3, "selector": 1}, {}, ["n2 needs 512Mi less memory"])
    assert explanation_message(explanation, 5) == (
        "1/5 nodes can take it: 3 capacity, 1 selector; hint: n2 needs 512Mi less memory"
    )


class CountedExplanation(Explanation):
    """An explanation that counts how often its per-node reasons were read (each read sorts them)."""

    reads = 0

    def __getattribute__(self, name: str) -> object:
        if name == "nodes":
            type(self).reads += 1
        return super().__getattribute__(name)


async def test_replicas_sharing_an_explanation_get_one_condition_text_made_once(plane: ControlPlane) -> None:
    await add_nodes(plane, "n1", "n2")
    await apply(plane, deployment(replicas=3, cpu="64"))
    await settle(plane)
    assert plane.model is not None
    build = plane.model.build(clock_of(plane).now())
    CountedExplanation.reads = 0
    shared = CountedExplanation({"capacity": 2}, {"n1": "capacity: 64 cpu > 4", "n2": "capacity: 64 cpu > 4"})
    explanations = {replica.name: shared for replica in build.attempted}
    writes = plan_writes(CyclePlan({}, [], explanations), build, clock_of(plane).now())
    conditions = [decode(update.put.value)["status"]["conditions"][-1] for update in writes.updates]
    assert len(conditions) == 3
    assert {(c["message"].split("; attempt")[0], str(c["details"]["nodes"])) for c in conditions} == {
        (
            "0/2 nodes can take it: 2 capacity",
            str({"n1": "capacity: 64 cpu > 4", "n2": "capacity: 64 cpu > 4"}),
        )
    }
    assert CountedExplanation.reads == 1
