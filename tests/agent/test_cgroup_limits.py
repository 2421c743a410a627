"""cgroup v2 limits against a cgroupfs laid out in a temporary directory (this machine has cgroup v1, so
the kernel's side cannot run here: these tests check what the agent writes where, and when it falls back
to RLIMIT_AS)."""

from __future__ import annotations

import asyncio
import os
import resource
from pathlib import Path

import psutil

from loadmaster.agent.runtime.cgroup_limits import CgroupV2Limits, cpu_max
from loadmaster.agent.runtime.process_driver import CGROUP_V2, RLIMIT_ONLY, ProcessRuntime
from loadmaster.agent.runtime.protocol import LaunchSpec


def cgroupfs(tmp_path: Path, controllers: str = "cpuset cpu io memory pids") -> tuple[Path, Path]:
    """A unified hierarchy whose cgroup ``/system.slice/loadmaster-agent.service`` holds this process."""
    root = tmp_path / "cgroup"
    base = root / "system.slice" / "loadmaster-agent.service"
    base.mkdir(parents=True)
    (root / "cgroup.controllers").write_text(controllers + "\n")
    (base / "cgroup.controllers").write_text(controllers + "\n")
    (base / "cgroup.subtree_control").write_text("")
    self_cgroup = tmp_path / "self-cgroup"
    self_cgroup.write_text("0::/system.slice/loadmaster-agent.service\n")
    return root, self_cgroup


def test_a_delegated_subtree_moves_the_agent_into_a_leaf_and_enables_cpu_and_memory(tmp_path: Path) -> None:
    root, self_cgroup = cgroupfs(tmp_path)
    limits = CgroupV2Limits.detect(root, self_cgroup)
    assert limits is not None
    base = root / "system.slice" / "loadmaster-agent.service"
    assert limits.base == base
    assert (base / "agent" / "cgroup.procs").read_text() == f"{os.getpid()}\n"
    assert (base / "cgroup.subtree_control").read_text() == "+cpu +memory\n"


def test_cgroup_v1_or_a_subtree_without_cpu_gives_no_cgroup_limits(tmp_path: Path) -> None:
    root, self_cgroup = cgroupfs(tmp_path / "v1")
    (root / "cgroup.controllers").unlink()  # no unified hierarchy
    assert CgroupV2Limits.detect(root, self_cgroup) is None
    root, self_cgroup = cgroupfs(tmp_path / "no-cpu", controllers="memory pids")
    assert CgroupV2Limits.detect(root, self_cgroup) is None
    root, self_cgroup = cgroupfs(tmp_path / "no-v2-line")
    self_cgroup.write_text("4:memory:/user.slice\n")
    assert CgroupV2Limits.detect(root, self_cgroup) is None


def test_a_replica_gets_cpu_max_from_its_cores_and_memory_max_from_its_bytes(tmp_path: Path) -> None:
    limits = CgroupV2Limits(tmp_path)
    limits.place("web-0@3", 4242, cpu=0.5, memory_bytes=256 * 1024 * 1024)
    group = tmp_path / "replica-web-0_3"
    assert (group / "cpu.max").read_text() == "50000 100000\n"
    assert (group / "memory.max").read_text() == f"{256 * 1024 * 1024}\n"
    assert (group / "cgroup.procs").read_text() == "4242\n"


def test_cpu_max_is_unlimited_without_a_request_and_never_below_the_kernels_minimum() -> None:
    assert cpu_max(None) == "max 100000"
    assert cpu_max(2) == "200000 100000"
    assert cpu_max(0.001) == "1000 100000"


def test_an_empty_replica_cgroup_is_removed_when_released(tmp_path: Path) -> None:
    limits = CgroupV2Limits(tmp_path)
    (tmp_path / "replica-web-0").mkdir()
    limits.release("web-0")
    assert not (tmp_path / "replica-web-0").exists()
    limits.release("web-0")  # already gone: no error


def test_the_process_driver_uses_the_cgroup_instead_of_rlimit_as_and_says_so(tmp_path: Path) -> None:
    async def scenario() -> None:
        runtime = ProcessRuntime(CgroupV2Limits(tmp_path / "base"))
        (tmp_path / "base").mkdir()
        spec = LaunchSpec(
            "job-0@1",
            "job-0",
            "n1",
            ("sleep", "30"),
            directory=tmp_path / "job-0",
            memory_bytes=2**30,
            cpu=1.5,
        )
        unit = await runtime.start(spec)
        try:
            group = tmp_path / "base" / "replica-job-0_1"
            assert (group / "cgroup.procs").read_text() == f"{unit.pid}\n"
            assert (group / "cpu.max").read_text() == "150000 100000\n"
            assert psutil.Process(unit.pid).rlimit(psutil.RLIMIT_AS) == resource.getrlimit(
                resource.RLIMIT_AS
            )  # not lowered
            assert runtime.record_of(unit)["cgroup"] == "job-0@1"
        finally:
            await runtime.stop(unit, 15, 5.0)
        assert runtime.limits == CGROUP_V2

    asyncio.run(scenario())
    assert ProcessRuntime().limits == RLIMIT_ONLY
