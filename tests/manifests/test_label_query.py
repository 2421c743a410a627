"""Label queries in kubectl's grammar: what each operator selects, and a message for every bad query."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loadmaster.manifests.label_query import LabelQueryError, Requirement, parse_label_query

TEAM_A = {"team": "a", "tier": "gpu"}
TEAM_B = {"team": "b"}
NO_TEAM = {"tier": "cpu"}
OBJECTS = {"team-a": TEAM_A, "team-b": TEAM_B, "no-team": NO_TEAM, "unlabelled": {}}


@pytest.mark.parametrize(
    ("query", "selected"),
    [
        pytest.param("team=a", {"team-a"}, id="equals"),
        pytest.param("team==a", {"team-a"}, id="double-equals"),
        pytest.param("team!=a", {"team-b", "no-team", "unlabelled"}, id="not-equals-includes-missing-key"),
        pytest.param("team != a", {"team-b", "no-team", "unlabelled"}, id="not-equals-with-spaces"),
        pytest.param("team in (a,b)", {"team-a", "team-b"}, id="in"),
        pytest.param("team in ( a , b )", {"team-a", "team-b"}, id="in-with-spaces"),
        pytest.param("team notin (a)", {"team-b", "no-team", "unlabelled"}, id="notin-includes-missing-key"),
        pytest.param("team", {"team-a", "team-b"}, id="exists"),
        pytest.param("!team", {"no-team", "unlabelled"}, id="does-not-exist"),
        pytest.param("team,tier=gpu", {"team-a"}, id="every-requirement-must-hold"),
        pytest.param("team in (a,b),tier notin (gpu)", {"team-b"}, id="set-commas-are-not-separators"),
        pytest.param("tier=", set(), id="an-empty-value-selects-no-labelled-value"),
        pytest.param("", set(OBJECTS), id="empty-matches-everything"),
        pytest.param("example.com/team=a", set(), id="prefixed-key"),
    ],
)
def test_a_query_selects_the_objects_kubectl_would(query: str, selected: set[str]) -> None:
    parsed = parse_label_query(query)
    assert {name for name, labels in OBJECTS.items() if parsed.matches(labels)} == selected


def test_not_equals_is_an_operator_not_part_of_the_key() -> None:
    assert parse_label_query("team!=a").requirements == (Requirement("team", "!=", ("a",)),)


def test_an_empty_value_matches_a_label_whose_value_is_empty() -> None:
    assert parse_label_query("tier=").matches({"tier": ""})
    assert not parse_label_query("tier=").matches({"tier": "cpu"})


@pytest.mark.parametrize(
    ("query", "message"),
    [
        pytest.param("=a", 'expected a label key, found "="', id="missing-key"),
        pytest.param("team=a=b", 'expected "," between requirements, found "="', id="two-equals"),
        pytest.param("team in a", 'expected "(" after in, found "a"', id="in-without-parenthesis"),
        pytest.param("team in (a,b", 'expected "," or ")" in the in set, found the end', id="unclosed-set"),
        pytest.param("team notin ()", "notin () needs at least one value", id="empty-set"),
        pytest.param("team ~ a", 'expected =, ==, !=, in or notin after "team", found "~"', id="unknown-op"),
        pytest.param("team,", "expected a label key, found the end", id="trailing-comma"),
        pytest.param("!", "expected a label key after !, found the end", id="bare-not"),
        pytest.param("-team=a", '"-team" is not a label key', id="key-starts-with-dash"),
        pytest.param("team=a b", 'expected "," between requirements, found "b"', id="space-separated"),
        pytest.param("team=" + "x" * 64, "is not a label value", id="value-too-long"),
        pytest.param("Bad_Prefix/team=a", "the prefix before", id="bad-prefix"),
    ],
)
def test_a_bad_query_is_refused_saying_what_was_expected(query: str, message: str) -> None:
    with pytest.raises(LabelQueryError, match="selector") as raised:
        parse_label_query(query)
    assert message in str(raised.value)
    assert f'selector "{query}"' in str(raised.value)


NAMES = st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True).filter(lambda name: name not in ("in", "notin"))


@given(labels=st.dictionaries(NAMES, NAMES, max_size=4), key=NAMES, value=NAMES)
def test_equals_and_not_equals_split_every_object_in_two(
    labels: dict[str, str], key: str, value: str
) -> None:
    equal = parse_label_query(f"{key}={value}").matches(labels)
    assert equal != parse_label_query(f"{key}!={value}").matches(labels)
    assert equal == (labels.get(key) == value)
    assert parse_label_query(f"{key} in ({value})").matches(labels) == equal
    assert parse_label_query(f"{key}").matches(labels) != parse_label_query(f"!{key}").matches(labels)
