"""``kill -9`` a real SQLite server while clients apply large multi-document files, restart it, and check
every apply against what the API promises (docs/api.md): an acknowledged apply is stored whole, and
one the server died under is stored as whole transactions in document order (its first
``OBJECTS_PER_TXN``-object batches, possibly none or all), never a torn transaction; applying it again
completes it. The answer says how many transactions an apply took."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from loadmaster.runtime.requests.writes.object_writes import OBJECTS_PER_TXN
from tests.e2e.processes import Server, wait_for

ROUNDS = 3
CLIENTS = 2
QUEUES_PER_APPLY = 3 * OBJECTS_PER_TXN + 11  # four transactions


def queues(prefix: str) -> list[dict[str, Any]]:
    return [
        {
            "api_version": "loadmaster/v1",
            "kind": "Queue",
            "metadata": {"name": f"{prefix}-{i:04d}"},
            "spec": {},
        }
        for i in range(QUEUES_PER_APPLY)
    ]


@dataclass
class ApplyLog:
    acknowledged: dict[str, int] = field(default_factory=dict)  # prefix -> transactions it answered
    unacknowledged: list[str] = field(default_factory=list)  # the server died under these
    lock: threading.Lock = field(default_factory=threading.Lock)

    def acks(self) -> int:
        with self.lock:
            return len(self.acknowledged)


def apply_until_the_server_dies(server: Server, client_id: str, log: ApplyLog) -> None:
    with server.client() as client:
        for number in range(1_000):
            prefix = f"{client_id}-{number:03d}"
            try:
                response = client.post("/api/apply", json={"items": queues(prefix)})
            except httpx.TransportError:
                with log.lock:
                    log.unacknowledged.append(prefix)
                return
            assert response.status_code == 200, response.text
            with log.lock:
                log.acknowledged[prefix] = response.json()["transactions"]


def stored_queue_names(server: Server) -> set[str]:
    with server.client() as client:
        items = client.get("/api/queues").raise_for_status().json()["items"]
    return {item["metadata"]["name"] for item in items}


def kill_mid_apply(server: Server, round_number: int, log: ApplyLog) -> None:
    threads = [
        threading.Thread(target=apply_until_the_server_dies, args=(server, f"r{round_number}c{c}", log))
        for c in range(CLIENTS)
    ]
    for thread in threads:
        thread.start()
    acks_before = log.acks()
    wait_for(lambda: log.acks() >= acks_before + CLIENTS, "a few applies acknowledged", timeout_s=60)
    assert server.process is not None
    server.process.kill9()
    for thread in threads:
        thread.join(30)
        assert not thread.is_alive()


def test_applies_killed_mid_request_keep_whole_transactions_and_acknowledged_applies_whole(
    tmp_path: Path,
) -> None:
    log = ApplyLog()
    server = Server(tmp_path / "data").start()
    try:
        for round_number in range(ROUNDS):
            kill_mid_apply(server, round_number, log)
            server = Server(tmp_path / "data").start()  # same SQLite dir, new process
        stored = stored_queue_names(server)

        for prefix, transactions in log.acknowledged.items():
            names = [doc["metadata"]["name"] for doc in queues(prefix)]
            assert set(names) <= stored, f"acknowledged apply {prefix} is not all stored"
            assert transactions == math.ceil(QUEUES_PER_APPLY / OBJECTS_PER_TXN)
        assert len(log.unacknowledged) == ROUNDS * CLIENTS
        for prefix in log.unacknowledged:
            names = [doc["metadata"]["name"] for doc in queues(prefix)]
            kept = [name in stored for name in names]
            count = sum(kept)
            assert kept == [True] * count + [False] * (len(names) - count), f"{prefix}: not a prefix"
            assert count % OBJECTS_PER_TXN == 0 or count == len(names), f"{prefix}: a torn transaction"
        with server.client() as client:  # applying again completes what the kill interrupted
            for prefix in log.unacknowledged:
                client.post("/api/apply", json={"items": queues(prefix)}).raise_for_status()
        stored = stored_queue_names(server)
        for prefix in log.unacknowledged:
            assert {doc["metadata"]["name"] for doc in queues(prefix)} <= stored
        print(f"\n{len(log.acknowledged)} applies acknowledged, {len(log.unacknowledged)} killed mid-request")
    finally:
        server.stop()
