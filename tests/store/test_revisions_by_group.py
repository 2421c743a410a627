"""``Store.known_revision(prefix)``'s bookkeeping (store/revisions_by_group.py): never below the last
write to a key under the prefix, whatever the keys and prefixes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from loadmaster.store.revisions_by_group import RevisionsByGroup, group_of

SEGMENT = st.sampled_from(["objects", "replicas", "deployments", "heartbeats", "a", "ab", "leader"])
KEYS = st.lists(SEGMENT, min_size=1, max_size=4).map(lambda parts: "/" + "/".join(parts))


def test_a_key_is_grouped_at_most_two_directories_deep_so_groups_stay_few() -> None:
    assert group_of("/objects/replicas/web-0") == "/objects/replicas/"
    assert group_of("/counters/deployments/web/api") == "/counters/deployments/"
    assert (group_of("/heartbeats/n1"), group_of("/audit/000000000042")) == ("/heartbeats/", "/audit/")
    assert group_of("/leader") == "/leader"


@given(writes=st.lists(st.lists(KEYS, min_size=1, max_size=3), max_size=8), prefix=KEYS, slash=st.booleans())
def test_the_revision_under_a_prefix_is_never_below_a_write_to_a_key_under_it(
    writes: list[list[str]], prefix: str, slash: bool
) -> None:
    prefix += "/" if slash else ""
    recorded = RevisionsByGroup(start=3)
    for revision, keys in enumerate(writes, start=4):
        recorded.record(keys, revision)
    under = [
        revision for revision, keys in enumerate(writes, start=4) if any(k.startswith(prefix) for k in keys)
    ]
    assert recorded.under(prefix) >= max(under, default=3)


def test_writes_elsewhere_leave_a_prefix_at_its_own_last_write() -> None:
    recorded = RevisionsByGroup(start=10)
    recorded.record(["/objects/deployments/web"], 11)
    recorded.record(["/heartbeats/n1", "/objects/replicas/web-0"], 12)
    assert recorded.under("/objects/deployments/") == 11
    assert recorded.under("/objects/queues/") == 10  # nothing written since the start
    assert recorded.under("/") == 12
