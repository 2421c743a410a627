"""The shapes of the API's answers, for the OpenAPI document (``/openapi.json``, ``/docs``).

Routes declare them as ``response_model`` and still answer with a ``FastJSONResponse`` they build
themselves: FastAPI then documents the model and neither validates nor re-encodes the answer (the
msgspec encoder stays the one path, ``responses.py``). So these models describe; the code that builds
each answer (named beside each model) is what the answer is. Open objects (``extra="allow"``) are
answers that carry more fields than the ones named here (stored objects, explanations). The answers
the Python client types too are declared once, in ``loadmaster/wire.py`` (apply's items, why,
queue-state): their fields' docstrings become the document's descriptions.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, with_config

from loadmaster.wire import ApplyItem, QueueFigures, QueueState, WhyAnswer

# Every shape a route names: the models below and those shared with the client (declared in wire.py).
__all__ = [
    "ApplyResult",
    "Candidate",
    "DeleteResult",
    "Disruption",
    "Health",
    "Items",
    "ObjectList",
    "ObjectRef",
    "PreviewItem",
    "PreviewResult",
    "QueueState",
    "Readiness",
    "Record",
    "ServerInfo",
    "StoredObject",
    "WhyAnswer",
]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


# wire.py documents fields with attribute docstrings (it imports no pydantic): read them as descriptions.
for _shared in (ApplyItem, WhyAnswer, QueueState, QueueFigures):
    with_config(ConfigDict(use_attribute_docstrings=True))(_shared)


# -- objects (runtime/requests/reads/object_reads.py, writes/object_writes.py) -------------------------------


class StoredObject(_Open):
    """A stored object as docs/api.md shows it: the manifest plus the server's ``status``."""

    api_version: str = "loadmaster/v1"
    kind: str
    metadata: dict[str, Any]
    spec: dict[str, Any] = Field(default_factory=dict)
    status: dict[str, Any] | None = None


class ObjectList(BaseModel):
    items: list[StoredObject]
    revision: int = Field(description="the store's revision the list was read at (watch from here)")


class ApplyResult(BaseModel):
    items: list[ApplyItem]
    transactions: int = Field(description="1: the apply was stored all or nothing")


class ObjectRef(BaseModel):
    kind: str
    name: str


class DeleteResult(BaseModel):
    deleted: ObjectRef


# -- preview (runtime/scheduling/preview/preview.py, preview_victims.py) -------------------------------------


class Candidate(_Open):
    node: str
    total: float = Field(description="0..100, or a rank when ranked_by names an order scorer")
    scores: dict[str, float]
    ranked_by: list[str] | None = None


class Disruption(BaseModel):
    """A running replica the cycle would evict or move to make room."""

    model_config = ConfigDict(populate_by_name=True)

    replica: str
    kind: str = Field(description="evict | move")
    action: str = Field(description="the action that decides it: preempt, reclaim, consolidate, ...")
    from_node: str = Field(alias="from", description="the node it runs on now")
    to: str | None = Field(None, description="a move's destination")
    queue: str
    why: str


class PreviewItem(_Open):
    replica: str
    node: str | None
    stays: bool | None = Field(None, description="an unchanged replica that keeps its node")
    pipelined: bool | None = Field(None, description="waits on its node until the victims there are gone")
    candidates: list[Candidate] = Field(default_factory=list)
    rejections: dict[str, Any] = Field(default_factory=dict, description="summary, nodes, hints")
    forecast: dict[str, dict[str, float]] = Field(default_factory=dict)
    depends_on: list[Disruption] = Field(default_factory=list)
    reason: str | None = None
    warning: str | None = None
    scale_up: dict[str, Any] | None = None


class PreviewResult(BaseModel):
    items: list[PreviewItem]
    victims: list[Disruption]
    moves: list[Disruption]


# -- health (api/routes/health.py, runtime/requests/reads/readiness.py) --------------------------------------


class Health(BaseModel):
    status: str = Field(description="ok")


class Readiness(_Open):
    ready: bool


class ServerInfo(BaseModel):
    version: str
    store: str
    data_dir: str | None
    leader: dict[str, Any]
    stats: dict[str, Any]


class Items(_Open):
    """A list answer whose items are records (audit entries, scale-up requests, ended objects...)."""

    items: list[dict[str, Any]]


Record = dict[str, Any]  # an answer of named fields with no fixed shape (admin and agent answers)
