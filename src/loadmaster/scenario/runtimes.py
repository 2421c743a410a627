"""Runtime fields: what a node's image supports and what a task needs of it (PEP 440).

A node lists component versions (``{cml: "2.7.1"}``, each a PEP 440 version) and features; a task
lists specifier sets (``{cml: ">=2.7"}``, PEP 440 ``SpecifierSet``) and features that must all be
present, checked by ``fields.runtimes`` (shared with the manifests). An unquoted YAML float as a
version is refused: ``2.10`` would reach us as the number 2.1, a different version. Pairs are kept
sorted by component name (a canonical form: equal requirements compare equal).
"""

from __future__ import annotations

from collections.abc import Callable

from loadmaster.core.model import NodeRuntime, RuntimeRequirement
from loadmaster.fields.runtimes import specifier_problem, version_problem
from loadmaster.scenario.errors import ScenarioError, join_path
from loadmaster.scenario.fields import as_mapping, as_str_list, check_keys, type_name

_RUNTIME_FIELDS = frozenset({"versions", "features"})


def _checked(text: str, path: str, problem_of: Callable[[str], str | None]) -> str:
    problem = problem_of(text)
    if problem is not None:
        raise ScenarioError(path, problem)
    return text


def _version_text(value: object, path: str) -> str:
    if type(value) is int:
        return str(value)
    if type(value) is not str:
        raise ScenarioError(
            path, f'expected a version string such as "2.7.1" (quote it), got {type_name(value)}'
        )
    return _checked(value, path, version_problem)


def _specifier_text(value: object, path: str) -> str:
    if type(value) is not str:
        raise ScenarioError(
            path, f'expected a PEP 440 specifier such as ">=2.7" (quoted), got {type_name(value)}'
        )
    return _checked(value, path, specifier_problem)


def _components(value: object, path: str) -> dict[str, object]:
    mapping = as_mapping(value, path)
    for component in mapping:
        if type(component) is not str or not component:
            raise ScenarioError(path, f"component names must be non-empty strings, got {component!r}")
    return mapping


def _runtime_parts(
    value: object, path: str, check: Callable[[object, str], str]
) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """(sorted (component, checked text) pairs, features) of a node runtime or a task requirement."""
    mapping = as_mapping(value, path)
    check_keys(mapping, _RUNTIME_FIELDS, path)
    versions, features = mapping.get("versions"), mapping.get("features")
    versions_path = f"{path}.versions"
    pairs: tuple[tuple[str, str], ...] = ()
    if versions is not None:
        components = _components(versions, versions_path)
        checked = ((name, check(text, join_path(versions_path, name))) for name, text in components.items())
        pairs = tuple(sorted(checked))
    return pairs, () if features is None else as_str_list(features, f"{path}.features")


def as_node_runtime(value: object, path: str) -> NodeRuntime:
    versions, features = _runtime_parts(value, path, _version_text)
    return NodeRuntime(versions=versions, features=features)


def as_runtime_requirement(value: object, path: str) -> RuntimeRequirement:
    versions, features = _runtime_parts(value, path, _specifier_text)
    return RuntimeRequirement(versions=versions, features=features)
