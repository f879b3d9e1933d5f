from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from schemas.events import ConversationEvent, SessionEnd
from schemas.recall import RecallResult
from schemas.session import CriticalEntity, SessionState
from state.recall_trigger import TriggerConfig, TriggerState, on_step, response_request
from state.session import SessionStep
from tests.recall_support import T0


def _turn(i: int, role: str = "customer", text: str = "hello") -> ConversationEvent:
    return ConversationEvent(
        event_id=f"e{i}",
        session_id="s",
        user_id="u",
        ts=T0 + timedelta(seconds=i),
        speaker="Ann" if role == "customer" else "Bob",
        speaker_role=role,
        text=text,
    )  # type: ignore[arg-type]


STATE = SessionState(
    session_id="s",
    user_id="u",
    task_id="TSK-2025-06-abcdef",
    current_stage="open",
    intent_chain=("question",),
    critical_entities=(
        CriticalEntity(kind="order_id", value="20250601123", turn_id="t1"),
        CriticalEntity(kind="person", value="王经理", turn_id="t1", strength="weak"),
    ),
)


def test_customer_turns_trigger_with_context_agent_turns_only_extend_it() -> None:
    st_, out = on_step(None, SessionStep(_turn(1, "agent"), STATE), TriggerConfig())
    assert out == []
    st_, out = on_step(st_, SessionStep(_turn(2, "customer", "where is it"), STATE), TriggerConfig())
    (req,) = out
    assert [t.event_id for t in req.context] == ["e1"]
    assert req.entities == ("20250601123",)
    assert req.known_people == ("Bob", "王经理")
    assert (req.task_id, req.task_stage, req.intent_chain) == ("TSK-2025-06-abcdef", "open", ("question",))


def test_empty_text_and_control_events_do_not_trigger_and_session_end_discards() -> None:
    st_, out = on_step(None, SessionStep(_turn(1, text="   "), STATE), TriggerConfig())
    assert out == []
    assert st_ is not None
    end = SessionEnd(event_id="x", session_id="s", ts=T0)
    assert on_step(st_, SessionStep(end, None), TriggerConfig()) == (None, [])
    other = SessionEnd(event_id="y", session_id="s", ts=T0)
    assert on_step(None, SessionStep(other, STATE), TriggerConfig()) == (TriggerState(), [])


def test_zero_context_turns_keeps_none() -> None:
    st_, out = on_step(None, SessionStep(_turn(1), STATE), TriggerConfig(context_turns=0))
    assert st_ == TriggerState()
    assert out[0].context == ()


@given(st.lists(st.sampled_from(["customer", "agent", "third_party"]), max_size=30), st.integers(0, 3))
def test_context_never_exceeds_the_window_and_holds_the_latest_turns(roles: list[str], keep: int) -> None:
    state = None
    for i, role in enumerate(roles):
        state, out = on_step(state, SessionStep(_turn(i, role), STATE), TriggerConfig(context_turns=keep))
        assert len(state.context) <= keep
        for req in out:
            assert len(req.context) <= keep
            assert all(t.event_id != req.query_event_id for t in req.context)
    if roles and keep:
        assert state.context[-1].event_id == f"e{len(roles) - 1}"


def test_response_request_is_deterministic_and_carries_the_cues() -> None:
    _, (req,) = on_step(None, SessionStep(_turn(1), STATE), TriggerConfig())
    result = RecallResult(
        query_event_id="e1", session_id="s", tenant_id="default", user_id="u", query_text="hello", ts=T0
    )
    a, b = response_request(req, result), response_request(req, result)
    assert a == b
    assert a.request_id == "resp:default:s:e1"
    assert a.task_id == STATE.task_id
