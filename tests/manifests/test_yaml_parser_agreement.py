"""Our YAML parser (yaml_rs, YAML 1.2) against PyYAML's safe loader (YAML 1.1), on generated documents.

They agree on every document except where YAML 1.1 and 1.2 resolve a plain scalar differently, plus one
quirk of yaml_rs; each difference is classified below, and any other fails the test (docs/decisions.md,
"YAML parser"):

* ``yaml11_bool``: ``yes``, ``no``, ``on``, ``off``, ``y``, ``n`` (any case) are booleans in 1.1, text in 1.2;
* ``yaml11_sexagesimal``: ``1:30`` is 90 in 1.1, text in 1.2;
* ``yaml11_octal``: ``0755`` is 493 in 1.1, 755 in 1.2 (``0o755`` is 493 in 1.2, text in 1.1);
* ``yaml12_number``: 1.2 numbers 1.1 does not have: ``1e3`` (no dot), ``08``, ``0o17``, ``.5E1`` ...;
* ``yaml11_line_break``: U+0085, U+2028, U+2029 break lines in 1.1 (folded in a flow scalar), not in 1.2;
  where PyYAML writes a quoted scalar on several lines after one, its next line is indented for 1.1's
  break, and yaml_rs refuses the document (invalid indentation: 1.2 sees no break there);
* ``yaml_rs_number``: yaml_rs reads more spellings as numbers than either schema: underscores anywhere
  (``_1``, ``-_2``, ``1E_8``; 1.1 allows them only after the first digit, 1.2 not at all) and binary
  ``0b1``/``0B1`` (1.1 has lowercase ``0b`` only, 1.2 none). None of our fields is a number spelled that
  way (names are DNS-safe, quantities are quoted or plain digits), so it is documented, not worked around.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
import yaml_rs
from hypothesis import example, given, settings
from hypothesis import strategies as st

_BOOL_11 = re.compile(r"^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$")
_SEXAGESIMAL = re.compile(r"^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$")
_OCTAL_11 = re.compile(r"^[-+]?0[0-7_]+$")
_LINE_BREAKS_11 = re.compile(r"[ \t]*[\x85\u2028\u2029][ \t\x85\u2028\u2029]*")
# A number as yaml_rs reads it (the forms below, underscores anywhere), and as YAML 1.2's core schema
# defines it (no underscores; no binary).
_NUMBER_RS = re.compile(
    r"^[-+]?[0-9_.]*([eE][-+]?[0-9_]+)?$|^[-+]?0[oO][0-7_]+$|^[-+]?0[xX][0-9a-fA-F_]+$|^[-+]?0[bB][01_]+$"
)
_NUMBER_12 = re.compile(
    r"^[-+]?[0-9]+$|^0o[0-7]+$|^0x[0-9a-fA-F]+$|^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$"
)


def difference(ours: Any, theirs: Any, text: str | None) -> str | None:
    """The documented class of a scalar both read differently (None: undocumented). ``text``: the
    scalar as written, when known."""
    if isinstance(theirs, bool) and isinstance(ours, str) and _BOOL_11.match(ours):
        return "yaml11_bool"
    if isinstance(ours, str) and isinstance(theirs, int | float) and _SEXAGESIMAL.match(ours):
        return "yaml11_sexagesimal"
    if isinstance(ours, int) and isinstance(theirs, int) and text is not None and _OCTAL_11.match(text):
        return "yaml11_octal"
    if isinstance(ours, int | float) and isinstance(theirs, str) and _NUMBER_RS.match(theirs):
        return "yaml12_number" if _NUMBER_12.match(theirs) else "yaml_rs_number"
    folded = (
        isinstance(ours, str)
        and isinstance(theirs, str)
        and theirs
        in (
            _LINE_BREAKS_11.sub(" ", ours),
            _LINE_BREAKS_11.sub("", ours),
            _LINE_BREAKS_11.sub("\n", ours),
        )
    )
    if folded:
        return "yaml11_line_break"
    return None


def undocumented(ours: Any, theirs: Any) -> list[str]:
    """Every place the two trees differ in a way ``difference`` does not document."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        if len(ours) != len(theirs):
            return [f"keys {list(ours)} vs {list(theirs)}"]
        found = []
        for (k1, v1), (k2, v2) in zip(ours.items(), theirs.items(), strict=True):
            found += undocumented(k1, k2) + undocumented(v1, v2)
        return found
    if isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            return [f"lengths {len(ours)} vs {len(theirs)}"]
        return [d for a, b in zip(ours, theirs, strict=True) for d in undocumented(a, b)]
    if ours == theirs and type(ours) is type(theirs):
        return []
    return [] if difference(ours, theirs, None) is not None else [f"{ours!r} vs {theirs!r}"]


def ours(text: str) -> Any:
    return yaml_rs.loads(text, parse_datetime=False)


SCALARS = (
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text()
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=500)
@given(VALUES, st.sampled_from([None, False, True]))
@example({"\n\x85": None}, None)  # found by this test: 1.1 folds the break into a line feed
@example({"\n\x85": None}, False)  # and writes the next line indented for it
def test_documents_pyyaml_writes_read_the_same_but_for_the_documented_differences(
    value: Any, flow: bool | None
) -> None:
    text = yaml.safe_dump({"v": value}, default_flow_style=flow, allow_unicode=True)
    try:
        mine = ours(text)
    except yaml_rs.YAMLDecodeError:
        assert _LINE_BREAKS_11.search(text), text  # yaml11_line_break: the only documented refusal
        return
    assert undocumented(mine, yaml.safe_load(text)) == []


# Plain scalars from the characters that decide how a scalar resolves (digits, signs, dots, exponents,
# bases, underscores, colons, the letters of booleans and nulls).
PLAIN = st.text(alphabet="0123456789+-._:eEoxXbB yYtTfFaAlLsSuUoOnNiI~", min_size=1, max_size=8)


@settings(max_examples=2000)
@given(PLAIN)
def test_plain_scalars_resolve_the_same_but_for_the_documented_differences(scalar: str) -> None:
    text = f"k: {scalar}\n"
    try:
        theirs = yaml.safe_load(text)
    except yaml.YAMLError:
        theirs = "refused"
    try:
        mine = ours(text)
    except yaml_rs.YAMLDecodeError:
        mine = "refused"
    if mine == "refused" or theirs == "refused":
        assert mine == theirs, (scalar, mine, theirs)  # both refuse it, or neither does
        return
    assert isinstance(mine, dict) and isinstance(theirs, dict), (scalar, mine, theirs)
    m, t = mine["k"], theirs["k"]
    if not (m == t and type(m) is type(t)):
        assert difference(m, t, scalar.strip()) is not None, (scalar, m, t)
