from dataclasses import dataclass, replace
from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from schemas.events import ConversationEvent, SessionEnd
from schemas.recall import RecallResult
from schemas.session import CriticalEntity
from state.normalise.turn import NormaliseConfig, Turn, normalise_turn
from state.recall.trigger import TriggerConfig, TriggerState, on_item, response_request
from tests.recall_support import T0


def _turn(i: int, role: str = "customer", text: str = "hello") -> Turn:
    ev = ConversationEvent(
        event_id=f"e{i}",
        session_id="s",
        user_id="u",
        ts=T0 + timedelta(seconds=i),
        speaker="Ann" if role == "customer" else "Bob",
        speaker_role=role,  # type: ignore[arg-type]
        text=text,
    )
    return replace(normalise_turn(ev, NormaliseConfig()), task_id="TSK-2025-06-abcdef")


@dataclass(frozen=True)
class _Task:  # the shape of the task state machine's annotation on a turn
    stage: str
    entities: tuple[CriticalEntity, ...]


@dataclass(frozen=True)
class _AnnotatedTurn:  # a Turn as it looks once the task state machine has annotated it
    event: ConversationEvent
    task_id: str
    task: _Task
    times: tuple[()] = ()

    @property
    def text(self) -> str:  # the cleaned text (`Turn.text`), what the question is asked with
        return self.event.text


def test_customer_turns_trigger_with_context_agent_turns_only_extend_it() -> None:
    st_, out = on_item(None, _turn(1, "agent"), TriggerConfig())
    assert out == []
    st_, out = on_item(st_, _turn(2, "customer", "where is it"), TriggerConfig())
    (req,) = out
    assert [t.event_id for t in req.context] == ["e1"]
    assert req.known_people == ("Bob",)
    assert req.task_id == "TSK-2025-06-abcdef"


def test_task_annotations_bring_stage_identifiers_and_people_and_are_remembered() -> None:
    entities = (
        CriticalEntity(kind="order_id", value="20250601123", turn_id="t1"),
        CriticalEntity(kind="person", value="王经理", turn_id="t1", strength="weak"),
    )
    first = _AnnotatedTurn(_turn(1).event, "TSK-1", _Task("logistics_query", entities))
    st_, (req,) = on_item(None, first, TriggerConfig())  # type: ignore[arg-type]
    assert req.task_stage == "logistics_query"
    assert req.entities == ("20250601123",)
    assert "王经理" in req.known_people
    _, (later,) = on_item(st_, _turn(2), TriggerConfig())
    assert later.entities == ("20250601123",)


def test_empty_text_does_not_trigger_and_session_end_discards() -> None:
    st_, out = on_item(None, _turn(1, text="   "), TriggerConfig())
    assert out == []
    assert st_ is not None
    assert on_item(st_, SessionEnd(event_id="x", session_id="s", ts=T0), TriggerConfig()) == (None, [])


def test_zero_context_turns_keeps_none() -> None:
    st_, out = on_item(None, _turn(1), TriggerConfig(context_turns=0))
    assert st_ == TriggerState()
    assert out[0].context == ()


@given(st.lists(st.sampled_from(["customer", "agent", "third_party"]), max_size=30), st.integers(0, 3))
def test_context_never_exceeds_the_window_and_holds_the_latest_turns(roles: list[str], keep: int) -> None:
    state = None
    for i, role in enumerate(roles):
        state, out = on_item(state, _turn(i, role), TriggerConfig(context_turns=keep))
        assert len(state.context) <= keep
        for req in out:
            assert len(req.context) <= keep
            assert all(t.event_id != req.query_event_id for t in req.context)
    if roles and keep:
        assert state.context[-1].event_id == f"e{len(roles) - 1}"


def test_response_request_is_deterministic_and_carries_the_cues() -> None:
    _, (req,) = on_item(None, _turn(1), TriggerConfig())
    result = RecallResult(
        query_event_id="e1", session_id="s", tenant_id="default", user_id="u", query_text="hello", ts=T0
    )
    a, b = response_request(req, result), response_request(req, result)
    assert a == b
    assert a.request_id == "resp:default:s:e1"
    assert a.task_id == "TSK-2025-06-abcdef"


def test_the_request_carries_the_time_expressions_the_write_path_read() -> None:
    turn = _turn(1, text="上周五说好的退款到现在还没到")
    _, (req,) = on_item(None, turn, TriggerConfig())
    assert turn.times
    assert req.times == turn.times  # recall reads them instead of parsing the text again
