"""``loadmaster preview -f FILE``: where the real engine would put these workloads now; stores nothing."""

from __future__ import annotations

from typing import Annotated

import typer

from loadmaster.cli.commands.apply import FilesOption
from loadmaster.cli.failures import reports_failures
from loadmaster.cli.manifest_files import read_sources, validate_sources
from loadmaster.cli.remote.client import DEFAULT_SERVER
from loadmaster.cli.remote.connection import (
    DEFAULT_DATA_DIR,
    DataDirOption,
    ServerOption,
    TokenOption,
    connect,
)
from loadmaster.cli.views.output import OutputFormat, OutputOption, console, print_data
from loadmaster.cli.views.preview import DEFAULT_TOP, preview_view


@reports_failures
def preview_command(
    filename: FilesOption,
    top: Annotated[int, typer.Option("--top", min=1, help="Candidates shown per replica.")] = DEFAULT_TOP,
    output: OutputOption = OutputFormat.TABLE,
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Dry-run placement of Deployments/Jobs on the current cluster: candidates, rejections, forecast."""
    manifests = validate_sources(read_sources(filename))
    with connect(server, token, data_dir) as api:
        result = api.post("/api/scheduling/preview", json={"items": [m.to_dict() for m in manifests]})
    if not print_data(result, output):
        console().print(preview_view(result, top))


def register(app: typer.Typer) -> None:
    app.command("preview")(preview_command)
