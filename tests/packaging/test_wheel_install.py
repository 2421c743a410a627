"""``pip install`` of the built wheel into a fresh venv, then ``loadmaster up --exit`` from an empty
directory: the examples ship inside the package, so a user without the source tree sees placements."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.e2e.processes import free_port

SOURCE = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT_S = 600  # dependencies come from pip's cache; a cold cache downloads them


def _run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(arg) for arg in args],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
        cwd=cwd,
    )
    assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"
    return done


def test_the_wheel_installed_in_a_fresh_venv_runs_up_with_its_bundled_examples(tmp_path: Path) -> None:
    # Build from a copy, so the build leaves nothing in the source tree (links stay links).
    tree = tmp_path / "source"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(SOURCE / name, tree / name)
    for name in ("src", "examples"):
        shutil.copytree(
            SOURCE / name,
            tree / name,
            symlinks=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
        )
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp_path / "dist", tree)
    (wheel,) = (tmp_path / "dist").glob("loadmaster-*.whl")
    _run(sys.executable, "-m", "venv", tmp_path / "venv")
    _run(tmp_path / "venv" / "bin" / "pip", "install", "-q", wheel)

    empty = tmp_path / "elsewhere"
    empty.mkdir()
    located = _run(
        tmp_path / "venv" / "bin" / "python", "-c", "import loadmaster; print(loadmaster.__file__)"
    )
    assert located.stdout.startswith(str(tmp_path / "venv")), located.stdout  # the wheel, not the source
    port = free_port()
    up = _run(
        tmp_path / "venv" / "bin" / "loadmaster", "up", "--exit", "--listen", f"127.0.0.1:{port}", cwd=empty
    )
    assert "deployments/shop created" in up.stdout and "jobs/train-resnet created" in up.stdout
    assert "placed 8 of 8 replicas" in up.stdout
    assert (empty / ".loadmaster" / "admin-token").exists()
