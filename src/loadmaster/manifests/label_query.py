"""Label queries in kubectl's grammar (``get -l``, ``GET /api/{kind}?selector=``).

    query       := requirement ("," requirement)*
    requirement := KEY | "!" KEY | KEY ("=" | "==" | "!=") VALUE? | KEY ("in" | "notin") "(" VALUE,... ")"

Every requirement must hold. ``!=`` and ``notin`` also match an object without the key, and ``!key``
one without it at all (as in Kubernetes). Keys are ``[prefix/]name`` and values ``name`` or empty, where
a name is at most 63 characters of ``[A-Za-z0-9._-]`` starting and ending with a letter or digit and a
prefix is a DNS subdomain. Anything else is refused with a ``LabelQueryError`` naming the part that is
wrong: ``team!`` followed by ``=a`` is read as ``team != a``, never as a key ``team!``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
MAX_PREFIX_LENGTH = 253
# Operators and punctuation first (longest first), then a word: anything up to a separator.
TOKEN = re.compile(r"\s*(==|!=|=|!|\(|\)|,|[^\s,()=!]+)")
SET_OPERATORS = ("in", "notin")


class LabelQueryError(ValueError):
    """A query that is not kubectl's grammar; the message says where and what was expected."""


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # "=", "!=", "in", "notin", "exists", "!exists"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "exists":
            return self.key in labels
        if self.operator == "!exists":
            return self.key not in labels
        present = self.key in labels
        if self.operator in ("=", "in"):
            return present and labels[self.key] in self.values
        return not present or labels[self.key] not in self.values  # "!=", "notin"


@dataclass(frozen=True, slots=True)
class LabelQuery:
    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(requirement.matches(labels) for requirement in self.requirements)


def _tokens(text: str) -> list[str]:
    tokens = []
    position = 0
    stripped_end = len(text.rstrip())
    while position < stripped_end:
        found = TOKEN.match(text, position)
        assert found is not None  # every non-space character starts some token
        tokens.append(found.group(1))
        position = found.end()
    return tokens


def _check_key(key: str, query: str) -> str:
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > MAX_PREFIX_LENGTH or not DNS_SUBDOMAIN.fullmatch(prefix)):
        raise LabelQueryError(f'selector "{query}": "{key}": the prefix before "/" must be a DNS subdomain')
    if not NAME.fullmatch(name):
        raise LabelQueryError(
            f'selector "{query}": "{key}" is not a label key (at most 63 of A-Z a-z 0-9 . _ -, '
            "starting and ending with a letter or digit, optionally after a prefix/)"
        )
    return key


def _check_value(value: str, query: str) -> str:
    if value and not NAME.fullmatch(value):
        raise LabelQueryError(
            f'selector "{query}": "{value}" is not a label value (empty, or at most 63 of A-Z a-z 0-9 . _ -, '
            "starting and ending with a letter or digit)"
        )
    return value


class _Parser:
    def __init__(self, query: str) -> None:
        self.query = query
        self.tokens = _tokens(query)
        self.position = 0

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        self.position += token is not None
        return token

    def fail(self, expected: str, got: str | None) -> LabelQueryError:
        found = "the end" if got is None else f'"{got}"'
        return LabelQueryError(f'selector "{self.query}": expected {expected}, found {found}')

    def word(self, expected: str) -> str:
        token = self.take()
        if token is None or token in ("==", "!=", "=", "!", "(", ")", ","):
            raise self.fail(expected, token)
        return token

    def query_requirements(self) -> LabelQuery:
        requirements = [self.requirement()]
        while (token := self.take()) is not None:
            if token != ",":
                raise self.fail('"," between requirements', token)
            requirements.append(self.requirement())
        return LabelQuery(tuple(requirements))

    def requirement(self) -> Requirement:
        if self.peek() == "!":
            self.take()
            return Requirement(_check_key(self.word("a label key after !"), self.query), "!exists")
        key = _check_key(self.word("a label key"), self.query)
        operator = self.peek()
        if operator is None or operator == ",":
            return Requirement(key, "exists")
        self.take()
        if operator in ("=", "==", "!="):
            following = self.peek()
            value = "" if following in (None, ",") else self.word(f'a value after "{operator}"')
            return Requirement(key, "!=" if operator == "!=" else "=", (_check_value(value, self.query),))
        if operator in SET_OPERATORS:
            return Requirement(key, operator, self.value_set(operator))
        raise self.fail(f'=, ==, !=, in or notin after "{key}"', operator)

    def value_set(self, operator: str) -> tuple[str, ...]:
        token = self.take()
        if token != "(":
            raise self.fail(f'"(" after {operator}', token)
        values: list[str] = []
        while True:
            # an empty value, as in "in (a,,b)" or "in ()"
            value = "" if self.peek() in (",", ")", None) else self.word("a value")
            values.append(_check_value(value, self.query))
            token = self.take()
            if token == ")":
                break
            if token != ",":
                raise self.fail(f'"," or ")" in the {operator} set', token)
        if values == [""]:
            raise LabelQueryError(f'selector "{self.query}": {operator} () needs at least one value')
        return tuple(values)


def parse_label_query(text: str | None) -> LabelQuery:
    """``"team!=a,tier in (gpu,cpu),!legacy"`` -> a query; empty or None matches everything."""
    if text is None or not text.strip():
        return LabelQuery()
    return _Parser(text).query_requirements()
