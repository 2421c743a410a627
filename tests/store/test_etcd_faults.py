"""EtcdStore when etcd misbehaves: restarted, crashed, gone for good, or frozen (SIGSTOP)."""

from __future__ import annotations

import time

import pytest

from loadmaster.store.etcd import EtcdStore
from loadmaster.store.interface import Event, UnavailableError
from loadmaster.testing.etcd_cluster import EtcdCluster
from tests.etcd_fixtures import WatchRecorder, eventually, retrying

pytestmark = [pytest.mark.anyio, pytest.mark.etcd]


@pytest.mark.parametrize(
    "crash", [pytest.param(False, id="graceful-restart"), pytest.param(True, id="sigkill")]
)
async def test_a_watch_resumes_across_an_etcd_restart_without_losing_or_repeating_events(
    etcd_private: EtcdCluster, crash: bool
) -> None:
    store = await EtcdStore.connect(etcd_private.url, watch_max_outage_s=15)
    try:
        start = await store.revision() + 1
        watch = WatchRecorder(store.watch("/w/", start))
        before = [await store.put(f"/w/{i}", b"before") for i in range(3)]
        await eventually(lambda: len(watch.events) == 3, 5, "the events before the restart")

        member = etcd_private.member(0)
        if crash:
            member.kill()
        else:
            member.stop()
        member.start()
        member.wait_healthy()
        # Written right away: the watch is still reconnecting, so these can only reach it by replay.
        after = [await retrying(lambda i=i: store.put(f"/w/{i}", b"after"), 10) for i in range(3, 6)]
        after.append(await store.delete("/w/0"))

        await eventually(lambda: len(watch.events) >= 7, 10, "the events after the restart")
        await watch.stop()
        assert watch.error is None
        revisions = before + after
        assert revisions == list(range(start, start + 7))  # nothing else wrote: they are contiguous
        assert watch.events == [
            *(Event("put", f"/w/{i}", b"before", revisions[i]) for i in range(3)),
            *(Event("put", f"/w/{i}", b"after", revisions[i]) for i in range(3, 6)),
            Event("delete", "/w/0", None, revisions[6]),
        ]
    finally:
        await store.close()


async def test_a_watch_gives_up_with_unavailable_after_its_outage_budget(etcd_private: EtcdCluster) -> None:
    store = await EtcdStore.connect(etcd_private.url, watch_max_outage_s=1.0)
    try:
        watch = WatchRecorder(store.watch("/w/", await store.revision() + 1))
        await store.put("/w/a", b"1")
        await eventually(lambda: len(watch.events) == 1, 5, "the first event")
        etcd_private.member(0).kill()
        stopped = time.monotonic()
        await eventually(lambda: watch.ended, 5, "the watch to give up")
        assert 1.0 <= time.monotonic() - stopped < 4.0
        assert isinstance(watch.error, UnavailableError)
        assert "could not resume from revision" in str(watch.error)
    finally:
        await store.close()


async def test_a_frozen_etcd_makes_calls_time_out_as_unavailable_and_recovers_when_thawed(
    etcd_private: EtcdCluster,
) -> None:
    store = await EtcdStore.connect(etcd_private.url, request_timeout_s=0.5)
    member = etcd_private.member(0)
    try:
        written = await store.put("/k", b"v")
        member.pause()
        started = time.monotonic()
        with pytest.raises(UnavailableError, match="DEADLINE_EXCEEDED"):
            await store.get("/k")
        assert time.monotonic() - started < 2.0
        member.resume()
        entry = await retrying(lambda: store.get("/k"), 5)
        assert entry is not None and entry.mod_revision == written
    finally:
        member.resume()
        await store.close()
