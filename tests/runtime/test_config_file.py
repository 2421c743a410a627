"""Server settings from a file and the environment: generic over ServerConfig, each bad key named."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadmaster.core.search_backoff import SearchBackoff
from loadmaster.runtime.config import ConfigError, ServerConfig
from loadmaster.runtime.config_file import ConfigFileError, server_config

DOCS = Path(__file__).parents[2] / "docs" / "server-config.md"


def test_the_documented_example_file_is_valid_and_means_the_defaults(tmp_path: Path) -> None:
    example = DOCS.read_text().split("```yaml")[1].split("```")[0]
    (tmp_path / "loadmaster.yaml").write_text(example)
    config = server_config({}, tmp_path / "loadmaster.yaml", {})
    config.check()
    defaults = server_config({}, None, {})
    assert (config.scheduler, config.restart_budget, config.cleanup_retention_s, config.http_limits) == (
        defaults.scheduler,
        defaults.restart_budget,
        defaults.cleanup_retention_s,
        defaults.http_limits,
    )


def test_a_nested_environment_setting_changes_only_its_own_key(tmp_path: Path) -> None:
    (tmp_path / "lm.yaml").write_text(
        "scheduler: {actions: [allocate, reclaim], max_consolidation_moves: 4}\n"
    )
    config = server_config({}, tmp_path / "lm.yaml", {"LOADMASTER_SCHEDULER_PROFILE": "lablet"})
    assert (config.scheduler.profile, config.scheduler.actions, config.scheduler.max_consolidation_moves) == (
        "lablet",
        ("allocate", "reclaim"),
        4,
    )


def test_a_flag_given_on_the_command_line_wins_over_file_and_environment(tmp_path: Path) -> None:
    (tmp_path / "lm.yaml").write_text("cleanup_retention: 7d\n")
    config = server_config(
        {"cleanup_retention_s": "1d"}, tmp_path / "lm.yaml", {"LOADMASTER_CLEANUP_RETENTION": "2d"}
    )
    assert config.cleanup_retention_s == 86400.0


@pytest.mark.parametrize(
    ("file_text", "environ", "named"),
    [
        pytest.param(
            "restart_budgt: 1\n", {}, "lm.yaml: restart_budgt: unknown setting; did you mean", id="typo"
        ),
        pytest.param(
            "cleanup_interval: soon\n", {}, "lm.yaml: cleanup_interval: bad duration", id="bad-duration"
        ),
        pytest.param("", {"LOADMASTER_SCHEDULER_PROFIL": "x"}, "LOADMASTER_SCHEDULER_PROFIL", id="env-typo"),
        pytest.param(
            "", {"LOADMASTER_MAX_REPLICAS": "many"}, "LOADMASTER_MAX_REPLICAS: expected", id="env-type"
        ),
    ],
)
def test_a_bad_key_or_value_is_refused_naming_it(
    tmp_path: Path, file_text: str, environ: dict[str, str], named: str
) -> None:
    (tmp_path / "lm.yaml").write_text(file_text)
    with pytest.raises(ConfigFileError) as refused:
        server_config({}, tmp_path / "lm.yaml", environ)
    assert named in str(refused.value)


def test_the_variables_of_other_commands_are_not_taken_for_server_settings() -> None:
    environ = {
        "LOADMASTER_TOKEN": "t",
        "LOADMASTER_SERVER": "http://127.0.0.1:7480",
        "LOADMASTER_CONTEXT": "lab",
        "LOADMASTER_CONFIG": "/tmp/contexts.yaml",
        "LOADMASTER_TRACES": "/tmp/traces",
    }
    assert server_config({}, None, environ) == server_config({}, None, {})
    with pytest.raises(ConfigFileError, match="LOADMASTER_NO_SUCH_SETTING"):
        server_config({}, None, {"LOADMASTER_NO_SUCH_SETTING": "1"})


@pytest.mark.parametrize(
    ("file_text", "environ", "debounce_s", "tick_on"),
    [
        pytest.param("", {}, 0.05, True, id="defaults"),
        pytest.param(
            "safety_tick_enabled: false\ndebounce: 500ms\n", {}, 0.5, False, id="file-watch-only-lrs-debounce"
        ),
        pytest.param(
            "safety_tick_enabled: true\n",
            {"LOADMASTER_SAFETY_TICK_ENABLED": "false", "LOADMASTER_DEBOUNCE": "0.5s"},
            0.5,
            False,
            id="environment-wins-over-file",
        ),
    ],
)
def test_the_safety_tick_can_be_switched_off_and_the_debounce_set_in_file_and_environment(
    tmp_path: Path, file_text: str, environ: dict[str, str], debounce_s: float, tick_on: bool
) -> None:
    (tmp_path / "lm.yaml").write_text(file_text)
    config = server_config({}, tmp_path / "lm.yaml", environ)
    config.check()
    assert (config.debounce_s, config.safety_tick_enabled) == (debounce_s, tick_on)


def test_a_safety_tick_switch_that_is_not_true_or_false_is_refused_naming_it() -> None:
    with pytest.raises(ConfigFileError, match="LOADMASTER_SAFETY_TICK_ENABLED: expected true or false"):
        server_config({}, None, {"LOADMASTER_SAFETY_TICK_ENABLED": "sometimes"})


def test_the_failed_search_backoff_is_set_per_action_in_file_and_environment(tmp_path: Path) -> None:
    (tmp_path / "lm.yaml").write_text("search_backoff: {consolidate_min: 30s, consolidate_max: 5m}\n")
    config = server_config({}, tmp_path / "lm.yaml", {"LOADMASTER_SEARCH_BACKOFF_PREEMPT_MIN": "10s"})
    config.check()
    backoff = config.search_backoff
    assert (backoff.bounds("consolidate"), backoff.bounds("preempt"), backoff.bounds("reclaim")) == (
        (30, 300),
        (10, 10),
        None,
    )
    assert not server_config({}, None, {}).search_backoff.enabled  # off by default
    (tmp_path / "bad.yaml").write_text("search_backoff: {reclaim_min: -1}\n")
    with pytest.raises(ConfigFileError, match=r"bad\.yaml: search_backoff\.reclaim_min: negative duration"):
        server_config({}, tmp_path / "bad.yaml", {})
    made = ServerConfig(search_backoff=SearchBackoff(reclaim_min_s=-1))  # made in code, not read
    with pytest.raises(ConfigError, match=r"search_backoff\.reclaim_min: must be >= 0 seconds, got -1"):
        made.check()
