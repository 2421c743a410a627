"""Real etcd servers for tests and benchmarks: Debian's ``etcd`` binary on free 127.0.0.1 ports.

``EtcdCluster(size=1)`` or ``EtcdCluster(size=3)`` starts the members (each with its own ports and
data directory under one temporary directory), waits until every member reports healthy (which in
etcd 3.4 means it has a raft leader), and is always cleaned up:

* ``close()`` (or leaving the ``with`` block) kills every member and deletes the directory;
* an ``atexit`` hook does the same for clusters a crashed test never closed;
* when util-linux ``setpriv`` is present, each member is started with ``--pdeathsig KILL``, so the
  kernel kills it if the starting process dies without running Python's exit hooks (SIGKILL, or
  pytest-timeout's ``os._exit``). The death signal follows the *thread* that started the member:
  start clusters from a thread that outlives them (the main thread, as pytest fixtures do).

Members can be stopped, killed, paused (SIGSTOP), resumed and restarted on the same ports and data,
which is what the fault tests need. Nothing here talks to etcd except its ``/health`` endpoint.
"""

from __future__ import annotations

import atexit
import json
import shutil
import socket
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from loadmaster.testing.etcd_member import EtcdMember, EtcdStartError

__all__ = ["EtcdCluster", "EtcdMember", "EtcdNotInstalledError", "EtcdStartError"]

HOST = "127.0.0.1"
_START_ATTEMPTS = 3  # a free port can be taken by someone else between probing and etcd's bind
_LIVE: set[EtcdCluster] = set()


class EtcdNotInstalledError(RuntimeError):
    """The ``etcd`` binary is not on PATH (install Debian's etcd-server: scripts/install-etcd)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def etcd_binary() -> str:
    found = shutil.which("etcd")
    if found is None:
        raise EtcdNotInstalledError("etcd is not on PATH: run `bash scripts/install-etcd` (etcd-server)")
    return found


class EtcdCluster:
    """``size`` etcd members on 127.0.0.1; started by ``start()`` or by entering the ``with`` block."""

    def __init__(
        self,
        size: int = 1,
        *,
        heartbeat_ms: int | None = None,
        election_timeout_ms: int | None = None,
        start_timeout_s: float = 20.0,
    ) -> None:
        if size < 1:
            raise ValueError(f"size: a cluster needs at least one member, got {size}")
        self.size = size
        # A lone member has no peer to lose touch with, and it waits one election timeout before it
        # elects itself: 200 ms starts it in ~0.06 s instead of ~0.7 s. Several members keep etcd's
        # defaults, so a busy 2-core test machine does not trigger spurious elections.
        default_heartbeat_ms, default_election_ms = (20, 200) if size == 1 else (100, 1000)
        self.heartbeat_ms = heartbeat_ms or default_heartbeat_ms
        self.election_timeout_ms = election_timeout_ms or default_election_ms
        self.start_timeout_s = start_timeout_s
        self.members: list[EtcdMember] = []
        self._base_dir: Path | None = None

    def __enter__(self) -> EtcdCluster:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def start(self) -> EtcdCluster:
        binary = etcd_binary()
        _LIVE.add(self)
        for attempt in range(1, _START_ATTEMPTS + 1):
            self._create_members(binary)
            try:
                for member in self.members:
                    member.start()
                for member in self.members:
                    member.wait_healthy(self.start_timeout_s)
                return self
            except EtcdStartError:
                self._remove_members()
                if attempt == _START_ATTEMPTS:
                    self.close()
                    raise
        raise AssertionError("unreachable: the last attempt either returns or raises")

    def _create_members(self, binary: str) -> None:
        self._base_dir = Path(tempfile.mkdtemp(prefix="loadmaster-etcd-"))
        names = [f"m{index}" for index in range(self.size)]
        ports = [(free_port(), free_port()) for _ in names]
        initial_cluster = ",".join(
            f"{name}=http://{HOST}:{peer}" for name, (_, peer) in zip(names, ports, strict=True)
        )
        token = self._base_dir.name  # unique: members of different clusters never join each other
        self.members = [
            EtcdMember(
                binary=binary,
                name=name,
                host=HOST,
                client_port=client,
                peer_port=peer,
                data_dir=self._base_dir / name,
                initial_cluster=initial_cluster,
                cluster_token=token,
                heartbeat_ms=self.heartbeat_ms,
                election_timeout_ms=self.election_timeout_ms,
            )
            for name, (client, peer) in zip(names, ports, strict=True)
        ]

    def _remove_members(self) -> None:
        for member in self.members:
            member.kill()
        self.members = []
        if self._base_dir is not None:
            shutil.rmtree(self._base_dir, ignore_errors=True)
            self._base_dir = None

    def close(self) -> None:
        """Kill every member and delete the data directories (safe to call twice)."""
        self._remove_members()
        _LIVE.discard(self)

    @property
    def endpoints(self) -> list[str]:
        return [member.endpoint for member in self.members]

    @property
    def url(self) -> str:
        """``etcd://127.0.0.1:p1,127.0.0.1:p2,...`` for ``EtcdStore.connect``."""
        return "etcd://" + ",".join(self.endpoints)

    def member(self, index: int) -> EtcdMember:
        return self.members[index]

    def leader(self, timeout_s: float = 10.0) -> EtcdMember:
        """The member that is the raft leader now (asked over the JSON gateway's status call)."""
        deadline = time.monotonic() + timeout_s
        while True:
            for member in self.members:
                if not member.is_running or member.is_paused:
                    continue
                leader_id, member_id = _leader_and_member_ids(member)
                if leader_id is not None and leader_id == member_id:
                    return member
            if time.monotonic() >= deadline:
                raise EtcdStartError(f"no etcd member reported being the leader within {timeout_s}s")
            time.sleep(0.05)


def _leader_and_member_ids(member: EtcdMember) -> tuple[str | None, str | None]:
    """(raft leader id, this member's id) from the member's status; (None, None) if it cannot answer."""
    request = urllib.request.Request(
        f"http://{member.endpoint}/v3/maintenance/status",
        data=b"{}",
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=1.0) as response:
            status = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None, None  # this member cannot answer now; the caller asks the others
    # The JSON gateway writes uint64 ids as strings.
    return status.get("leader"), status.get("header", {}).get("member_id")


@atexit.register
def _kill_leftover_clusters() -> None:
    for cluster in list(_LIVE):
        cluster.close()
