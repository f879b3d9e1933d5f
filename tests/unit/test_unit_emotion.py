"""A unit's final emotion: the head blended in, the speaker's running stress carried, the apology
rule kept; the operator's timers, session close and snapshots."""

from __future__ import annotations

import copyreg
import pickle
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from bytewax.operators import StatefulLogic
from hypothesis import given
from hypothesis import strategies as st

from operators.unit_emotion import UnitEmotionConfig, _UnitEmotionLogic
from schemas.events import ConversationEvent
from state.core.closing import SessionClosed
from state.normalise.segments import UnitSpan
from state.normalise.turn import NormaliseConfig, Turn, normalise_turn
from state.tagging.lexicon import load_lexicon
from state.tagging.tagger import TagConfig, Vector, tag_turn
from state.units.assemble import blend_unit_emotion, units_from_turn
from state.units.emotion import (
    CAP_CUE,
    CARRY_CUE,
    SPEAKERS_KEPT,
    CarryState,
    StressCarry,
    carry_stress,
    end_session,
    unit_emotion_turn,
)

LEX = load_lexicon()
TS = datetime(2026, 1, 1, 8, tzinfo=UTC)
ANGRY = "你们太过分了！到底怎么回事！"
CALM = "好的。"
APOLOGY = "非常抱歉，这是我们的问题！"
CARRY = StressCarry(weight=0.45, memory=0.5)


def _turn(text: str, speaker: str = "A", *, role: str = "customer", event_id: str = "e", ts: datetime = TS) -> Turn:
    ev = ConversationEvent(
        event_id=event_id,
        session_id="s",
        ts=ts,
        text=text,
        speaker=speaker,
        speaker_role=role,  # type: ignore[arg-type]
    )
    return tag_turn(None, normalise_turn(ev, NormaliseConfig()), TagConfig(), LEX)[1]


class _FixedHead:
    """A head that reads every unit as the same emotion."""

    name = "fixed"

    def __init__(self, row: Sequence[float]) -> None:
        self.row = list(row)

    def predict(self, texts: Sequence[str], contexts: Sequence[str | None]) -> tuple[Vector, Vector]:
        n = len(texts)
        return np.full((n, 6), 1 / 6), np.array([self.row] * n, dtype=np.float64)


def _stress(turn: Turn) -> float:
    return max(u.emotion.stress for u in units_from_turn(turn))


def test_a_speakers_stress_carries_into_their_next_turn_and_is_named() -> None:
    state, _ = unit_emotion_turn(None, _turn(ANGRY), LEX, carry=CARRY)
    _, after = unit_emotion_turn(state, _turn(CALM, event_id="e2"), LEX, carry=CARRY)
    _, alone = unit_emotion_turn(None, _turn(CALM, event_id="e3"), LEX, carry=CARRY)
    assert _stress(after) > _stress(alone)
    assert CARRY_CUE in after.tags[0].cues
    assert CARRY_CUE not in alone.tags[0].cues
    # Another speaker's anger is theirs: B starts from B's own (absent) history.
    _, other = unit_emotion_turn(state, _turn(CALM, "B", event_id="e4"), LEX, carry=CARRY)
    assert _stress(other) == _stress(alone)


def test_the_carry_applies_to_the_blended_score_of_lexicon_and_head() -> None:
    head = _FixedHead([0.9, 0.5, 0.5, 0.5])
    state, first = unit_emotion_turn(None, _turn(CALM), LEX, head=head, head_weight=0.5, carry=CARRY)
    own_first = _stress(first)  # lexicon and head, blended; no history yet
    second = _turn(CALM, event_id="e2")
    _, carried = unit_emotion_turn(state, second, LEX, head=head, head_weight=0.5, carry=CARRY)
    own = blend_unit_emotion(second, [[0.9, 0.5, 0.5, 0.5]], 0.5, LEX.apology_threshold).unit_emotion[0][0]
    assert state.stress == (("A", round(own_first, 4)),)
    assert _stress(carried) == pytest.approx((1 - CARRY.weight) * own + CARRY.weight * own_first, abs=1e-4)


def test_no_carry_gives_the_blend_alone() -> None:
    off = StressCarry(weight=0.0)
    state, _ = unit_emotion_turn(None, _turn(ANGRY), LEX, carry=off)
    _, after = unit_emotion_turn(state, _turn(CALM, event_id="e2"), LEX, carry=off)
    _, alone = unit_emotion_turn(None, _turn(CALM, event_id="e3"), LEX, carry=off)
    assert after.unit_emotion == alone.unit_emotion
    assert state.stress == ()


def test_an_agent_apology_is_still_inverted_and_not_carried_into() -> None:
    # The agent was stressed a turn ago; their apology's high stress is still inverted (docs/design.md#tagging),
    # and the carry does not pull it back up: the apology releases the carried pressure too.
    head = _FixedHead([0.9, 0.5, 0.5, 0.5])
    state, angry = unit_emotion_turn(None, _turn(ANGRY, role="agent"), LEX, head=head, head_weight=0.5, carry=CARRY)
    assert _stress(angry) > 0.5
    apology = _turn(APOLOGY, role="agent", event_id="e2")
    assert any(t.apology_inverted for t in apology.tags)
    state, released = unit_emotion_turn(state, apology, LEX, head=head, head_weight=0.5, carry=CARRY)
    _, alone = unit_emotion_turn(None, apology, LEX, head=head, head_weight=0.5, carry=CARRY)
    assert _stress(released) == _stress(alone) < 0.5
    assert all(CARRY_CUE not in t.cues for t in released.tags)
    assert "apology_inversion" in released.tags[0].cues
    # The running stress takes the released value: the agent's next turn carries less than before.
    assert dict(state.stress)["A"] < round(_stress(angry), 4)


def test_the_head_alone_inverting_an_apology_also_stops_the_carry() -> None:
    apology = _turn("Sorry about that.", role="agent", event_id="e2")
    assert any(t.apology for t in apology.tags)
    assert not any(t.apology_inverted for t in apology.tags)  # the lexicon's stress was not high
    head = _FixedHead([0.95, 0.5, 0.5, 0.5])
    state = CarryState(stress=(("A", 0.9),))
    _, out = unit_emotion_turn(state, apology, LEX, head=head, head_weight=0.5, carry=CARRY)
    _, alone = unit_emotion_turn(None, apology, LEX, head=head, head_weight=0.5, carry=CARRY)
    assert out.unit_emotion == alone.unit_emotion


def test_running_stress_is_kept_for_a_bounded_number_of_speakers() -> None:
    state: CarryState | None = None
    for i in range(12):
        state, _ = unit_emotion_turn(state, _turn(ANGRY, f"S{i}", event_id=f"e{i}"), LEX, carry=CARRY)
    assert state is not None
    assert len(state.stress) == SPEAKERS_KEPT
    assert state.stress[-1][0] == "S11"


def test_an_ended_session_carries_turns_in_flight_and_restarts_later_ones() -> None:
    state, _ = unit_emotion_turn(None, _turn(ANGRY), LEX, carry=CARRY)
    ended = end_session(state, TS + timedelta(seconds=10))
    _, in_flight = unit_emotion_turn(ended, _turn(CALM, event_id="e2", ts=TS + timedelta(seconds=5)), LEX, carry=CARRY)
    assert CARRY_CUE in in_flight.tags[0].cues
    fresh, later = unit_emotion_turn(ended, _turn(CALM, event_id="e3", ts=TS + timedelta(minutes=1)), LEX, carry=CARRY)
    assert CARRY_CUE not in later.tags[0].cues
    assert fresh.ended_at is None
    assert end_session(None, TS) == CarryState(ended_at=TS)


def test_an_untagged_turn_passes_through() -> None:
    ev = ConversationEvent(event_id="e", session_id="s", ts=TS, text=CALM)
    turn = normalise_turn(ev, NormaliseConfig())
    state, out = unit_emotion_turn(None, turn, LEX, carry=CARRY)
    assert out == turn
    assert state == CarryState()


@given(
    own=st.lists(st.floats(0, 1), min_size=1, max_size=4),
    running=st.floats(0, 1),
    weight=st.floats(0, 0.99),
    memory=st.floats(0, 0.99),
)
def test_carried_stress_lies_between_own_and_running(
    own: list[float], running: float, weight: float, memory: float
) -> None:
    base = _turn("。".join(["我们再看看吧"] * len(own)) + "。")
    assert len(base.segments) == len(own)
    cut = tuple(UnitSpan(i, i, atomic=True) for i in range(len(own)))
    turn = replace(base, unit_cut=cut, unit_emotion=tuple((s, 0.5, 0.5, 0.5) for s in own))
    state, out = carry_stress(CarryState(stress=(("A", running),)), turn, StressCarry(weight, memory))
    for before, (after, *_) in zip(own, out.unit_emotion, strict=True):
        assert min(before, running) - 1e-9 <= after <= max(before, running) + 1e-9
    # The running stress moves from where it was towards the turn's own peak, never past it.
    value = dict(state.stress)["A"]
    assert min(running, max(own)) - 1e-4 <= value <= max(running, max(own)) + 1e-4


def test_a_carry_state_survives_a_snapshot() -> None:
    state, _ = unit_emotion_turn(None, _turn(ANGRY), LEX, carry=CARRY)
    ended = end_session(state, TS)
    assert pickle.loads(pickle.dumps(ended)) == ended


def test_unit_emotion_logic_expires_closes_and_resumes() -> None:
    clock = [TS]
    config = UnitEmotionConfig(weight=0.0, idle_ttl=timedelta(minutes=5), end_grace=timedelta(seconds=30))
    lex = replace(LEX, emotions=(replace(LEX.emotions[0], carry_weight=0.45, carry_memory=0.5), *LEX.emotions[1:]))
    logic = _UnitEmotionLogic(None, config, lambda: lex, None, lambda: clock[0])
    assert logic.notify_at() is None
    out, keep = logic.on_item(_turn(ANGRY))
    assert keep is StatefulLogic.RETAIN
    [first] = out
    assert first.unit_emotion
    assert logic.notify_at() == TS + timedelta(minutes=5)
    snapshot = pickle.loads(pickle.dumps(logic.snapshot()))
    resumed = _UnitEmotionLogic(snapshot, config, lambda: lex, None, lambda: clock[0])
    assert resumed.notify_at() == TS + timedelta(minutes=5)
    [carried], _ = resumed.on_item(_turn(CALM, event_id="e2"))
    assert CARRY_CUE in carried.tags[0].cues
    # A closing arms the grace timer; the session's last turn, released on the same closing, still carries.
    clock[0] = TS + timedelta(seconds=1)
    assert logic.on_item(SessionClosed("s", TS + timedelta(seconds=20))) == ((), StatefulLogic.RETAIN)
    assert logic.notify_at() == clock[0] + timedelta(seconds=30)
    [late], _ = logic.on_item(_turn(CALM, event_id="e3", ts=TS + timedelta(seconds=15)))
    assert CARRY_CUE in late.tags[0].cues
    assert logic.notify_at() == clock[0] + timedelta(seconds=30)  # an in-flight turn does not extend it
    ended = _UnitEmotionLogic(logic.snapshot(), config, lambda: lex, None, lambda: clock[0])
    assert ended.notify_at() == clock[0] + timedelta(seconds=30)
    assert logic.on_notify() == ((), StatefulLogic.DISCARD)
    # A closing before any turn (the last turn still held upstream) also only arms the grace timer.
    empty = _UnitEmotionLogic(None, config, lambda: lex, None, lambda: clock[0])
    assert empty.on_item(SessionClosed("s", TS)) == ((), StatefulLogic.RETAIN)
    assert empty.snapshot() == CarryState(ended_at=TS)


def _dialogue(*turns: tuple[str, str], head: _FixedHead | None = None) -> list[Turn]:
    state: CarryState | None = None
    out = []
    for i, (role, text) in enumerate(turns):
        speaker = "C" if role == "customer" else "S"
        state, turn = unit_emotion_turn(
            state, _turn(text, speaker, role=role, event_id=f"e{i}"), LEX, head=head, head_weight=0.5, carry=CARRY
        )
        out.append(turn)
    return out


@pytest.mark.parametrize("head", [None, _FixedHead([0.45, 0.5, 0.5, 0.5])], ids=["lexicon", "head"])
def test_an_agent_apology_never_carries_more_stress_than_the_complaint_it_answers(head: _FixedHead | None) -> None:
    customer, agent = _dialogue(
        ("customer", "你们再不处理，我就去消协投诉。"),
        ("agent", "非常抱歉给您带来困扰，我们马上为您处理。"),
        head=head,
    )
    assert _stress(agent) <= _stress(customer)
    assert CAP_CUE in agent.tags[0].cues


def test_empathy_is_capped_too_and_the_cap_lasts_until_the_next_customer_turn() -> None:
    turns = _dialogue(
        ("customer", "My order is late."),
        ("agent", "I completely understand how frustrating this must be!!"),
        ("agent", "I am so sorry!!!"),
        ("customer", "This is ridiculous, I want my money back now!"),
    )
    assert _stress(turns[1]) <= _stress(turns[0])
    assert _stress(turns[2]) <= _stress(turns[0])
    assert _stress(turns[3]) > _stress(turns[0])


def test_an_apology_before_any_customer_turn_is_not_capped() -> None:
    (agent,) = _dialogue(("agent", "非常抱歉让您久等了！"))
    assert CAP_CUE not in agent.tags[0].cues


def test_a_snapshot_from_before_the_customer_peak_resumes() -> None:
    class Snapshot:
        def __reduce__(self) -> tuple[object, ...]:
            return (copyreg._reconstructor, (CarryState, object, None), [(("A", 0.4),), None])  # type: ignore[attr-defined]

    old = pickle.loads(pickle.dumps(Snapshot()))
    assert old == CarryState(stress=(("A", 0.4),))
    assert pickle.loads(pickle.dumps(CarryState(customer_peak=0.3))).customer_peak == 0.3
