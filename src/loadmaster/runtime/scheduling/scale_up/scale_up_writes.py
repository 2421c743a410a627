"""Recording scale-up requests: one ``/scaleup/<id>`` object per template per cycle, with its audit
entry and the ``loadmaster_scale_up_requests_total{template}`` count.

A request names the template, the tier that chose it, how many replicas wait for it and a few of their
names, and the first one's explanation. The worker controller (outside this server) provisions the
node; once its agent registers, the next cycle places the replicas (LRS K1: "the next cycle retries").
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.runtime.plane.audit import AuditEntry, AuditLog
from loadmaster.runtime.plane.metrics import ControlPlaneMetrics
from loadmaster.runtime.plane.storage.store_layout import scale_up_key
from loadmaster.runtime.scheduling.model.model_entries import ReplicaState
from loadmaster.runtime.scheduling.model.scheduling_model import ClusterBuild
from loadmaster.runtime.scheduling.scale_up.scale_up import TemplateChoice, choose_templates
from loadmaster.runtime.scheduling.scale_up.scale_up_verdict import verdict_of
from loadmaster.store.codec import encode
from loadmaster.store.interface import Fence, Op, Put, Store

# A request lists this many replica names; ``count`` says how many there are in all.
MAX_NAMES_IN_REQUEST = 20


async def record_scale_ups(
    store: Store,
    audit: AuditLog,
    replicas: Sequence[ReplicaState],
    build: ClusterBuild,
    now: datetime,
    fence: Fence,
    metrics: ControlPlaneMetrics,
) -> tuple[list[dict[str, Any]], int]:
    """Write the requests; returns them as stored and the revision of the write (0 if none)."""
    tasks = [replica.as_task() for replica in replicas]
    choices = choose_templates(tasks, build.templates, build.cluster.config)
    by_template: dict[str, tuple[TemplateChoice, list[ReplicaState]]] = {}
    for replica, choice in zip(replicas, choices, strict=True):
        if choice is not None:
            by_template.setdefault(choice.template, (choice, []))[1].append(replica)
    records: list[dict[str, Any]] = []
    ops: list[Op] = []
    for template in sorted(by_template):
        choice, waiting = by_template[template]
        # Named after the number of the audit entry that records it: unique, and it links the two.
        request_id = f"{template}-{audit.last_seq + 1}"
        entry = AuditEntry(
            "scale_up",
            "scheduler",
            f"workertemplates/{template}",
            f"scale-up requested: {template} ({choice.tier}) for {len(waiting)} replica(s)",
            {"tier": choice.tier, "request": request_id},
        )
        ops.append(audit.entry_put(entry))
        record = {
            "id": request_id,
            "template": template,
            "tier": choice.tier,
            "count": len(waiting),
            "replicas": [r.name for r in waiting[:MAX_NAMES_IN_REQUEST]],
            "reason": f"{len(waiting)} replica(s) fit no existing node (first: {waiting[0].name})",
            "created_at": format_timestamp(now),
            "verdict": verdict_of(choice)["message"],  # what why and preview say of these replicas
            "state": "open",  # a provisioner closes it (runtime/requests/writes/scale_up_requests.py)
        }
        ops.append(Put(scale_up_key(request_id), encode(record), expect_revision=0))
        records.append(record)
    if not ops:
        return [], 0
    revision = await store.txn([*ops, audit.counter_put()], fence)
    for template in by_template:
        metrics.scale_up_requests.labels(template=template).inc()
    return records, revision
