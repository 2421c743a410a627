"""Child process for test_sqlite_crash.py: writes numbered batches to a SqliteStore until it is killed.

Usage: python crash_writer.py DATA_DIR [DIE_IN_BATCH]

Batch ``b`` is one txn: it puts BATCH_KEYS keys ``/crash/<b>/<j>``, deletes the keys of batch ``b-2``,
and moves ``/crash/counter`` to ``b`` (compare-and-swap on its revision). It resumes after the last
committed batch. With DIE_IN_BATCH, the process SIGKILLs itself inside that batch's transaction, after
its rows are written and before COMMIT: the most torn moment there is.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from loadmaster.store.interface import Delete, Event, Op, Put
from loadmaster.store.sqlite import SqliteStore
from loadmaster.store.sqlite_writer import SqliteWriter

BATCH_KEYS = 60
PAYLOAD = b"x" * 1024


def batch_ops(batch: int, counter_revision: int) -> list[Op]:
    ops: list[Op] = [Put(f"/crash/{batch:06d}/{j:03d}", b"%d:" % batch + PAYLOAD) for j in range(BATCH_KEYS)]
    if batch >= 2:
        ops += [Delete(f"/crash/{batch - 2:06d}/{j:03d}") for j in range(BATCH_KEYS)]
    ops.append(Put("/crash/counter", str(batch).encode(), expect_revision=counter_revision))
    return ops


def die_inside_batch(batch: int) -> None:
    """Make the writer thread kill the process right after it writes ``batch``'s rows, before COMMIT."""
    write_events = SqliteWriter._write_events

    def write_then_die(self: SqliteWriter, events: list[Event], create_revisions: dict[str, int]) -> None:
        write_events(self, events, create_revisions)
        if any(event.key == "/crash/counter" and event.value == str(batch).encode() for event in events):
            os.kill(os.getpid(), signal.SIGKILL)

    SqliteWriter._write_events = write_then_die  # type: ignore[method-assign]


async def write_forever(data_dir: str) -> None:
    store = SqliteStore.open(data_dir)
    counter = await store.get("/crash/counter")
    batch = 0 if counter is None else int(counter.value) + 1
    counter_revision = 0 if counter is None else counter.mod_revision
    first = batch
    while True:
        counter_revision = await store.txn(batch_ops(batch, counter_revision))
        if batch == first:  # once only: an unread pipe must never block the writer
            print(f"committed {batch}", flush=True)
        batch += 1


if __name__ == "__main__":
    if len(sys.argv) > 2:
        die_inside_batch(int(sys.argv[2]))
    asyncio.run(write_forever(sys.argv[1]))
