"""Where the control plane keeps things in the store (see docs/store-layout.md).

::

    /objects/<plural>/<name>            one object (msgspec JSON, keys sorted), kinds of manifests.KINDS
    /counters/deployments/<dep>/<svc>   {"next_index": n}: the service's replica counter (never goes back)
    /counters/audit                     {"seq": n}: the last audit sequence number handed out
    /audit/<seq, 12 digits>             one audit entry
    /tokens/<sha256 of the token>       {"role", "created_at", "note"}
    /heartbeats/<node>                  {"at": time}: the node's latest heartbeat while it stays Ready
    /scaleup/<id>                       one scale-up request
    /ended/<plural>/<name>/<revision>   an ended object's last state (plane/ended_records.py)
    /members/<server id>                {"url", "started_at"}: how to reach a server (not_leader answers)
    /leader                             the leader key (runtime/plane/leader*.py)

An object's ``metadata.revision`` is not stored: it is the key's mod revision, added when read.
"""

from __future__ import annotations

from typing import Any

from loadmaster.manifests import KINDS, plural_of
from loadmaster.store.codec import decode, encode
from loadmaster.store.interface import Entry

OBJECTS = "/objects/"
COUNTERS = "/counters/"
SERVICE_COUNTERS = "/counters/deployments/"
AUDIT_COUNTER = "/counters/audit"
AUDIT = "/audit/"
TOKENS = "/tokens/"
HEARTBEATS = "/heartbeats/"
SCALE_UP = "/scaleup/"
MEMBERS = "/members/"
AUDIT_SEQ_DIGITS = 12

_KIND_OF_PLURAL = {plural_of(kind): kind for kind in KINDS}


def object_prefix(kind: str) -> str:
    return f"{OBJECTS}{plural_of(kind)}/"


def object_key(kind: str, name: str) -> str:
    return f"{OBJECTS}{plural_of(kind)}/{name}"


def parse_object_key(key: str) -> tuple[str, str] | None:
    """``/objects/replicas/shop-api-0`` -> ``("Replica", "shop-api-0")``; None for other keys."""
    if not key.startswith(OBJECTS):
        return None
    plural, _, name = key[len(OBJECTS) :].partition("/")
    kind = _KIND_OF_PLURAL.get(plural)
    return (kind, name) if kind is not None and name else None


def counter_key(deployment: str, service: str) -> str:
    return f"{SERVICE_COUNTERS}{deployment}/{service}"


def parse_counter_key(key: str) -> tuple[str, str] | None:
    if not key.startswith(SERVICE_COUNTERS):
        return None
    deployment, _, service = key[len(SERVICE_COUNTERS) :].partition("/")
    return (deployment, service) if deployment and service else None


def audit_key(seq: int) -> str:
    return f"{AUDIT}{seq:0{AUDIT_SEQ_DIGITS}d}"


def heartbeat_key(node: str) -> str:
    return f"{HEARTBEATS}{node}"


def token_key(token_hash: str) -> str:
    return f"{TOKENS}{token_hash}"


def scale_up_key(request_id: str) -> str:
    return f"{SCALE_UP}{request_id}"


def member_key(identity: str) -> str:
    return f"{MEMBERS}{identity}"


def encode_object(obj: dict[str, Any]) -> bytes:
    """The stored bytes of an object: everything but ``metadata.revision`` (the store knows it)."""
    metadata = obj.get("metadata")
    if isinstance(metadata, dict) and "revision" in metadata:
        obj = {**obj, "metadata": {k: v for k, v in metadata.items() if k != "revision"}}
    return encode(obj)


def decode_object(value: bytes, mod_revision: int) -> dict[str, Any]:
    """A stored object with ``metadata.revision`` = the key's mod revision."""
    obj = decode(value)
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        metadata = obj["metadata"] = {}
    metadata["revision"] = mod_revision
    return obj


def object_of(entry: Entry) -> dict[str, Any]:
    return decode_object(entry.value, entry.mod_revision)
