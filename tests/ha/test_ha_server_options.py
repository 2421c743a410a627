"""``loadmaster server --lease-ttl``: a TTL etcd cannot honour is refused before anything starts."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from loadmaster.cli.main import app
from loadmaster.runtime.config import ConfigError, ServerConfig


@pytest.mark.parametrize("ttl", [pytest.param("1", id="below-etcds-minimum"), pytest.param("0", id="zero")])
def test_a_lease_ttl_below_two_seconds_is_refused_naming_the_option(ttl: str) -> None:
    # Nothing listens on port 1: had the check not stopped it, the server would fail to reach etcd instead.
    result = CliRunner().invoke(app, ["server", "--store", "etcd://127.0.0.1:1", "--lease-ttl", ttl])
    assert result.exit_code == 2
    assert f"lease_ttl_s (--lease-ttl): must be a whole number >= 2, got {ttl}" in result.output


@pytest.mark.parametrize(
    "ttl", [pytest.param(2.5, id="fraction"), pytest.param(True, id="bool"), pytest.param(-3, id="negative")]
)
def test_a_lease_ttl_that_is_not_a_whole_number_of_seconds_is_a_config_error(ttl: object) -> None:
    with pytest.raises(ConfigError, match=r"lease_ttl_s \(--lease-ttl\)"):
        ServerConfig(store="etcd://127.0.0.1:2379", lease_ttl_s=ttl).check()  # type: ignore[arg-type]


def test_the_default_lease_ttl_is_fifteen_seconds() -> None:
    assert ServerConfig().lease_ttl_s == 15
