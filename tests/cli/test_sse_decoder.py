"""The server-sent events decoder: the watch and audit streams, line by line."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loadmaster.agent.sse import EventDecoder, ServerEvent


def decode(lines: list[str]) -> list[ServerEvent]:
    decoder = EventDecoder()
    return [event for line in lines if (event := decoder.feed(line)) is not None]


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        pytest.param(
            ["event: put", 'data: {"name": "a"}', ""],
            [ServerEvent("put", '{"name": "a"}')],
            id="one-event-ends-at-the-blank-line",
        ),
        pytest.param(["data: x"], [], id="an-event-without-its-blank-line-is-not-complete"),
        pytest.param(
            [": keep-alive", "", "event: relist", "data: {}", ""],
            [ServerEvent("relist", "{}")],
            id="comments-are-keep-alives-and-produce-nothing",
        ),
        pytest.param(
            ["data: a", "data: b", ""], [ServerEvent("message", "a\nb")], id="data-lines-join-with-newlines"
        ),
        pytest.param(
            ["data:x", ""], [ServerEvent("message", "x")], id="the-space-after-the-colon-is-optional"
        ),
        pytest.param(["data:  x", ""], [ServerEvent("message", " x")], id="only-one-leading-space-is-syntax"),
        pytest.param(
            ["id: 7", "event: delete", "data: {}", ""], [ServerEvent("delete", "{}", "7")], id="ids-are-kept"
        ),
        pytest.param(
            ["retry: 100", "bogus: 1", "data: y", ""],
            [ServerEvent("message", "y")],
            id="retry-and-unknown-fields-are-ignored",
        ),
        pytest.param(["event: put\r", "data: z\r", "\r"], [ServerEvent("put", "z")], id="crlf-line-endings"),
        pytest.param(["", "", ""], [], id="blank-lines-alone-make-no-event"),
    ],
)
def test_the_decoder_turns_lines_into_events(lines: list[str], expected: list[ServerEvent]) -> None:
    assert decode(lines) == expected


def test_an_events_data_decodes_as_json() -> None:
    (event,) = decode(["event: put", 'data: {"kind": "Replica", "revision": 3}', ""])
    assert event.json() == {"kind": "Replica", "revision": 3}


_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)
_payloads = st.dictionaries(_names, st.one_of(st.integers(), st.text(max_size=20)), max_size=4)


@given(st.lists(st.tuples(_names, _payloads), max_size=6))
def test_any_sequence_of_encoded_json_events_decodes_back_to_itself(events: list[tuple[str, dict]]) -> None:
    lines: list[str] = []
    for name, payload in events:
        # What a server writes: JSON on one data line (json.dumps escapes newlines), then a blank line.
        lines += [f"event: {name}", f"data: {json.dumps(payload)}", ""]
    decoded = decode(lines)
    assert [(event.event, event.json()) for event in decoded] == events
