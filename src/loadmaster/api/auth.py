"""Bearer-token auth: ``Authorization: Bearer <token>``; the token's SHA-256 names its role.

Missing or unknown token: 401 ``unauthorized``. A known token whose role may not call the route:
403 ``forbidden``, naming the role it has and the roles that may. ``admin`` may call everything.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fastapi import Request

from loadmaster.api.errors import ApiError
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.tokens import ADMIN, AGENT, USER
from loadmaster.runtime.requests.token_lookup import role_of_token

USERS = frozenset({ADMIN, USER})
AGENTS = frozenset({ADMIN, AGENT})
ADMINS = frozenset({ADMIN})


@dataclass(frozen=True, slots=True)
class Principal:
    role: str


def plane_of(request: Request) -> ControlPlane:
    plane: ControlPlane = request.app.state.plane
    return plane


async def role_of(request: Request) -> str:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "unauthorized", "missing bearer token: send 'Authorization: Bearer <token>'")
    role = await role_of_token(plane_of(request), token.strip())
    if role is None:
        raise ApiError(401, "unauthorized", "unknown token")
    return role


def require(roles: frozenset[str]) -> Callable[[Request], Awaitable[Principal]]:
    async def check(request: Request) -> Principal:
        role = await role_of(request)
        if role not in roles:
            allowed = " or ".join(sorted(roles))
            raise ApiError(403, "forbidden", f"a {role} token may not call this; it needs {allowed}")
        return Principal(role)

    return check
