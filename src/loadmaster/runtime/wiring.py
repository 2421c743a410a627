"""From a ``ServerConfig`` to a running control plane: open the store, elect, make the admin token.

``open_control_plane(config)`` is the part every way of running a server shares (the CLI's
``loadmaster server``, ``loadmaster up``, tests); ``loadmaster.api.serve`` adds the HTTP server on top.
With SQLite (the default) the store lives in ``<data-dir>/loadmaster.db`` and holds the data dir's
lock, so a second server on the same dir stops here with the store's message. A server that stops
cleanly (SIGTERM, Ctrl-C, the end of ``loadmaster up``) resigns before it closes the store.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import structlog

from loadmaster.controllers.nodes.node_loss import NodeLossSettings
from loadmaster.core.voluntary_moves import moves_budget
from loadmaster.runtime.config import ServerConfig
from loadmaster.runtime.control_plane import ControlPlane, ControlPlaneSettings
from loadmaster.runtime.plane.clock import Clock, SystemClock
from loadmaster.runtime.plane.leadership.leader import LeaderElector
from loadmaster.runtime.plane.leadership.leader_etcd import EtcdLeaderElector
from loadmaster.runtime.plane.leadership.leader_local import LocalLeaderElector
from loadmaster.runtime.plane.pass_loop import PassTiming
from loadmaster.runtime.plane.tokens import ensure_admin_token
from loadmaster.runtime.rebalancing.rebalancer import RebalanceSettings
from loadmaster.runtime.reconciling.cleanup import CleanupTiming
from loadmaster.store.etcd import EtcdStore
from loadmaster.store.interface import Store
from loadmaster.store.memory import MemoryStore
from loadmaster.store.sqlite import SqliteStore

log = structlog.get_logger(__name__)

# A server on a local store leads alone; it should be leading before it answers its first request.
LOCAL_LEADERSHIP_WAIT_S = 5.0


@dataclass(slots=True)
class OpenControlPlane:
    plane: ControlPlane
    admin_token_path: Path
    admin_token_created: bool

    @property
    def admin_token(self) -> str:
        return self.admin_token_path.read_text(encoding="utf-8").strip()


async def open_store(config: ServerConfig) -> tuple[Store, LeaderElector, str]:
    """The store, its elector and the backend's name; StoreError if it cannot be opened."""
    if config.store == "memory":
        memory = MemoryStore()
        return memory, LocalLeaderElector(memory, config.identity), "memory"
    if config.store == "sqlite":
        sqlite = SqliteStore.open(config.data_dir)
        return sqlite, LocalLeaderElector(sqlite, config.identity), "sqlite"
    etcd = await EtcdStore.connect(config.store, config.etcd_prefix)
    return etcd, EtcdLeaderElector(etcd, config.identity, ttl_s=config.lease_ttl_s), "etcd"


def settings_of(config: ServerConfig) -> ControlPlaneSettings:
    return ControlPlaneSettings(
        loops=PassTiming(config.debounce_s, config.safety_tick_s, config.safety_tick_enabled),
        not_ready_after_s=config.not_ready_after_s,
        resign_pause_s=config.resign_pause_s,
        admission=config.admission,
        node_loss=NodeLossSettings(
            config.node_loss_policy, config.node_loss_wait_s, config.agent_down_wait_s
        ),
        # Voluntary moves per cycle, cluster-wide (seed conflict 5): max_moves_per_cycle caps the
        # scheduler section's max_consolidation_moves.
        scheduler_config=dataclasses.replace(
            config.scheduler,
            max_consolidation_moves=moves_budget(
                config.scheduler.max_consolidation_moves, config.max_moves_per_cycle
            ),
        ),
        restart_budget=config.restart_budget,
        cleanup=CleanupTiming(config.cleanup_interval_s, config.cleanup_retention_s),
        timeslot_lead_s=config.timeslot_lead_time_s,
        scale_up_webhook=config.scale_up_webhook,
        rebalance=RebalanceSettings(
            interval_s=config.rebalance_interval_s,
            heartbeat_interval_s=config.heartbeat_interval_s,
            node_status_interval_s=config.node_status_interval_s,
        ),
        drain_timeout_s=config.drain_timeout_s,
        rollout_step_timeout_s=config.rollout_step_timeout_s,
        decide_in=config.decide_in,
        search_backoff=config.search_backoff,
    )


@asynccontextmanager
async def open_control_plane(
    config: ServerConfig, *, url: str | None = None, clock: Clock | None = None
) -> AsyncIterator[OpenControlPlane]:
    config.check()
    clock = clock or SystemClock()
    store, elector, backend = await open_store(config)
    try:
        path, created = await ensure_admin_token(store, config.data_dir, clock)
        plane = ControlPlane(
            store,
            elector,
            backend=backend,
            data_dir=config.data_dir,
            url=url,
            clock=clock,
            settings=settings_of(config),
        )
        await plane.start()
        try:
            if backend != "etcd" and not await plane.wait_leading(LOCAL_LEADERSHIP_WAIT_S):
                log.error("not leading yet on a local store; writes will be refused until it does")
            elif backend == "etcd":
                await plane.wait_settled(LOCAL_LEADERSHIP_WAIT_S)  # lead, or know who does, before serving
            yield OpenControlPlane(plane, path, created)
        finally:
            await plane.hand_over()  # a clean stop frees the leadership: a standby takes over at once
            await plane.close()
    finally:
        await store.close()
