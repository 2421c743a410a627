"""A leader stopped cleanly (SIGTERM) resigns before it exits: its standby leads at once, long before the
lease's TTL would have run out (before, it waited out the whole TTL: 14.5 s at TTL 15)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from loadmaster.testing.etcd_cluster import EtcdCluster
from tests.ha.servers import server_group

pytestmark = pytest.mark.etcd

TTL_S = 30
# A standby that waited for the lease would lead after TTL_S; one that was handed over leads in about a
# second. A third of the TTL tells the two apart however busy the machine is.
HANDED_OVER_WITHIN_S = TTL_S / 3


def test_a_leader_stopped_with_sigterm_hands_over_to_its_standby_before_the_lease_expires(
    etcd_private: EtcdCluster, tmp_path: Path
) -> None:
    with server_group(2, etcd_private.url, tmp_path, TTL_S) as group:
        leader, _ = group.wait_for_leader(timeout_s=TTL_S)
        standby = next(server for server in group.servers if server is not leader)
        stopped_at = time.monotonic()
        assert leader.stop() == 0, leader.log()
        group.wait_for_leader(timeout_s=HANDED_OVER_WITHIN_S, among=[standby])
        took_s = time.monotonic() - stopped_at
        assert "resigned: stopping" in leader.log()
        print(f"\nthe standby led {took_s:.2f}s after the leader got SIGTERM (lease TTL {TTL_S}s)")
