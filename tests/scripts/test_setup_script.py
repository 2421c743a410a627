"""scripts/setup, run on a copy of the project whose .venv holds a stand-in pip: a failed install fails
the script loudly (pip's output shown, non-zero exit) and never marks the venv as installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

SETUP = Path(__file__).resolve().parents[2] / "scripts" / "setup"


def project_with_pip(tmp_path: Path, pip_exit: int) -> Path:
    """A project copy whose .venv/bin/pip prints a line and exits with ``pip_exit``."""
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    shutil.copy(SETUP, project / "scripts" / "setup")
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    bin_dir = project / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "pip").write_text(
        f"#!/bin/sh\necho 'ERROR: No matching distribution found for numpy==0.0'\nexit {pip_exit}\n"
    )
    (bin_dir / "python").write_text("#!/bin/sh\nexit 0\n")
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    return project


def run_setup(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(project / "scripts" / "setup"), "--dev"], capture_output=True, text=True, check=False
    )


def test_a_failed_pip_install_fails_setup_with_pips_output_and_no_stamp(tmp_path: Path) -> None:
    project = project_with_pip(tmp_path, pip_exit=1)
    result = run_setup(project)
    assert result.returncode != 0
    assert "No matching distribution found" in result.stdout + result.stderr
    assert "failed" in result.stderr
    assert not (project / ".venv" / ".installed-dev").exists()


def test_a_successful_install_marks_the_venv_installed(tmp_path: Path) -> None:
    project = project_with_pip(tmp_path, pip_exit=0)
    result = run_setup(project)
    assert result.returncode == 0, result.stderr
    assert (project / ".venv" / ".installed-dev").exists()
