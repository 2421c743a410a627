"""Drain changes -> store operations (``controllers/nodes/drain.py`` says when each is asked for).

* ``CompleteDrain``: the Node is deleted (CAS on the revision the rule saw: a node that changed meanwhile,
  say a drain restarted, is looked at again first).
* ``NoteDrainBlocked``: the ``Drain`` condition's message names the replicas that cannot move yet.
* ``TimeOutDrain``: ``status.drain`` becomes ``timed_out`` with the replicas that did not move, and the
  node's ``Drain`` condition says ``drain_timeout``; it stays cordoned.
"""

from __future__ import annotations

from datetime import datetime

from loadmaster.controllers.changes import CompleteDrain, NoteDrainBlocked, TimeOutDrain
from loadmaster.controllers.views import DRAIN_TIMED_OUT
from loadmaster.manifests import NODE
from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.runtime.plane.object_cache import ObjectCache
from loadmaster.runtime.plane.storage.store_layout import encode_object, object_key
from loadmaster.store.interface import Delete, Op, Put

DRAIN_CONDITION = "Drain"
DRAIN_TIMEOUT = "drain_timeout"


def drain_condition(status: str, reason: str, message: str, now: datetime) -> dict[str, str]:
    return {
        "type": DRAIN_CONDITION,
        "status": status,
        "reason": reason,
        "message": message,
        "last_transition_time": format_timestamp(now),
    }


def drain_ops(
    cache: ObjectCache, change: CompleteDrain | TimeOutDrain | NoteDrainBlocked, now: datetime
) -> list[Op] | None:
    cached = cache.get(NODE, change.node)
    if cached is None or cached.mod_revision != change.revision:
        return None
    key = object_key(NODE, change.node)
    if isinstance(change, CompleteDrain):
        return [Delete(key, expect_revision=change.revision)]
    status = dict(cached.obj.get("status", {}))
    if isinstance(change, NoteDrainBlocked):
        # The condition keeps its reason (Draining) and transition time: the drain goes on; the message
        # says what holds it up.
        status["conditions"] = [
            {**c, "message": change.message} if c.get("type") == DRAIN_CONDITION else c
            for c in status.get("conditions", [])
        ]
        return [Put(key, encode_object({**cached.obj, "status": status}), expect_revision=change.revision)]
    status["drain"] = {
        **status.get("drain", {}),
        "state": DRAIN_TIMED_OUT,
        "not_moved": list(change.not_moved),
    }
    condition = drain_condition("False", DRAIN_TIMEOUT, change.message, now)
    kept = [c for c in status.get("conditions", []) if c.get("type") != DRAIN_CONDITION]
    status["conditions"] = [*kept, condition]
    obj = {**cached.obj, "status": status}
    return [Put(key, encode_object(obj), expect_revision=change.revision)]
