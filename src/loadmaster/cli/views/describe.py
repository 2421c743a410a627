"""``describe``'s page for one object: identity, spec and status as indented YAML, the conditions as a
table (newest last), and the related replicas; a replica's page ends with its explanation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import yaml
from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from loadmaster.cli.views.age import age
from loadmaster.cli.views.columns import key_values, name_of, spec_of, status_of
from loadmaster.cli.views.rollout import revisions_line, rollout_line
from loadmaster.cli.views.usage import replica_node, replica_phase
from loadmaster.manifests.session_states import session_state

_INDENT = "  "
# Status fields with a line of their own (conditions: a table; a deployment's revisions and rollout).
_SHOWN_APART = frozenset({"conditions", "revisions", "rollout", "applied_revision", "previous_revision"})


def _yaml_block(value: Any) -> Text:
    text = yaml.safe_dump(value, sort_keys=False, default_flow_style=False, allow_unicode=True).rstrip("\n")
    return Text("\n".join(_INDENT + line for line in text.splitlines()))


def _field(label: str, value: object) -> Text:
    return Text.assemble((f"{label + ':':<12}", "bold"), str(value))


def conditions_table(conditions: Sequence[Mapping[str, Any]], now: datetime) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for header in ("TYPE", "STATUS", "REASON", "AGE", "MESSAGE"):
        table.add_column(header, no_wrap=header != "MESSAGE")
    for condition in conditions:
        table.add_row(
            str(condition.get("type", "")),
            str(condition.get("status", "-")),
            str(condition.get("reason", "-")),
            age(condition.get("last_transition_time"), now),
            str(condition.get("message", "")),
        )
    return table


def replicas_table(replicas: Sequence[Mapping[str, Any]], now: datetime) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for header in ("NAME", "PHASE", "NODE", "AGE"):
        table.add_column(header, no_wrap=True)
    for replica in replicas:
        created = (replica.get("metadata") or {}).get("created_at")
        table.add_row(
            name_of(replica), replica_phase(replica), replica_node(replica) or "-", age(created, now)
        )
    return table


def state_line(status: Mapping[str, Any]) -> str:
    """The phase in the LRS session states' vocabulary (docs/session-states.md) and who set it."""
    state = session_state(status)
    phase = status.get("phase", "Pending")
    lrs = f"{state.lrs} (LRS)" if state.lrs else "no LRS equivalent"
    return f"{phase}: {lrs}, set by {state.set_by}"


def describe_view(
    obj: Mapping[str, Any],
    now: datetime,
    related: Sequence[Mapping[str, Any]] = (),
    explanation: RenderableType | None = None,
    node_loss: RenderableType | None = None,
) -> RenderableType:
    metadata = obj.get("metadata") or {}
    created = metadata.get("created_at")
    parts: list[RenderableType] = [
        _field("Name", name_of(obj)),
        _field("Kind", obj.get("kind", "?")),
        _field("Labels", key_values(metadata.get("labels"))),
        _field("Created", f"{created} ({age(created, now)} ago)" if created else "-"),
        _field("Revision", metadata.get("revision", "-")),
    ]
    if spec_of(obj):
        parts += [Text("Spec:", style="bold"), _yaml_block(dict(spec_of(obj)))]
    status = {key: value for key, value in status_of(obj).items() if key not in _SHOWN_APART}
    if obj.get("kind") == "Deployment":
        # The kept revisions are whole specs: one line says which there are; the rollout gets its own line.
        parts += [
            _field("Revisions", revisions_line(status_of(obj))),
            _field("Rollout", rollout_line(status_of(obj).get("rollout"))),
        ]
    if obj.get("kind") == "Replica":
        parts.append(_field("State", state_line(status_of(obj))))
    if status:
        parts += [Text("Status:", style="bold"), _yaml_block(status)]
    conditions = status_of(obj).get("conditions") or []
    parts.append(Text("Conditions:", style="bold"))
    parts.append(conditions_table(conditions, now) if conditions else Text(f"{_INDENT}none"))
    if node_loss is not None:
        parts += [Text("Node loss:", style="bold"), node_loss]
    if related:
        parts += [Text(f"Replicas ({len(related)}):", style="bold"), replicas_table(related, now)]
    if explanation is not None:
        parts += [Text("Explanation:", style="bold"), explanation]
    return Group(*parts)
