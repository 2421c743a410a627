"""The action extension point: an action reads and changes one Session through its Statement.

Actions run in the configured order (default: allocate, consolidate, reclaim, preempt,
stale_gang_eviction: least disruptive first). Each commits only what it found valid as a whole.
"""

from __future__ import annotations

from collections.abc import Callable

from loadmaster.session import Session

Action = Callable[[Session], None]
