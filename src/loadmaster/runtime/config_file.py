"""``loadmaster server --config loadmaster.yaml`` and ``LOADMASTER_*`` environment overrides.

Generic over ``ServerConfig``'s fields, so a field added there is settable here without a change:

* the file's key is the field's name, without the ``_s`` of a duration (``not_ready_after: 90s``,
  ``cleanup_retention: 30d``; a plain number is seconds); a dataclass field is a nested mapping of its
  own fields (``http_limits: {max_connections: 100}``);
* ``scheduler:`` takes the scenario format's ``config`` block (``scenario/config.py``): ``profile``,
  ``strategy``, ``actions``, ``staleness_grace_period``, ``max_eviction_ratio``,
  ``max_consolidation_moves``, ``license_tiers``;
* ``LOADMASTER_<KEY>`` sets a top-level key and ``LOADMASTER_<FIELD>_<KEY>`` a nested one
  (``LOADMASTER_SCHEDULER_PROFILE=lablet``); its value is read as a YAML scalar or flow list
  (``LOADMASTER_SCHEDULER_ACTIONS="[allocate, reclaim]"``).

Precedence: the defaults, then the file, then the environment, then flags given on the command line.
An unknown key or a bad value is refused naming it (``loadmaster.yaml: scheduler.profile: ...``,
``LOADMASTER_RESTART_BUDGET: ...``); the server does not start.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from loadmaster.core.model import SchedulerConfig
from loadmaster.core.search_backoff import SearchBackoff
from loadmaster.runtime.config import ServerConfig
from loadmaster.scenario.config import as_config
from loadmaster.scenario.errors import ScenarioError, did_you_mean
from loadmaster.scenario.fields import as_bool, as_duration_s, as_int, as_mapping, as_number, as_str
from loadmaster.scenario.schema import load_document, parse_yaml_document

ENV_PREFIX = "LOADMASTER_"
# Environment variables of other commands, not server settings: the CLI's (which server, which token,
# which context and contexts file, shell completion) and replay's traces folder.
_NOT_SETTINGS = frozenset(
    {
        "LOADMASTER_SERVER",
        "LOADMASTER_TOKEN",
        "LOADMASTER_URL",
        "LOADMASTER_CONTEXT",
        "LOADMASTER_CONFIG",
        "LOADMASTER_COMPLETE",
        "LOADMASTER_TRACES",
    }
)


class ConfigFileError(ValueError):
    """A key or value of the file or the environment that cannot work; the message names it."""


def file_key(field: dataclasses.Field[Any]) -> str:
    return field.name[:-2] if field.name.endswith("_s") else field.name


def _reader(name: str, hint: Any, current: Any) -> Callable[[object, str], Any]:
    """How a value for a field named ``name`` of type ``hint`` (now ``current``) is read and checked; a
    nested mapping changes only the keys it gives."""
    if hint is SchedulerConfig:
        return lambda value, path: _scheduler(current, value, path)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return lambda value, path: read_dataclass(hint, value, path, current)
    if hint is bool:
        return as_bool
    if hint is int:
        return as_int
    if hint is float:
        return as_duration_s if name.endswith("_s") else as_number
    if hint is Path:
        return lambda value, path: value if isinstance(value, Path) else Path(as_str(value, path))
    if hint is str:
        return as_str
    raise TypeError(f"no reader for setting {name} of type {hint!r}")


def _scheduler(current: SchedulerConfig, value: object, path: str) -> SchedulerConfig:
    """The scenario format's ``config`` block over ``current``: only the keys given change."""
    parsed = as_config(value, path)
    given = {
        "staleness_grace_period_s" if key == "staleness_grace_period" else str(key)
        for key in as_mapping(value, path)
    }
    return dataclasses.replace(current, **{field: getattr(parsed, field) for field in given})


def read_dataclass(cls: type[Any], value: object, path: str, base: Any = None) -> Any:
    """An instance of ``cls`` (or ``base`` with changes) from a mapping of its file keys."""
    mapping = as_mapping(value, path)
    current = base if base is not None else cls()
    hints = typing.get_type_hints(cls)
    by_key = {file_key(field): field for field in dataclasses.fields(cls) if field.init}
    changes: dict[str, Any] = {}
    for key, raw in mapping.items():
        where = f"{path}.{key}" if path else str(key)
        field = by_key.get(str(key))
        if field is None:
            raise ScenarioError(where, "unknown setting" + did_you_mean(str(key), tuple(by_key)))
        read = _reader(field.name, hints[field.name], getattr(current, field.name))
        changes[field.name] = read(raw, where)
    return dataclasses.replace(current, **changes)


def read_search_backoff(value: object, path: str) -> SearchBackoff:
    """The server's ``search_backoff`` block (``{consolidate_min: 30s, consolidate_max: 5m}``), read and
    checked as the server reads it, wherever a file carries one (a replay's run config, a timeline's
    ``config:``): errors name ``PATH.KEY``."""
    backoff: SearchBackoff = read_dataclass(SearchBackoff, value, path)
    for key, problem in backoff.problems():
        raise ScenarioError(f"{path}.{key}", problem)
    return backoff


def environment_settings(cls: type[Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """The ``LOADMASTER_*`` variables as a mapping of file keys (nested for dataclass fields)."""
    hints = typing.get_type_hints(cls)
    keys = {file_key(f): f for f in dataclasses.fields(cls) if f.init}
    nested = {key for key, f in keys.items() if dataclasses.is_dataclass(hints[f.name])}
    settings: dict[str, Any] = {}
    for variable in sorted(environ):
        if not variable.startswith(ENV_PREFIX) or variable in _NOT_SETTINGS:
            continue
        name = variable[len(ENV_PREFIX) :].lower()
        value = _scalar(environ[variable], variable)
        parent = next(
            (key for key in sorted(nested, key=len, reverse=True) if name.startswith(f"{key}_")), None
        )
        if parent is not None:
            settings.setdefault(parent, {})[name[len(parent) + 1 :]] = value
        elif name in keys:
            settings[name] = value
        else:
            raise ConfigFileError(f"{variable}: unknown setting" + did_you_mean(name, tuple(keys)))
    return settings


def _scalar(text: str, variable: str) -> object:
    try:
        return parse_yaml_document(text) if text.strip() else text
    except ScenarioError as error:
        raise ConfigFileError(f"{variable}: {error.message}") from None


def load_settings(cls: type[Any], base: Any, path: Path | None, environ: Mapping[str, str]) -> Any:
    """``base`` with the file's settings, then the environment's, applied (each checked, named)."""
    config = base
    if path is not None:
        try:
            document = load_document(path)
            config = read_dataclass(cls, {} if document is None else document, "", config)
        except ScenarioError as error:
            raise ConfigFileError(f"{path.name}: {error}") from None
    try:
        config = read_dataclass(cls, environment_settings(cls, environ), "", config)
    except ScenarioError as error:
        variable = ENV_PREFIX + error.path.replace(".", "_").upper()
        raise ConfigFileError(f"{variable}: {error.message}") from None
    return config


def server_config(flags: Mapping[str, Any], path: Path | None, environ: Mapping[str, str]) -> ServerConfig:
    """The server's settings: defaults, the file, the environment, then ``flags`` (the ones given on the
    command line, by ServerConfig field; a duration flag may be text such as ``30d``)."""
    config: ServerConfig = load_settings(ServerConfig, ServerConfig(), path, environ)
    given = {_flag_key(name): value for name, value in flags.items()}
    try:
        configured = read_dataclass(ServerConfig, given, "", config)
    except ScenarioError as error:
        raise ConfigFileError(f"--{error.path.replace('_', '-')}: {error.message}") from None
    assert isinstance(configured, ServerConfig)
    return configured


def _flag_key(field_name: str) -> str:
    return field_name[:-2] if field_name.endswith("_s") else field_name
