"""The kinds of object the control plane stores, and the spellings users may type for them."""

from __future__ import annotations

from loadmaster.manifests.errors import ManifestError

API_VERSION = "loadmaster/v1"

NODE = "Node"
QUEUE = "Queue"
DEPLOYMENT = "Deployment"
JOB = "Job"
WORKER_TEMPLATE = "WorkerTemplate"
REPLICA = "Replica"

# What `apply -f` accepts from users; replicas are created by the server (users may still read them).
USER_KINDS = (NODE, QUEUE, DEPLOYMENT, JOB, WORKER_TEMPLATE)
KINDS = (*USER_KINDS, REPLICA)

_PLURALS = {kind: kind.lower() + "s" for kind in KINDS}
# Every accepted spelling, folded (lowercase, no '-' or '_'): singular and plural of each kind.
_SPELLINGS = {
    **{kind.lower(): kind for kind in KINDS},
    **{plural: kind for kind, plural in _PLURALS.items()},
}


def _fold(text: str) -> str:
    return text.strip().lower().replace("-", "").replace("_", "")


def normalize_kind(text: object) -> str:
    """``"replicas"``, ``"Replica"``, ``"worker-templates"`` -> the canonical kind (``"Replica"``)."""
    if isinstance(text, str):
        kind = _SPELLINGS.get(_fold(text))
        if kind is not None:
            return kind
    shown = f'"{text}"' if isinstance(text, str) else repr(text)
    raise ManifestError("", "kind", f"unknown kind {shown} (expected one of {', '.join(KINDS)})")


def plural_of(kind: str) -> str:
    """The lowercase plural used in object references and URLs: ``Deployment`` -> ``deployments``."""
    return _PLURALS[kind]


def object_ref(kind: str, name: str) -> str:
    """``deployments/web``: how errors and the CLI name one object."""
    return f"{plural_of(kind)}/{name}"
