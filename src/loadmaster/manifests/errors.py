"""Errors that name where a manifest is wrong, and the collector that gathers all of them.

A refused manifest reads ``deployments/web: spec.services[0].replica: unknown field``: the object
(``<kind plural lowercase>/<name>``), the field path, then what is wrong. Validation never stops at the
first problem: users fix everything in one pass instead of a fix-one-retry loop, so every error of
every document is collected and raised together as ``ManifestErrors``.
"""

from __future__ import annotations

from collections.abc import Sequence


class ManifestError(ValueError):
    """One problem: ``ref`` names the object, ``path`` the field, ``message`` what is wrong."""

    def __init__(self, ref: str, path: str, message: str) -> None:
        self.ref = ref
        self.path = path
        self.message = message
        super().__init__(self._text())

    def _text(self) -> str:
        return ": ".join(part for part in (self.ref, self.path, self.message) if part)

    def __str__(self) -> str:
        return self._text()


class ManifestErrors(ManifestError):  # noqa: N818 - the name other modules call (a list of errors)
    """Every problem found in one request; ``str`` gives one per line.

    It is a ``ManifestError`` itself (``path`` and ``message`` of the first problem), so callers that
    catch ``ManifestError`` also catch this one, and ``errors`` has the full list.
    """

    def __init__(self, errors: Sequence[ManifestError]) -> None:
        if not errors:
            raise ValueError("ManifestErrors needs at least one error")
        self.errors: tuple[ManifestError, ...] = tuple(errors)
        first = self.errors[0]
        super().__init__(first.ref, first.path, first.message)

    def __str__(self) -> str:
        return "\n".join(str(error) for error in self.errors)


class Problems:
    """Collects the problems of one document, all under the same object reference."""

    def __init__(self, ref: str) -> None:
        self.ref = ref
        self.errors: list[ManifestError] = []

    def add(self, path: str, message: str) -> None:
        self.errors.append(ManifestError(self.ref, path, message))

    def __len__(self) -> int:
        return len(self.errors)
