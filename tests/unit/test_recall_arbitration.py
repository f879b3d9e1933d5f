from dataclasses import replace
from datetime import timedelta

from schemas.memory import Validity
from schemas.recall import ContextTurn, VerifierAnswer
from state.recall.arbitration import VerifyOutcome, arbitrate
from state.recall.config import load_tables
from state.recall.scoring import candidate_batch
from tests.recall_support import T0, unit

TABLES = load_tables()
TRANSIENT = Validity(validity_type="transient")


def _batch(units):
    return candidate_batch(
        [u.memory_id for u in units], [u.model_dump(mode="json") for u in units], [0.5] * len(units), TABLES.stopwords
    )


def _answer(valid: bool, value: str) -> VerifierAnswer:
    return VerifierAnswer(kind="warehouse_status", subject="东莞仓", valid=valid, value=value, checked_at=T0)


def test_fresh_verifier_answer_beats_the_memory_with_evidence() -> None:
    b = _batch([unit("东莞仓维护中，暂停发货", n=1, topic="warehouse_status", validity=TRANSIENT)])
    arb = arbitrate(b, {0: VerifyOutcome("contradicted", "operational now", _answer(True, "operational"))}, [], TABLES)
    assert arb.factors[0] == 0.0
    assert arb.decisions[0].decision == "superseded"
    assert arb.evidence[0].winner == "verifier"
    assert arb.evidence[0].loser == "memory"


def test_user_statement_beats_memory_and_verifier() -> None:
    memory = unit("你的优惠券已经过期了", n=1, topic="coupon")
    stmt = ContextTurn(
        event_id="q", ts=T0 + timedelta(days=1), text="我刚领的优惠券，还没过期", speaker_role="customer"
    )
    b = _batch([memory])
    outcome = VerifyOutcome("verified", "api says expired", _answer(True, "expired"))
    arb = arbitrate(b, {0: outcome}, [stmt], TABLES)
    assert arb.factors[0] == 0.0
    assert [(e.winner, e.loser) for e in arb.evidence] == [("user_statement", "memory"), ("user_statement", "verifier")]


def test_statements_that_are_older_off_topic_or_by_the_agent_do_not_override() -> None:
    memory = unit("你的优惠券已经过期了", n=5, topic="coupon")
    older = ContextTurn(event_id="a", ts=T0, text="我刚领的优惠券", speaker_role="customer")
    agent = ContextTurn(event_id="b", ts=T0 + timedelta(days=1), text="我刚查了优惠券", speaker_role="agent")
    other = ContextTurn(event_id="c", ts=T0 + timedelta(days=1), text="我已经收到快递了", speaker_role="customer")
    arb = arbitrate(_batch([memory]), {}, [older, agent, other], TABLES)
    assert arb.factors[0] == 1.0
    assert not arb.evidence


def test_failures_downweight_or_drop_per_policy_and_fallback_is_flagged() -> None:
    b = _batch(
        [unit("a", n=1, validity=TRANSIENT), unit("b", n=2, validity=TRANSIENT), unit("c", n=3, validity=TRANSIENT)]
    )
    out = {0: VerifyOutcome("failed", "500"), 1: VerifyOutcome("fallback", "slow"), 2: VerifyOutcome("verified", "ok")}
    arb = arbitrate(b, out, [], TABLES)
    assert arb.factors.tolist() == [TABLES.validity.verify_failure_factor, TABLES.validity.fallback_factor, 1.0]
    assert [d.decision for d in arb.decisions] == ["verify_failed_downweighted", "fallback", "verified"]
    assert arb.fallback == frozenset({1})
    dropping = replace(TABLES, validity=replace(TABLES.validity, on_verify_failure="drop"))
    arb = arbitrate(b, out, [], dropping)
    assert arb.factors[0] == 0.0
    assert arb.decisions[0].decision == "verify_failed_dropped"
