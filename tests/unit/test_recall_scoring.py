import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.memory import EmotionLoad, TimeExpression, Validity
from state.recall.config import load_tables
from state.recall.query import analyse_query
from state.recall.resolution import IssueView
from state.recall.scoring import (
    candidate_batch,
    keep_retrieved,
    replies,
    score_pool,
    top_indices,
    validity_filter,
)
from tests.recall_support import T0, unit

TABLES = load_tables()
NOW = T0 + timedelta(days=7)


def _batch(units, sims=None):
    payloads = [u.model_dump(mode="json") for u in units]
    return candidate_batch([u.memory_id for u in units], payloads, sims or [0.5] * len(units), TABLES.stopwords)


def test_components_follow_the_spec_formulas() -> None:
    resolved_at = NOW - timedelta(hours=84)
    units = [
        unit(
            "complaint pending",
            n=1,
            ts=NOW - timedelta(hours=24),
            severity="high",
            resolution_status="pending",
            commitment_strength=0.7,
        ),
        unit(
            "complaint resolved",
            n=2,
            ts=NOW - timedelta(hours=100),
            severity="medium",
            resolution_status="resolved",
            resolved_at=resolved_at,
        ),
        unit("chit chat", n=3, ts=NOW - timedelta(hours=1)),
    ]
    s = score_pool(analyse_query("any update", TABLES), _batch(units), TABLES, NOW)
    assert math.isclose(s.time_proximity[0], 1 / (1 + math.log(1 + 24)))
    assert list(s.severity) == [1.0, 0.6, 0.3]
    assert s.resolution_gap[0] == 1.0
    assert math.isclose(s.resolution_gap[1], max(0.1, 1 - min(0.9, 84 / 168)))
    assert s.resolution_gap[2] == 0.0
    expected = 0.4 * s.emotion_match[0] + 0.25 * s.time_proximity[0] + 0.2 * 1.0 + 0.15 * 1.0 + 0.1 * 0.7
    assert math.isclose(s.css[0], expected)


def test_resolution_gap_bottoms_out_after_a_week() -> None:
    u = unit(
        "old", n=1, ts=NOW - timedelta(days=30), resolution_status="resolved", resolved_at=NOW - timedelta(days=20)
    )
    s = score_pool(analyse_query("x", TABLES), _batch([u]), TABLES, NOW)
    assert math.isclose(s.resolution_gap[0], 0.1)


def test_expired_not_yet_valid_off_cycle_and_low_confidence_are_not_eligible() -> None:
    monday = datetime(2025, 6, 2, 12, tzinfo=UTC)
    units = [
        unit(
            "expired promo",
            n=1,
            ts=monday - timedelta(days=3),
            validity=Validity(validity_type="periodic", effective_to=monday - timedelta(hours=1)),
        ),
        unit(
            "future promo",
            n=2,
            ts=monday - timedelta(days=3),
            validity=Validity(validity_type="periodic", effective_from=monday + timedelta(days=1)),
        ),
        unit(
            "tuesday rule",
            n=3,
            ts=monday - timedelta(days=3),
            validity=Validity(validity_type="periodic", cycle_pattern="every_tuesday"),
        ),
        unit("hedged", n=4, ts=monday - timedelta(days=3), confidence_score=0.3),
        unit(
            "fine",
            n=5,
            ts=monday - timedelta(days=3),
            validity=Validity(validity_type="periodic", cycle_pattern="weekdays"),
        ),
    ]
    mask, decisions = validity_filter(_batch(units), monday, TABLES, needs_certainty=True)
    assert mask.tolist() == [False, False, False, False, True]
    assert sorted(d.decision for d in decisions) == ["expired", "expired", "expired", "low_confidence"]
    mask, _ = validity_filter(_batch(units), monday, TABLES, needs_certainty=False)
    assert mask.tolist() == [False, False, False, True, True]


def test_labels_are_evidence_not_gates() -> None:
    units = [
        unit("我们会给您补偿一张五十元优惠券，两天内发到您的账户", n=1, topic="promotion", unit_type="commitment"),
        unit("快递明天到", n=2, topic="logistics"),
        unit("快递到了吗", n=3),
    ]
    q = analyse_query("补偿什么时候能到账？", TABLES)
    assert q.question_class == "after_sales"
    s = score_pool(q, _batch(units, sims=[0.8, 0.8, 0.8]), TABLES, NOW)
    assert s.eligible.all()  # a topic of another class never excludes
    assert top_indices(s, 1) == [0]  # the mis-typed promise is found by its words
    q2 = analyse_query("我的快递到哪了", TABLES)
    s2 = score_pool(q2, _batch(units, sims=[0.8, 0.8, 0.8]), TABLES, NOW)
    assert s2.topic.tolist() == [0.0, 1.0, 0.0]  # the class's topic is a small bonus


def test_one_shared_character_is_a_small_lexical_share() -> None:
    units = [unit("好的收到，会议时间改为周四", n=1), unit("两天内把补偿发到您的账户", n=2)]
    q = analyse_query("补偿什么时候能到账？", TABLES)
    s = score_pool(q, _batch(units, sims=[0.8, 0.8]), TABLES, NOW)
    assert s.lexical[0] < 0.05
    assert s.lexical[1] > 3 * s.lexical[0]


def test_acknowledgements_are_never_cues() -> None:
    units = [unit("好的", n=1), unit("行吧。", n=2), unit("退款已经提交了", n=3)]
    q = analyse_query("好的，退款呢", TABLES)
    s = score_pool(q, _batch(units, sims=[0.95, 0.95, 0.7]), TABLES, NOW)
    assert top_indices(s, 1) == [2]
    assert s.relevance[0] == s.relevance[1] == 0.0


def test_the_floor_abstains_when_nothing_is_relevant() -> None:
    units = [unit("周末去爬山了", n=1), unit("会议改到周四", n=2)]
    q = analyse_query("我的退款到账了吗", TABLES)
    s = score_pool(q, _batch(units, sims=[0.81, 0.80]), TABLES, NOW, cosine_scale=(0.80, 0.92))
    assert top_indices(s, 3) != []
    assert top_indices(s, 3, floor=0.35) == []


def test_same_problem_again_lifts_the_open_severe_complaint_over_chit_chat() -> None:
    upset = EmotionLoad(stress=0.9, urgency=0.6, certainty=0.5, cooperation=0.2)
    units = [
        unit("客服小王人挺好的，态度不错", n=1, ts=NOW - timedelta(hours=2), unit_type="smalltalk"),
        unit(
            "客服态度很差，我要投诉",
            n=2,
            ts=NOW - timedelta(days=6),
            unit_type="complaint",
            topic="service_attitude",
            severity="high",
            resolution_status="pending",
            emotion=upset,
        ),
    ]
    q = analyse_query("客服态度又这么差，太失望了", TABLES)
    s = score_pool(q, _batch(units, sims=[0.9, 0.8]), TABLES, NOW)  # plain vector search prefers the chit-chat
    assert top_indices(s, 1) == [1]


def test_a_named_person_counts_as_speaker_not_as_a_word() -> None:
    units = [
        unit("Hey Caroline! Good to see you", n=1, speaker="Melanie"),
        unit("I went to a support group yesterday", n=2, speaker="Caroline"),
        unit("I went to the beach", n=3, speaker="Melanie"),
    ]
    q = analyse_query("When did Caroline go to the support group?", TABLES)
    s = score_pool(q, _batch(units, sims=[0.6, 0.6, 0.6]), TABLES, NOW)
    assert s.people == ("Caroline",)
    assert s.person.tolist() == [0.0, 1.0, 0.0]
    assert s.lexical[0] == 0.0  # the name alone matches nothing
    assert top_indices(s, 1) == [1]


def test_identifier_match_and_neighbours() -> None:
    units = [
        unit("what is the status of order 20250601123?", n=1, session="s1"),
        unit("it left the warehouse this morning", n=2, session="s1"),
        unit("unrelated line", n=3, session="s2"),
    ]
    q = analyse_query("order 20250601123 status", TABLES)
    s = score_pool(q, _batch(units, sims=[0.9, 0.2, 0.2]), TABLES, NOW)
    assert s.entity.tolist() == [1.0, 0.0, 0.0]
    assert s.relevance[1] > s.relevance[2]  # the answer inherits from its question


def test_a_turn_that_is_merely_adjacent_inherits_nothing() -> None:
    units = [
        unit("we will send the first draft next Tuesday", n=1, session="s1"),
        unit("where is the compensation you promised me?", n=2, session="s1"),
    ]
    q = analyse_query("when will the compensation arrive", TABLES)
    s = score_pool(q, _batch(units, sims=[0.1, 0.9]), TABLES, NOW)
    assert s.relevance[0] < 0.5 * s.relevance[1]  # an earlier statement gets no share of the next question


def test_factors_zero_drop_and_scale() -> None:
    units = [unit("a b", n=1), unit("a b", n=2)]
    q = analyse_query("a b", TABLES)
    s = score_pool(q, _batch(units), TABLES, NOW, factors=np.array([0.0, 0.5]))
    assert s.eligible.tolist() == [False, True]
    assert top_indices(s, 3) == [1]


def test_empty_pool() -> None:
    s = score_pool(analyse_query("x", TABLES), _batch([]), TABLES, NOW)
    assert top_indices(s, 3) == []


_unit = st.builds(
    lambda i, hours, sev, res, stress, conf, sim: (
        unit(
            f"memory {i} text",
            n=i,
            ts=NOW - timedelta(hours=hours),
            severity=sev,
            resolution_status=res,
            emotion=EmotionLoad(stress=stress),
            confidence_score=conf,
        ),
        sim,
    ),
    st.integers(0, 10_000),
    st.floats(0, 24 * 400),
    st.sampled_from(["high", "medium", "low"]),
    st.sampled_from(["pending", "resolved", "none"]),
    st.floats(0, 1),
    st.floats(0, 1),
    st.floats(-1, 1),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(_unit, max_size=25, unique_by=lambda x: x[0].memory_id),
    st.sampled_from(["客服态度又这么差", "where is my parcel", "hello", "双十一优惠"]),
)
def test_scores_stay_in_range_and_top_k_is_eligible_and_sorted(pairs, text: str) -> None:
    units = [p[0] for p in pairs]
    s = score_pool(analyse_query(text, TABLES), _batch(units, [p[1] for p in pairs]), TABLES, NOW)
    for comp in (s.emotion_match, s.time_proximity, s.severity, s.resolution_gap, s.semantic, s.lexical):
        assert ((comp >= -1e-9) & (comp <= 1 + 1e-9)).all()
    assert ((s.css >= 0) & (s.css <= 1.1 + 1e-9)).all()
    top = top_indices(s, 3)
    assert len(top) <= 3
    assert all(s.eligible[i] for i in top)
    assert [s.final[i] for i in top] == sorted((s.final[i] for i in top), reverse=True)


def test_the_answer_outranks_its_question_even_when_the_question_turn_was_cut_into_units() -> None:
    said = unit("my screen cracked,", n=1, session="s1")
    asked = said.model_copy(update={"memory_id": said.memory_id + "-1", "unit_index": 1, "text": "does it cover that?"})
    units = [said, asked, unit("yes, 29 dollars per accidental repair", n=2, session="s1")]
    q = analyse_query("how much is the screen repair", TABLES)
    s = score_pool(q, _batch(units, sims=[0.9, 0.9, 0.85]), TABLES, NOW)
    assert s.relevance[2] > max(s.relevance[0], s.relevance[1])  # neighbours are turns, not units
    assert top_indices(s, 1) == [2]


def test_ranking_keeps_the_order_below_the_calibrated_range_and_the_floor_does_not_move() -> None:
    units = [unit("alpha", n=1, session="s1"), unit("beta", n=2, session="s2")]
    q = analyse_query("gamma", TABLES)
    s = score_pool(q, _batch(units, sims=[0.79, 0.78]), TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert s.semantic.tolist() == [0.0, 0.0]  # what the abstain floor reads
    assert s.relevance[0] > s.relevance[1] > 0.0


def _exchange(request_type: str):
    """A customer's turn and the agent's reply to it, in one session."""
    return [
        unit("please cancel my gym add-on", n=1, session="s1", unit_type=request_type),
        unit("cancelled", n=2, session="s1", speaker_role="agent", unit_type="statement"),
    ]


def test_an_own_question_ranks_the_customers_request_over_the_agents_acknowledgement() -> None:
    q = analyse_query("What did I cancel?", TABLES)
    assert q.focus == "own"
    s = score_pool(q, _batch(_exchange("action_request"), sims=[0.84, 0.88]), TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert s.relevance[0] > s.relevance[1] > 0.0
    plain = analyse_query("cancel", TABLES)  # the same exchange, no own focus: the closer reply first
    assert plain.focus == "answer"
    p = score_pool(plain, _batch(_exchange("action_request"), sims=[0.84, 0.88]), TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert p.relevance[1] > p.relevance[0]


def test_a_handling_question_ranks_the_agents_reply_to_a_complaint_over_the_complaint() -> None:
    units = [
        unit("the size you sent is wrong", n=1, session="s1", unit_type="complaint"),
        unit("we will send the right size tomorrow", n=2, session="s1", speaker_role="agent", unit_type="commitment"),
    ]
    q = analyse_query("How was it handled when the size was wrong?", TABLES)
    assert q.focus == "handling"
    s = score_pool(q, _batch(units, sims=[0.9, 0.85]), TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert s.relevance[1] > s.relevance[0]
    plain = analyse_query("the size was wrong", TABLES)
    p = score_pool(plain, _batch(units, sims=[0.9, 0.85]), TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert p.relevance[0] > p.relevance[1]  # a complaint is no question: without the focus it keeps its rank


def test_a_current_question_ranks_the_newer_version_of_a_booking_over_the_first_one() -> None:
    agent = {"speaker_role": "agent", "unit_type": "status_update"}
    units = [
        unit("book me a cleaning on wednesday afternoon", n=1, session="s1", unit_type="action_request"),
        unit("booked the cleaning for june 4 at 2 pm", n=2, session="s1", **agent),
        unit("booked the cleaning for june 14 at 9 am", n=3, session="s2", ts=T0 + timedelta(days=5), **agent),
    ]
    sims = [0.9, 0.9, 0.82]
    q = analyse_query("Which day is my cleaning booked for now?", TABLES)
    assert q.focus == "current"
    s = score_pool(q, _batch(units, sims=sims), TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert top_indices(s, 1) == [2]
    plain = analyse_query("Which day is my cleaning booked for?", TABLES)  # no current focus: the closer first
    p = score_pool(plain, _batch(units, sims=sims), TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert top_indices(p, 1) != [2]
    waiting = analyse_query("the cleaning is still not done now", TABLES)  # still waiting: no versions
    w = score_pool(waiting, _batch(units, sims=sims), TABLES, NOW, cosine_scale=(0.8, 0.9), still_waiting=True)
    assert w.relevance[2] < s.relevance[2]


def test_a_status_question_ranks_the_agents_latest_update_of_the_matter_first() -> None:
    agent = {"speaker_role": "agent", "unit_type": "status_update"}
    units = [
        unit("the shared printer on floor 3 will not print, ticket HD-5582", n=1, session="s1", unit_type="complaint"),
        unit("I'll escalate HD-5582 to the on-site team", n=2, session="s1", **agent),
        unit("lunch menu for friday", n=3, session="s2", ts=T0 + timedelta(days=1), **agent),
        unit(
            "update on HD-5582: the on-site team ordered a new network card",
            n=4,
            session="s3",
            ts=T0 + timedelta(days=3),
            **agent,
        ),
    ]
    sims = [0.9, 0.84, 0.8, 0.82]
    status = analyse_query("any progress on the printer?", TABLES)
    s = score_pool(status, _batch(units, sims=sims), TABLES, NOW, cosine_scale=(0.8, 0.9), asks_status=True)
    assert top_indices(s, 1) == [3]
    plain = score_pool(status, _batch(units, sims=sims), TABLES, NOW, cosine_scale=(0.8, 0.9))  # no status question
    assert top_indices(plain, 1) != [3]
    waiting = score_pool(
        status, _batch(units, sims=sims), TABLES, NOW, cosine_scale=(0.8, 0.9), asks_status=True, still_waiting=True
    )
    assert waiting.relevance[3] < s.relevance[3]  # still waiting asks for what is owed, not the latest word


def test_a_holding_reply_without_content_is_no_side_of_the_exchange() -> None:
    agent = {"speaker_role": "agent"}
    units = [
        unit("my parcel still says out for delivery", n=1, session="s1"),
        unit("Let me check.", n=2, session="s1", **agent),
        unit("it was held at the depot, it reaches your locker tomorrow morning", n=3, session="s1", **agent),
    ]
    q = analyse_query("what did you tell me about my parcel?", TABLES)
    assert q.focus == "information"
    s = score_pool(q, _batch(units, sims=[0.9, 0.8, 0.82]), TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert top_indices(s, 1) == [2]  # the report is answered by the agent's next turn that says something
    assert s.relevance[1] == 0.0


def test_a_status_question_about_my_problem_refers_to_the_open_one_for_the_floor() -> None:
    units = [
        unit("the discount code does not apply", n=1, session="s1", unit_type="complaint", resolution_status="pending"),
        unit("my card was declined", n=2, session="s0", unit_type="complaint", resolution_status="resolved"),
    ]
    vague = analyse_query("Any news on my problem?", TABLES)
    assert vague.refers_to_open
    s = score_pool(vague, _batch(units, sims=[0.82, 0.81]), TABLES, NOW, cosine_scale=(0.8, 0.9), asks_status=True)
    assert s.absolute.tolist() == [1.0, s.semantic[1]]  # the open one clears the floor, the settled one does not
    named = analyse_query("Any news on my refund?", TABLES)  # names its matter: the floor reads its words
    n = score_pool(named, _batch(units, sims=[0.82, 0.81]), TABLES, NOW, cosine_scale=(0.8, 0.9), asks_status=True)
    assert not named.refers_to_open
    assert n.absolute[0] < 1.0


def test_a_question_for_a_fact_ranks_the_agents_reply_over_the_complaint_it_answers() -> None:
    units = [
        unit("my earbud has no sound", n=1, session="s1", unit_type="complaint"),
        unit("bring the receipt to a store for a free swap", n=2, session="s1", speaker_role="agent"),
    ]
    q = analyse_query("What do I need to bring for the swap?", TABLES)
    assert q.focus == "information"
    s = score_pool(q, _batch(units, sims=[0.9, 0.88]), TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert top_indices(s, 1) == [1]


def test_a_question_about_a_promise_refers_to_the_overdue_one_for_the_floor() -> None:
    units = [
        unit("I'll remind you on October 1", n=1, session="s1", speaker_role="agent"),
        unit("sunny, around 22 degrees", n=2, session="s2", speaker_role="agent"),
    ]
    late = {
        units[0].memory_id: IssueView(status="pending", resolved_at=None, overdue=True, reopened=False, settled_by=None)
    }
    payloads = [u.model_dump(mode="json") for u in units]
    batch = candidate_batch([u.memory_id for u in units], payloads, [0.79, 0.78], TABLES.stopwords, issues=late)
    vague = analyse_query("You were supposed to nudge me about something", TABLES)
    assert "promise" in vague.cue_families
    s = score_pool(vague, batch, TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert s.absolute.tolist() == [1.0, 0.0]  # the overdue promise clears the floor, nothing else does
    other = score_pool(analyse_query("Do you sell gift cards?", TABLES), batch, TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert other.absolute.tolist() == [0.0, 0.0]


def test_the_nearest_turn_by_cosine_is_always_among_the_cues() -> None:
    units = [unit(f"memory {i}", n=i, session=f"s{i}") for i in range(1, 6)]
    s = score_pool(analyse_query("memory", TABLES), _batch(units, sims=[0.5] * 5), TABLES, NOW)
    s = replace(s, lexical=np.zeros(5))  # no word shared: only the nearest turn is vouched for
    cosine = np.array([0.80, 0.81, 0.95, 0.82, 0.83])
    assert keep_retrieved([0, 1, 3], s, cosine, None, 3) == [0, 1, 2]  # the nearest takes the last place
    assert keep_retrieved([2, 0, 1], s, cosine, None, 3) == [2, 0, 1]  # already there: unchanged
    assert keep_retrieved([0], s, cosine, None, 3) == [0, 2]
    assert keep_retrieved([], s, cosine, None, 3) == []  # an abstention stays one


def test_a_turn_both_retrievers_rank_high_is_among_the_cues() -> None:
    units = [unit(f"memory {i}", n=i, session=f"s{i}") for i in range(1, 7)]
    s = score_pool(analyse_query("memory", TABLES), _batch(units, sims=[0.5] * 6), TABLES, NOW)
    cosine = np.array([0.70, 0.95, 0.71, 0.90, 0.72, 0.89])  # dense: 1, 3, 5
    s = replace(s, lexical=np.array([0.0, 0.0, 0.1, 0.5, 0.0, 0.0]))  # BM25: 3, then 2
    # the fusion put 0, 2, 4 first: the nearest (1) and the agreed turn (3) take the places after the first
    assert keep_retrieved([0, 2, 4], s, cosine, None, 3) == [0, 1, 3]
    # a pick one retriever vouches for is not given up for another
    assert keep_retrieved([0, 1, 3], s, cosine, None, 3) == [0, 1, 3]
    # the fused first place stays whatever the retrievers say
    assert keep_retrieved([4, 0, 2], s, cosine, None, 3)[0] == 4


def test_the_nearest_turn_is_kept_through_the_reply_that_answers_it() -> None:
    units = [
        unit("the balcony door lock is broken", n=1, session="s1", ts=NOW - timedelta(days=3)),
        unit(
            "the lock cylinder is on order, a technician will replace it by Thursday",
            n=2,
            session="s1",
            ts=NOW - timedelta(days=3) + timedelta(seconds=40),
            speaker_role="agent",
        ),
        unit("the bathroom ceiling is dripping", n=3, session="s2", ts=NOW - timedelta(days=2)),
        unit(
            "a technician will check the waterproofing tomorrow morning",
            n=4,
            session="s2",
            ts=NOW - timedelta(days=2) + timedelta(seconds=40),
            speaker_role="agent",
        ),
        unit("can I get an invoice for the leak repair?", n=5, session="s3", ts=NOW - timedelta(days=1)),
    ]
    batch = _batch(units)
    answered = replies(batch, TABLES.relevance.neighbour_max_gap_s)
    assert answered == {0: 1, 2: 3}  # the customer's report → the agent's answer to it, per session
    s = replace(score_pool(analyse_query("where is the technician", TABLES), batch, TABLES, NOW), lexical=np.zeros(5))
    cosine = np.array([0.95, 0.80, 0.81, 0.90, 0.82])  # the report of the lock is the nearest turn
    assert keep_retrieved([3, 1, 4], s, cosine, None, 3) == [3, 1, 0]  # without the exchanges: the report takes a place
    assert keep_retrieved([3, 1, 4], s, cosine, None, 3, answered) == [3, 1, 4]  # its answer (1) stands for it


def test_a_question_naming_no_matter_ranks_the_open_issue_first() -> None:
    units = [
        unit("found it: the certificate had expired", n=1, session="s1", speaker_role="agent"),
        unit(
            "billing replies within 2 business days",
            n=2,
            session="s2",
            unit_type="commitment",
            resolution_status="pending",
        ),
    ]
    vague = analyse_query("Where are we on the thing that's still open?", TABLES)
    assert vague.refers_to_open
    s = score_pool(vague, _batch(units, sims=[0.82, 0.78]), TABLES, NOW, cosine_scale=(0.8, 0.9), asks_status=True)
    assert top_indices(s, 1) == [1]


def _two_threads():
    """A settled complaint (and the turn that settled it) and an open one of the same kind."""
    return [
        unit("the June box was charged twice", n=1, session="s1", unit_type="complaint"),
        unit("ok the money for June is back on my card, thanks", n=2, session="s2", ts=T0 + timedelta(days=2)),
        unit(
            "the July box was charged twice too", n=3, session="s3", unit_type="complaint", ts=T0 + timedelta(days=20)
        ),
    ]


def _thread_views(units):
    first, thanks, july = (u.memory_id for u in units)
    settled = IssueView(
        status="resolved",
        resolved_at=(T0 + timedelta(days=2)).timestamp(),
        overdue=False,
        reopened=False,
        settled_by=thanks,
    )
    return {
        first: settled,
        thanks: IssueView(status="none", resolved_at=None, overdue=False, reopened=False, settled_by=None),
        july: IssueView(status="pending", resolved_at=None, overdue=False, reopened=False, settled_by=None),
    }


def test_a_question_about_what_is_still_open_ranks_the_open_one_over_the_settled_one() -> None:
    units = _two_threads()
    payloads = [u.model_dump(mode="json") for u in units]
    batch = candidate_batch(
        [u.memory_id for u in units], payloads, [0.86, 0.80, 0.84], TABLES.stopwords, issues=_thread_views(units)
    )
    q = analyse_query("is the double charge still being looked at?", TABLES)
    plain = score_pool(q, batch, TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert top_indices(plain, 1) == [0]  # by its words alone the settled one is closer
    s = score_pool(q, batch, TABLES, NOW, cosine_scale=(0.8, 0.9), asks_status=True, asks_open=True)
    assert top_indices(s, 1) == [2]
    assert s.absolute.tolist() == plain.absolute.tolist()  # the floor reads the same


def test_a_question_about_how_it_ended_ranks_the_settling_turn_first() -> None:
    units = _two_threads()
    payloads = [u.model_dump(mode="json") for u in units]
    batch = candidate_batch(
        [u.memory_id for u in units], payloads, [0.86, 0.70, 0.80], TABLES.stopwords, issues=_thread_views(units)
    )
    assert batch.settled_by is not None
    assert batch.settled_by.tolist() == [1, -1, -1]
    q = analyse_query("what happened with the June one in the end?", TABLES)
    assert top_indices(score_pool(q, batch, TABLES, NOW, cosine_scale=(0.8, 0.9)), 1) == [0]
    s = score_pool(q, batch, TABLES, NOW, cosine_scale=(0.8, 0.9), asks_outcome=True)
    assert top_indices(s, 1) == [1]
    assert s.absolute[1] == s.absolute[0]  # the settling turn clears the floor as far as its issue does


def test_the_agents_reply_to_a_settled_complaint_is_part_of_its_thread_for_open_questions() -> None:
    units = [
        unit("第三章视频打不开", n=1, session="s1", unit_type="complaint"),
        unit(
            "已反馈技术部门，修好后短信通知您",
            n=2,
            session="s1",
            speaker_role="agent",
            ts=T0 + timedelta(minutes=1, seconds=40),
        ),
        unit("第五章的习题答案也看不了", n=3, session="s2", unit_type="complaint", ts=T0 + timedelta(days=1)),
        unit("第三章视频能看了", n=4, session="s3", ts=T0 + timedelta(days=3)),
    ]
    ids = [u.memory_id for u in units]
    none = IssueView(status="none", resolved_at=None, overdue=False, reopened=False, settled_by=None)
    views = {
        ids[0]: IssueView(
            status="resolved",
            resolved_at=(T0 + timedelta(days=3)).timestamp(),
            overdue=False,
            reopened=False,
            settled_by=ids[3],
        ),
        ids[2]: IssueView(status="pending", resolved_at=None, overdue=False, reopened=False, settled_by=None),
        ids[3]: none,
    }
    payloads = [u.model_dump(mode="json") for u in units]
    batch = candidate_batch(ids, payloads, [0.82, 0.95, 0.86, 0.80], TABLES.stopwords, issues=views)
    q = analyse_query("还有一个没好的，什么时候能修好？", TABLES)
    s = score_pool(q, batch, TABLES, NOW, cosine_scale=(0.8, 0.9), asks_status=True, asks_open=True)
    assert top_indices(s, 1) == [2]


def _own_matters() -> list:
    return [
        unit(
            "exports cut off after 10,000 rows", n=1, session="s1", unit_type="complaint", resolution_status="pending"
        ),
        unit("the refund went through", n=2, session="s2", unit_type="action_request", resolution_status="resolved"),
        unit("sunny, around 22 degrees", n=3, session="s3", speaker_role="agent"),
    ]


def test_a_question_that_refers_back_counts_the_users_own_matters_for_the_floor() -> None:
    batch = _batch(_own_matters(), sims=[0.81, 0.80, 0.80])
    again = analyse_query("exports are getting truncated again, same as before", TABLES)
    assert "repeat" in again.cue_families
    s = score_pool(again, batch, TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert s.owned.tolist() == [1.0, 1.0, 0.0]  # open or settled, an issue is the user's own; small talk is not
    ended = score_pool(analyse_query("did it ever turn up?", TABLES), batch, TABLES, NOW, asks_outcome=True)
    assert ended.owned.tolist() == [1.0, 1.0, 0.0]
    waiting = score_pool(analyse_query("nobody showed up today", TABLES), batch, TABLES, NOW, still_waiting=True)
    assert waiting.owned.tolist() == [1.0, 1.0, 0.0]
    plain = score_pool(analyse_query("Do you sell gift cards?", TABLES), batch, TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert plain.owned.tolist() == [0.0, 0.0, 0.0]  # no reference back: the words decide
    assert s.absolute.tolist() == plain.absolute.tolist()  # ranking and the absolute relevance are unchanged
    pointed = analyse_query("那个导出的事批下来没有", TABLES)  # a referent phrase, no status or repeat word
    assert pointed.refers_to_open
    assert pointed.cue_families == ()
    assert score_pool(pointed, batch, TABLES, NOW).owned.tolist() == [1.0, 1.0, 0.0]
    for text in ("When does that actually kick in?", "它换好了没", "那笔钱退了吗"):  # a pronoun or demonstrative
        back = analyse_query(text, TABLES)
        assert back.points_back, text
        assert score_pool(back, batch, TABLES, NOW).owned.tolist() == [1.0, 1.0, 0.0]
    for text in ("这个月的账单出了吗", "Is this month's bill out?", "Do you sell gift cards?"):
        assert not analyse_query(text, TABLES).points_back, text  # the present, not something said before


def test_a_status_question_ranks_the_agents_reply_to_the_matter_over_the_report() -> None:
    units = [
        unit("the mug arrived cracked", n=1, session="s1", unit_type="complaint"),
        unit("I've opened case CLM-7745 for a replacement", n=2, session="s1", speaker_role="agent"),
    ]
    q = analyse_query("Is the mug thing still open?", TABLES)
    assert q.focus == "answer"
    s = score_pool(q, _batch(units, sims=[0.9, 0.86]), TABLES, NOW, cosine_scale=(0.8, 0.9), asks_status=True)
    assert top_indices(s, 1) == [1]  # how the matter stands is what the agent said about it
    plain = score_pool(q, _batch(units, sims=[0.9, 0.86]), TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert top_indices(plain, 1) == [0]  # no status question: a report is no question, it keeps its rank
    waiting = score_pool(
        q, _batch(units, sims=[0.9, 0.86]), TABLES, NOW, cosine_scale=(0.8, 0.9), asks_status=True, still_waiting=True
    )
    assert top_indices(waiting, 1) == [0]  # still waiting keeps its own reading (what is owed: the promise)


def test_a_unit_out_of_validity_lends_its_turn_no_relevance() -> None:
    expired = Validity(validity_type="transient", effective_to=NOW - timedelta(days=1))
    units = [
        unit("charged twice for march", n=1, session="s1", unit_type="complaint"),
        unit("you will see it back soon", n=2, session="s1", speaker_role="agent", validity=expired),
    ]
    apart = [units[0], units[1].model_copy(update={"session_id": "s2"})]  # the same memories, not neighbours
    q = analyse_query("How was it handled when I was charged twice?", TABLES)
    assert q.focus == "handling"
    s = score_pool(q, _batch(units, sims=[0.82, 0.9]), TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert not s.eligible[1]
    alone = score_pool(q, _batch(apart, sims=[0.82, 0.9]), TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert math.isclose(s.relevance[0], alone.relevance[0])
    valid = [units[0], units[1].model_copy(update={"validity": Validity()})]
    lent = score_pool(q, _batch(valid, sims=[0.82, 0.9]), TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert lent.relevance[0] > s.relevance[0]  # valid, the closer neighbour does lend its share


def test_a_memory_about_a_day_the_question_names_matches_that_day() -> None:
    visit = TimeExpression(
        original_form="wednesday",
        start=NOW - timedelta(hours=4),
        end=NOW - timedelta(hours=1),
        granularity="hour",
        span=(0, 9),
        parser="test",
    )
    units = [
        unit("internet drops every afternoon", n=1, session="s1", unit_type="complaint"),
        unit("a technician visit is scheduled for wednesday", n=2, session="s1", speaker_role="agent", times=[visit]),
    ]
    today = [(NOW.replace(hour=0, minute=0).timestamp(), NOW.replace(hour=23, minute=59).timestamp())]
    q = analyse_query("nobody showed up today", TABLES)
    s = score_pool(q, _batch(units, sims=[0.82, 0.78]), TABLES, NOW, cosine_scale=(0.8, 0.9), about_ranges=today)
    assert s.time_match.tolist() == [0.0, 1.0]
    assert s.grounded[1] == 1.0  # a named period grounds the floor
    assert top_indices(s, 1) == [1]
    elsewhere = [(today[0][0] + 3 * 86400, today[0][1] + 3 * 86400)]
    o = score_pool(q, _batch(units, sims=[0.82, 0.78]), TABLES, NOW, cosine_scale=(0.8, 0.9), about_ranges=elsewhere)
    assert o.time_match.tolist() == [0.0, 0.0]


def test_a_question_about_how_it_ended_ranks_an_open_matter_below_the_settled_thread() -> None:
    units = _two_threads()
    payloads = [u.model_dump(mode="json") for u in units]
    # by its words the open July complaint is the closest, the June thread far behind
    batch = candidate_batch(
        [u.memory_id for u in units], payloads, [0.84, 0.70, 0.87], TABLES.stopwords, issues=_thread_views(units)
    )
    q = analyse_query("how did the box charge get sorted in the end?", TABLES)
    plain = score_pool(q, batch, TABLES, NOW, cosine_scale=(0.8, 0.9))
    s = score_pool(q, batch, TABLES, NOW, cosine_scale=(0.8, 0.9), asks_outcome=True)
    assert math.isclose(s.relevance[2], TABLES.relevance.settled_pending * plain.relevance[2])
    assert top_indices(plain, 1) == [2]
    assert top_indices(s, 1) == [1]  # the turn that settled the June one
    assert s.absolute[2] == plain.absolute[2]  # the floor reads the open one as before


def test_a_memory_out_of_validity_still_answers_for_the_time_it_was_said_or_its_identifier() -> None:
    ended = Validity(validity_type="transient", effective_to=NOW - timedelta(days=2))
    units = [
        unit("membership frozen from July 5 to July 19", n=1, session="s1", validity=ended),
        unit("parcel SF1173398855 leaves the warehouse today", n=2, session="s2", validity=ended),
    ]
    said = (T0.timestamp(), (T0 + timedelta(days=1)).timestamp())  # the day both were said
    q = analyse_query("what did I arrange back then?", TABLES)
    assert not score_pool(q, _batch(units), TABLES, NOW).eligible.any()  # no period named: validity ended
    s = score_pool(q, _batch(units), TABLES, NOW, time_ranges=[said])
    assert s.eligible.all()  # said inside the named period: an answer about then
    assert not s.decisions
    q = analyse_query("where is SF1173398855?", TABLES)
    s = score_pool(q, _batch(units), TABLES, NOW)
    assert s.eligible.tolist() == [False, True]  # the identifier it holds


def test_a_question_whether_a_promise_was_kept_ranks_the_turn_that_kept_it() -> None:
    units = [
        unit("我帮你跟餐厅确认一下，有消息告诉你", n=1, session="s1", speaker_role="agent", commitment_strength=0.7),
        unit("餐厅confirm了，靠窗位已经帮你留好", n=2, session="s2", speaker_role="agent", ts=NOW - timedelta(days=5)),
    ]
    ids = [u.memory_id for u in units]
    views = {
        ids[0]: IssueView(
            status="resolved",
            resolved_at=(T0 + timedelta(days=2)).timestamp(),
            overdue=False,
            reopened=False,
            settled_by=ids[1],
            promise=True,
        )
    }
    payloads = [u.model_dump(mode="json") for u in units]
    batch = candidate_batch(ids, payloads, [0.86, 0.80], TABLES.stopwords, issues=views)
    q = analyse_query("靠窗那个 你们答应了没?", TABLES)
    plain = score_pool(q, batch, TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert top_indices(plain, 1) == [0]
    s = score_pool(q, batch, TABLES, NOW, cosine_scale=(0.8, 0.9), asks_latest=True)
    assert top_indices(s, 1) == [1]
    # the kept promise's part of the score goes to the turn that kept it
    assert s.promise[0] == 0.0
    assert s.promise[1] > 0


def test_a_question_about_an_earlier_episode_defers_the_later_one() -> None:
    units = [
        unit("打印机老是卡纸", n=1, session="s1", unit_type="complaint"),
        unit("工程师看过了，给您换了搓纸轮", n=2, session="s1", speaker_role="agent"),
        unit("又卡纸了！跟上次一模一样", n=3, session="s2", ts=T0 + timedelta(days=3)),
        unit("好的，我再派工程师过去", n=4, session="s2", speaker_role="agent", ts=T0 + timedelta(days=3, minutes=1)),
    ]
    batch = _batch(units, [0.82, 0.83, 0.86, 0.87])
    q = analyse_query("上回卡纸那次 你们工程师动了哪个零件？", TABLES)
    plain = score_pool(q, batch, TABLES, NOW, cosine_scale=(0.8, 0.9))
    assert top_indices(plain, 1, turn=batch.turn)[0] in (2, 3)
    reports = ("又", "again")
    s = score_pool(q, batch, TABLES, NOW, cosine_scale=(0.8, 0.9), repeat_reports=reports)
    assert top_indices(s, 1, turn=batch.turn) == [1]
