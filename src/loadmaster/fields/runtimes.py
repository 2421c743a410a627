"""Runtime versions: a node lists PEP 440 versions (``2.7.1``), a task PEP 440 specifier sets (``>=2.7``).

Checked when read so the scheduler can rely on them parsing. Files repeat the same few texts on
thousands of nodes, so the answers are cached.
"""

from __future__ import annotations

from functools import lru_cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

# Distinct version and specifier texts kept.
_PARSE_CACHE_SIZE = 1024


@lru_cache(maxsize=_PARSE_CACHE_SIZE)
def version_problem(text: str) -> str | None:
    """Why ``text`` is not a PEP 440 version, or None."""
    try:
        Version(text)
    except InvalidVersion:
        return f'bad version "{text}": not a PEP 440 version'
    return None


@lru_cache(maxsize=_PARSE_CACHE_SIZE)
def specifier_problem(text: str) -> str | None:
    """Why ``text`` is not a PEP 440 specifier set, or None."""
    try:
        SpecifierSet(text)
    except InvalidSpecifier:
        return f'bad version specifier "{text}": not a PEP 440 specifier set (such as ">=2.7")'
    return None
