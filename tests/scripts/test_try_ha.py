"""scripts/try-ha, the README's way to try HA: a private etcd and two servers on free 127.0.0.1 ports;
one leads, the other follows and names it, and ``--exit`` leaves nothing running."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import httpx
import pytest

TRY_HA = Path(__file__).resolve().parents[2] / "scripts" / "try-ha"

pytestmark = pytest.mark.etcd


def test_try_ha_starts_etcd_and_two_servers_one_leading_then_stops_them(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(TRY_HA), "--exit"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "TRY_HA_DIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    servers = dict(re.findall(r"server ([ab]) at (http://127\.0\.0\.1:\d+) \(pid \d+\)", done.stdout))
    assert set(servers) == {"a", "b"}
    leader = re.search(r"^leader: (\S+) \(server ([ab])\)", done.stdout, re.MULTILINE)
    assert leader is not None, done.stdout
    follower_url = servers["b" if leader.group(2) == "a" else "a"]
    assert f"export LOADMASTER_SERVER={follower_url} " in done.stdout
    # Both servers wrote their logs and tokens in the given dir; --exit stopped them and etcd.
    assert (tmp_path / "a" / "admin-token").exists() and (tmp_path / "etcd.log").exists()
    for url in servers.values():
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{url}/api/health", timeout=1.0)
