"""Where the CLI finds its server and token: flag, then environment, then the data dir's admin token."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadmaster.cli.remote.client import CommandError
from loadmaster.cli.remote.connection import resolve_token


def test_a_given_token_wins_over_the_data_dir(tmp_path: Path) -> None:
    (tmp_path / "admin-token").write_text("from-file\n")
    assert resolve_token("given", tmp_path) == "given"


def test_without_a_token_the_data_dirs_admin_token_is_used(tmp_path: Path) -> None:
    (tmp_path / "admin-token").write_text("  from-file\n")
    assert resolve_token(None, tmp_path) == "from-file"


def test_without_any_token_none_is_sent_and_the_server_answers_401(tmp_path: Path) -> None:
    assert resolve_token(None, tmp_path) is None
    (tmp_path / "admin-token").write_text("\n")
    assert resolve_token(None, tmp_path) is None


def test_a_token_path_that_is_a_directory_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "admin-token").mkdir()
    with pytest.raises(CommandError, match=r"cannot read the admin token .*admin-token: Is a directory"):
        resolve_token(None, tmp_path)
