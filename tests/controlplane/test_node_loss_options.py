"""The server's node-loss settings: `loadmaster server --node-loss-policy ...` reaches the controllers,
and a value that cannot work is refused naming the option."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from loadmaster.cli.main import app
from loadmaster.runtime.config import ConfigError, ServerConfig
from loadmaster.runtime.wiring import settings_of


def test_the_server_config_reaches_the_node_loss_settings() -> None:
    config = ServerConfig(node_loss_policy="all", node_loss_wait_s=12.0, agent_down_wait_s=7.0)
    settings = settings_of(config).node_loss
    assert (settings.policy, settings.wait_s, settings.agent_down_wait_s) == ("all", 12.0, 7.0)


@pytest.mark.parametrize(
    ("config", "words"),
    [
        pytest.param(ServerConfig(node_loss_policy="most"), "--node-loss-policy", id="unknown-policy"),
        pytest.param(ServerConfig(node_loss_wait_s=-1), "--node-loss-wait-s", id="negative-wait"),
        pytest.param(ServerConfig(agent_down_wait_s=-1), "--agent-down-wait-s", id="negative-agent-wait"),
    ],
)
def test_a_node_loss_setting_that_cannot_work_is_refused_naming_the_option(
    config: ServerConfig, words: str
) -> None:
    with pytest.raises(ConfigError, match=words):
        config.check()


def test_the_server_command_refuses_an_unknown_policy_with_exit_2() -> None:
    result = CliRunner().invoke(app, ["server", "--node-loss-policy", "sometimes", "--store", "memory"])
    assert result.exit_code == 2
    assert "--node-loss-policy" in result.output and "single_replica | all | none" in result.output
