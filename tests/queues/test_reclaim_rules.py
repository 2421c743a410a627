"""Reclaim: the reclaimer pre-check, the two strategies on leveled queues, and the saturation rule."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from loadmaster.queues import (
    QueueTree,
    Reclaimer,
    VictimChunk,
    can_reclaim,
    fits_reclaim_rules,
    may_reclaim_from,
)

from .trees import per_queue, queue, tree_of, usage_with, vec

CPU_GPU = ("cpu", "gpu")
Amounts = Mapping[str, float]


def flat(a_deserved: float = 2, b_deserved: float = 2) -> QueueTree:
    return tree_of(
        queue("a", deserved={"gpu": a_deserved}), queue("b", deserved={"gpu": b_deserved}), resources=CPU_GPU
    )


def reclaimer(tree: QueueTree, name: str, preemptible: bool = True, **wanted: float) -> Reclaimer:
    return Reclaimer(tree.index_of(name), vec(tree, **wanted), preemptible)


@pytest.mark.parametrize(
    ("held", "held_non_preemptible", "preemptible", "reason"),
    [
        pytest.param({"a": {"gpu": 1}}, {}, True, None, id="within-fair-share"),
        pytest.param(
            {"a": {"gpu": 3}},
            {},
            True,
            "queue a fair share gpu: 3 allocated + 1 requested > 3: it may not reclaim",
            id="above-fair-share",
        ),
        pytest.param(
            {"a": {"cpu": 5}},
            {},
            True,
            "queue a fair share cpu: 5 allocated + 0 requested > 4: it may not reclaim",
            id="over-fair-share-in-a-resource-the-job-does-not-request",
        ),
        pytest.param(
            {},
            {"a": {"gpu": 2}},
            False,
            "queue a deserved gpu: 2 allocated to non-preemptible jobs + 1 requested > 2",
            id="non-preemptible-reclaimer-beyond-deserved",
        ),
        pytest.param({}, {"a": {"gpu": 1}}, False, None, id="non-preemptible-reclaimer-within-deserved"),
    ],
)
def test_only_a_queue_within_its_fair_share_may_reclaim(
    held: Mapping[str, Amounts],
    held_non_preemptible: Mapping[str, Amounts],
    preemptible: bool,
    reason: str | None,
) -> None:
    tree = flat()
    fair = per_queue(tree, {"a": {"cpu": 4, "gpu": 3}, "b": {"cpu": 4, "gpu": 1}})
    usage = usage_with(tree, held, held_non_preemptible)
    assert can_reclaim(usage, tree, fair, reclaimer(tree, "a", preemptible, gpu=1)) == reason


def validate(
    tree: QueueTree,
    fair: Mapping[str, Amounts],
    held: Mapping[str, Amounts],
    who: Reclaimer,
    chunks: list[tuple[str, Amounts]],
    multiplier: float = 1.0,
) -> str | None:
    victims = [VictimChunk(tree.index_of(name), vec(tree, **amounts)) for name, amounts in chunks]
    return fits_reclaim_rules(
        usage_with(tree, held), tree, per_queue(tree, fair), who, victims, saturation_multiplier=multiplier
    )


FAIR_2_2 = {"a": {"cpu": 8, "gpu": 2}, "b": {"cpu": 8, "gpu": 2}}


def test_maintain_fair_share_takes_from_a_queue_above_its_allocatable_share() -> None:
    tree = flat()
    assert (
        validate(tree, FAIR_2_2, {"b": {"gpu": 3}}, reclaimer(tree, "a", gpu=1), [("b", {"gpu": 1})]) is None
    )


def test_a_queue_at_both_deserved_and_fair_share_is_never_reclaimed_from() -> None:
    tree = flat()
    reason = validate(tree, FAIR_2_2, {"b": {"gpu": 2}}, reclaimer(tree, "a", gpu=1), [("b", {"gpu": 1})])
    assert reason == (
        "queue b may not be reclaimed from: it would keep cpu 0, gpu 2, not above its allocatable share "
        "cpu 8, gpu 2, and it is not above its deserved (gpu 2)"
    )


@pytest.mark.parametrize(
    ("a_holds", "reason_part"),
    [
        pytest.param(0, None, id="reclaimer-within-deserved-takes-from-victim-above-deserved"),
        pytest.param(
            2, "queue a would hold gpu 3, beyond its deserved gpu 2", id="reclaimer-beyond-deserved"
        ),
    ],
)
def test_guarantee_deserved_quota_lets_a_starved_queue_take_from_one_above_deserved(
    a_holds: float, reason_part: str | None
) -> None:
    tree = flat(a_deserved=2, b_deserved=1)
    fair = {
        "a": {"cpu": 8, "gpu": 4},
        "b": {"cpu": 8, "gpu": 3},
    }  # b at its fair share: MaintainFairShare fails
    reason = validate(
        tree, fair, {"a": {"gpu": a_holds}, "b": {"gpu": 3}}, reclaimer(tree, "a", gpu=1), [("b", {"gpu": 1})]
    )
    if reason_part is None:
        assert reason is None
    else:
        assert reason is not None and reason_part in reason


def test_a_reclaimer_without_deserved_cannot_use_the_guarantee() -> None:
    tree = tree_of(queue("a"), queue("b", deserved={"gpu": 1}), resources=CPU_GPU)
    fair = {"a": {"cpu": 8, "gpu": 4}, "b": {"cpu": 8, "gpu": 3}}
    reason = validate(tree, fair, {"b": {"gpu": 3}}, reclaimer(tree, "a", gpu=1), [("b", {"gpu": 1})])
    assert reason is not None and "queue a has no deserved quota" in reason


@pytest.mark.parametrize(
    ("chunks", "allowed"),
    [
        pytest.param(2, True, id="two-chunks-leave-the-victim-at-its-share"),
        pytest.param(3, False, id="a-third-chunk-would-be-taken-from-a-queue-at-its-share"),
    ],
)
def test_each_chunk_is_checked_before_it_is_subtracted(chunks: int, allowed: bool) -> None:
    tree = flat()
    reason = validate(
        tree, FAIR_2_2, {"b": {"gpu": 4}}, reclaimer(tree, "a", gpu=1), [("b", {"gpu": 1})] * chunks
    )
    assert (reason is None) == allowed


def departments() -> QueueTree:
    return tree_of(
        queue("dept-1"),
        queue("team-a", "dept-1"),
        queue("team-b", "dept-1"),
        queue("dept-2"),
        queue("team-c", "dept-2"),
        resources=CPU_GPU,
    )


DEPT_FAIR = {
    "dept-1": {"cpu": 8, "gpu": 4},
    "dept-2": {"cpu": 8, "gpu": 4},
    "team-a": {"cpu": 4, "gpu": 2},
    "team-b": {"cpu": 4, "gpu": 2},
    "team-c": {"cpu": 8, "gpu": 3},
}


@pytest.mark.parametrize(
    ("victim", "reason_start"),
    [
        pytest.param("team-b", None, id="sibling-over-its-share-in-the-same-department"),
        pytest.param(
            "team-c",
            "queue dept-2 may not be reclaimed from",
            id="leaf-over-its-share-but-its-department-is-not",
        ),
    ],
)
def test_victims_are_judged_at_the_children_of_the_lowest_common_ancestor(
    victim: str, reason_start: str | None
) -> None:
    tree = departments()
    held = {"team-b": {"gpu": 3}, "team-c": {"gpu": 4}}
    reason = validate(tree, DEPT_FAIR, held, reclaimer(tree, "team-a", gpu=1), [(victim, {"gpu": 1})])
    if reason_start is None:
        assert reason is None
    else:
        assert reason is not None and reason.startswith(reason_start)


@pytest.mark.parametrize(
    ("b_holds", "multiplier", "allowed"),
    [
        pytest.param(4, 1.0, False, id="reclaimer-would-be-as-saturated-as-the-victim"),
        pytest.param(5, 1.0, True, id="reclaimer-ends-less-saturated-than-the-victim"),
        pytest.param(5, 1.5, False, id="the-multiplier-demands-a-wider-margin"),
    ],
)
def test_a_reclaimer_over_its_fair_share_must_end_less_saturated_than_its_victim(
    b_holds: float, multiplier: float, allowed: bool
) -> None:
    tree = flat()
    # a would hold 3 of its fair share 2 (1.5x); b keeps b_holds - 1 of 2.
    reason = validate(
        tree,
        FAIR_2_2,
        {"a": {"gpu": 2}, "b": {"gpu": b_holds}},
        reclaimer(tree, "a", gpu=1),
        [("b", {"gpu": 1})],
        multiplier,
    )
    assert (reason is None) == allowed
    if not allowed:
        assert reason is not None and "would hold 1.50x its fair share of gpu" in reason


def test_a_non_preemptible_reclaimer_must_fit_deserved_at_every_level() -> None:
    tree = tree_of(
        queue("dept", deserved={"gpu": 2}),
        queue("team-a", "dept", deserved={"gpu": 4}),
        queue("team-b", "dept"),
        queue("other"),
        resources=CPU_GPU,
    )
    fair = {"dept": {"cpu": 8, "gpu": 4}, "team-a": {"cpu": 8, "gpu": 4}, "other": {"cpu": 8, "gpu": 2}}
    usage = usage_with(tree, {"other": {"gpu": 4}}, {"team-b": {"gpu": 2}})
    victims = [VictimChunk(tree.index_of("other"), vec(tree, gpu=1))]
    who = reclaimer(tree, "team-a", preemptible=False, gpu=1)
    reason = fits_reclaim_rules(usage, tree, per_queue(tree, fair), who, victims)
    assert reason == "queue dept deserved gpu: 2 allocated to non-preemptible jobs + 1 requested > 2"
    assert (
        fits_reclaim_rules(
            usage, tree, per_queue(tree, fair), Reclaimer(who.queue, who.request, True), victims
        )
        is None
    )


def test_victims_from_the_reclaimers_own_queue_are_a_caller_error() -> None:
    tree = flat()
    with pytest.raises(ValueError, match="must belong to other queues"):
        validate(tree, FAIR_2_2, {"a": {"gpu": 1}}, reclaimer(tree, "a", gpu=1), [("a", {"gpu": 1})])


@pytest.mark.parametrize(
    ("b_holds", "refused"),
    [pytest.param(3, False, id="victim-above-its-share"), pytest.param(2, True, id="victim-at-its-share")],
)
def test_the_victim_filter_refuses_queues_no_strategy_could_take_from(b_holds: float, refused: bool) -> None:
    tree = flat()
    usage = usage_with(tree, {"b": {"gpu": b_holds}})
    reason = may_reclaim_from(
        usage, tree, per_queue(tree, FAIR_2_2), reclaimer(tree, "a", gpu=1), tree.index_of("b")
    )
    assert (reason is not None) == refused
