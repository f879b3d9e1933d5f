"""The responder feed: a correction goes on only after the requests of the triggering turns before it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from operators.responder_feed import feed_marker
from schemas.events import ConversationEvent, SessionEnd, UserCorrection
from schemas.response import ResponderItem, ResponseRequest
from state.recall.trigger import TriggerConfig
from state.respond.feed import MAX_TRACKED, Expected, FeedItem, FeedState, on_item, release_all

AT = datetime(2026, 6, 10, 9, tzinfo=UTC)


def _request(event_id: str) -> ResponseRequest:
    return ResponseRequest(
        request_id=f"resp:{event_id}", session_id="s", tenant_id="t", query_event_id=event_id, query_text="?", ts=AT
    )


def _correction(event_id: str) -> UserCorrection:
    return UserCorrection(event_id=event_id, session_id="s", ts=AT, corrected_text="5月16日")


def _run(items: list[FeedItem]) -> tuple[FeedState, list[ResponderItem]]:
    state: FeedState | None = None
    out: list[ResponderItem] = []
    for item in items:
        state, emitted = on_item(state, item)
        out.extend(emitted)
    assert state is not None
    return state, out


def _ids(items: list[ResponderItem]) -> list[str]:
    return [i.request_id if isinstance(i, ResponseRequest) else i.event_id for i in items]


def test_a_correction_waits_for_the_request_of_the_question_before_it() -> None:
    state, out = _run([Expected("q1"), _correction("c1")])
    assert out == []
    assert len(state.held) == 1
    state, out = _run([Expected("q1"), _correction("c1"), _request("q1")])
    assert _ids(out) == ["resp:q1", "c1"]
    assert state.empty


def test_a_correction_with_nothing_outstanding_goes_straight_on() -> None:
    state, out = _run([Expected("q1"), _request("q1"), _correction("c1")])
    assert _ids(out) == ["resp:q1", "c1"]
    assert state.empty


def test_a_request_before_its_marker_does_not_hold_later_corrections() -> None:
    state, out = _run([_request("q1"), Expected("q1"), _correction("c1")])
    assert _ids(out) == ["resp:q1", "c1"]
    assert state.empty


def test_a_later_question_does_not_hold_an_earlier_correction() -> None:
    _, out = _run([Expected("q1"), _correction("c1"), Expected("q2"), _request("q1")])
    assert _ids(out) == ["resp:q1", "c1"]


def test_corrections_keep_their_order() -> None:
    items: list[FeedItem] = [Expected("q1"), _correction("c1"), Expected("q2"), _correction("c2")]
    _, out = _run([*items, _request("q2"), _request("q1")])
    assert _ids(out) == ["resp:q2", "resp:q1", "c1", "c2"]


def test_giving_up_releases_held_corrections_in_order_and_empties_the_state() -> None:
    state, _ = _run([Expected("q1"), _correction("c1"), _correction("c2")])
    after, released = release_all(state)
    assert [c.event_id for c in released] == ["c1", "c2"]
    assert after.empty
    assert release_all(None) == (FeedState(), [])


def test_tracked_turn_ids_are_bounded() -> None:
    state, _ = _run([Expected(f"q{i}") for i in range(MAX_TRACKED + 10)])
    assert len(state.outstanding) == MAX_TRACKED
    state, _ = _run([_request(f"q{i}") for i in range(MAX_TRACKED + 10)])
    assert len(state.early) == MAX_TRACKED


def test_markers_come_from_triggering_turns_and_corrections_only() -> None:
    turn = ConversationEvent(event_id="e1", session_id="s", ts=AT, text="我的订单哪天发货的？")
    assert feed_marker(turn, TriggerConfig()) == Expected("e1")
    assert feed_marker(turn.model_copy(update={"speaker_role": "agent"}), TriggerConfig()) is None
    assert feed_marker(turn.model_copy(update={"text": "  "}), TriggerConfig()) is None
    assert feed_marker(_correction("c1"), TriggerConfig()) == _correction("c1")
    assert feed_marker(SessionEnd(event_id="end", session_id="s", ts=AT), TriggerConfig()) is None


# A session's ingress order: questions (q) and corrections (c). The markers and corrections keep
# that order; each question's request comes at any later point (the long path).
@st.composite
def _arrivals(draw: st.DrawFn) -> tuple[list[str], list[FeedItem]]:
    kinds = draw(st.lists(st.sampled_from("qc"), min_size=1, max_size=12))
    ingress = [f"{k}{i}" for i, k in enumerate(kinds)]
    short: list[FeedItem] = [Expected(x) if x[0] == "q" else _correction(x) for x in ingress]
    merged: list[FeedItem] = list(short)
    for x in (x for x in ingress if x[0] == "q"):
        at = draw(st.integers(min_value=0, max_value=len(merged)))
        merged.insert(at, _request(x))
    return ingress, merged


@settings(max_examples=300, deadline=timedelta(seconds=2))
@given(_arrivals())
def test_every_item_goes_on_once_and_no_correction_before_an_earlier_questions_answer(
    case: tuple[list[str], list[FeedItem]],
) -> None:
    ingress, merged = case
    state, out = _run(merged)
    ids = [i.query_event_id if isinstance(i, ResponseRequest) else i.event_id for i in out]
    assert sorted(ids) == sorted(ingress)  # every request and correction, once, nothing held at the end
    assert state.empty
    for pos, x in enumerate(ingress):
        if x[0] != "c":
            continue
        for earlier in ingress[:pos]:
            if earlier[0] == "q":
                assert ids.index(earlier) < ids.index(x), (earlier, x, ids)
    corrections = [x for x in ids if x[0] == "c"]
    assert corrections == [x for x in ingress if x[0] == "c"]
