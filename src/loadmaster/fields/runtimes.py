"""Runtime versions: a node lists PEP 440 versions (``2.7.1``), a task PEP 440 specifier sets (``>=2.7``).

Checked when read so the scheduler can rely on them parsing. Files repeat the same few texts on
thousands of nodes, so the answers are cached.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

# Distinct version and specifier texts kept.
_PARSE_CACHE_SIZE = 1024


@lru_cache(maxsize=_PARSE_CACHE_SIZE)
def version_problem(text: str) -> str | None:
    """Why ``text`` is not a PEP 440 version, or None."""
    return None if _parses(Version, text) else f'bad version "{text}": not a PEP 440 version'


@lru_cache(maxsize=_PARSE_CACHE_SIZE)
def specifier_problem(text: str) -> str | None:
    """Why ``text`` is not a PEP 440 specifier set, or None."""
    if _parses(SpecifierSet, text):
        return None
    return f'bad version specifier "{text}": not a PEP 440 specifier set (such as ">=2.7")'


def _parses(parse: Callable[[str], object], text: str) -> bool:
    try:
        parse(text)
    except (InvalidVersion, InvalidSpecifier):
        return False
    return True
