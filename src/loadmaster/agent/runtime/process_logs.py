"""A replica's ``output.log``: rotated by copy-and-truncate, and its last lines read for ``logs``.

The child holds the file open with O_APPEND, so truncating it in place is safe: its next write lands at
the new end. One older generation (``output.log.1``) is kept.
"""

from __future__ import annotations

import os
import shutil
from collections import deque
from pathlib import Path

from loadmaster.agent.runtime.process_driver import LOG_FILE

# Past this size the log is rotated (checked every status interval).
MAX_LOG_BYTES = 10 * 1024 * 1024


def rotate_if_large(directory: Path, max_bytes: int = MAX_LOG_BYTES) -> bool:
    log = directory / LOG_FILE
    try:
        if log.stat().st_size <= max_bytes:
            return False
        shutil.copyfile(log, directory / f"{LOG_FILE}.1")
        os.truncate(log, 0)
    except OSError:
        return False
    return True


def tail_lines(directory: Path, count: int | None) -> list[str]:
    """The last ``count`` lines of the log (all of them when None); none when there is no log yet."""
    try:
        with (directory / LOG_FILE).open(errors="replace") as handle:
            if count is None:
                return handle.read().splitlines()
            return list(deque((line.rstrip("\n") for line in handle), maxlen=max(count, 0)))
    except OSError:
        return []
