"""Bearer-token auth: ``Authorization: Bearer <token>``; the token's SHA-256 names its role.

Missing or unknown token: 401 ``unauthorized``. A known token whose role may not call the route:
403 ``forbidden``, naming the role it has and the roles that may. ``admin`` may call everything. An
agent token bound to a node (``token create --role agent --node N``) acts for that node only:
``Principal.check_acts_for`` refuses another node's name with 403, naming both nodes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fastapi import Request

from loadmaster.api.errors import ApiError
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.tokens import ADMIN, AGENT, USER, TokenGrant
from loadmaster.runtime.requests.reads.token_lookup import grant_of_token

USERS = frozenset({ADMIN, USER})
AGENTS = frozenset({ADMIN, AGENT})
ADMINS = frozenset({ADMIN})


@dataclass(frozen=True, slots=True)
class Principal:
    role: str
    node: str | None = None  # the node a bound agent token acts for

    @property
    def grant(self) -> TokenGrant:
        return TokenGrant(self.role, self.node)

    def check_acts_for(self, node: object) -> None:
        """403 unless this caller may act for ``node`` (a node's name as the request gives it)."""
        if not self.grant.may_act_for(node if isinstance(node, str) else None):
            raise ApiError(
                403,
                "forbidden",
                f"this agent token is bound to nodes/{self.node}; it may not act for nodes/{node}",
            )


def plane_of(request: Request) -> ControlPlane:
    plane: ControlPlane = request.app.state.plane
    return plane


async def grant_of(request: Request) -> TokenGrant:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "unauthorized", "missing bearer token: send 'Authorization: Bearer <token>'")
    grant = await grant_of_token(plane_of(request), token.strip())
    if grant is None:
        raise ApiError(401, "unauthorized", "unknown token")
    return grant


def require(roles: frozenset[str]) -> Callable[[Request], Awaitable[Principal]]:
    async def check(request: Request) -> Principal:
        grant = await grant_of(request)
        if grant.role not in roles:
            allowed = " or ".join(sorted(roles))
            raise ApiError(403, "forbidden", f"a {grant.role} token may not call this; it needs {allowed}")
        return Principal(grant.role, grant.node)

    return check
