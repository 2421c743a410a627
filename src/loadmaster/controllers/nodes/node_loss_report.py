"""A node's node-loss timeline as an operator reads it (``describe node``, ``why``): when it went
NotReady, the probe's answer, the policy, what was moved, and the exact time of the next action, so
nobody has to guess what the control plane will do next (seed-capabilities (e) 15).

The times come from ``controllers/nodes/node_loss.py``'s own stages (``stage_of``), so the report and the
leader never disagree.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from loadmaster.controllers.nodes.node_loss import AGENT_DOWN, NodeLossSettings, stage_of
from loadmaster.controllers.views import NodeView

_ANSWER_TEXT = {AGENT_DOWN: "host up, agent down", "host_down": "host down (no answer)"}


def _stamp(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")


def node_loss_report(
    node: NodeView, settings: NodeLossSettings, now: datetime, moved: list[str] | None = None
) -> dict[str, Any] | None:
    """The node's node-loss timeline (None: it is not NotReady, so nothing is under way)."""
    if node.state != "NotReady" or node.not_ready_at is None:
        return None
    stage = stage_of(node, now, settings, None)
    probe_due = node.not_ready_at + timedelta(seconds=settings.wait_s)
    steps = [
        {"at": _stamp(node.not_ready_at), "what": "NotReady (heartbeat missing): the node-loss clock starts"}
    ]
    if node.probe is not None and node.probed_at is not None:
        steps.append(
            {"at": _stamp(node.probed_at), "what": f"probe: {_ANSWER_TEXT.get(node.probe, node.probe)}"}
        )
    if node.lost_at is not None:
        what = f"lost: policy {settings.policy} acted; moved {', '.join(moved) if moved else 'nothing'}"
        steps.append({"at": _stamp(node.lost_at), "what": what})
        next_action = None
    elif node.probe is None:
        timeout = settings.probe_timeout_s
        at = probe_due if stage.due is not None else now
        next_action = {
            "at": _stamp(at),
            "action": "probe",
            "what": f"probe the host (at most {timeout:g}s; no answer = host down, then policy "
            f"{settings.policy} acts at once; host up = wait {settings.agent_down_wait_s:g}s more)",
        }
    else:
        at = stage.due or now
        next_action = {
            "at": _stamp(at),
            "action": "act",
            "what": f"policy {settings.policy} acts unless the node is Ready again",
        }
    return {
        "node": node.name,
        "state": node.state,
        "not_ready_at": _stamp(node.not_ready_at),
        "policy": settings.policy,
        "node_loss_wait_s": settings.wait_s,
        "agent_down_wait_s": settings.agent_down_wait_s,
        "probe": None if node.probe is None else {"answer": node.probe, "at": _stamp(node.probed_at)},
        "lost_at": _stamp(node.lost_at),
        "moved": moved or [],
        "steps": steps,
        "next": next_action,
    }
