"""Named connections in ``~/.config/loadmaster/config.yaml`` (kubectl's contexts, loadmaster's fields).

    current_context: prod
    contexts:
      local: {server: "http://127.0.0.1:7480", token_file: /home/me/lm/.loadmaster/admin-token}
      prod:  {server: "http://lm.internal:7480", token: "..."}

The file is ``$LOADMASTER_CONFIG`` when set, else ``$XDG_CONFIG_HOME/loadmaster/config.yaml`` (default
``~/.config``); ``LOADMASTER_CONTEXT`` picks a context for one command instead of ``current_context``.
It holds tokens, so it is written with mode 0600. A malformed file is an error naming the file, never
silently ignored (a command would otherwise talk to the wrong server).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from loadmaster.cli.remote.client import EXIT_BAD_INPUT, CommandError

CONFIG_VARIABLE = "LOADMASTER_CONFIG"
CONTEXT_VARIABLE = "LOADMASTER_CONTEXT"
CONTEXT_FIELDS = ("server", "token", "token_file")


@dataclass(frozen=True, slots=True)
class Context:
    name: str
    server: str | None = None
    token: str | None = None
    token_file: str | None = None

    def resolved_token(self) -> str | None:
        """The context's token, or the contents of its token file."""
        if self.token:
            return self.token
        if not self.token_file:
            return None
        try:
            return Path(self.token_file).expanduser().read_text().strip() or None
        except OSError as exc:
            raise CommandError(
                f"context {self.name}: cannot read token_file {self.token_file}: {exc.strerror}"
            ) from None


def config_path() -> Path:
    explicit = os.environ.get(CONFIG_VARIABLE)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "loadmaster" / "config.yaml"


def read_config(path: Path | None = None) -> dict[str, Any]:
    """The file as ``{"current_context": str | None, "contexts": {name: {field: str}}}``; empty if absent."""
    path = path or config_path()
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {"current_context": None, "contexts": {}}
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise CommandError(f"{path} is not valid YAML: {exc}", EXIT_BAD_INPUT) from None
    contexts = data.get("contexts") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(contexts or {}, dict):
        raise CommandError(f"{path}: expected a mapping with current_context and contexts", EXIT_BAD_INPUT)
    for name, fields in (contexts or {}).items():
        unknown = set(fields or {}) - set(CONTEXT_FIELDS) if isinstance(fields, dict) else {"(not a mapping)"}
        if unknown:
            raise CommandError(
                f"{path}: context {name}: unknown field(s) {', '.join(sorted(unknown))}; "
                f"expected {', '.join(CONTEXT_FIELDS)}",
                EXIT_BAD_INPUT,
            )
    return {"current_context": data.get("current_context"), "contexts": dict(contexts or {})}


def write_config(config: dict[str, Any], path: Path | None = None) -> Path:
    path = path or config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as out:
        yaml.safe_dump(config, out, sort_keys=False, default_flow_style=False)
    return path


def context_named(config: dict[str, Any], name: str) -> Context:
    fields = config["contexts"].get(name)
    if fields is None:
        known = ", ".join(sorted(config["contexts"])) or "none yet (loadmaster config set-context)"
        raise CommandError(f"no context named {name} in {config_path()}; known: {known}", EXIT_BAD_INPUT)
    return Context(name, **{key: str(value) for key, value in (fields or {}).items()})


def current_context() -> Context | None:
    """The context in force: ``LOADMASTER_CONTEXT``, else the file's ``current_context``, else None."""
    config = read_config()
    name = os.environ.get(CONTEXT_VARIABLE) or config.get("current_context")
    return context_named(config, str(name)) if name else None
