"""The etcd test harness leaves nothing behind: no process, no data directory, even if its owner dies."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from loadmaster.testing.etcd_cluster import EtcdCluster

pytestmark = pytest.mark.etcd


def is_alive(pid: int) -> bool:
    """Running or stopped; a zombie (dead, waiting for its new parent to reap it) counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while is_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_closing_a_cluster_kills_every_member_and_deletes_its_data() -> None:
    cluster = EtcdCluster(size=1).start()
    member = cluster.member(0)
    pid, data_dir = member.pid, member.data_dir
    assert pid is not None and is_alive(pid) and data_dir.exists() and member.is_healthy()
    cluster.close()
    assert not is_alive(pid)  # reaped, not a zombie left for later
    assert not data_dir.parent.exists()
    cluster.close()  # closing twice is harmless


def test_a_paused_member_is_still_killed_on_close() -> None:
    with EtcdCluster(size=1) as cluster:
        member = cluster.member(0)
        pid = member.pid
        member.pause()
        assert member.is_paused and not member.is_healthy()
    assert pid is not None and not is_alive(pid)


PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def set_child_subreaper(enabled: bool) -> None:
    """Adopt orphaned descendants (instead of PID 1), so this test can reap the etcd it orphans."""
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, int(enabled), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def test_members_die_with_the_process_that_started_them_even_when_it_is_killed() -> None:
    owner = textwrap.dedent(
        """
        import sys, time
        from loadmaster.testing.etcd_cluster import EtcdCluster
        cluster = EtcdCluster(size=1).start()
        member = cluster.member(0)
        print(member.pid, member.data_dir.parent, flush=True)
        time.sleep(60)
        """
    )
    set_child_subreaper(True)
    process = subprocess.Popen([sys.executable, "-c", owner], stdout=subprocess.PIPE, text=True)
    base_dir: Path | None = None
    try:
        assert process.stdout is not None
        pid_text, base_text = process.stdout.readline().split()
        etcd_pid, base_dir = int(pid_text), Path(base_text)
        assert is_alive(etcd_pid)
        process.kill()  # no atexit, no finally: only the kernel's parent-death signal is left
        process.wait()
        assert wait_gone(etcd_pid, 5), f"etcd {etcd_pid} outlived the process that started it"
        os.waitpid(etcd_pid, 0)  # it was adopted by this process: reap it, leave no zombie
    finally:
        set_child_subreaper(False)
        process.kill()
        process.wait()
        if base_dir is not None:  # its owner died before it could delete it
            shutil.rmtree(base_dir, ignore_errors=True)
