"""``up``'s next steps name the CLI the way it was started, so each line runs as printed."""

from __future__ import annotations

import os
from pathlib import Path

from loadmaster.cli.invocation import command_prefix


def _script(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_a_loadmaster_that_is_the_one_on_path_is_named_bare(tmp_path: Path) -> None:
    script = _script(tmp_path / "bin" / "loadmaster")
    assert command_prefix(str(script), path_env=str(script.parent), cwd=tmp_path) == "loadmaster"


def test_a_venv_loadmaster_not_on_path_is_named_by_its_path_relative_to_here(tmp_path: Path) -> None:
    _script(tmp_path / ".venv" / "bin" / "loadmaster")
    other = _script(tmp_path / "elsewhere" / "loadmaster")  # another installation on PATH
    prefix = command_prefix(".venv/bin/loadmaster", path_env=str(other.parent), cwd=tmp_path)
    assert prefix == ".venv/bin/loadmaster"


def test_a_loadmaster_outside_this_directory_is_named_by_its_absolute_path(tmp_path: Path) -> None:
    script = _script(tmp_path / "opt" / "loadmaster")
    here = tmp_path / "work"
    here.mkdir()
    assert command_prefix(str(script), path_env="", cwd=here) == str(script)


def test_python_dash_m_is_repeated_with_the_same_interpreter(tmp_path: Path) -> None:
    main = str(tmp_path / "src" / "loadmaster" / "__main__.py")
    assert command_prefix(main, path_env="", cwd=tmp_path, python="/usr/bin/python3") == (
        "/usr/bin/python3 -m loadmaster"
    )


def test_an_interpreter_in_this_directory_is_made_runnable_with_dot_slash(tmp_path: Path) -> None:
    prefix = command_prefix("-c", path_env=os.defpath, cwd=tmp_path, python=str(tmp_path / "python"))
    assert prefix == "./python -m loadmaster"


def test_a_path_with_a_space_is_quoted_for_the_shell(tmp_path: Path) -> None:
    script = _script(tmp_path / "my tools" / "loadmaster")
    assert command_prefix(str(script), path_env="", cwd=tmp_path) == "'my tools/loadmaster'"
