"""``loadmaster replay`` end to end: the CLI writes the summary and the report, bad input exits 2 naming
what is wrong, and the report renders in headless Chromium with its plots and no console errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCENARIO = """
name: two-teams
nodes:
  - {name: n1, capacity: {cpu: 4, memory: 8Gi, gpu: 2}}
  - {name: n2, capacity: {cpu: 4, memory: 8Gi, gpu: 2}}
jobs:
  - {name: train, min_available: 2, tasks: [{name: t0, request: {gpu: 1}}, {name: t1, request: {gpu: 1}}]}
  - {name: web, tasks: [{name: w0, request: {cpu: 1}}]}
"""
PACK = "name: packed\nprofile: gpu_pack\n"


def replay(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "loadmaster", "replay", *map(str, args)]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture
def report(tmp_path: Path) -> Path:
    (tmp_path / "cluster.yaml").write_text(SCENARIO)
    (tmp_path / "pack.yaml").write_text(PACK)
    done = replay("cluster.yaml", "--out", "out", "--compare", "pack.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "wrote out/summary.json" in done.stdout
    return tmp_path / "out"


def test_the_summary_has_one_entry_per_config_with_every_figure(report: Path) -> None:
    summary = json.loads((report / "summary.json").read_text())
    assert summary["trace"] == "cluster.yaml"
    assert [c["name"] for c in summary["configs"]] == ["default", "packed"]
    for figures in summary["configs"]:
        assert (figures["jobs"], figures["placed"], figures["never_placed"]) == (2, 2, 0)
        assert set(figures) >= {
            "wait_s",
            "utilisation",
            "fragmented_gpu",
            "evictions",
            "moves",
            "scheduler_cpu_s",
        }
        assert figures["utilisation"]["gpu"] == 0.5  # the gang holds 2 of the 4 GPUs throughout


def test_the_report_renders_its_table_and_plots_in_a_browser_without_console_errors(report: Path) -> None:
    page = (report / "report.html").resolve()
    assert "cdn" not in page.read_text().lower().split("<script>")[0]  # nothing fetched before the inline JS
    done = subprocess.run(
        ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=10000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert 'id="figures"' in dom and "packed" in dom
    assert dom.count('class="main-svg"') >= 2 * 5  # five plots drawn (each has two SVG layers)
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []


def test_a_config_with_an_unknown_key_exits_2_naming_it(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(SCENARIO)
    (tmp_path / "bad.yaml").write_text("name: x\nprofil: gpu_pack\n")
    done = replay("cluster.yaml", "--out", "out", "--config", "bad.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert "bad.yaml" in done.stderr and "profil" in done.stderr
    assert not (tmp_path / "out").exists()


def test_an_unknown_trace_exits_2(tmp_path: Path) -> None:
    done = replay("google-2011", "--out", "out", "--data", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2 and "google-2011" in done.stderr
