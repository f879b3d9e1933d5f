"""A small two-tenant world for the HTTP API tests: stored units, task-state log, recall log.

Tenants `acme` and `globex` both have a session called `s1` (ids are not global); `acme` also
has `s2`, `globex` has `g2`. Each tenant has one recorded recall whose top cue is its own memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from flows.settings import Settings
from schemas.memory import CorefAnchor, EmotionLoad, IntentScores, MemoryUnit, Validity, memory_id
from schemas.recall import Cue, RecallResult, ScoreComponents
from schemas.session import GoalAnchor, SessionState
from sinks.store.base import StoredPoint
from state.core.embedding import Embedder
from tests.fakes.memory_store import DictStore

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

TURNS: list[dict[str, Any]] = [
    # tenant, session, user, event, role, text, unit_type, intent, validity
    dict(
        t="acme",
        s="s1",
        u="u-li",
        e="a1",
        role="customer",
        text="我的订单 DD1 还没到，快递丢了吗？",
        ut="complaint",
        il="question",
        v="permanent",
    ),
    dict(
        t="acme",
        s="s1",
        u="u-li",
        e="a2",
        role="agent",
        text="我们保证明天下午三点前给您补发。",
        ut="commitment",
        il="commitment",
        v="transient",
    ),
    dict(
        t="acme",
        s="s1",
        u="u-li",
        e="a3",
        role="customer",
        text="好的，谢谢。",
        ut="smalltalk",
        il="neutral",
        v="permanent",
    ),
    dict(
        t="acme",
        s="s2",
        u="u-amy",
        e="a4",
        role="customer",
        text="Refund for order 77 please.",
        ut="action_request",
        il="request",
        v="permanent",
    ),
    dict(
        t="globex",
        s="s1",
        u="u-zed",
        e="g1",
        role="customer",
        text="SECRET globex complaint about invoice 999",
        ut="complaint",
        il="request",
        v="permanent",
    ),
    dict(
        t="globex",
        s="g2",
        u="u-zed",
        e="g2",
        role="customer",
        text="SECRET globex warehouse outage today",
        ut="status_update",
        il="neutral",
        v="transient",
    ),
]


@dataclass
class World:
    settings: Settings
    store: DictStore
    ids: dict[str, str]  # event id → memory id
    run_dir: Path

    def cue(self, event: str) -> str:
        return "CUE-" + self.ids[event].replace("-", "")[:8]


def unit(row: dict[str, Any], i: int) -> MemoryUnit:
    mid = memory_id(row["t"], row["s"], row["e"], 0)
    intent = {k: 0.0 for k in ("commitment", "clarify", "question", "request", "refuse", "neutral")}
    intent[row["il"]] = 0.9
    return MemoryUnit(
        memory_id=mid,
        unit_index=0,
        tenant_id=row["t"],
        session_id=row["s"],
        user_id=row["u"],
        task_id=f"TSK-2026-11-{row['s']}",
        turn_id=f"t{i}",
        event_id=row["e"],
        ts=T0 + timedelta(minutes=i),
        text=row["text"],
        source_text=row["text"],
        speaker=row["u"] if row["role"] == "customer" else "agent",
        speaker_role=row["role"],
        coref=(CorefAnchor(mention="它", resolved_entity="DD1", confidence=0.4, needs_human_review=True),)
        if i == 0
        else (),
        entropy=0.3 + 0.1 * i,
        unit_type=row["ut"],
        intent=IntentScores(**intent),
        intent_label=row["il"],
        confidence_score=0.9 if i % 2 else 0.4,
        emotion=EmotionLoad(stress=0.7, urgency=0.6) if row["ut"] == "complaint" else EmotionLoad(),
        commitment_strength=1.0 if row["ut"] == "commitment" else 0.0,
        validity=Validity(
            validity_type=row["v"], effective_to=T0 + timedelta(days=2) if row["v"] == "transient" else None
        ),
        severity="high" if row["ut"] == "complaint" else "low",
        resolution_status="pending" if row["ut"] == "complaint" else "none",
    )


def state(
    tenant: str, session: str, user: str, n: int, chain: tuple[str, ...], decision: str = "continue"
) -> SessionState:
    return SessionState(
        session_id=session,
        tenant_id=tenant,
        user_id=user,
        task_id=f"TSK-2026-11-{session}",
        current_stage="logistics",
        intent_chain=chain,
        turn_count=n,
        last_event_id=f"{session}-{n}",
        last_event_ts=T0 + timedelta(minutes=n),
        anchor=GoalAnchor(decision=decision, similarity=0.6),  # type: ignore[arg-type]
        goal_vector=(0.1, 0.2),
    )


def recall_result(tenant: str, session: str, qid: str, mid: str, css: float) -> RecallResult:
    cid = "CUE-" + mid.replace("-", "")[:8]
    return RecallResult(
        query_event_id=qid,
        session_id=session,
        tenant_id=tenant,
        query_text="where is my parcel?",
        question_class="logistics",
        ts=T0 + timedelta(minutes=30),
        cues=(
            Cue(
                memory_id=mid,
                cue_id=cid,
                text="…",
                unit_type="complaint",
                score=1.2,
                components=ScoreComponents(emotion_match=0.9, css=css, final=1.2),
                explanation=f"{cid} complaint, {css:.2f}: emotion match 0.90, still pending",
            ),
        ),
        explanation="…",
        debug_marker=f"[DEBUG:cue={cid},css={css:.3f}]",
    )


def build_world(tmp: Path, embedder: Embedder, **serve: Any) -> World:
    run = tmp / "var"
    run.mkdir(parents=True, exist_ok=True)
    store = DictStore()
    store.ensure_collection(embedder.dim)
    ids: dict[str, str] = {}
    units = [unit(r, i) for i, r in enumerate(TURNS)]
    vectors = embedder.passage([u.text for u in units])
    store.upsert([StoredPoint(u.memory_id, v, u.model_dump(mode="json")) for u, v in zip(units, vectors, strict=True)])
    for u in units:
        ids[u.event_id] = u.memory_id
    states = [
        state("acme", "s1", "u-li", 1, ("track_logistics",), "first"),
        state("acme", "s1", "u-li", 2, ("track_logistics",)),
        state("acme", "s1", "u-li", 3, ("track_logistics",)),
        state("globex", "s1", "u-zed", 1, ("invoice",), "first"),
        state("globex", "g2", "u-zed", 1, ("warehouse",), "first"),
    ]
    (run / "task_states.jsonl").write_text("".join(s.model_dump_json() + "\n" for s in states), encoding="utf-8")
    recalls = [
        recall_result("acme", "s1", "q-acme-1", ids["a1"], 0.871),
        recall_result("globex", "g2", "q-globex-1", ids["g2"], 0.654),
    ]
    (run / "recall.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in recalls), encoding="utf-8")
    settings = Settings(
        embedder={"kind": "static"},
        deadletter={"path": run / "deadletter.jsonl"},
        task={"state_log_path": run / "task_states.jsonl", "archived_path": run / "archived_tasks.jsonl"},
        metrics={"path": run / "metrics.jsonl"},  # never the cwd's var/metrics.jsonl
        store={"path": tmp / "store"},
        serve=serve,
    )
    return World(settings=settings, store=store, ids=ids, run_dir=run)
