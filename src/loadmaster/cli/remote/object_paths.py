"""Kinds and names typed on the command line, checked before they become URLs (``/api/replicas/web-0``)."""

from __future__ import annotations

from typing import Annotated

import typer

from loadmaster.cli.remote.client import EXIT_BAD_INPUT, CommandError
from loadmaster.manifests import REPLICA, ManifestError, normalize_kind, plural_of
from loadmaster.manifests.documents import REPLICA_NAME_MAX
from loadmaster.manifests.validation import DNS_NAME_MAX, dns_name_problem

# The KIND NAME pair of commands that act on one object (checked by kind_argument and object_path).
KindArgument = Annotated[str, typer.Argument(help="The kind (singular, plural or lowercase).")]
NameArgument = Annotated[str, typer.Argument(help="The object's name.")]


def kind_argument(text: str) -> str:
    """``replicas``, ``Replica``, ``worker-templates`` -> the canonical kind; exit 2 if unknown."""
    try:
        return normalize_kind(text)
    except ManifestError as exc:
        raise CommandError(exc.message, EXIT_BAD_INPUT) from None


def collection_path(kind: str) -> str:
    return f"/api/{plural_of(kind)}"


def object_path(kind: str, name: str) -> str:
    """The object's URL path; a name that no object can have is refused here (it might not even be a URL)."""
    problem = dns_name_problem(name, REPLICA_NAME_MAX if kind == REPLICA else DNS_NAME_MAX)
    if problem:
        raise CommandError(f"NAME: {problem}", EXIT_BAD_INPUT)
    return f"{collection_path(kind)}/{name}"
