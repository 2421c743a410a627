"""A leader in a process of its own, driven over stdin/stdout by test_leader_pause.py.

Usage: python elector_child.py ETCD_URL PREFIX TTL_S

Prints ``LEADER <create_revision>`` once it leads, ``LOST <reason>`` when on_lost fires, and for each
``write`` line on stdin tries a fenced write and prints ``WROTE <revision> leader=<is_leader>`` or
``FENCED leader=<is_leader>`` (``is_leader`` as read just before the write). ``exit`` ends it.
"""

from __future__ import annotations

import asyncio
import sys

from loadmaster.runtime.plane.leadership.leader_etcd import EtcdLeaderElector
from loadmaster.store.etcd import EtcdStore
from loadmaster.store.interface import FencedError


def say(line: str) -> None:
    print(line, flush=True)


async def serve(url: str, prefix: str, ttl_s: int) -> None:
    store = await EtcdStore.connect(url, prefix=prefix)
    elector = EtcdLeaderElector(store, "child", ttl_s=ttl_s, on_lost=lambda reason: say(f"LOST {reason}"))
    await elector.campaign()
    keepalive = asyncio.create_task(elector.run())
    say(f"LEADER {elector.fence.create_revision}")
    stdin = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    while command := (await stdin.readline()).decode().strip():
        if command == "exit":
            break
        if command == "write":
            leader = elector.is_leader
            try:
                revision = await store.put("/work", b"by the child", fence=elector.fence)
                say(f"WROTE {revision} leader={leader}")
            except FencedError:
                say(f"FENCED leader={leader}")
    keepalive.cancel()
    await asyncio.gather(keepalive, return_exceptions=True)
    await store.close()


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1], sys.argv[2], int(sys.argv[3])))
