"""Reflection: a correction that conflicts with the previous answer yields a structured record,
and the user's statement supersedes the wrong memory for later recall."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import numpy as np
import pytest

from schemas.errors import StoreError
from schemas.events import UserCorrection
from schemas.memory import MemoryUnit, memory_id
from schemas.reflection import SupersedeRequest
from sinks.store.base import StoredPoint, StoreFilter
from sinks.store.supersede import SupersedeExecutor, statement_memory_id
from state.respond.decisions import DecisionSwitches
from state.respond.reflection import Correction, PreviousAnswer, reflect
from state.respond.tables import response_text
from tests.fakes.fake_openai import closed_port_url
from tests.fakes.memory_store import DictStore
from tests.fakes.responder_factories import TS, make_cue, make_request, make_responder

TEXT = response_text().get()
LATER = datetime(2026, 6, 11, tzinfo=UTC)


class HashEmbedder:
    """A deterministic 8-dim embedder: enough to store and search in tests."""

    name, dim = "hash", 8

    def passage(self, texts):  # type: ignore[no-untyped-def]
        rows = [
            np.frombuffer(
                np.random.default_rng(abs(hash(t)) % 2**32).random(8).astype(np.float32).tobytes(), dtype=np.float32
            )
            for t in texts
        ]
        return np.vstack(rows) / np.linalg.norm(np.vstack(rows), axis=1, keepdims=True)

    query = passage


def _stored(store: DictStore, mid: str, text: str) -> None:
    unit = MemoryUnit(
        memory_id=mid,
        unit_index=0,
        tenant_id="tenant-a",
        session_id="sess-1",
        user_id="user-1",
        turn_id=mid,
        event_id=mid,
        ts=datetime(2026, 6, 8, tzinfo=UTC),
        text=text,
        source_text=text,
        speaker_role="agent",
        unit_type="commitment",
    )
    store.upsert([StoredPoint(mid, HashEmbedder().passage([text])[0], unit.model_dump(mode="json"))])


def _two_turns(first: str, cue_text: str, second: str):  # type: ignore[no-untyped-def]
    """Answer `first` (endpoint down → template quoting the cue), then the user's `second` turn."""
    responder = make_responder(closed_port_url(), retries=0)
    cue = make_cue("mem-wrong", text=cue_text)

    async def run():  # type: ignore[no-untyped-def]
        one = await responder.respond(make_request(first, cue, n=1))
        two = await responder.respond(make_request(second, n=2, ts=TS.replace(minute=5)))
        await responder.aclose()
        return one, two

    return asyncio.run(run())


def test_a_date_correction_yields_a_reflection_and_a_supersede_request() -> None:
    first, second = _two_turns("我的订单哪天发货的？", "客服：订单5月14日发货", "不对，是上个月15号")
    assert "5月14日" in first.response.text
    record = second.reflection
    assert record is not None
    assert record.error_pattern == "date_parse_error"
    assert record.wrong_value == "5月14日"
    assert record.correct_answer_source.kind == "user_statement"
    assert record.correct_answer_source.text == "上个月15号"
    assert record.correct_answer_source.normalised == "2026-05-14T16:00:00+00:00"  # 15 May in Asia/Shanghai
    assert "上个月15号" in record.fix_strategy
    assert record.previous_request_id == "req-1"
    assert record.superseded_memory_ids == ("mem-wrong",)
    assert second.response.reflection_id == record.reflection_id
    supersede = second.supersede
    assert supersede is not None
    assert supersede.memory_ids == ("mem-wrong",)
    assert supersede.statement_text == "客服：订单2026-05-15发货"
    assert supersede.source_text == "不对，是上个月15号"


@pytest.mark.parametrize(
    ("cue_text", "correction", "pattern"),
    [
        ("The parcel was shipped yesterday", "That's wrong, actually it is still not shipped", "state_sync_delay"),
        ("您的订单号是 88213", "错了，应该是 88231", "entity_recognition_error"),
        ("Your parcel goes to the Beijing depot", "That's wrong, it should be the Shanghai depot", "fact_mismatch"),
    ],
)
def test_error_patterns_come_from_the_template_set(cue_text: str, correction: str, pattern: str) -> None:
    _, second = _two_turns("where is it?", cue_text, correction)
    assert second.reflection is not None
    assert second.reflection.error_pattern == pattern
    assert second.supersede is not None


def test_entity_correction_names_the_wrong_identifier() -> None:
    _, second = _two_turns("我的订单号是多少？", "您的订单号是 88213", "错了，应该是 88231")
    assert second.reflection is not None
    assert second.reflection.wrong_value == "88213"
    assert second.supersede is not None
    assert second.supersede.statement_text == "您的订单号是 88231"


@pytest.mark.parametrize("second", ["好的，谢谢", "对，是5月14日", "不对，应该是5月14日"])
def test_no_reflection_without_a_conflicting_correction(second: str) -> None:
    _, outcome = _two_turns("我的订单哪天发货的？", "客服：订单5月14日发货", second)
    assert outcome.reflection is None
    assert outcome.supersede is None


def test_no_reflection_without_a_previous_answer() -> None:
    correction = Correction("t", "s", None, "e", "不对，是上个月15号", TS)
    assert reflect(None, correction, TEXT) is None


def test_previous_answer_without_cues_reflects_but_supersedes_nothing() -> None:
    previous = PreviousAnswer("r1", "订单5月14日发货", cue_ids=())
    found = reflect(previous, Correction("t", "s", None, "e", "不对，是上个月15号", TS, "Asia/Shanghai"), TEXT)
    assert found is not None
    assert found.record.superseded_memory_ids == ()
    assert found.supersede is None


def test_an_explicit_user_correction_event_needs_no_marker_words() -> None:
    responder = make_responder(closed_port_url(), retries=0)

    async def run():  # type: ignore[no-untyped-def]
        await responder.respond(make_request("哪天发货？", make_cue("mem-wrong", text="订单5月14日发货")))
        await responder.aclose()

    asyncio.run(run())
    event = UserCorrection(event_id="c1", session_id="sess-1", tenant_id="tenant-a", ts=LATER, corrected_text="5月16日")
    found = responder.correct(event)
    assert found is not None
    assert found.record.error_pattern == "date_parse_error"
    assert found.supersede is not None
    assert found.supersede.statement_text == "订单2026-05-16发货"


def test_switches_turn_reflection_and_supersede_off() -> None:
    responder = make_responder(closed_port_url(), retries=0, supersede=False)

    async def run():  # type: ignore[no-untyped-def]
        await responder.respond(make_request("哪天发货？", make_cue("mem-wrong", text="订单5月14日发货")))
        out = await responder.respond(make_request("不对，是上个月15号", n=2))
        await responder.aclose()
        return out

    outcome = asyncio.run(run())
    assert outcome.reflection is not None
    assert outcome.supersede is None
    event = UserCorrection(event_id="c1", session_id="sess-1", tenant_id="tenant-a", ts=LATER, corrected_text="5月16日")
    assert responder.correct(event) is not None
    assert responder.correct(event).supersede is None
    off = make_responder(closed_port_url(), retries=0, reflection=False)
    assert off.correct(event) is None


def test_previous_answers_are_bounded_and_forgotten() -> None:
    responder = make_responder(
        closed_port_url(), retries=0, max_sessions=2, switches=DecisionSwitches(llm_enabled=False)
    )

    async def run() -> None:
        for i in range(3):
            await responder.respond(make_request("hi", n=i, session_id=f"s{i}"))
        await responder.aclose()

    asyncio.run(run())
    assert responder.previous_answer("s0") is None
    assert responder.previous_answer("s2") is not None
    responder.forget("s2")
    assert responder.previous_answer("s2") is None


def test_the_users_statement_supersedes_the_wrong_memory_for_later_recall() -> None:
    _, second = _two_turns("我的订单哪天发货的？", "客服：订单5月14日发货", "不对，是上个月15号")
    store = DictStore()
    _stored(store, "mem-wrong", "客服：订单5月14日发货")
    _stored(store, "mem-other", "客户要求开发票")
    request = second.supersede
    assert request is not None

    result = SupersedeExecutor(store, HashEmbedder()).execute(request)
    result_again = SupersedeExecutor(store, HashEmbedder()).execute(request)  # at-least-once: idempotent

    new_id = statement_memory_id(request)
    assert result == result_again
    assert result.statement_id == new_id
    assert new_id == memory_id("tenant-a", "sess-1", "ev-2#correction", 0)
    assert result.superseded == ("mem-wrong",)
    old = store.points["mem-wrong"].payload
    assert old["superseded_by"] == new_id
    assert old["validity"]["effective_to"] == request.ts.isoformat()
    assert old["text"] == "客服：订单5月14日发货"  # faithful: the wrong memory is marked, not rewritten
    new = MemoryUnit.model_validate(store.points[new_id].payload)
    assert new.text == "客服：订单2026-05-15发货"
    assert new.source_text == "不对，是上个月15号"
    assert new.confidence_score == 1.0
    assert new.priority_flag
    assert new.unit_type == "clarification"

    later = StoreFilter(match={"tenant_id": "tenant-a", "session_id": "sess-1"}, valid_at=LATER.isoformat())
    recalled = {h.id for h in store.search(HashEmbedder().query(["哪天发货"])[0], later, limit=10)}
    assert recalled == {new_id, "mem-other"}  # the wrong memory no longer reaches recall
    assert store.count() == 3


def test_supersede_skips_memories_the_store_no_longer_has() -> None:
    store = DictStore()
    request = SupersedeRequest(
        reflection_id="r",
        tenant_id="t",
        session_id="s",
        ts=TS,
        memory_ids=("gone",),
        statement_event_id="e",
        statement_text="x",
        source_text="x",
    )
    result = SupersedeExecutor(store, HashEmbedder()).execute(request)
    assert result.superseded == ()
    assert result.missing == ("gone",)
    assert store.count() == 1


class FlakyStore(DictStore):
    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def upsert(self, points):  # type: ignore[no-untyped-def]
        if self.failures:
            self.failures -= 1
            raise StoreError("store unavailable")
        super().upsert(points)


def test_supersede_retries_transient_store_errors_then_gives_up() -> None:
    request = SupersedeRequest(
        reflection_id="r",
        tenant_id="t",
        session_id="s",
        ts=TS,
        memory_ids=("m",),
        statement_event_id="e",
        statement_text="x",
        source_text="x",
    )
    flaky = FlakyStore(failures=2)
    SupersedeExecutor(flaky, HashEmbedder(), retries=3, backoff_s=0).execute(request)
    assert flaky.count() == 1
    with pytest.raises(StoreError, match="unavailable"):
        SupersedeExecutor(FlakyStore(failures=5), HashEmbedder(), retries=2, backoff_s=0).execute(request)


def test_a_sessions_requests_are_answered_in_order_even_when_submitted_together() -> None:
    responder = make_responder(closed_port_url(), retries=0)
    first = make_request("我的订单哪天发货的？", make_cue("mem-wrong", text="客服：订单5月14日发货"), n=1)
    correction = make_request("不对，是上个月15号", n=2)
    other = make_request("hello", n=3, session_id="another")

    async def run():  # type: ignore[no-untyped-def]
        outcomes = await responder.respond_many([first, correction, other])
        await responder.aclose()
        return outcomes

    one, two, three = asyncio.run(run())
    assert one.reflection is None
    assert two.reflection is not None
    assert two.reflection.previous_request_id == "req-1"
    assert three.reflection is None
    assert responder._session_locks == {}  # no per-session state left once idle
