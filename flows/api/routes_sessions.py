"""Session routes: the tenant's sessions, and a session's state, history, memories, turns, recalls.

Input: a session id (any text up to 200 characters, '/' included) and the caller. Output: the
views of `flows.api.models`. State: none; every route reads the store and the records.

Starlette decodes %2F before routing, so the id is matched with a `:path` converter: the id is
everything between `/sessions/` and the route's last segment (state, history, …).
"""

from collections import defaultdict
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from flows.api.context import ApiContext, CallerDependency, SessionId, slim
from flows.api.errors import ApiError
from flows.api.models import (
    MemoryPage,
    RecallList,
    SessionList,
    SessionSummary,
    StateHistory,
    StateStep,
    StateView,
    TurnsView,
    TurnView,
)
from flows.api.security import Caller
from schemas.memory import IntentLabel, MemoryUnit, UnitType, ValidityType
from sinks.store.base import StoreFilter


def session_routes(ctx: ApiContext, caller: CallerDependency) -> APIRouter:
    router = APIRouter(tags=["sessions"])
    CallerDep = Annotated[Caller, Depends(caller)]
    cfg = ctx.settings.serve

    @router.get("/sessions", response_model=SessionList, summary="the tenant's sessions")
    def sessions(who: CallerDep) -> SessionList:
        tenant = who.tenant_id
        hits = ctx.store.scroll(StoreFilter(match={"tenant_id": tenant}), limit=cfg.max_scan)
        by_session: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for h in hits:
            if h.payload.get("tenant_id") == tenant:
                by_session[str(h.payload.get("session_id"))].append(h.payload)
        out = []
        for sid in sorted(set(by_session) | ctx.records.sessions(tenant)):
            payloads = by_session.get(sid, [])
            stamps = sorted(datetime.fromisoformat(str(p["ts"])) for p in payloads)
            state = ctx.last_state(tenant, sid)
            out.append(
                SessionSummary(
                    session_id=sid,
                    user_ids=sorted({str(p["user_id"]) for p in payloads if p.get("user_id")}),
                    units=len(payloads),
                    first_ts=stamps[0] if stamps else None,
                    last_ts=stamps[-1] if stamps else None,
                    recalls=len(ctx.records.recalls(tenant, sid)),
                    task_id=state.task_id if state else None,
                    stage=state.current_stage if state else None,
                )
            )
        out.sort(key=lambda s: s.last_ts or datetime.min.replace(tzinfo=UTC), reverse=True)
        return SessionList(tenant_id=tenant, sessions=out, truncated=len(hits) >= cfg.max_scan)

    @router.get("/sessions/{session_id:path}/state", response_model=StateView, summary="current task state")
    def session_state(session_id: SessionId, who: CallerDep) -> StateView:
        ctx.require_session(who.tenant_id, session_id)
        state = ctx.last_state(who.tenant_id, session_id)
        archived = [
            a.model_copy(update={"final_state": slim(a.final_state)})
            for a in ctx.records.archived(who.tenant_id, session_id)
        ]
        return StateView(
            session_id=session_id,
            source=str(ctx.settings.task.state_log_path),
            state=slim(state) if state else None,
            archived=archived,
        )

    @router.get(
        "/sessions/{session_id:path}/history",
        response_model=StateHistory,
        summary="task state and intent chain after each turn",
    )
    def session_history(session_id: SessionId, who: CallerDep) -> StateHistory:
        ctx.require_session(who.tenant_id, session_id)
        steps = [
            StateStep(
                ts=s.last_event_ts,
                event_id=s.last_event_id,
                task_id=s.task_id,
                stage=s.current_stage,
                intent_chain=list(s.intent_chain),
                anchor=s.anchor.decision if s.anchor else None,
                similarity=s.anchor.similarity if s.anchor else None,
                turn_count=s.turn_count,
                entities=[f"{e.kind}:{e.value}" for e in s.critical_entities if e.strength == "strong"],
            )
            for s in ctx.records.states(who.tenant_id, session_id)
        ]
        return StateHistory(session_id=session_id, steps=steps)

    @router.get(
        "/sessions/{session_id:path}/memories",
        response_model=MemoryPage,
        summary="the session's memory units, paged and filtered",
    )
    def session_memories(
        session_id: SessionId,
        who: CallerDep,
        unit_type: Annotated[list[UnitType] | None, Query(max_length=16)] = None,
        intent: Annotated[list[IntentLabel] | None, Query(max_length=16, description="intent_label")] = None,
        validity: Annotated[list[ValidityType] | None, Query(max_length=8, description="validity_type")] = None,
        offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
        limit: Annotated[int, Query(ge=1, le=10_000)] = 50,
    ) -> MemoryPage:
        if limit > cfg.max_page_size:
            raise ApiError(422, "page_too_large", f"limit is at most {cfg.max_page_size}")
        ctx.require_session(who.tenant_id, session_id)
        extra: dict[str, Any] = {}
        if unit_type:
            extra["unit_type"] = list(dict.fromkeys(unit_type))
        if intent:
            extra["intent_label"] = list(dict.fromkeys(intent))
        if validity:
            extra["validity.validity_type"] = list(dict.fromkeys(validity))
        payloads, _ = ctx.units_of(who.tenant_id, session_id, extra)
        page = payloads[offset : offset + limit]
        total = len(payloads)
        return MemoryPage(
            items=[MemoryUnit.model_validate(p) for p in page],
            total=total,
            offset=offset,
            limit=limit,
            next_offset=offset + limit if offset + limit < total else None,
        )

    @router.get(
        "/sessions/{session_id:path}/turns",
        response_model=TurnsView,
        summary="the session's turns, each with the memory units cut from it",
    )
    def session_turns(session_id: SessionId, who: CallerDep) -> TurnsView:
        ctx.require_session(who.tenant_id, session_id)
        payloads, truncated = ctx.units_of(who.tenant_id, session_id)
        turns: dict[str, list[MemoryUnit]] = defaultdict(list)
        for p in payloads:
            turns[str(p["event_id"])].append(MemoryUnit.model_validate(p))
        views = []
        for units in turns.values():
            first = units[0]
            views.append(
                TurnView(
                    event_id=first.event_id,
                    turn_id=first.turn_id,
                    ts=first.ts,
                    speaker=first.speaker,
                    speaker_role=first.speaker_role,
                    source_text=first.source_text,
                    units=units,
                )
            )
        views.sort(key=lambda t: (t.ts, t.event_id))
        return TurnsView(session_id=session_id, turns=views, truncated=truncated)

    @router.get("/sessions/{session_id:path}/recalls", response_model=RecallList, summary="recalls run in it")
    def session_recalls(session_id: SessionId, who: CallerDep) -> RecallList:
        ctx.require_session(who.tenant_id, session_id)
        return RecallList(session_id=session_id, recalls=ctx.records.recalls(who.tenant_id, session_id))

    return router
