"""``loadmaster apply -f FILE|DIR|-``: create or update objects; prints created / configured / unchanged."""

from __future__ import annotations

from typing import Annotated

import typer

from loadmaster.cli.failures import reports_failures
from loadmaster.cli.manifest_files import joined_yaml, read_sources, validate_sources
from loadmaster.cli.remote.client import DEFAULT_SERVER
from loadmaster.cli.remote.connection import (
    DEFAULT_DATA_DIR,
    DataDirOption,
    ServerOption,
    TokenOption,
    connect,
)
from loadmaster.manifests import ManifestError, normalize_kind, object_ref

FilesOption = Annotated[
    list[str],
    typer.Option("--filename", "-f", help="A YAML file, a directory (recursive) or - for stdin; repeatable."),
]


def applied_line(item: dict[str, object]) -> str:
    """``deployments/shop created``: how kubectl users expect to read it."""
    kind, name, action = str(item.get("kind", "")), str(item.get("name", "")), str(item.get("action", ""))
    try:
        return f"{object_ref(normalize_kind(kind), name)} {action}"
    except ManifestError:
        return f"{kind}/{name} {action}"


@reports_failures
def apply_command(
    filename: FilesOption,
    validate: Annotated[
        bool,
        typer.Option(
            "--validate/--no-validate",
            help="Check the manifests here first (default); --no-validate sends the YAML as written.",
        ),
    ] = True,
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Create or update the objects in the files. All or nothing: one bad document stores nothing."""
    sources = read_sources(filename)
    # Validated before connecting: a typo is reported even when no server is running.
    manifests = validate_sources(sources) if validate else None
    with connect(server, token, data_dir) as api:
        if manifests is not None:
            result = api.post("/api/apply", json={"items": [manifest.to_dict() for manifest in manifests]})
        else:
            result = api.post_text("/api/apply", joined_yaml(sources))
    for item in result.get("items", []):
        typer.echo(applied_line(item))


def register(app: typer.Typer) -> None:
    app.command("apply")(apply_command)
