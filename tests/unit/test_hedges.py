"""Hedges in both languages (an uncertain statement, a weak promise; the price/schedule rule stays),
and a promise unit carrying its deadline."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from evals.hedges import judge, load_gold, report
from schemas.events import ConversationEvent
from state.core.embedding import Embedder
from state.normalise.turn import NormaliseConfig, normalise_turn
from state.tagging.hedges import hedge_marker
from state.tagging.lexicon import load_lexicon
from state.tagging.tagger import TagConfig, tag_segment, tag_turn
from state.units.assemble import units_from_turn
from state.units.entropy import EntropyConfig, advance, flush, load_entropy_table

LEX = load_lexicon()
MONDAY = datetime(2026, 11, 30, 9, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "应该明天能到",
        "我估计问题不大",
        "可能要晚两天到",
        "大概三点左右到",
        "也许是快递的问题",
        "明天能到吧",
        "Maybe it got lost in the mail",
        "It will probably arrive tomorrow",
        "I think I was charged twice",
        "It should be there by Friday",
        "The courier might come later",
    ],
)
def test_a_hedge_marker_makes_a_statement_uncertain(text: str) -> None:
    tags = tag_segment(text, "agent", LEX)
    assert tags.hedged
    assert "hedge_marker" in tags.cues
    assert tags.confidence < 0.5  # below recall's min_confidence when it needs certainty
    assert tags.certainty <= 0.35


@pytest.mark.parametrize(
    "text",
    [
        "已经发货了",
        "你应该早点告诉我",  # advice to the listener, not a hedge
        "这不可能",
        "The parcel was delivered on Monday",
        "May 5th works for me",
        "We will ship it tomorrow",
    ],
)
def test_no_marker_no_hedge(text: str) -> None:
    tags = tag_segment(text, "agent", LEX)
    assert hedge_marker(text.lower(), LEX) is None
    assert not tags.hedged
    assert tags.confidence == pytest.approx(0.75)


def test_a_hedged_promise_is_a_weak_commitment() -> None:
    firm = tag_segment("We will ship it tomorrow", "agent", LEX)
    weak = tag_segment("We will probably ship it tomorrow", "agent", LEX)
    assert (firm.label, firm.commitment_strength) == ("commitment", pytest.approx(0.7))
    assert (weak.label, weak.commitment_strength) == ("commitment", pytest.approx(0.3))
    assert weak.certainty < firm.certainty
    zh = tag_segment("我估计下周三之前能给您答复", "agent", LEX)
    assert zh.commitment_strength == pytest.approx(0.3)
    assert zh.confidence < 0.5


def test_a_hedged_report_is_no_promise() -> None:
    assert tag_segment("I think I was charged twice", "customer", LEX).commitment_strength == 0.0


def test_questions_and_requests_keep_their_confidence() -> None:
    assert not tag_segment("可能是什么问题？", "customer", LEX).hedged
    assert tag_segment("Could you maybe check the order?", "customer", LEX).confidence == pytest.approx(0.75)


def test_the_price_and_schedule_rule_is_still_one_case() -> None:
    tags = tag_segment("这个价格我们尽力争取", "agent", LEX)
    assert (tags.label, tags.confidence) == ("request", pytest.approx(0.3))
    assert "hedge_rule" in tags.cues


def _units(text: str, embedder: Embedder, role: str = "agent"):
    ev = ConversationEvent(event_id="e", session_id="s", ts=MONDAY, text=text, speaker_role=role)  # type: ignore[arg-type]
    turn = tag_turn(None, normalise_turn(ev, NormaliseConfig()), TagConfig(), LEX)[1]
    table = load_entropy_table()
    cfg = EntropyConfig(embedder_name=embedder.name)
    state, out = advance(None, turn, embedder.passage([s.text for s in turn.segments]), table, cfg)
    _, rest = flush(state, table, cfg)
    return units_from_turn((out + rest)[0])


def test_the_issue_sentence_is_stored_hedged_with_its_deadline(static_embedder: Embedder) -> None:
    units = _units("应该可以吧，我估计下周三之前能给您答复", static_embedder)
    hedged = [u for u in units if u.deadline is not None]
    assert hedged
    unit = hedged[0]
    assert unit.deadline == datetime(2026, 12, 9, 23, 59, 59, tzinfo=UTC)
    assert unit.confidence_score < 0.5
    assert unit.emotion.certainty <= 0.35
    assert unit.commitment_strength == pytest.approx(0.3)


def test_a_promise_unit_carries_its_deadline(static_embedder: Embedder) -> None:
    units = _units("我们会给您补偿五十元优惠券，两天内发到您的账户", static_embedder)
    promises = [u for u in units if u.unit_type == "commitment"]
    assert promises
    assert {u.deadline for u in promises} == {datetime(2026, 12, 2, 23, 59, 59, tzinfo=UTC)}


def test_fresh_hedge_set() -> None:
    verdicts = judge(load_gold())
    assert len(verdicts) >= 60
    figures = report(verdicts)
    for lang in ("zh", "en"):
        assert figures[lang]["hedge_precision"] >= 0.95
        assert figures[lang]["hedge_recall"] >= 0.9
        assert figures[lang]["weak_promise_recall"] >= 0.9
    assert figures["all"]["false_weak"] == 0


def test_a_prediction_to_the_listener_is_a_hedge_not_advice() -> None:
    tags = tag_segment("You should get a call from the technician tomorrow.", "agent", LEX)
    assert tags.hedged
    assert tags.commitment_strength == pytest.approx(0.3)
    assert not tag_segment("You should have told me earlier.", "customer", LEX).hedged


def test_a_promise_takes_the_deadline_said_in_the_next_clause(static_embedder: Embedder) -> None:
    units = _units("我们会给您退款。三个工作日内到账。", static_embedder)
    promise = next(u for u in units if u.unit_type == "commitment")
    assert promise.deadline == datetime(2026, 12, 3, 23, 59, 59, tzinfo=UTC)
    en = _units("We will send you a replacement. It should arrive within 5 business days.", static_embedder)
    assert en[0].unit_type == "commitment"
    assert en[0].deadline == datetime(2026, 12, 7, 23, 59, 59, tzinfo=UTC)


def test_a_promise_never_takes_another_promises_deadline(static_embedder: Embedder) -> None:
    units = _units("我们会给您退款。我们会在三个工作日内再发一个。", static_embedder)
    assert [u.deadline is not None for u in units] == [False, True]
