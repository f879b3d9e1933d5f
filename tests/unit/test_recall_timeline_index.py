"""The indexed timeline answers exactly what the exhaustive scan answers.

Random timelines (seeded) of memories over two tenants, users and sessions: complaints and
requests, customers' confirmations and agents' completions, agents' promises with deadlines,
repeated reports that reopen a settled issue, memories written again (a correction ends their
validity and names the memory that supersedes them, or they move to another user) and deleted,
asked at random times with context turns left out, and everything written again as a replay
does. Two levels:

* the index alone (`state.recall.timeline_index`) against `ScannedTimeline` over the memories a
  store would return (speakers, every memory's BM25 share, the best lexical hits, issue views);
* `RecallService` over a real qdrant-edge store, its index against the scan
  (`indexed_timeline=False`): the same ranked memory ids and the same scores, with writes between
  the questions, and again after the store is closed and opened (the index is rebuilt).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from flows.api.store_lease import LeasedStore
from flows.recall import RecallService
from schemas.memory import MemoryUnit, TimeExpression, UnitType, Validity, memory_id
from schemas.recall import ContextTurn, RecallRequest
from sinks.models.embedders import load_embedder
from sinks.store.base import MemoryStore, StoredPoint, StoreFilter
from sinks.store.qdrant_edge import QdrantEdgeStore
from state.recall.config import tables_file
from state.recall.lexical import tokenize
from state.recall.resolution import load_resolution
from state.recall.timeline import ScannedTimeline
from state.recall.timeline_index import TimelineIndex, instant
from tests.recall_support import T0

TABLES = tables_file()
STOP = TABLES.get().stopwords
LEXICON = load_resolution()
EMB = load_embedder("static")

WORDS = [
    "订单", "快递", "退款", "客服", "态度", "补偿", "投诉", "仓库", "优惠券",
    "refund", "parcel", "order", "late", "broken", "again", "warehouse", "address", "painting", "sunrise",
]  # fmt: skip
PHRASES = [
    "问题解决了", "已经收到了", "it's done", "works now", "已为您取消", "done, it now goes to the office",
    "我们会给您补偿", "we will send a replacement", "还没收到", "still not here", "怎么样了", "",
]  # fmt: skip
TYPES: list[UnitType] = [
    "complaint",
    "action_request",
    "statement",
    "commitment",
    "resolution_confirmation",
    "smalltalk",
]
SCOPES: list[dict[str, str]] = [
    {"tenant_id": "t1", "user_id": "u1"},
    {"tenant_id": "t1", "user_id": "u2"},
    {"tenant_id": "t2", "user_id": "u1"},
    {"tenant_id": "t1", "session_id": "s1"},
    {"tenant_id": "t2", "session_id": "s2"},
]


def _memory(rng: random.Random, n: int) -> MemoryUnit:
    tenant, session = rng.choice(["t1", "t1", "t2"]), rng.choice(["s1", "s2", "s3"])
    ts = T0 + timedelta(minutes=rng.randint(0, 3000))
    text = " ".join([*rng.choices(WORDS, k=rng.randint(0, 7)), rng.choice(PHRASES)]).strip()
    times: tuple[TimeExpression, ...] = ()
    if rng.random() < 0.3:
        due = ts + timedelta(minutes=rng.randint(-60, 2000))
        times = (
            TimeExpression(
                original_form="明天", start=ts, end=due, granularity="day", span=(0, 2), parser="t", kind="deadline",
                deadline=due if rng.random() < 0.5 else None,
            ),
        )  # fmt: skip
    ends = [None, None, ts + timedelta(minutes=rng.randint(-100, 3000))]
    return MemoryUnit(
        memory_id=memory_id(tenant, session, f"e{n}", 0),
        unit_index=rng.randint(0, 2),
        tenant_id=tenant,
        session_id=session,
        user_id=rng.choice(["u1", "u1", "u2", None]),
        turn_id=f"e{n}",
        event_id=f"e{n}",
        ts=ts,
        text=text,
        source_text=text,
        speaker=rng.choice(["Ann", "Bob", "客服", None]),
        speaker_role=rng.choice(["customer", "agent"]),
        unit_type=rng.choice(TYPES),
        resolution_status=rng.choice(["pending", "resolved", "none"]),
        commitment_strength=rng.choice([0.0, 0.0, 0.5, 0.9]),
        times=times,
        validity=Validity(effective_to=rng.choice(ends)),
    )


def _rewritten(rng: random.Random, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The memory written again: superseded by a correction, moved to another user, or reworded."""
    out = dict(payload)
    choice = rng.random()
    if choice < 0.5:
        at = instant(out["ts"]) + rng.randint(0, 2000) * 60
        out["validity"] = {**out["validity"], "effective_to": datetime.fromtimestamp(at, T0.tzinfo).isoformat()}
        out["superseded_by"] = "correction"
    elif choice < 0.75:
        out["user_id"] = rng.choice(["u1", "u2", None])
    else:
        out["text"] = " ".join(rng.choices(WORDS, k=3))
    return out


def _matches(payload: Mapping[str, Any], scope: Mapping[str, str]) -> bool:
    return all(payload.get(k) == v for k, v in scope.items())


def _store_would_return(
    stored: Mapping[str, Mapping[str, Any]],
    scope: Mapping[str, str],
    now: datetime,
    limit: int,
    skip: set[str],
    *,
    valid_only: bool = True,
) -> list[tuple[str, Mapping[str, Any]]]:
    """What `RecallService` keeps of `scroll(StoreFilter(match=scope, valid_at=now, not_after=now), limit)`
    (without `valid_at` when not `valid_only`)."""
    t = now.timestamp()
    valid = [
        (m, p)
        for m, p in sorted(stored.items())
        if _matches(p, scope)
        and instant(p["ts"]) <= t
        and (not valid_only or p["validity"].get("effective_to") is None or instant(p["validity"]["effective_to"]) >= t)
    ]
    return [(m, p) for m, p in valid[:limit] if p.get("event_id") not in skip]


@pytest.mark.parametrize("complete", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_the_index_answers_as_the_scan_does(seed: int, complete: bool) -> None:
    """`complete`: the index saw the store empty, so it holds every user from the first memory on
    (until its first drop at `max_rows`, after which a user is read from the store again)."""
    rng = random.Random(seed)
    stored: dict[str, dict[str, Any]] = {}
    index = TimelineIndex(
        lambda scope: [(m, p) for m, p in sorted(stored.items()) if _matches(p, scope)],
        max_rows=60,
        complete=complete,
    )
    n = 0
    for step in range(40):
        if step % 10 == 9:  # a replay writes every memory again
            index.written(sorted(stored.items()))
        for _ in range(rng.randint(1, 12)):  # writes: new memories, memories written again, deletes
            roll = rng.random()
            if roll < 0.7 or not stored:
                n += 1
                unit = _memory(rng, n)
                stored[unit.memory_id] = unit.model_dump(mode="json")
                index.written([(unit.memory_id, stored[unit.memory_id])])
            elif roll < 0.92:
                mid = rng.choice(sorted(stored))
                stored[mid] = _rewritten(rng, stored[mid])
                index.written([(mid, stored[mid])])
            else:
                mid = rng.choice(sorted(stored))
                del stored[mid]
                index.removed([mid])
        scope = rng.choice(SCOPES)
        now = T0 + timedelta(minutes=rng.randint(0, 3500))
        skip = {f"e{rng.randint(1, n)}" for _ in range(rng.randint(0, 3))}
        limit = rng.choice([5000, 5000, rng.randint(0, 15)])
        scanned = ScannedTimeline(
            _store_would_return(stored, scope, now, limit, skip),
            STOP,
            history=_store_would_return(stored, scope, now, limit, skip, valid_only=False),
        )
        indexed = index.view(scope, now, skip, limit, STOP)
        assert len(indexed) == len(scanned)
        assert indexed.speakers() == scanned.speakers()
        q_tokens = list(tokenize(" ".join(rng.choices(WORDS, k=rng.randint(0, 4))), STOP))
        want, got = scanned.lexical(q_tokens), indexed.lexical(q_tokens)
        assert got.positive == want.positive
        assert got.best(30) == want.best(30)
        assert {m: got.get(m) for m in stored} == {m: want.get(m) for m in stored}
        assert indexed.issues(now, LEXICON) == scanned.issues(now, LEXICON)
    assert index.scopes() <= len(SCOPES)


def test_an_index_that_saw_the_store_empty_reads_no_store_for_a_users_first_question() -> None:
    stored: dict[str, dict[str, Any]] = {}
    loads: list[dict[str, str]] = []

    def load(scope: Mapping[str, str]) -> list[tuple[str, Mapping[str, Any]]]:
        loads.append(dict(scope))
        return [(m, p) for m, p in sorted(stored.items()) if _matches(p, scope)]

    rng = random.Random(3)
    index = TimelineIndex(load, complete=True)
    for n in range(1, 30):
        unit = _memory(rng, n)
        stored[unit.memory_id] = unit.model_dump(mode="json")
        index.written([(unit.memory_id, stored[unit.memory_id])])
    now = T0 + timedelta(days=5)
    for scope in SCOPES:
        want = ScannedTimeline(_store_would_return(stored, scope, now, 5000, set()), STOP)
        got = index.view(scope, now, set(), 5000, STOP)
        assert (len(got), got.speakers()) == (len(want), want.speakers())
    # users (and sessions of memories without one) from the writes; a session holding a user's
    # memories from the store
    mixed = [s for s in SCOPES if "session_id" in s and any(p["user_id"] and _matches(p, s) for p in stored.values())]
    assert mixed
    assert loads == mixed
    asked = len(loads)
    index.view({"tenant_id": "t9", "user_id": "nobody"}, now, set(), 5000, STOP)
    index.view({"tenant_id": "t9", "session_id": "nowhere"}, now, set(), 5000, STOP)
    assert len(loads) == asked  # a scope never written has no memory


def _ask(rng: random.Random, q: int, written: int) -> RecallRequest:
    scope = rng.choice(SCOPES)
    at = T0 + timedelta(minutes=rng.randint(200, 3500))
    context = tuple(
        ContextTurn(event_id=f"e{rng.randint(1, written)}", ts=at, text="上一句") for _ in range(rng.randint(0, 2))
    )
    text = " ".join([*rng.choices(WORDS, k=rng.randint(1, 4)), rng.choice(PHRASES)])
    return RecallRequest(
        query_event_id=f"q{q}",
        session_id=scope.get("session_id", "s9"),
        tenant_id=scope["tenant_id"],
        user_id=scope.get("user_id"),
        query_text=text,
        ts=at,
        context=context,
    )


def _answers(service: RecallService, request: RecallRequest) -> tuple[list[str], list[tuple[str, float]]]:
    result = service.recall(request)
    return service.ranked_ids(request, 10), [(c.memory_id, c.score) for c in result.cues]


def _same(indexed: RecallService, scanned: RecallService, request: RecallRequest) -> None:
    (ids_i, cues_i), (ids_s, cues_s) = _answers(indexed, request), _answers(scanned, request)
    assert ids_i == ids_s
    assert [m for m, _ in cues_i] == [m for m, _ in cues_s]
    assert [s for _, s in cues_i] == pytest.approx([s for _, s in cues_s], rel=1e-9)


def _upsert(store: MemoryStore, payloads: list[dict[str, Any]]) -> None:
    vectors = EMB.passage([p["text"] or "-" for p in payloads])
    store.upsert([StoredPoint(p["memory_id"], v, p) for p, v in zip(payloads, vectors, strict=True)])


def test_recall_over_the_index_ranks_as_recall_over_the_scan(tmp_path: Path) -> None:
    rng = random.Random(7)
    store = QdrantEdgeStore(tmp_path)
    store.ensure_collection(EMB.dim)
    stored: dict[str, dict[str, Any]] = {}
    n = q = 0
    services = lambda s: (  # noqa: E731
        RecallService(s, EMB, TABLES, lexical_limit=10),
        RecallService(s, EMB, TABLES, lexical_limit=10, indexed_timeline=False),
    )
    indexed, scanned = services(store)
    for _round in range(8):
        batch: list[dict[str, Any]] = []
        for _ in range(rng.randint(10, 40)):
            if rng.random() < 0.85 or not stored:
                n += 1
                batch.append(_memory(rng, n).model_dump(mode="json"))
            else:
                batch.append(_rewritten(rng, stored[rng.choice(sorted(stored))]))
        _upsert(store, batch)
        stored.update({p["memory_id"]: p for p in batch})
        if _round == 5:
            gone = rng.sample(sorted(stored), 5)
            store.delete(gone)
            for mid in gone:
                del stored[mid]
        for _ in range(6):
            q += 1
            _same(indexed, scanned, _ask(rng, q, n))
    store.close()
    reopened = QdrantEdgeStore(tmp_path)  # a restart: the index is read again from the shard
    reopened.ensure_collection(EMB.dim)
    indexed, scanned = services(reopened)
    for _ in range(10):
        q += 1
        _same(indexed, scanned, _ask(rng, q, n))
    reopened.close()


def test_a_leased_store_hands_over_the_index_of_its_open_handle(tmp_path: Path) -> None:
    lease = LeasedStore(lambda: QdrantEdgeStore(tmp_path), dim=EMB.dim, idle_release_s=None)
    lease.ensure_collection(EMB.dim)
    first = _memory(random.Random(1), 1).model_copy(update={"tenant_id": "t1", "user_id": "u1"})
    _upsert(lease, [first.model_dump(mode="json")])
    at = first.ts + timedelta(minutes=1)
    timeline = lease.timeline({"tenant_id": "t1", "user_id": "u1"}, at, set(), 5000, STOP)
    assert timeline is not None
    assert len(timeline) == 1
    lease.close()


def _written_store(tmp_path: Path, seed: int, n: int) -> tuple[QdrantEdgeStore, list[dict[str, Any]]]:
    """A store opened empty with `n` random memories written through it, and their payloads."""
    rng = random.Random(seed)
    store = QdrantEdgeStore(tmp_path)
    store.ensure_collection(EMB.dim)
    payloads = [_memory(rng, i).model_dump(mode="json") for i in range(1, n + 1)]
    _upsert(store, payloads)
    return store, payloads


def test_search_hands_out_the_payloads_as_written(tmp_path: Path) -> None:
    """Search reads its hits' payloads from the index or, for memories it does not hold, from the
    engine: either way the payload as written."""
    store, payloads = _written_store(tmp_path, 11, 79)
    written = {p["memory_id"]: p for p in payloads}
    scope = {"tenant_id": "t1", "user_id": "u1"}
    store.timeline(scope, T0 + timedelta(days=9), set(), 5000, STOP)  # index the user (as recall does)
    query = EMB.query(["退款 refund"])[0]
    for flt in (StoreFilter(match=scope), StoreFilter(match={"tenant_id": "t2"}), StoreFilter()):
        hits = store.search(query, flt, 50)
        assert hits
        assert [h.payload for h in hits] == [written[h.id] for h in hits]
    store.close()


def test_retrieve_gives_the_engines_payloads_and_vectors_for_indexed_and_other_memories(tmp_path: Path) -> None:
    store, payloads = _written_store(tmp_path, 12, 59)
    ids = [p["memory_id"] for p in payloads]
    store.close()
    reopened = QdrantEdgeStore(tmp_path)  # nothing indexed yet: every payload from the engine
    reopened.ensure_collection(EMB.dim)
    from_engine = {h.id: h for h in reopened.retrieve(ids, with_vectors=True)}
    reopened.timeline({"tenant_id": "t1", "user_id": "u1"}, T0 + timedelta(days=9), set(), 5000, STOP)
    mixed = reopened.retrieve([*ids[::-1], "00000000-0000-4000-8000-000000000000"], with_vectors=True)
    assert [h.id for h in mixed] == ids[::-1]  # in the order asked, an unknown id skipped
    for h in mixed:
        assert h.payload == from_engine[h.id].payload
        np.testing.assert_allclose(h.vector, from_engine[h.id].vector)
    assert [h.vector for h in reopened.retrieve(ids[:3])] == [None, None, None]
    reopened.close()


def test_a_confirmation_whose_validity_ended_still_settles_what_it_answered() -> None:
    """ "现在用着挺好的" is a state valid for a day; a week later it is no cue, but the repair it
    confirmed stays settled, in the index as in the scan."""
    complaint = MemoryUnit(
        memory_id="m1",
        unit_index=0,
        tenant_id="t1",
        session_id="s1",
        user_id="u1",
        turn_id="e1",
        event_id="e1",
        ts=T0,
        text="打印机卡纸，每次打到第二页就卡住",
        source_text="打印机卡纸",
        unit_type="complaint",
        resolution_status="pending",
    )
    later = T0 + timedelta(days=7)
    fine = MemoryUnit(
        memory_id="m2",
        unit_index=0,
        tenant_id="t1",
        session_id="s2",
        user_id="u1",
        turn_id="e2",
        event_id="e2",
        ts=T0 + timedelta(days=1),
        text="上次修的打印机现在用着挺好的",
        source_text="上次修的打印机现在用着挺好的",
        validity=Validity(validity_type="transient", effective_to=T0 + timedelta(days=2)),
    )
    stored = {u.memory_id: u.model_dump(mode="json") for u in (complaint, fine)}
    scope = {"tenant_id": "t1", "user_id": "u1"}
    index = TimelineIndex(lambda s: [(m, p) for m, p in sorted(stored.items()) if _matches(p, s)])
    indexed = index.view(scope, later, set(), 5000, STOP)
    scanned = ScannedTimeline(
        _store_would_return(stored, scope, later, 5000, set()),
        STOP,
        history=_store_would_return(stored, scope, later, 5000, set(), valid_only=False),
    )
    assert len(indexed) == len(scanned) == 1  # the expired confirmation is no cue
    assert indexed.issues(later, LEXICON) == scanned.issues(later, LEXICON)
    view = indexed.issues(later, LEXICON)["m1"]
    assert (view.status, view.settled_by) == ("resolved", "m2")
