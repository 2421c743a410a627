"""What survives an agent restart: one small JSON record per running incarnation in ``<work-dir>/state``.

A record names the process (pid and its start time, so a reused pid is never mistaken for ours) and
the replica it runs. A restarted agent with the same work dir reads them, asks the runtime which units
are still the same running processes, and adopts those instead of starting duplicates.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any

_UNSAFE = re.compile(r"[^A-Za-z0-9_.@-]")


class RunRecords:
    def __init__(self, work_dir: Path) -> None:
        self.directory = work_dir / "state"

    def _path(self, key: str) -> Path:
        return self.directory / f"{_UNSAFE.sub('_', key)}.json"

    def save(self, key: str, record: dict[str, Any]) -> None:
        """Written to a temporary file and renamed, so a crash never leaves half a record."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._path(key)
        partial = path.with_suffix(".tmp")
        partial.write_text(json.dumps({**record, "key": key}))
        os.replace(partial, path)

    def forget(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._path(key).unlink()

    def load(self) -> dict[str, dict[str, Any]]:
        """Every readable record by key (an unreadable one is skipped: its process is then an orphan
        the agent cannot prove is its own, and it is left alone)."""
        records: dict[str, dict[str, Any]] = {}
        if not self.directory.is_dir():
            return records
        for path in sorted(self.directory.glob("*.json")):
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if isinstance(record, dict) and isinstance(record.get("key"), str):
                records[record["key"]] = record
        return records
