"""The Store contract (interface.py), run against every backend in conftest.BACKENDS."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest

from loadmaster.store.interface import (
    MAX_TXN_OPS,
    CompactedError,
    ConflictError,
    Delete,
    Entry,
    Event,
    Fence,
    FencedError,
    Put,
    Store,
    TxnTooLargeError,
    UnavailableError,
)

pytestmark = pytest.mark.anyio

Collect = Callable[[AsyncIterator[Event]], AbstractAsyncContextManager[Any]]


async def test_a_missing_key_reads_as_none(store: Store) -> None:
    assert await store.get("/nodes/n1") is None


async def test_a_put_is_read_back_with_its_revisions(store: Store) -> None:
    revision = await store.put("/nodes/n1", b"v1")
    assert await store.get("/nodes/n1") == Entry("/nodes/n1", b"v1", revision, revision)
    assert await store.revision() == revision


async def test_every_successful_write_bumps_the_revision_by_exactly_one(store: Store) -> None:
    start = await store.revision()
    revisions = [
        await store.put("/a", b"1"),
        await store.put("/b", b"2"),
        await store.txn([Put("/c", b"3"), Put("/d", b"4"), Delete("/a")]),
        await store.delete("/b"),
        await store.put("/c", b"5", expect_revision=start + 3),
    ]
    assert revisions == [start + 1, start + 2, start + 3, start + 4, start + 5]
    assert await store.revision() == start + 5


async def test_an_update_keeps_create_revision_and_moves_mod_revision(store: Store) -> None:
    created = await store.put("/k", b"1")
    updated = await store.put("/k", b"2")
    assert await store.get("/k") == Entry("/k", b"2", created, updated)


async def test_delete_then_recreate_resets_create_revision(store: Store) -> None:
    await store.put("/k", b"1")
    await store.delete("/k")
    recreated = await store.put("/k", b"2")
    assert await store.get("/k") == Entry("/k", b"2", recreated, recreated)


async def test_delete_removes_the_key_and_returns_the_new_revision(store: Store) -> None:
    put = await store.put("/k", b"1")
    deleted = await store.delete("/k")
    assert deleted == put + 1
    assert await store.get("/k") is None


async def test_deleting_a_missing_key_is_a_no_op_that_keeps_the_revision(store: Store) -> None:
    before = await store.put("/other", b"x")
    assert await store.delete("/missing") == before
    assert await store.revision() == before


async def test_list_returns_the_keys_under_the_prefix_sorted_with_the_read_revision(store: Store) -> None:
    for key in ["/nodes/b", "/nodes/a", "/nodesx", "/nodes/a/sub", "/queues/q"]:
        last = await store.put(key, key.encode())
    entries, revision = await store.list("/nodes/")
    assert [entry.key for entry in entries] == ["/nodes/a", "/nodes/a/sub", "/nodes/b"]
    assert [entry.value for entry in entries] == [b"/nodes/a", b"/nodes/a/sub", b"/nodes/b"]
    assert revision == last


async def test_list_with_an_empty_prefix_returns_every_key(store: Store) -> None:
    await store.txn([Put("/b", b""), Put("/a", b""), Put("/c/d", b"")])
    entries, _ = await store.list("")
    assert [entry.key for entry in entries] == ["/a", "/b", "/c/d"]


async def test_list_orders_non_ascii_keys_by_code_point(store: Store) -> None:
    keys = ["/k/é", "/k/z", "/k/\U0001f600", "/k/\uffff", "/k/A"]
    await store.txn([Put(key, b"") for key in keys])
    entries, _ = await store.list("/k/")
    assert [entry.key for entry in entries] == sorted(keys)


CAS_CASES = [
    pytest.param(False, 0, True, id="expect-0-on-missing-key-succeeds"),
    pytest.param(True, 0, False, id="expect-0-on-existing-key-conflicts"),
    pytest.param(True, "current", True, id="expect-current-mod-revision-succeeds"),
    pytest.param(True, "stale", False, id="expect-stale-mod-revision-conflicts"),
    pytest.param(False, "current", False, id="expect-a-revision-on-missing-key-conflicts"),
    pytest.param(True, None, True, id="unconditional-on-existing-key-succeeds"),
    pytest.param(False, None, True, id="unconditional-on-missing-key-succeeds"),
]


async def _cas_setup(store: Store, exists: bool, expect: Any) -> tuple[int | None, int]:
    """Prepare /cas (two writes, so a stale revision exists) and resolve the symbolic expectation."""
    first = await store.put("/cas", b"old")
    current = await store.put("/cas", b"old")
    if not exists:
        current = await store.delete("/cas")
        first = current - 1
    resolved = {"current": current, "stale": first}[expect] if isinstance(expect, str) else expect
    return resolved, await store.revision()


@pytest.mark.parametrize(("exists", "expect", "succeeds"), CAS_CASES)
async def test_put_compare_and_swap(store: Store, exists: bool, expect: Any, succeeds: bool) -> None:
    expect_revision, before = await _cas_setup(store, exists, expect)
    previous = await store.get("/cas")
    if succeeds:
        assert await store.put("/cas", b"new", expect_revision=expect_revision) == before + 1
        entry = await store.get("/cas")
        assert entry is not None and entry.value == b"new"
    else:
        with pytest.raises(ConflictError) as error:
            await store.put("/cas", b"new", expect_revision=expect_revision)
        assert error.value.key == "/cas"
        assert error.value.expected == expect_revision
        assert error.value.actual == (previous.mod_revision if previous else 0)
        assert await store.get("/cas") == previous
        assert await store.revision() == before


@pytest.mark.parametrize(("exists", "expect", "succeeds"), CAS_CASES)
async def test_delete_compare_and_swap(store: Store, exists: bool, expect: Any, succeeds: bool) -> None:
    expect_revision, before = await _cas_setup(store, exists, expect)
    previous = await store.get("/cas")
    if succeeds:
        revision = await store.delete("/cas", expect_revision=expect_revision)
        assert revision == (before + 1 if exists else before)
        assert await store.get("/cas") is None
    else:
        with pytest.raises(ConflictError):
            await store.delete("/cas", expect_revision=expect_revision)
        assert await store.get("/cas") == previous
        assert await store.revision() == before


async def test_a_txn_applies_every_op_at_one_revision(store: Store) -> None:
    await store.put("/gone", b"x")
    revision = await store.txn([Put("/a", b"1"), Put("/b", b"2"), Delete("/gone")])
    entries, read_at = await store.list("/")
    assert [(e.key, e.value, e.mod_revision) for e in entries] == [
        ("/a", b"1", revision),
        ("/b", b"2", revision),
    ]
    assert read_at == revision


async def test_one_failing_compare_means_no_op_of_the_txn_is_applied(store: Store) -> None:
    a = await store.put("/a", b"a0")
    await store.put("/b", b"b0")
    before_entries, before = await store.list("/")
    with pytest.raises(ConflictError) as error:
        await store.txn(
            [
                Put("/a", b"a1", expect_revision=a),
                Delete("/b"),
                Put("/c", b"c1", expect_revision=99),
                Put("/d", b"d"),
            ]
        )
    assert (error.value.key, error.value.expected, error.value.actual) == ("/c", 99, 0)
    assert await store.list("/") == (before_entries, before)


async def test_a_txn_of_exactly_the_maximum_size_is_accepted(store: Store) -> None:
    revision = await store.txn([Put(f"/k/{i:03d}", b"") for i in range(MAX_TXN_OPS)])
    entries, _ = await store.list("/k/")
    assert len(entries) == MAX_TXN_OPS
    assert {entry.mod_revision for entry in entries} == {revision}


async def test_a_txn_over_the_maximum_size_is_refused_and_writes_nothing(store: Store) -> None:
    before = await store.revision()
    with pytest.raises(TxnTooLargeError, match=str(MAX_TXN_OPS)):
        await store.txn([Put(f"/k/{i:03d}", b"") for i in range(MAX_TXN_OPS + 1)])
    assert await store.list("/k/") == ([], before)


async def test_a_key_twice_in_one_txn_is_refused_and_writes_nothing(store: Store) -> None:
    before = await store.revision()
    with pytest.raises(ValueError, match=r"ops\[2\]\.key"):
        await store.txn([Put("/a", b"1"), Put("/b", b"1"), Delete("/a")])
    assert await store.list("/") == ([], before)


async def test_an_empty_txn_changes_nothing(store: Store) -> None:
    before = await store.put("/a", b"1")
    assert await store.txn([]) == before


@pytest.mark.parametrize(
    ("ops", "error", "message"),
    [
        pytest.param([Put("/a", "text")], TypeError, r"ops\[0\]\.value", id="value-not-bytes"),  # type: ignore[arg-type]
        pytest.param([Put("", b"")], ValueError, r"ops\[0\]\.key", id="empty-key"),
        pytest.param([Put("/a", b""), Put(7, b"")], TypeError, r"ops\[1\]\.key", id="key-not-str"),  # type: ignore[arg-type]
        pytest.param(
            [Delete("/a", expect_revision=-1)], ValueError, r"ops\[0\]\.expect_revision", id="negative"
        ),
        pytest.param(
            [Put("/a", b"", expect_revision=True)], TypeError, "expect_revision", id="bool-revision"
        ),
        pytest.param(["/a"], TypeError, r"ops\[0\]", id="op-not-put-or-delete"),
    ],
)
async def test_malformed_ops_are_refused_naming_the_field(
    store: Store, ops: list[Any], error: type[Exception], message: str
) -> None:
    before = await store.revision()
    with pytest.raises(error, match=message):
        await store.txn(ops)
    assert await store.list("") == ([], before)


async def _elect(store: Store) -> Fence:
    await store.put("/leader", b"me", expect_revision=0)
    entry = await store.get("/leader")
    assert entry is not None
    return Fence("/leader", entry.create_revision)


async def test_a_fenced_write_succeeds_while_the_leader_key_is_unchanged(store: Store) -> None:
    fence = await _elect(store)
    await store.put("/leader", b"me, renewed")  # an update keeps create_revision: still the same term
    revision = await store.txn([Put("/a", b"1")], fence=fence)
    assert await store.put("/b", b"2", fence=fence) == revision + 1
    assert await store.delete("/a", fence=fence) == revision + 2


@pytest.mark.parametrize(
    "recreate", [pytest.param(False, id="leader-key-deleted"), pytest.param(True, id="re-created")]
)
async def test_a_fenced_write_after_losing_leadership_is_refused_and_writes_nothing(
    store: Store, recreate: bool
) -> None:
    fence = await _elect(store)
    await store.put("/a", b"kept")
    await store.delete("/leader")
    if recreate:
        await store.put("/leader", b"someone else")
    before_entries, before = await store.list("/")
    with pytest.raises(FencedError, match="/leader"):
        await store.put("/a", b"late", fence=fence)
    with pytest.raises(FencedError):
        await store.delete("/a", fence=fence)
    with pytest.raises(FencedError):
        await store.txn([Put("/b", b"late"), Delete("/a")], fence=fence)
    assert await store.list("/") == (before_entries, before)


async def test_a_watch_replays_history_then_streams_live_events_in_order(
    store: Store, collect: Collect
) -> None:
    first = await store.put("/w/a", b"1")
    await store.put("/other", b"x")
    await store.txn([Put("/w/b", b"2"), Put("/w/a", b"3")])
    async with collect(store.watch("/w/", first)) as events:
        replayed = await events.take(3)
        live_txn = await store.txn([Delete("/w/a"), Put("/w/c", b"4"), Put("/elsewhere", b"")])
        live_put = await store.put("/w/b", b"5")
        live = await events.take(3)
        assert await events.is_quiet()
    assert replayed == [
        Event("put", "/w/a", b"1", first),
        Event("put", "/w/b", b"2", first + 2),
        Event("put", "/w/a", b"3", first + 2),
    ]
    assert live == [
        Event("delete", "/w/a", None, live_txn),
        Event("put", "/w/c", b"4", live_txn),
        Event("put", "/w/b", b"5", live_put),
    ]


async def test_a_watch_from_revision_zero_starts_at_the_first_write(store: Store, collect: Collect) -> None:
    first = await store.put("/w/a", b"1")
    async with collect(store.watch("/w/", 0)) as events:
        assert await events.take(1) == [Event("put", "/w/a", b"1", first)]


async def test_a_watch_from_a_future_revision_waits_for_it(store: Store, collect: Collect) -> None:
    now = await store.put("/w/a", b"1")
    async with collect(store.watch("/w/", now + 2)) as events:
        await store.put("/w/a", b"2")
        assert await events.is_quiet()
        third = await store.put("/w/a", b"3")
        assert await events.take(1) == [Event("put", "/w/a", b"3", third)]


async def test_two_watchers_each_see_every_event(store: Store, collect: Collect) -> None:
    start = await store.revision() + 1
    async with collect(store.watch("/w/", start)) as one, collect(store.watch("/w/a", start)) as two:
        first = await store.put("/w/a", b"1")
        second = await store.put("/w/b", b"2")
        assert await one.take(2) == [Event("put", "/w/a", b"1", first), Event("put", "/w/b", b"2", second)]
        assert await two.take(1) == [Event("put", "/w/a", b"1", first)]
        assert await two.is_quiet()


async def test_a_watch_from_a_compacted_revision_raises_compacted_error(
    store: Store, collect: Collect
) -> None:
    revisions = [await store.put("/w/k", str(i).encode()) for i in range(5)]
    await store.compact(revisions[3])  # type: ignore[attr-defined]  # etcd's compact; every backend has it
    async with collect(store.watch("/w/", revisions[1])) as events:
        with pytest.raises(CompactedError) as error:
            await events.take(1)
    assert (error.value.requested, error.value.oldest) == (revisions[1], revisions[3])
    async with collect(store.watch("/w/", revisions[3])) as events:
        assert [event.revision for event in await events.take(2)] == revisions[3:]


async def test_a_closed_store_refuses_calls_as_unavailable(store: Store) -> None:
    await store.put("/a", b"1")
    await store.close()
    with pytest.raises(UnavailableError):
        await store.get("/a")
    with pytest.raises(UnavailableError):
        await store.put("/a", b"2")
