"""Bearer tokens: random secrets shown once, stored only as their SHA-256, each with one role.

Roles (docs/api.md): ``admin`` may do everything; ``user`` applies, reads and deletes workloads and
queues, previews, asks why, watches and reads the audit log; ``agent`` registers nodes, heartbeats,
reads its node's replicas and reports their status; an agent token created with a ``node`` is bound
to that node: it may act for that node and the replicas placed on it only (a token stored without one,
as every token was before, acts for any node). On first start the server writes an admin token
to ``<data-dir>/admin-token`` with mode 0600 (readable by the server's user only).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.runtime.plane.clock import Clock
from loadmaster.runtime.plane.storage.store_layout import token_key
from loadmaster.store.codec import decode, encode
from loadmaster.store.interface import ConflictError, Put, Store
from loadmaster.store.private_files import private_dir

ADMIN, USER, AGENT = "admin", "user", "agent"
ROLES = (ADMIN, USER, AGENT)
ADMIN_TOKEN_FILE = "admin-token"
_TOKEN_PREFIX = "lm_"


def new_token() -> str:
    """256 random bits, URL-safe; the prefix makes a leaked token easy to grep for."""
    return _TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class TokenGrant:
    """What a token may do: its role, and for a bound agent token the one node it acts for."""

    role: str
    node: str | None = None

    def may_act_for(self, node: str | None) -> bool:
        """Whether this token may act for ``node`` (a node's name, or the node a replica is placed on)."""
        return self.role != AGENT or self.node is None or self.node == node


def grant_of(value: bytes) -> TokenGrant:
    """The grant of a stored token record (``node`` absent: unbound)."""
    record = decode(value)
    node = record.get("node")
    return TokenGrant(str(record["role"]), str(node) if node is not None else None)


def token_put(token: str, role: str, clock: Clock, note: str, node: str | None = None) -> Put:
    """The put that registers ``token`` (must not exist yet), bound to ``node`` when given (agents only)."""
    if role not in ROLES:
        raise ValueError(f"role: expected one of {', '.join(ROLES)}, got {role!r}")
    if node is not None and role != AGENT:
        raise ValueError(f"node: only an agent token is bound to a node, not a {role} token")
    record = {"role": role, "created_at": format_timestamp(clock.now()), "note": note}
    if node is not None:
        record["node"] = node
    return Put(token_key(hash_token(token)), encode(record), expect_revision=0)


async def ensure_admin_token(store: Store, data_dir: Path, clock: Clock) -> tuple[Path, bool]:
    """The admin token file, created (0600) if missing; its token is registered in the store.

    Returns the file's path and whether it was created now. A file kept from an earlier run is
    registered again if the store does not know it (a fresh memory store, a new etcd prefix).
    """
    path = data_dir / ADMIN_TOKEN_FILE
    private_dir(data_dir)
    created = False
    try:
        token = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        token = new_token()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(token + "\n")
        created = True
    if not token:
        raise ValueError(f"{path} is empty: delete it and restart to get a new admin token")
    put = token_put(token, ADMIN, clock, f"from {path}")
    with contextlib.suppress(ConflictError):  # already registered: every start after the first
        await store.put(put.key, put.value, expect_revision=0)
    return path, created
