"""One healthcheck probe, run with its timeout: a command (exit 0), an HTTP URL (2xx/3xx) or a TCP
port on 127.0.0.1 (accepts a connection). A probe that times out failed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

import httpx

from loadmaster.agent.replicas.replica_launch import HealthPolicy


async def probe_passes(policy: HealthPolicy, directory: Path, env: dict[str, str]) -> bool:
    try:
        async with asyncio.timeout(policy.timeout_s):
            if policy.probe == "command":
                return await _command_passes([str(p) for p in policy.target], directory, env)
            if policy.probe == "http":
                return await _http_passes(str(policy.target), policy.timeout_s)
            return await _tcp_passes(int(policy.target))
    except TimeoutError:
        return False


async def _command_passes(command: list[str], directory: Path, env: dict[str, str]) -> bool:
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=directory if directory.is_dir() else None,
            env={**os.environ, **env},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return False
    try:
        return await process.wait() == 0
    finally:
        if process.returncode is None:  # cancelled by the timeout: leave nothing behind
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()


async def _http_passes(url: str, timeout_s: float) -> bool:
    try:
        async with httpx.AsyncClient(timeout=timeout_s) as client:
            response = await client.get(url)
    except httpx.HTTPError:
        return False
    return 200 <= response.status_code < 400


async def _tcp_passes(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True
