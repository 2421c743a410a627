"""Node labels as integer codes, so label filters are vector comparisons instead of dict look-ups.

For every label key seen on any node we keep ``codes[key][n]``: the value's code on node ``n``, or
``ABSENT`` (-1). A selector ``k=v`` becomes ``codes[k] == code(v)``; ``In`` an ``isin``; ``Gt``/``Lt`` a
comparison on the key's numeric view (NaN where the value is not an integer).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from loadmaster.core.model import LabelExpression

ABSENT = -1
BoolArray = npt.NDArray[np.bool_]


class LabelIndex:
    def __init__(self, node_labels: Sequence[dict[str, str]]) -> None:
        self.size = len(node_labels)
        self._values: dict[str, dict[str, int]] = {}
        codes: dict[str, npt.NDArray[np.int32]] = {}
        for n, labels in enumerate(node_labels):
            for key, value in labels.items():
                values = self._values.setdefault(key, {})
                code = values.setdefault(value, len(values))
                if key not in codes:
                    codes[key] = np.full(self.size, ABSENT, dtype=np.int32)
                codes[key][n] = code
        self._codes = codes
        self._numeric: dict[str, npt.NDArray[np.float64]] = {}

    def codes(self, key: str) -> npt.NDArray[np.int32] | None:
        return self._codes.get(key)

    def value_code(self, key: str, value: str) -> int | None:
        return self._values.get(key, {}).get(value)

    def has_label(self, key: str, value: str) -> bool:
        return self.value_code(key, value) is not None

    def match_pairs(self, pairs: Iterable[tuple[str, str]]) -> BoolArray:
        """Nodes carrying every ``key=value`` pair."""
        mask = np.ones(self.size, dtype=np.bool_)
        for key, value in pairs:
            code = self.value_code(key, value)
            codes = self._codes.get(key)
            if code is None or codes is None:
                return np.zeros(self.size, dtype=np.bool_)
            mask &= codes == code
        return mask

    def match_expression(self, expression: LabelExpression) -> BoolArray:
        codes = self._codes.get(expression.key)
        present = codes != ABSENT if codes is not None else np.zeros(self.size, dtype=np.bool_)
        op = expression.operator
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return ~present
        if op in ("In", "NotIn"):
            wanted = [self.value_code(expression.key, v) for v in expression.values]
            known = np.array([c for c in wanted if c is not None], dtype=np.int32)
            hit = np.isin(codes, known) if codes is not None else present
            return hit if op == "In" else ~hit
        numbers = self._numeric_view(expression.key)
        try:
            bound = float(int(expression.values[0]))
        except (ValueError, IndexError):
            return np.zeros(self.size, dtype=np.bool_)
        with np.errstate(invalid="ignore"):
            return numbers > bound if op == "Gt" else numbers < bound

    def match_expressions(self, expressions: Iterable[LabelExpression]) -> BoolArray:
        mask = np.ones(self.size, dtype=np.bool_)
        for expression in expressions:
            mask &= self.match_expression(expression)
        return mask

    def _numeric_view(self, key: str) -> npt.NDArray[np.float64]:
        cached = self._numeric.get(key)
        if cached is not None:
            return cached
        numbers = np.full(self.size, np.nan)
        codes = self._codes.get(key)
        if codes is not None:
            by_code = np.full(len(self._values[key]) + 1, np.nan)
            for value, code in self._values[key].items():
                # a value that is not an integer stays NaN: Gt/Lt never match it (Kubernetes semantics)
                with contextlib.suppress(ValueError):
                    by_code[code] = int(value)
            numbers = np.where(codes == ABSENT, np.nan, by_code[codes])
        self._numeric[key] = numbers
        return numbers
