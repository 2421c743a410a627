"""A leader process frozen with SIGSTOP past its lease: on waking it is fenced out and knows it."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from loadmaster.runtime.plane.leadership.leader_etcd import EtcdLeaderElector
from loadmaster.store.etcd import EtcdStore
from loadmaster.testing.etcd_cluster import EtcdCluster

pytestmark = [pytest.mark.anyio, pytest.mark.etcd]

CHILD = Path(__file__).with_name("elector_child.py")
TTL_S = 2
TAKEOVER_SLACK_S = 2.0


async def read_line(child: asyncio.subprocess.Process, timeout_s: float) -> str:
    assert child.stdout is not None
    line = await asyncio.wait_for(child.stdout.readline(), timeout_s)
    if not line:
        raise AssertionError(f"the elector child exited with {await child.wait()} before answering")
    return line.decode().strip()


async def send(child: asyncio.subprocess.Process, command: str) -> None:
    assert child.stdin is not None
    child.stdin.write(f"{command}\n".encode())
    await child.stdin.drain()


async def test_a_leader_frozen_past_its_ttl_is_fenced_out_and_says_it_no_longer_leads(
    etcd_server: EtcdCluster, etcd_prefix: str
) -> None:
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        str(CHILD),
        etcd_server.url,
        etcd_prefix,
        str(TTL_S),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    store = await EtcdStore.connect(etcd_server.url, prefix=etcd_prefix)
    try:
        assert (await read_line(child, 15)).startswith("LEADER ")
        await send(child, "write")
        assert (await read_line(child, 5)).startswith("WROTE ")  # while it leads, its writes land

        standby = EtcdLeaderElector(store, "standby", ttl_s=TTL_S)
        takeover = asyncio.create_task(standby.campaign())
        os.kill(child.pid, signal.SIGSTOP)
        frozen_at = time.monotonic()
        await asyncio.wait_for(takeover, TTL_S + TAKEOVER_SLACK_S)
        assert time.monotonic() - frozen_at <= TTL_S + TAKEOVER_SLACK_S
        os.kill(child.pid, signal.SIGCONT)

        await send(child, "write")
        lines = [await read_line(child, 5)]
        while not lines[-1].startswith(("FENCED", "WROTE")):
            lines.append(await read_line(child, 5))
        assert lines[-1] == "FENCED leader=False"
        while not any(line.startswith("LOST ") for line in lines):
            lines.append(await read_line(child, 2))
        # Whichever it notices first on waking: its own lease deadline, or the delete of its key.
        lost = next(line for line in lines if line.startswith("LOST "))
        assert lost.startswith(("LOST lease expired", "LOST leader key deleted")), lost

        entry = await store.get("/work")
        assert entry is not None and entry.value == b"by the child"  # the write from before the freeze
        assert await store.put("/work", b"by the standby", fence=standby.fence) > entry.mod_revision
        assert await standby.leader_id() == "standby"
        await standby.resign()
        await send(child, "exit")
        assert await asyncio.wait_for(child.wait(), 5) == 0
    finally:
        if child.returncode is None:
            os.kill(child.pid, signal.SIGCONT)
            child.kill()
            await child.wait()
        await store.close()
