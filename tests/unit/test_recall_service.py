"""The recall service end to end on the embedded store (qdrant-edge) with the static embedder."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from flows.recall import RecallService
from flows.verification import VerificationGuard
from schemas.errors import StateMirrorError, StoreError
from schemas.memory import EmotionLoad, Validity
from schemas.recall import ContextTurn
from sinks.http.verifiers import HttpVerifier, VerifierPool, VerifierRegistry
from sinks.models.embedders import load_embedder
from sinks.store.qdrant_edge import QdrantEdgeStore
from sinks.store.recent_actions import InMemoryRecentActions
from state.core.hotfile import HotFile
from state.recall.abstain import Offer, floor_relevance, offer_split, offered_coverage
from state.recall.config import DEFAULT_LEXICON, DEFAULT_WEIGHTS, RecallTables, tables_file
from state.recall.floor_model import floor_file
from state.recall.specifics import Coverage
from tests.recall_support import T0, ask, fill_store, unit
from tests.verifier_server import verifier_server

NOW = T0 + timedelta(days=7)
EMB = load_embedder("static")
UPSET = EmotionLoad(stress=0.9, urgency=0.6, certainty=0.5, cooperation=0.2)
WAREHOUSE = dict(topic="warehouse_status", terms=("东莞仓",), validity=Validity(validity_type="transient"))

UNITS = [
    unit(
        "客服态度很差，我要投诉",
        n=1,
        unit_type="complaint",
        topic="service_attitude",
        severity="high",
        resolution_status="pending",
        emotion=UPSET,
    ),
    unit("客服小王人挺好的，态度不错", n=2, unit_type="smalltalk", ts=NOW - timedelta(hours=3)),
    unit(
        "双十一全场满300减50",
        n=3,
        topic="promotion",
        validity=Validity(validity_type="periodic", effective_to=NOW - timedelta(days=1)),
    ),
    unit(
        "618大促满200减30",
        n=4,
        topic="promotion",
        validity=Validity(validity_type="periodic", effective_to=NOW + timedelta(days=10)),
    ),
    unit("东莞仓维护中，暂停发货", n=5, **WAREHOUSE),
    unit(
        "客服态度很差，另一个租户的投诉",
        n=6,
        tenant="t2",
        unit_type="complaint",
        severity="high",
        resolution_status="pending",
        emotion=UPSET,
    ),
    unit(
        "客服态度很差，另一个用户的投诉",
        n=7,
        user="u2",
        unit_type="complaint",
        severity="high",
        resolution_status="pending",
        emotion=UPSET,
    ),
    unit("满100减20优惠券，另一个租户", n=8, tenant="t2", topic="promotion"),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QdrantEdgeStore]:
    """One store for the module (creating an edge shard takes seconds); the tests only read."""
    s = fill_store(tmp_path_factory.mktemp("store"), EMB, UNITS)
    yield s
    s.close()


def _service(store: QdrantEdgeStore, **kw: object) -> RecallService:
    return RecallService(store, EMB, kw.pop("tables", tables_file()), **kw)  # type: ignore[arg-type]


def _texts(result) -> list[str]:
    return [c.text for c in result.cues]


def test_same_problem_again_finds_the_open_complaint_with_reasons(store: QdrantEdgeStore) -> None:
    r = _service(store).recall(ask("客服态度又这么差，太失望了", at=NOW))
    top = r.cues[0]
    assert top.text == "客服态度很差，我要投诉"
    assert r.question_class == "after_sales"
    assert "still pending" in top.explanation
    assert "emotion match" in top.explanation
    assert top.explanation.startswith(top.cue_id + " complaint about service_attitude, ")
    assert r.debug_marker.startswith(f"[DEBUG:cue={top.cue_id},css=")
    assert top.components.resolution_gap == 1.0
    assert top.components.severity == 1.0
    assert len(r.cues) <= 3


@pytest.mark.parametrize("query", ["客服态度又这么差", "满减优惠还有吗", "东莞仓发货了吗", "another tenant complaint"])
def test_another_tenants_or_users_memory_is_never_returned(store: QdrantEdgeStore, query: str) -> None:
    svc = _service(store)
    for tenant, user in (("t1", "u1"), ("t2", "u1"), ("t1", "u2"), ("t3", "u1")):
        r = svc.recall(ask(query, at=NOW, tenant=tenant, user=user))
        ids = {c.memory_id for c in r.cues} | {d.memory_id for d in r.validity_decisions}
        allowed = {u.memory_id for u in UNITS if u.tenant_id == tenant and u.user_id == user}
        assert ids <= allowed


def test_no_user_means_the_session_only(store: QdrantEdgeStore) -> None:
    r = _service(store).recall(ask("客服态度", at=NOW, user=None))
    assert r.cues == ()  # the question's own session holds nothing


def test_an_expired_promotion_is_never_returned(store: QdrantEdgeStore) -> None:
    r = _service(store).recall(ask("现在有什么满减优惠活动", at=NOW))
    assert "双十一全场满300减50" not in _texts(r)
    assert _texts(r)[0] == "618大促满200减30"
    earlier = _service(store).recall(ask("现在有什么满减优惠活动", at=NOW - timedelta(days=3)))
    assert "双十一全场满300减50" in _texts(earlier)  # it was valid then


def test_context_turns_are_not_recalled(store: QdrantEdgeStore) -> None:
    ctx = (ContextTurn(event_id="e2", ts=NOW, text="客服小王人挺好的，态度不错"),)
    r = _service(store).recall(ask("客服态度", at=NOW, context=ctx))
    assert "客服小王人挺好的，态度不错" not in _texts(r)


def _guarded(url: str, path: str) -> VerificationGuard:
    registry = VerifierRegistry()
    registry.register(HttpVerifier("warehouse_status", url + path))
    return VerificationGuard(registry, VerifierPool(2), wait_s=1.0, answer_ttl_s=0.0)


def _tables_with(tmp_path: Path, **validity: object) -> HotFile[RecallTables]:
    w = yaml.safe_load(DEFAULT_WEIGHTS.read_text())
    w["validity"].update(validity)
    path = tmp_path / "weights.yaml"
    path.write_text(yaml.safe_dump(w))
    return tables_file(path, DEFAULT_LEXICON)


def _warehouse_cue(result):
    return next((c for c in result.cues if c.text.startswith("东莞仓")), None)


def test_a_failing_verifier_downweights_then_the_breaker_opens(store: QdrantEdgeStore) -> None:
    with verifier_server() as (url, hits):
        plain = _service(store, verification=_guarded(url, "/ok")).recall(ask("东莞仓发货了吗", at=NOW))
        verified = _warehouse_cue(plain)
        assert verified is not None
        assert "verified now" in verified.explanation
        guard = _guarded(url, "/fail")
        svc = _service(store, verification=guard)
        results = [svc.recall(ask("东莞仓发货了吗", at=NOW, event=f"q{i}")) for i in range(3)]
        for r in results:
            cue = _warehouse_cue(r)
            assert cue is not None
            assert cue.score < verified.score
            assert any(d.decision == "verify_failed_downweighted" for d in r.validity_decisions)
        assert hits["fail"] == 2  # the third recall found the breaker open
        assert "breaker open" in next(
            d.detail for d in results[2].validity_decisions if d.decision.startswith("verify")
        )


def test_a_failing_verifier_drops_the_fact_when_configured(store: QdrantEdgeStore, tmp_path: Path) -> None:
    with verifier_server() as (url, _):
        svc = _service(
            store, verification=_guarded(url, "/fail"), tables=_tables_with(tmp_path, on_verify_failure="drop")
        )
        r = svc.recall(ask("东莞仓发货了吗", at=NOW))
        assert _warehouse_cue(r) is None
        assert any(d.decision == "verify_failed_dropped" for d in r.validity_decisions)


def test_verifier_contradiction_and_user_statement_overrides_are_in_the_evidence_chain(store: QdrantEdgeStore) -> None:
    with verifier_server() as (url, _):
        svc = _service(store, verification=_guarded(url, "/down"))
        r = svc.recall(ask("东莞仓发货了吗", at=NOW))
        assert _warehouse_cue(r) is None
        assert [(e.winner, e.loser) for e in r.evidence_chain] == [("verifier", "memory")]
        said = svc.recall(ask("我刚收到通知东莞仓已经恢复发货了，什么时候到", at=NOW))
        assert _warehouse_cue(said) is None
        assert ("user_statement", "memory") in [(e.winner, e.loser) for e in said.evidence_chain]


def test_without_verification_transient_facts_count_as_unverified(store: QdrantEdgeStore) -> None:
    r = _service(store).recall(ask("东莞仓发货了吗", at=NOW))
    assert any("switched off" in d.detail for d in r.validity_decisions)


def test_recent_actions_tier_marks_and_adds_cues(store: QdrantEdgeStore) -> None:
    recent = InMemoryRecentActions()
    fresh = unit("帮我把订单 20250601123 的地址改成上海", n=20, unit_type="action_request", ts=NOW - timedelta(hours=1))
    recent.write([UNITS[0], fresh])
    r = _service(store, recent=recent).recall(ask("订单 20250601123 改好了吗", at=NOW))
    tiers = {c.text: c.tier for c in r.cues}
    assert tiers.get(fresh.text) == "recent"
    assert r.cues[0].components.entity == 1.0


def test_run_batch_pairs_requests_with_results(store: QdrantEdgeStore) -> None:
    reqs = [ask("客服态度", at=NOW, event="a"), ask("优惠", at=NOW, event="b")]
    out = _service(store).run_batch(reqs)
    assert [(q.query_event_id, r.query_event_id) for q, r in out] == [("a", "a"), ("b", "b")]


class _BrokenStore:
    name = "broken"

    def search(self, *args: object, **kwargs: object) -> list:
        raise StoreError("store is down")

    def scroll(self, *args: object, **kwargs: object) -> list:
        raise StoreError("store is down")


class _BrokenRecent:
    def read(self, *args: object, **kwargs: object) -> list:
        raise StateMirrorError("redis is down")


def test_a_failing_store_degrades_to_an_empty_explained_result() -> None:
    svc = RecallService(_BrokenStore(), EMB, tables_file())  # type: ignore[arg-type]
    ((_, result),) = svc.run_batch([ask("客服态度", at=NOW)])
    assert result.cues == ()
    assert "recall unavailable" in result.explanation


def test_a_failing_recent_tier_is_skipped(store: QdrantEdgeStore) -> None:
    r = _service(store, recent=_BrokenRecent()).recall(ask("客服态度又这么差", at=NOW))
    assert r.cues[0].text == "客服态度很差，我要投诉"


def test_a_batch_of_questions_is_one_model_call_behind_the_memo(store: QdrantEdgeStore) -> None:
    from collections.abc import Sequence

    from sinks.models.embedding_memo import MemoEmbedder
    from state.core.embedding import Matrix

    class Counting:
        name, dim = EMB.name, EMB.dim

        def __init__(self) -> None:
            self.calls: list[list[str]] = []

        def passage(self, texts: Sequence[str]) -> Matrix:
            return EMB.passage(texts)

        def query(self, texts: Sequence[str]) -> Matrix:
            self.calls.append(list(texts))
            return EMB.query(texts)

    model = Counting()
    questions = ["客服态度又这么差，太失望了", "优惠券怎么用", "客服态度又这么差，太失望了"]
    batch = [ask(q, at=NOW, event=f"q{i}") for i, q in enumerate(questions)]
    memo_results = RecallService(store, MemoEmbedder(model), tables_file()).run_batch(batch)
    assert [len(c) for c in model.calls] == [2]  # the two distinct questions, in one call; every recall hit the memo
    plain = _service(store).run_batch(batch)
    assert [_texts(r) for _, r in memo_results] == [_texts(r) for _, r in plain]


def test_a_cue_shows_its_whole_turn_and_the_turn_before_it(tmp_path: Path) -> None:
    promise = unit("两天内发到您的账户。", n=1, unit_type="commitment", context_prev="客户: 上次说好的补偿呢？")
    promise = promise.model_copy(update={"source_text": "我们会补偿一张五十元的优惠券，两天内发到您的账户。"})
    store = fill_store(tmp_path, EMB, [promise])
    try:
        cue = _service(store).recall(ask("补偿什么时候到账", at=NOW)).cues[0]
    finally:
        store.close()
    assert cue.text == "两天内发到您的账户。"
    assert cue.turn_text == "我们会补偿一张五十元的优惠券，两天内发到您的账户。"
    assert cue.context_prev == "客户: 上次说好的补偿呢？"


def test_past_periods_read_from_the_write_paths_times_equal_a_fresh_parse() -> None:
    from state.core.language import language_mix
    from state.recall.periods import past_periods
    from state.time.extract import normalise_times

    for text in ("上周五说好的退款", "what I cancelled last Monday", "现在怎么样了"):
        times = normalise_times(text, NOW, language_mix(text))
        assert past_periods(text, NOW, times) == past_periods(text, NOW)
    assert past_periods("上周五说好的退款", NOW, ()) == []  # given: nothing is parsed again


def test_the_floor_reads_an_own_matter_only_when_the_question_names_nothing_missing() -> None:
    scores = SimpleNamespace(absolute=np.array([0.1]), grounded=np.array([0.0]), owned=np.array([1.0]))
    assert floor_relevance(scores, 0, Coverage(1.0, ("exports",), ())) == 1.0  # type: ignore[arg-type]
    missing = Coverage(0.5, (), ("network",))  # "我家的网络怎么又断了" with no network in the memories
    assert floor_relevance(scores, 0, missing) == 0.05  # type: ignore[arg-type]


def test_a_sibling_leaves_only_the_named_identifier_grounded_for_the_floor() -> None:
    # "我爸上周做的 checkup 有结果了没" against the mother's check-up said last week: the period matches
    scores = SimpleNamespace(
        absolute=np.array([1.0]), grounded=np.array([1.0]), entity=np.array([0.0]), owned=np.array([0.0])
    )
    plain = Coverage(1.0, ("checkup",), ())
    assert floor_relevance(scores, 0, plain) == 1.0  # type: ignore[arg-type]
    sibling = Coverage(0.2, ("checkup",), ("我爸",), ("我爸→我妈",))
    assert floor_relevance(scores, 0, sibling) == 0.2  # type: ignore[arg-type]
    scores.entity = np.array([1.0])  # the identifier the question names is held: it still counts whole
    assert floor_relevance(scores, 0, sibling) == 1.0  # type: ignore[arg-type]


def _ranked(
    absolute: list[float], cosine: list[float], payloads: list[dict[str, str]] | None = None
) -> SimpleNamespace:
    """A ranked pool of one turn per candidate, the fused order 0, 1, 2, …; what `offer` reads."""
    n = len(absolute)
    final = np.linspace(1.2, 0.6, n)
    scores = SimpleNamespace(
        eligible=np.ones(n, dtype=bool),
        relevance=final,
        lexical=np.zeros(n),
        final=final,
        absolute=np.array(absolute),
        grounded=np.zeros(n),
        owned=np.zeros(n),
        people=(),
    )
    texts = payloads or [{"text": f"第{i}条"} for i in range(n)]
    batch = SimpleNamespace(
        turn=np.arange(n),
        semantic=np.array(cosine),
        payloads=texts,
        speakers=[""] * n,
        session=np.arange(n),  # one turn a session: no exchanges
        ts=np.zeros(n),
    )
    return SimpleNamespace(batch=batch, scores=scores, max_cues=3, floor=0.25)


def _split(question: str, r: SimpleNamespace) -> Offer:
    """What recall offers from the ranked pool `r` (cues, or weak cues), with the shipped tables and floor model."""
    return offer_split(
        question,
        r.batch,
        r.scores,
        max_cues=r.max_cues,
        floor=r.floor,
        tables=tables_file().get(),
        model=floor_file().get(),
    )


def _offer(question: str, r: SimpleNamespace) -> list[int]:
    """The cues recall offers from the ranked pool `r`."""
    return _split(question, r).cues


def test_the_floor_judges_the_cues_retrieval_keeps_among_them() -> None:
    # the fused ranking's first three carry labels, not similarity; the nearest turn by cosine comes fourth
    r = _ranked([0.1, 0.1, 0.1, 0.6], [0.80, 0.79, 0.78, 0.90])
    assert _offer("怎么样了", r) == [0, 1, 3]
    unrelated = _ranked([0.1, 0.1, 0.1, 0.1], [0.80, 0.79, 0.78, 0.90])
    assert _offer("怎么样了", unrelated) == []


def test_the_floor_reads_what_a_cue_shows_its_turn_and_the_turn_before() -> None:
    tables = tables_file().get()
    reply = {"text": "两天内发到您的账户。"}
    unit_only = _ranked([0.6], [0.9], [reply])
    covered = offered_coverage("优惠券什么时候到", unit_only.batch, unit_only.scores, [0], tables)  # type: ignore[arg-type]
    assert covered.missing == ("优惠券",)
    for shown in (
        {**reply, "source_text": "我们会补偿一张五十元的优惠券，两天内发到您的账户。"},
        {**reply, "context_prev": "客户: 说好的优惠券呢？"},
    ):
        r = _ranked([0.6], [0.9], [shown])
        covered = offered_coverage("优惠券什么时候到", r.batch, r.scores, [0], tables)  # type: ignore[arg-type]
        assert covered.factor == 1.0
        assert covered.held == ("优惠券",)


class _Reversed:
    """The store with every search's hits in reverse order: equal scores come back the other way round."""

    def __init__(self, inner: QdrantEdgeStore) -> None:
        self._inner = inner
        self.name = inner.name

    def search(self, *args: object, **kwargs: object) -> list:
        return self._inner.search(*args, **kwargs)[::-1]  # type: ignore[arg-type]

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)


def test_equal_scores_rank_the_same_whatever_order_the_store_returns_them_in(tmp_path: Path) -> None:
    said = "退款什么时候能到账？我等了好几天了"
    twins = [unit(said, n=n, session=f"s{n}", ts=T0, unit_type="complaint") for n in (1, 2, 3)]  # alike but the id
    store = fill_store(tmp_path, EMB, twins)
    try:
        request = ask("退款到账了吗", at=NOW)
        plain = [c.memory_id for c in _service(store).recall(request).cues]
        flipped = [c.memory_id for c in _service(_Reversed(store)).recall(request).cues]  # type: ignore[arg-type]
        assert plain
        assert plain == flipped
    finally:
        store.close()


def test_an_abstained_offer_keeps_its_picks_as_weak_cues_with_the_reason() -> None:
    chosen = _split("怎么样了", _ranked([0.1, 0.1, 0.1, 0.1], [0.80, 0.79, 0.78, 0.90]))
    assert (chosen.cues, chosen.weak) == ([], [0, 1, 3])
    assert chosen.best == pytest.approx(0.1)
    assert chosen.explain().startswith("no cue: the best relevance 0.10, under the floor 0.25; 3 weak cue(s)")
    kept = _split("怎么样了", _ranked([0.1, 0.1, 0.1, 0.6], [0.80, 0.79, 0.78, 0.90]))
    assert (kept.cues, kept.weak, kept.explain()) == ([0, 1, 3], [], "")
