"""Multi-document YAML in, validated manifests out: split, parse, dispatch on kind, collect errors.

Documents are split on ``---`` lines before parsing, so a syntax error in one document is reported
with its line in the file and does not hide the problems of the others. Every problem of every
document is reported together; if there is any, nothing is returned (and so nothing is stored).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml_rs

from loadmaster.fields.duplicate_keys import DUPLICATE_KEY_ERROR, DuplicateKey, find_duplicate_key
from loadmaster.manifests.errors import ManifestError, ManifestErrors, Problems
from loadmaster.manifests.kind_names import API_VERSION, REPLICA, normalize_kind, object_ref, plural_of
from loadmaster.manifests.kinds import KIND_SCHEMAS
from loadmaster.manifests.manifest import Manifest
from loadmaster.manifests.quantity_fields import timestamp
from loadmaster.manifests.validation import (
    DNS_NAME_MAX,
    describe,
    dns_name_problem,
    integer,
    read_object,
    string_map,
)

# A line that starts a document ("---", possibly followed by content) or ends one ("...").
_DOCUMENT_START = re.compile(r"^---(?:[ \t\r]|$)")
_DOCUMENT_END = re.compile(r"^\.\.\.(?:[ \t\r]|$)")
_YAML_POSITION = re.compile(r"line (\d+), column (\d+)")
# Replica names append "-<service>-<index>" or "-<host>" to a 63-character name, so they get the
# DNS subdomain limit (253) instead of the label limit that user-chosen names have.
REPLICA_NAME_MAX = 253
_TOP_LEVEL = ("api_version", "kind", "metadata", "spec", "status")
# YAML aliases replay their anchor's events: nine aliases of nine aliases of ... (an "alias bomb") turn
# a few hundred bytes into millions of events, about 1 us each. A whole text may replay this many,
# shared evenly by its documents that use aliases (a real manifest replays a few hundred at most).
MAX_ALIAS_EVENTS = 100_000


@dataclass(frozen=True, slots=True)
class Document:
    text: str
    first_line: int  # 1-based line number, in the whole file, of the document's first line
    number: int  # 1-based position among the file's non-empty documents


def split_documents(text: str) -> list[Document]:
    """Cut a YAML stream into documents without parsing it (``---`` and ``...`` at column 0)."""
    chunks: list[tuple[int, list[str]]] = []
    start, lines = 0, list[str]()
    for index, line in enumerate(text.split("\n")):
        if _DOCUMENT_START.match(line) and _has_content(lines):
            chunks.append((start, lines))
            start, lines = index, []
        lines.append(line)
        if _DOCUMENT_END.match(line):
            chunks.append((start, lines))
            start, lines = index + 1, []
    chunks.append((start, lines))
    documents = [(first, body) for first, body in chunks if _has_content(body)]
    return [Document("\n".join(body), first + 1, n) for n, (first, body) in enumerate(documents, start=1)]


def _has_content(lines: list[str]) -> bool:
    """True if anything but blank lines, comments, directives and markers is present."""
    for line in lines:
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "%")) and stripped not in ("---", "..."):
            return True
    return False


def parse_manifests(text: str, origin: str = "<stdin>") -> list[Manifest]:
    """Every object in a multi-document YAML text, validated; raises ``ManifestErrors`` listing all
    problems of all documents (malformed YAML with its line, unknown kind or field, bad values)."""
    manifests: list[Manifest] = []
    errors: list[ManifestError] = []
    first_seen: dict[str, int] = {}
    documents = split_documents(text)
    aliasing = sum(1 for document in documents if "*" in document.text)  # may be an alias
    alias_limits = yaml_rs.AliasLimits(max_total_replayed_events=MAX_ALIAS_EVENTS // max(1, aliasing))
    for document in documents:
        try:
            obj = _load_yaml(document, origin, alias_limits)
            if obj is None:
                continue
            manifest = manifest_from_object(obj, origin, document.number)
        except ManifestErrors as exc:
            errors.extend(exc.errors)
            continue
        except ManifestError as exc:
            errors.append(exc)
            continue
        if manifest.ref in first_seen:
            errors.append(
                ManifestError(
                    manifest.ref,
                    "metadata.name",
                    f"defined twice in {origin} (documents {first_seen[manifest.ref]} and {document.number})",
                )
            )
        first_seen.setdefault(manifest.ref, document.number)
        manifests.append(manifest)
    if errors:
        raise ManifestErrors(errors)
    return manifests


def _load_yaml(document: Document, origin: str, alias_limits: yaml_rs.AliasLimits) -> Any:
    try:
        return yaml_rs.loads(document.text, parse_datetime=False, alias_limits=alias_limits)
    except yaml_rs.YAMLDecodeError as exc:
        if DUPLICATE_KEY_ERROR in str(exc):
            duplicate = find_duplicate_key(document.text)
            if duplicate is not None:
                raise _duplicate_key_error(duplicate, document, origin) from None
        detail = str(exc).strip().splitlines()
        position = _YAML_POSITION.search(detail[0]) if detail else None
        reason = detail[-1].strip() if detail else "cannot be parsed"
        if position:
            line = int(position.group(1)) + document.first_line - 1
            where = f"line {line}, column {position.group(2)}"
        else:
            where = f"document {document.number}"
        raise ManifestError(origin, where, f"malformed YAML: {reason}") from None


def _duplicate_key_error(duplicate: DuplicateKey, document: Document, origin: str) -> ManifestError:
    """A key given twice in one mapping is refused (YAML says a mapping's keys are unique; taking the
    last one silently would apply a value the author may not have meant)."""
    where = f"{origin} document {document.number}"
    return ManifestError(where, duplicate.path, duplicate.message(document.first_line - 1))


def manifest_from_object(obj: object, origin: str = "<object>", number: int | None = None) -> Manifest:
    """Validate one already-decoded object (a YAML document or a JSON request body)."""
    problems = Problems(_ref_for(obj, origin, number))
    manifest = _read_manifest(problems, obj)
    if problems or manifest is None:
        raise ManifestErrors(problems.errors or [ManifestError(problems.ref, "", "cannot be read")])
    return manifest


def _ref_for(obj: object, origin: str, number: int | None) -> str:
    where = f"{origin} document {number}" if number is not None else origin
    if not isinstance(obj, Mapping):
        return where
    try:
        kind = normalize_kind(obj.get("kind"))
    except ManifestError:
        return where
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if isinstance(name, str) and name:
        return object_ref(kind, name)
    return f"{plural_of(kind)} ({where})"


def _read_manifest(problems: Problems, obj: object) -> Manifest | None:
    if not isinstance(obj, dict):
        problems.add("", f"expected a mapping with api_version, kind, metadata and spec, got {describe(obj)}")
        return None
    for key in obj:
        if key not in _TOP_LEVEL:
            problems.add(str(key), f"unknown field (an object has {', '.join(_TOP_LEVEL)})")
    if "api_version" not in obj:
        problems.add("api_version", f'required: "{API_VERSION}"')
    elif obj["api_version"] != API_VERSION:
        problems.add("api_version", f'expected "{API_VERSION}", got {describe(obj["api_version"])}')
    if "kind" not in obj:
        problems.add("kind", "required")
        return None
    try:
        kind = normalize_kind(obj["kind"])
    except ManifestError as exc:
        problems.add("kind", exc.message)
        return None
    metadata = _read_metadata(problems, obj.get("metadata"), kind)
    schema = KIND_SCHEMAS[kind]
    name = str(metadata.get("name", ""))
    if "spec" in obj:
        spec = schema.read_spec(problems, obj["spec"], name)
    else:
        if schema.spec_required:
            problems.add("spec", "required")
        spec = schema.read_spec(problems, {}, name)
    status = schema.read_status(problems, "status", obj["status"]) if "status" in obj else {}
    return Manifest(kind=kind, name=name, metadata=metadata, spec=spec, status=status)


def _read_metadata(problems: Problems, value: object, kind: str) -> dict[str, Any]:
    if value is None:
        problems.add("metadata", "required (at least metadata.name)")
        return {}
    fields = {
        "name": _name_reader(REPLICA_NAME_MAX if kind == REPLICA else DNS_NAME_MAX),
        "labels": string_map,
        "annotations": string_map,
        # Written by the server; accepted back so a stored object can be re-applied as read.
        "created_at": timestamp,
        "revision": integer(0),
        "generation": integer(0),
    }
    return read_object(problems, "metadata", value, fields, required=("name",))


def _name_reader(max_length: int) -> Any:
    def read(problems: Problems, path: str, value: object) -> str:
        problem = dns_name_problem(value, max_length)
        if problem:
            problems.add(path, problem)
        return str(value)

    return read
