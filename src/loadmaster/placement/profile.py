"""Profiles: named sets of scorers and weights, validated when built.

A profile's total for node n is ``floor(sum_i w_i * s_i(n))`` computed exactly in integers: weights are
fractions, scaled to a common denominator D, so ``total = (sum_i (w_i*D) * s_i) // D``. With ``lablet``
(0.6 binpack + 0.2 locality + 0.2 load balance + 1 image pull) this is the spec's truncated
``(6B + 2L + 2N) / 10`` plus the image-pull score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

from loadmaster.core.model import PROFILES, SchedulerConfig
from loadmaster.placement.extension_points import Scorer
from loadmaster.placement.registry import SCORERS, RegistryError

# The spec's default weights (scenario-format "Scoring"): strategy 1, availability 2, PreferNoSchedule
# 3, preferred affinity 2, soft topology spread 2, image pull 1.
_DEFAULT_EXTRA = {
    "node_availability": Fraction(2), "prefer_no_schedule": Fraction(3), "preferred_affinity": Fraction(2),
    "soft_topology_spread": Fraction(2), "image_pull": Fraction(1),
}  # fmt: skip
_LABLET = {"binpack": Fraction(6, 10), "locality": Fraction(2, 10), "load_balance": Fraction(2, 10),
           "image_pull": Fraction(1)}  # fmt: skip
# For GPU clusters: the default's extra scores (availability, taints, affinity, spread, image) with, in
# place of a strategy, gpu_fragmentation (x2: FGD, place where the workload's GPU shapes lose least usable
# capacity), gpu_headroom (x1: keep a GPU node's cpu and memory from running out ahead of its GPUs) and
# gpu_midfill_spread (x1/8, only while the cluster is under 50 % and at least 35 % free: break a few whole
# nodes, so late big tasks wait rather than many small ones) and gpu_leftover (x1/5: a share should not
# leave a sliver on its device that no frequent share fits). resource_type (x10) outweighs what the
# others can differ by, so CPU-only work goes to CPU nodes whenever one fits. Weights chosen on the
# Alibaba openb traces (bench/placement.py, docs/decisions.md).
_GPU_PACK = {"gpu_fragmentation": Fraction(2), "gpu_headroom": Fraction(1),
             "gpu_midfill_spread": Fraction(1, 8), "gpu_leftover": Fraction(1, 5), **_DEFAULT_EXTRA,
             "resource_type": Fraction(10)}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    scorers: tuple[tuple[Scorer, int], ...]  # (scorer, integer weight w*D)
    denominator: int

    @classmethod
    def build(cls, name: str, weights: dict[str, Fraction]) -> Profile:
        unknown = sorted(set(weights) - set(SCORERS))
        if unknown:
            raise RegistryError(f"profile {name}: unknown scorer {', '.join(unknown)}")
        chosen = [(SCORERS[n], w) for n, w in sorted(weights.items()) if w != 0]
        lexicographic = any(s.lexicographic for s, _ in chosen)
        if lexicographic and len(chosen) != 1:
            raise RegistryError(f"profile {name}: an order scorer must be the profile's only scorer")
        if any(w < 0 for _, w in chosen):
            raise RegistryError(f"profile {name}: weights must be >= 0")
        denominator = math.lcm(*(w.denominator for _, w in chosen)) if chosen else 1
        scaled = tuple((s, int(w * denominator)) for s, w in chosen)
        return cls(name, scaled, denominator)


def profile_for(config: SchedulerConfig) -> Profile:
    """The profile a scenario's config asks for (``profile`` and, for ``default``, ``strategy``)."""
    return profile_named(config.profile, config)


def profile_named(name: str, config: SchedulerConfig) -> Profile:
    """A profile by name; ``default`` takes its strategy from the config."""
    return _profile(name, config.strategy)


@cache  # profiles are immutable and their scorers stateless: one build per (name, strategy) and process
def _profile(name: str, strategy: str) -> Profile:
    if name == "default":
        return Profile.build("default", {strategy: Fraction(1), **_DEFAULT_EXTRA})
    if name == "lablet":
        return Profile.build("lablet", _LABLET)
    if name == "gpu_pack":
        return Profile.build("gpu_pack", _GPU_PACK)
    if name == "first_fit":
        return Profile.build("first_fit", {})
    if name in ("least_instances", "service_spread", "service_pack"):
        return Profile.build(name, {name: Fraction(1)})
    raise RegistryError(f"unknown profile {name!r} (known: {', '.join(PROFILES)})")
