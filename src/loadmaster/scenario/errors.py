"""The one error a scenario file can raise: a message tied to the YAML path of the offending field.

Paths follow the format's own style (``shared/spec/scenario-format.md``): mapping keys joined by dots,
list items by index, e.g. ``jobs[2].tasks[0].request.memory``. ``<file>`` stands for the file itself
(unreadable, not YAML, or not a mapping at the top).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

FILE_PATH = "<file>"
# difflib's ratio above which a known name counts as "close" to a typo (0.6 is difflib's own default:
# it catches one or two wrong letters in short names without proposing unrelated words).
CLOSE_MATCH_CUTOFF = 0.6


class ScenarioError(ValueError):
    """Bad scenario input; ``str(e) == f"{path}: {message}"``."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def join_path(path: str, key: object) -> str:
    """The path of ``key`` inside the mapping at ``path`` (the top level has the empty path)."""
    return f"{path}.{key}" if path else str(key)


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """``"; did you mean capacity?"`` when one known name is close to ``word``, else ``""``."""
    if not isinstance(word, str):
        return ""
    matches = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=CLOSE_MATCH_CUTOFF)
    return f"; did you mean {matches[0]}?" if matches else ""
