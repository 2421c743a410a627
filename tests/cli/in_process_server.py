"""A real loadmaster server (``loadmaster.api.serve.running_server``, memory store) on a free 127.0.0.1
port, run by a background thread's event loop, so CLI tests can use typer's runner against real HTTP."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from loadmaster.api.serve import running_server
from loadmaster.runtime.config import ServerConfig

START_TIMEOUT_S = 20.0


class InProcessServer:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.url = ""
        self.token = ""
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="loadmaster-server", daemon=True)

    def start(self) -> InProcessServer:
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            raise AssertionError("the in-process server did not start")
        if self._failure is not None:
            raise AssertionError(f"the in-process server failed to start: {self._failure!r}")
        return self

    def close(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(START_TIMEOUT_S)
        if self._failure is not None:
            raise AssertionError(f"the in-process server failed: {self._failure!r}")

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # handed to the test thread by start()/close(), not lost
            self._failure = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        config = ServerConfig(
            data_dir=self.data_dir, listen="127.0.0.1:0", store="memory", debounce_s=0.005, decide_in="thread"
        )
        async with running_server(config) as running:
            self.url, self.token = running.url, running.admin_token
            self._ready.set()
            await self._stop.wait()
