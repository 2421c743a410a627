"""Profiles are validated when built: known scorers, weights >= 0, and an order scorer stands alone."""

from __future__ import annotations

from fractions import Fraction

import pytest

from loadmaster.placement.profile import Profile
from loadmaster.placement.registry import SCORERS, RegistryError


def test_the_order_scorers_are_exactly_the_lexicographic_ones() -> None:
    assert sorted(name for name, scorer in SCORERS.items() if scorer.lexicographic) == [
        "least_instances",
        "service_pack",
        "service_spread",
    ]


@pytest.mark.parametrize("order_scorer", ["least_instances", "service_spread", "service_pack"])
def test_an_order_scorer_alone_makes_a_profile(order_scorer: str) -> None:
    profile = Profile.build("alone", {order_scorer: Fraction(1)})
    assert [scorer.name for scorer, _ in profile.scorers] == [order_scorer]


@pytest.mark.parametrize("order_scorer", ["least_instances", "service_spread", "service_pack"])
def test_an_order_scorer_weighed_against_another_scorer_is_refused(order_scorer: str) -> None:
    with pytest.raises(RegistryError, match="an order scorer must be the profile's only scorer"):
        Profile.build("mixed", {order_scorer: Fraction(1), "binpack": Fraction(1)})


def test_scores_of_0_to_100_mix_by_weight() -> None:
    profile = Profile.build("mixed", {"binpack": Fraction(1, 2), "image_pull": Fraction(1, 3)})
    assert {scorer.name: weight for scorer, weight in profile.scorers} == {"binpack": 3, "image_pull": 2}
    assert profile.denominator == 6
