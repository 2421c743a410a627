"""What a bearer token may do (plane/tokens.py says how tokens are made and stored).

The cache knows every token it has seen; one created a moment ago (``POST /api/tokens`` on this or
another server) may not have reached it yet, so a miss is looked up in the store before the token is
called unknown.
"""

from __future__ import annotations

from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.storage.store_layout import token_key
from loadmaster.runtime.plane.tokens import TokenGrant, grant_of, hash_token


async def grant_of_token(plane: ControlPlane, token: str) -> TokenGrant | None:
    """The role (and bound node) ``token`` was created with; None if no such token is stored."""
    token_hash = hash_token(token)
    known = plane.cache.tokens.get(token_hash)
    if known is not None:
        return known[0]
    entry = await plane.store.get(token_key(token_hash))
    return grant_of(entry.value) if entry is not None else None
