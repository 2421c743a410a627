"""``loadmaster server --log-level``: routine cycles log at debug, so an operator can ask for them; a level
that does not exist is refused naming the option, before anything starts."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from loadmaster.cli.main import app


def test_an_unknown_log_level_is_refused_naming_the_option(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["server", "--data-dir", str(tmp_path), "--log-level", "verbose"])
    assert result.exit_code == 2
    assert 'log_level (--log-level): expected debug, info, warning, error, got "verbose"' in result.output
    assert not (tmp_path / "admin-token").exists()  # nothing started
