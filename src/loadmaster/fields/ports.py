"""Host ports a task binds: TCP/UDP port numbers, each at most once per task."""

from __future__ import annotations

MIN_PORT, MAX_PORT = 1, 65535
