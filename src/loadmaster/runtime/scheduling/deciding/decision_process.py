"""The decide step in a long-lived worker process (``decide_in: process``, what ``loadmaster server`` uses).

Why a process: the cycle is Python-heavy (the actions' loops, explanations), and a thread of the
server's process shares its GIL, so a 2-second cycle took the event loop's CPU with it (issue 12:
read p99 23.5 s at 200 req/s during a 10,000-pending cycle). The worker has its own interpreter; the
server only encodes the request and decodes the plan (``cluster_transfer.py``: what changed since the
last request), both in a worker thread of its own, so the loop keeps answering meanwhile.

* Started with the ``spawn`` context (a fresh interpreter: the server has threads, which ``fork`` must
  not copy), at the first cycle; it imports the engine and then waits for requests on a pipe.
* One request at a time (a lock): a request the server stopped waiting for (its term ended) still gets
  its answer read before the next one is sent, so answers never cross.
* A worker that dies (killed, out of memory, a crash in native code) is restarted and the cycle sent
  again once; each death is logged and counted (``loadmaster_decision_worker_restarts_total``). A
  cycle that raises in the worker is not a death: its error is raised here, as in-process.
* It stops with the server (``close``: a stop message, then SIGTERM, then SIGKILL), and by itself when
  the server is gone (its pipe reads end of file), so it never outlives it; it ignores Ctrl-C, which
  the terminal sends the whole process group (the server stops it in order).
"""

from __future__ import annotations

import multiprocessing
import pickle
import signal
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

import structlog

from loadmaster.core.columns.snapshot import SnapshotCache
from loadmaster.runtime.scheduling.deciding.cluster_transfer import (
    PROTOCOL,
    ClusterMirror,
    decode_request,
    encode_request,
)
from loadmaster.runtime.scheduling.deciding.decision_step import DecidedCycle, DecideRequest, decide

log = structlog.get_logger(__name__)

STOP = b""  # the server's stop message
OK, FAILED = "ok", "failed"
STOP_WAIT_S = 2.0  # after the stop message (then SIGTERM), and after SIGTERM (then SIGKILL)


class DecisionWorkerDied(RuntimeError):  # noqa: N818 (it says what happened, as a cycle error)
    """The worker process died twice in one cycle (the cycle fails; the next one starts a new worker)."""


def serve(connection: Connection) -> None:
    """The worker's loop: decode a request, decide, answer; until the stop message or end of file."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    mirror, cache = ClusterMirror(), SnapshotCache()
    while True:
        try:
            data = connection.recv_bytes()
        except EOFError:  # the server is gone
            return
        if data == STOP:
            return
        try:
            answer: tuple[str, object] = (OK, decide(decode_request(data, mirror), cache))
        except Exception as error:
            # Start over on both ends: a request decoded halfway leaves the mirror unknown, and a cycle
            # that raised may have left the snapshot cache half-updated.
            mirror.forget()
            cache = SnapshotCache()
            answer = (FAILED, error)
        try:
            payload = pickle.dumps(answer, protocol=PROTOCOL)
        except Exception:  # an error that cannot be pickled: its text then
            payload = pickle.dumps((FAILED, RuntimeError(f"{type(answer[1]).__name__}: {answer[1]}")))
        connection.send_bytes(payload)


class WorkerProcessDecider:
    """Decides in a worker process (module doc); ``on_restart`` is called for every death seen."""

    def __init__(self, on_restart: Callable[[], None] = lambda: None) -> None:
        self._context = multiprocessing.get_context("spawn")
        self._on_restart = on_restart
        self._process: BaseProcess | None = None
        self._connection: Connection | None = None
        self._mirror = ClusterMirror()
        self._exchange_lock = threading.Lock()  # one request in flight (module doc)
        self._closed = False

    @property
    def pid(self) -> int | None:
        """The worker's process id (None before the first cycle or after ``close``)."""
        return self._process.pid if self._process is not None else None

    def decide(self, request: DecideRequest) -> DecidedCycle:
        """Blocking: call it from a worker thread (``decision_workers.py`` does)."""
        with self._exchange_lock:
            try:
                return self._exchange(request)
            except (EOFError, OSError) as error:
                self._died(error)
            try:
                return self._exchange(request)
            except (EOFError, OSError) as error:
                self._died(error)
                raise DecisionWorkerDied(f"the decision worker died twice in one cycle: {error}") from error

    def _exchange(self, request: DecideRequest) -> DecidedCycle:
        if self._closed:
            raise DecisionWorkerDied("the server is stopping")
        connection = self._connection if self._process is not None else None
        if connection is None:
            connection = self._start()
        connection.send_bytes(encode_request(request, self._mirror))
        status, value = pickle.loads(connection.recv_bytes())
        if status == FAILED:
            self._mirror.forget()  # the worker forgot too
            assert isinstance(value, BaseException)
            raise value
        assert isinstance(value, DecidedCycle)
        return value

    def _start(self) -> Connection:
        ours, theirs = self._context.Pipe(duplex=True)
        process = self._context.Process(target=serve, args=(theirs,), name="loadmaster-decide", daemon=True)
        process.start()
        theirs.close()  # the worker holds the only other end: its death is our end of file
        self._process, self._connection = process, ours
        self._mirror.forget()
        log.info("decision worker started", pid=process.pid)
        return ours

    def _died(self, error: BaseException) -> None:
        process = self._process
        exitcode = None
        if process is not None:
            process.join(timeout=STOP_WAIT_S)
            if process.is_alive():  # the pipe broke but it lives on: do not leave it behind
                process.kill()
                process.join()
            exitcode = process.exitcode
        self._discard()
        if self._closed:
            return
        self._on_restart()
        log.error(
            "decision worker died; starting a new one",
            pid=process.pid if process is not None else None,
            exitcode=exitcode,
            error=f"{type(error).__name__}: {error}",
        )

    def _discard(self) -> None:
        if self._connection is not None:
            self._connection.close()
        self._process = self._connection = None
        self._mirror.forget()

    def close(self) -> None:
        """Stop the worker (blocking, a few seconds at most): politely when it is idle, else by signal."""
        self._closed = True
        process, connection = self._process, self._connection
        if process is None:
            return
        if connection is not None and self._exchange_lock.acquire(blocking=False):
            try:
                connection.send_bytes(STOP)
            except OSError:
                pass  # already gone
            finally:
                self._exchange_lock.release()
            process.join(timeout=STOP_WAIT_S)
        if process.is_alive():
            process.terminate()
            process.join(timeout=STOP_WAIT_S)
        if process.is_alive():
            process.kill()
            process.join()
        if self._exchange_lock.acquire(blocking=False):  # else the cycle in flight reads end of file
            try:
                self._discard()
            finally:
                self._exchange_lock.release()
        log.info("decision worker stopped", pid=process.pid, exitcode=process.exitcode)
