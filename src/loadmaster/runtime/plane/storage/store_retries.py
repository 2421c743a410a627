"""How the runtime tries the store again: after the store went away, and after a compare failed.

* ``STORE_RETRY_S``: a loop whose pass or watch the store failed (unreachable, or etcd electing a
  raft leader) waits this long before it tries again: about etcd's election time.
* ``write_latest``: read one key, work out the write from what was read, and send it comparing the
  revision read; when someone else wrote the key in between, read again and work it out again, at
  most ``MAX_WRITE_ATTEMPTS`` times. The write is a pure function of what was read, so a retry simply
  recomputes it from the fresher copy.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from loadmaster.runtime.plane.errors import WriteConflictError
from loadmaster.store.interface import ConflictError, Entry, Fence, Op, Store

STORE_RETRY_S = 0.5
# Writers racing on one key (an agent's heartbeat and an admin's cordon) settle within a few tries.
MAX_WRITE_ATTEMPTS = 5

T = TypeVar("T")
# From what is stored under the key (None: nothing) to the operations to send (none: nothing to
# write) and what the caller gets back. It may raise to refuse (a NotFoundError, say).
WritePlan = Callable[[Entry | None], tuple[Sequence[Op], T]]


async def write_latest(
    store: Store,
    key: str,
    fence: Callable[[], Awaitable[Fence]],
    plan: WritePlan[T],
    *,
    what: str,
    doing: str,
) -> tuple[T, int | None]:
    """What ``plan`` returned for the copy it last saw, and the revision written (None: nothing was).

    ``fence`` is asked before every read, so a server that stopped leading stops writing. A conflict
    on another key than ``key`` (one of ``plan``'s other operations) is not retried: it propagates.
    WriteConflictError ("``what`` kept changing while being ``doing``") when every attempt conflicted.
    """
    for _ in range(MAX_WRITE_ATTEMPTS):
        write_fence = await fence()
        ops, result = plan(await store.get(key))
        if not ops:
            return result, None
        try:
            revision = await store.txn(ops, write_fence)
        except ConflictError as conflict:
            if conflict.key != key:
                raise
            continue
        return result, revision
    raise WriteConflictError(f"{what} kept changing while being {doing}; try again")
