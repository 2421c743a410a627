"""One verdict per waiting replica, shared by the scheduler's scale-up path, ``why`` and the preview, so
the three never disagree (seed-capabilities (e) 11; issue 14, "Scale-up that a provisioner can use").

* ``fits_now``: some existing node passes every filter (it may still wait: quota, a gang, a rival);
* ``fits_after_scale_up``: no node can take it, a template can (``scale_up.choose_templates``' exact or
  smallest-fit tier): "fits after scale-up with template T";
* ``infeasible``: no node can take it and no template either (LRS's third tier still asks for the
  largest template, named in ``template``), or there are no templates at all.

A replica pinned to hosts (``hosts``, ``global``) is never a scale-up matter: a new node cannot help.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from loadmaster.core.model import SchedulerConfig, Task
from loadmaster.manifests import WorkerTemplate
from loadmaster.placement.diagnosis import Explanation
from loadmaster.runtime.scheduling.scale_up.scale_up import TemplateChoice, choose_templates

FITS_NOW = "fits_now"
FITS_AFTER_SCALE_UP = "fits_after_scale_up"
INFEASIBLE = "infeasible"
PINNED_PLACEMENTS = ("hosts", "global")


def is_unplaceable(explanation: Explanation, node_count: int, placement: object) -> bool:
    """Every node turned it away, and it is not pinned: scale-up material."""
    return node_count == sum(explanation.summary.values()) and placement not in PINNED_PLACEMENTS


def verdict_of(choice: TemplateChoice | None) -> dict[str, Any]:
    """The verdict of a replica no node can take, from the template the scale-up path would ask for."""
    if choice is None:
        return {"verdict": INFEASIBLE, "message": "no node can take it and there is no WorkerTemplate"}
    if choice.tier == "largest":
        return {
            "verdict": INFEASIBLE,
            "template": choice.template,
            "tier": choice.tier,
            "message": f"infeasible with any template (a scale-up asks for the largest, {choice.template})",
        }
    return {
        "verdict": FITS_AFTER_SCALE_UP,
        "template": choice.template,
        "tier": choice.tier,
        "message": f"fits after scale-up with template {choice.template}",
    }


def fits_now() -> dict[str, Any]:
    return {"verdict": FITS_NOW, "message": "an existing node can take it"}


def verdicts(
    tasks: Sequence[Task], templates: Sequence[WorkerTemplate], config: SchedulerConfig
) -> list[dict[str, Any]]:
    """The verdicts of replicas no node can take (pure: one engine pass over the templates)."""
    return [verdict_of(choice) for choice in choose_templates(tasks, templates, config)]
