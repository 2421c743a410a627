"""An in-memory stand-in for the agent's side of docs/api.md, served through httpx's mock transport.

It keeps nodes and replicas in dicts, enforces the phase table on status reports (409 otherwise), can
refuse connections for the first N requests (a server that is still starting), can forget nodes (a
server restarted on a fresh data dir) and answers 403 to ``GET /api/replicas`` like an agent token gets.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import httpx

from loadmaster.manifests import can_transition


class FakeControlPlane:
    def __init__(self, unreachable_requests: int = 0, token_role: str = "agent") -> None:
        self.unreachable_requests = unreachable_requests
        self.token_role = token_role
        self.nodes: dict[str, dict[str, Any]] = {}
        self.replicas: dict[str, dict[str, Any]] = {}
        self.registrations: Counter[str] = Counter()
        self.heartbeats: Counter[str] = Counter()
        self.reports: list[tuple[str, str]] = []
        self.refuse_registration_with: int | None = None
        # Watch mode: events the next watch stream sends (then the stream ends), and replicas that only
        # such an event reveals (a list does not show them), so a test can tell the two paths apart.
        self.watch_events: list[dict[str, Any]] = []
        self.hidden_from_list: set[str] = set()
        self.watches = 0

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def assign(self, name: str, node: str, phase: str, incarnation: str | None = None) -> None:
        self.replicas[name] = {
            "kind": "Replica",
            "metadata": {"name": name},
            "spec": {"incarnation": incarnation or f"{name}@1"},
            "status": {"phase": phase, "node_ref": node},
        }

    def phase_of(self, name: str) -> str:
        return str(self.replicas[name]["status"]["phase"])

    def handle(self, request: httpx.Request) -> httpx.Response:
        if self.unreachable_requests > 0:
            self.unreachable_requests -= 1
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        parts = request.url.path.strip("/").split("/")
        body = json.loads(request.content) if request.content else {}
        match request.method, parts:
            case "POST", ["api", "nodes", "register"]:
                if self.refuse_registration_with is not None:
                    return _error(self.refuse_registration_with, "unauthorized", "unknown token")
                self.nodes[body["name"]] = body
                self.registrations[body["name"]] += 1
                return httpx.Response(200, json={"metadata": {"name": body["name"]}})
            case "POST", ["api", "nodes", node, "heartbeat"]:
                if node not in self.nodes:
                    return _error(404, "not_found", f"nodes/{node} not found")
                self.heartbeats[node] += 1
                return httpx.Response(200, json={"metadata": {"name": node}})
            case "GET", ["api", "nodes", node, "replicas"]:
                items = [r for r in self.replicas.values() if r["status"].get("node_ref") == node]
                return httpx.Response(200, json={"items": items})
            case "GET", ["api", "replicas"]:
                if self.token_role == "agent":
                    return _error(403, "forbidden", "role agent may not list replicas")
                items = [r for name, r in self.replicas.items() if name not in self.hidden_from_list]
                return httpx.Response(200, json={"items": items, "revision": 1})
            case "GET", ["api", "watch"]:
                return self._watch(request)
            case "PUT", ["api", "replicas", name, "status"]:
                return self._report(name, body["phase"], body.get("incarnation"))
        return _error(404, "not_found", f"no route {request.method} {request.url.path}")

    def _watch(self, request: httpx.Request) -> httpx.Response:
        self.watches += 1
        assert request.url.params["kinds"] == "replicas"
        events, self.watch_events = self.watch_events, []
        text = ": keep-alive\n\n" + "".join(f"event: put\ndata: {json.dumps(event)}\n\n" for event in events)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=text.encode())

    def _report(self, name: str, phase: str, incarnation: str | None) -> httpx.Response:
        replica = self.replicas.get(name)
        if replica is None:
            return _error(404, "not_found", f"replicas/{name} not found")
        if incarnation is not None and incarnation != replica["spec"]["incarnation"]:
            return _error(409, "conflict", f"incarnation {incarnation} is no longer assigned")
        if not can_transition(replica["status"]["phase"], phase):
            return _error(409, "conflict", f"{replica['status']['phase']} -> {phase} is not allowed")
        replica["status"]["phase"] = phase
        self.reports.append((name, phase))
        return httpx.Response(200, json=replica)


def _error(status: int, code: str, message: str) -> httpx.Response:
    return httpx.Response(status, json={"error": code, "message": message})
