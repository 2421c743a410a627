"""One server per data dir: an exclusive ``flock`` on ``<data_dir>/server.lock`` holding the owner's pid.

``flock`` belongs to the open file, so the kernel releases it when the holder exits for any reason,
``kill -9`` included: a stale lock file never blocks a restart. Two opens in one process conflict
too, since each opens the file anew.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from loadmaster.store.interface import StoreError

LOCK_FILE_NAME = "server.lock"


class DataDirLock:
    """A held data-dir lock; ``release`` (idempotent) gives it up."""

    def __init__(self, data_dir: Path, fd: int) -> None:
        self.data_dir = data_dir
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, data_dir: Path) -> DataDirLock:
        """Take the lock or raise StoreError naming the data dir and the pid that holds it."""
        fd = os.open(data_dir / LOCK_FILE_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise StoreError(
                f"data dir {data_dir} is in use by another loadmaster server (pid {holder}); "
                "stop it or use another --data-dir"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        return cls(data_dir, fd)

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        os.ftruncate(fd, 0)  # no pid left behind once nobody holds the lock
        os.close(fd)  # closing the last descriptor drops the flock
