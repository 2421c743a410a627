"""Run a whole server in this process: the control plane (runtime/wiring.py) behind uvicorn.

``running_server(config)`` is an async context manager for tests and ``loadmaster up``: it yields once
the HTTP port accepts connections (``port 0`` picks a free one; ``url`` says which) and stops
everything on exit. ``serve(config)`` runs until SIGTERM or SIGINT (or ``stop`` is set) and then shuts
down cleanly: streams end, the leader resigns, the store is closed (SQLite releases its data dir).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import structlog
import uvicorn

from loadmaster.api.app import create_app
from loadmaster.api.http_protocol import limited_protocol
from loadmaster.runtime.config import ServerConfig, parse_listen
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.clock import Clock
from loadmaster.runtime.plane.process.gc_policy import apply_server_gc_policy
from loadmaster.runtime.plane.process.heap import freeze_survivors
from loadmaster.runtime.wiring import open_control_plane

log = structlog.get_logger(__name__)

# Open streams (watch, audit follow) are told to end at shutdown; this bounds the wait for the rest.
GRACEFUL_SHUTDOWN_S = 3
# How long a worker thread (a scheduling cycle, a build) may keep the GIL while the event loop waits for
# it. Python's 5 ms default costs a request up to 5 ms at every system call it makes while a cycle runs
# (the loop gives the GIL up for each one, then waits that long to get it back): an echo over 127.0.0.1
# beside a busy thread, p99 4.8-33 ms at 5 ms, 0.11-0.17 ms at 0.5 ms.
SWITCH_INTERVAL_S = 0.0005


class _Server(uvicorn.Server):
    """uvicorn without its own signal handling: ``serve`` decides how the process stops."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass(slots=True)
class RunningServer:
    plane: ControlPlane
    url: str
    admin_token_path: Path
    admin_token: str
    admin_token_created: bool


def _bind(listen: str) -> socket.socket:
    host, port = parse_listen(listen)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Inherited by every accepted connection. Without it a response written in two pieces (headers, then
    # body) waits for the client's delayed ACK of the first: 40 ms on every request of a kept-alive
    # connection (measured: a health check took 44 ms instead of 1).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise OSError(f"--listen {listen}: cannot listen there: {error.strerror or error}") from error
    sock.listen(1024)
    sock.setblocking(False)
    return sock


def _url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@asynccontextmanager
async def running_server(config: ServerConfig, *, clock: Clock | None = None) -> AsyncIterator[RunningServer]:
    config.check()
    sys.setswitchinterval(SWITCH_INTERVAL_S)  # the process serves from now on (tests and `up` too)
    apply_server_gc_policy()  # short collector pauses: each one holds every request (gc_policy.py)
    sock = _bind(config.listen)
    url = _url_of(sock)
    try:
        async with open_control_plane(config, url=url, clock=clock) as opened:
            limits = config.http_limits
            app = create_app(opened.plane, max_body_bytes=config.max_body_bytes, limits=limits)
            server = _Server(
                uvicorn.Config(
                    app,
                    http=limited_protocol(limits),
                    timeout_keep_alive=limits.keep_alive_s,
                    lifespan="off",
                    log_config=None,
                    access_log=False,
                    # The server listens itself (no proxy in front by default): skip the per-request
                    # X-Forwarded-* rewriting and the Server header.
                    proxy_headers=False,
                    server_header=False,
                    timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
                )
            )
            serving = asyncio.create_task(server.serve(sockets=[sock]), name="http")
            while not server.started and not serving.done():
                await asyncio.sleep(0.005)
            if serving.done():
                serving.result()  # raises why it could not start
            try:
                yield RunningServer(
                    opened.plane, url, opened.admin_token_path, opened.admin_token, opened.admin_token_created
                )
            finally:
                opened.plane.closing.set()  # ends the open streams first
                server.should_exit = True
                await serving
    finally:
        sock.close()


async def serve(
    config: ServerConfig,
    *,
    stop: asyncio.Event | None = None,
    on_ready: Callable[[RunningServer], None] | None = None,
) -> None:
    """Run until ``stop`` is set or the process gets SIGTERM/SIGINT."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    handled = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread: no signals
            loop.add_signal_handler(sig, stop.set)
            handled.append(sig)
    try:
        async with running_server(config) as running:
            log.info(
                "serving",
                url=running.url,
                store=running.plane.backend,
                data_dir=str(config.data_dir),
                identity=config.identity,
            )
            if on_ready is not None:
                on_ready(running)
            # This process is a server from now on: keep its long-lived state out of full GC passes.
            freezing = asyncio.create_task(freeze_survivors(), name="gc-freeze")
            try:
                await stop.wait()
            finally:
                freezing.cancel()
            log.info("shutting down")
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
