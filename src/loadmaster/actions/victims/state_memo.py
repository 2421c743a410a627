"""Values worked out on one state of an action, shared by its later searches on that same state.

An action's state changes only when a search commits (a failed one rolls back), so the searches of a
busy cycle mostly start from one state (``Session.state_stamp``). A value that depends on the state and
a key alone is kept until the state changes; the memo holds only the current state's values."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from loadmaster.session import StateStamp

V = TypeVar("V")


class StateMemo(Generic[V]):
    def __init__(self) -> None:
        self._stamp: StateStamp | None = None
        self._values: dict[Hashable, V] = {}

    def get(self, stamp: StateStamp, key: Hashable, make: Callable[[], V]) -> V:
        """The value for ``key`` on the state named ``stamp``, made by ``make`` the first time."""
        if stamp != self._stamp:
            self._stamp, self._values = stamp, {}
        found = self._values.get(key)
        if found is None:
            found = self._values[key] = make()
        return found
