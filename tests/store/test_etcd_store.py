"""EtcdStore behaviour beyond the shared contract: connection, key layout, etcd's txn limits, leases.

The backend-agnostic behaviour is in test_contract.py, which runs on etcd too.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from loadmaster.store import etcd as etcd_module
from loadmaster.store.etcd import EtcdStore
from loadmaster.store.interface import (
    MAX_TXN_OPS,
    ConflictError,
    Delete,
    Entry,
    Fence,
    FencedError,
    Put,
    TxnTooLargeError,
    UnavailableError,
)
from loadmaster.testing.etcd_cluster import EtcdCluster, free_port

pytestmark = [pytest.mark.anyio, pytest.mark.etcd]


@pytest.fixture
async def store(etcd_server: EtcdCluster, etcd_prefix: str) -> AsyncIterator[EtcdStore]:
    opened = await EtcdStore.connect(etcd_server.url, prefix=etcd_prefix)
    try:
        yield opened
    finally:
        await opened.close()


async def test_connecting_to_a_port_where_no_etcd_listens_fails_fast_as_unavailable() -> None:
    port = free_port()
    started = time.monotonic()
    with pytest.raises(UnavailableError, match=f"127.0.0.1:{port}"):
        await EtcdStore.connect(f"etcd://127.0.0.1:{port}", request_timeout_s=2.0)
    assert time.monotonic() - started < 2.0


async def test_a_bad_url_is_refused_before_any_connection() -> None:
    with pytest.raises(ValueError, match="port 'x'"):
        await EtcdStore.connect("etcd://127.0.0.1:x")


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        pytest.param("request_timeout_s", 0, "request_timeout_s", id="zero-request-timeout"),
        pytest.param("keepalive_s", 1, "keepalive_s", id="keepalive-below-etcd-minimum"),
        pytest.param("watch_max_outage_s", -1, "max_outage_s", id="negative-watch-outage"),
    ],
)
async def test_bad_connection_options_are_refused_naming_the_option(
    etcd_server: EtcdCluster, option: str, value: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        await EtcdStore.connect(etcd_server.url, **{option: value})  # type: ignore[arg-type]


async def test_keys_live_under_the_root_and_two_roots_never_see_each_other(etcd_server: EtcdCluster) -> None:
    first = await EtcdStore.connect(etcd_server.url, prefix="/iso-a")
    neighbour = await EtcdStore.connect(etcd_server.url, prefix="/iso-a2")
    everything = await EtcdStore.connect(etcd_server.url, prefix="")
    try:
        await first.put("/replicas/web-1", b"a")
        await neighbour.put("/replicas/web-1", b"b")
        assert [entry.key for entry in (await first.list(""))[0]] == ["/replicas/web-1"]
        assert (await first.get("/replicas/web-1")) is not None
        raw = {entry.key: entry.value for entry in (await everything.list("/iso-a"))[0]}
        assert raw == {"/iso-a//replicas/web-1": b"a", "/iso-a2//replicas/web-1": b"b"}
    finally:
        for opened in (first, neighbour, everything):
            await opened.close()


async def test_a_list_larger_than_one_page_is_read_whole_at_one_revision(
    store: EtcdStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(etcd_module, "LIST_PAGE_SIZE", 3)
    revision = await store.txn([Put(f"/p/{i:02d}", bytes([i])) for i in range(10)])
    await store.put("/q", b"outside the prefix")
    entries, read_at = await store.list("/p/")
    assert entries == [Entry(f"/p/{i:02d}", bytes([i]), revision, revision) for i in range(10)]
    assert read_at == revision + 1


async def test_a_fenced_txn_may_compare_127_keys(store: EtcdStore) -> None:
    leader = await store.put("/leader", b"me")
    ops = [Put(f"/k/{i:03d}", b"v", expect_revision=0) for i in range(MAX_TXN_OPS - 1)] + [
        Put("/k/free", b"v")
    ]
    revision = await store.txn(ops, fence=Fence("/leader", leader))
    entries, _ = await store.list("/k/")
    assert len(entries) == MAX_TXN_OPS
    assert {entry.mod_revision for entry in entries} == {revision}


async def test_a_fenced_txn_comparing_128_keys_is_refused_up_front_and_writes_nothing(
    store: EtcdStore,
) -> None:
    leader = await store.put("/leader", b"me")
    ops = [Put(f"/k/{i:03d}", b"v", expect_revision=0) for i in range(MAX_TXN_OPS)]
    with pytest.raises(TxnTooLargeError, match="at most 127 keys"):
        await store.txn(ops, fence=Fence("/leader", leader))
    assert await store.list("/k/") == ([], leader)


async def test_a_failed_compare_under_a_valid_fence_is_a_conflict_naming_the_key(store: EtcdStore) -> None:
    leader = await store.put("/leader", b"me")
    current = await store.put("/a", b"1")
    with pytest.raises(ConflictError) as error:
        await store.txn(
            [Put("/a", b"2", expect_revision=current), Delete("/b", expect_revision=current)],
            fence=Fence("/leader", leader),
        )
    assert (error.value.key, error.value.expected, error.value.actual) == ("/b", current, 0)


async def test_a_stale_fence_is_reported_as_fenced_even_when_a_compare_fails_too(store: EtcdStore) -> None:
    leader = await store.put("/leader", b"me")
    await store.delete("/leader")
    await store.put("/leader", b"someone else")
    with pytest.raises(FencedError, match=f"expected create_revision {leader}"):
        await store.put("/a", b"late", expect_revision=12345, fence=Fence("/leader", leader))


async def test_the_fence_key_may_itself_be_written_under_its_own_fence(store: EtcdStore) -> None:
    leader = await store.put("/leader", b"me")
    await store.txn([Put("/leader", b"me, renewed"), Put("/a", b"1")], fence=Fence("/leader", leader))
    await store.delete("/leader", fence=Fence("/leader", leader))
    with pytest.raises(FencedError, match="does not exist"):
        await store.put("/a", b"2", fence=Fence("/leader", leader))


async def test_a_lease_keeps_its_key_until_revoked(store: EtcdStore) -> None:
    lease_id, ttl_s = await store.grant_lease(5)
    assert ttl_s == 5
    created, holder, revision = await store.create_with_lease("/leased", b"x", lease_id)
    assert (created, holder) == (True, None)
    assert await store.keep_lease_alive(lease_id, timeout_s=2.0) == 5
    again, holder, _ = await store.create_with_lease("/leased", b"y", lease_id)
    assert (again, holder) == (False, Entry("/leased", b"x", revision, revision))
    await store.revoke_lease(lease_id)
    assert await store.get("/leased") is None
    assert await store.keep_lease_alive(lease_id, timeout_s=2.0) == 0
    await store.revoke_lease(lease_id)  # revoking a lease that is gone is not an error


async def test_a_closed_store_ends_a_new_watch_as_unavailable(store: EtcdStore) -> None:
    revision = await store.revision()
    await store.close()
    watch = store.watch("/", revision)
    with pytest.raises(UnavailableError, match="closed"):
        await anext(watch)


async def test_compacting_to_a_future_revision_is_refused(store: EtcdStore) -> None:
    current = await store.revision()
    with pytest.raises(ValueError, match=f"the store is at {current}"):
        await store.compact(current + 10)
