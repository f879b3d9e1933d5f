"""The HTTP API and inspector of `recallflow serve` (FastAPI; OpenAPI at /openapi.json).

Input: HTTP requests. Output: JSON records (the same RecallResult, MemoryUnit, SessionState as
the stream), Prometheus text, the inspector's static page. State: an `ApiContext` built once at
start: the store lease, the indexed JSONL records, the key table, the recall function.

Every data route resolves the caller's tenant first (security.py) and reads only that tenant's
records: a session or cue of another tenant answers 404, exactly like one that does not exist.
Handlers are plain `def`s: FastAPI runs them in its thread pool, so store calls never block the
event loop.
"""

import logging
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import PlainTextResponse, RedirectResponse, Response
from fastapi.security import APIKeyHeader
from fastapi.staticfiles import StaticFiles
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from flows.api import errors
from flows.api.errors import ApiError
from flows.api.health import PointSpec, compute_panel, flow_panel
from flows.api.limits import BodyLimit
from flows.api.models import (
    CueView,
    ErrorBody,
    HealthPanel,
    InspectorConfig,
    MarkerLookup,
    MarkerMatch,
    MemoryPage,
    Probe,
    RecallBody,
    RecallList,
    SessionList,
    SessionSummary,
    StateHistory,
    StateStep,
    StateView,
    TurnsView,
    TurnView,
)
from flows.api.recall_request import build_request
from flows.api.records import MetricsLog, SessionRecords, parse_markers
from flows.api.security import Caller, KeyTable
from flows.settings import Settings
from schemas.errors import StoreUnavailableError
from schemas.memory import IntentLabel, MemoryUnit, UnitType, ValidityType
from schemas.recall import RecallRequest, RecallResult
from schemas.session import SessionState
from sinks.store.base import MemoryStore, StoreFilter
from state.core.hotfile import HotFile

log = logging.getLogger(__name__)

Recaller = Callable[[RecallRequest], RecallResult]
SessionId = Annotated[str, PathParam(min_length=1, max_length=200, description="session id")]
CUE_PATTERN = r"^(CUE-[0-9a-fA-F]{4,32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$"


def _slim(state: SessionState) -> SessionState:
    """A state without its goal vectors (hundreds of floats nobody reads in a browser)."""
    return state.model_copy(update={"goal_vector": None, "candidate_goal_vector": None})


@dataclass
class ApiContext:
    """Everything the routes share, built once by `flows.api.serve`."""

    settings: Settings
    store: MemoryStore
    records: SessionRecords
    metrics_log: MetricsLog
    points: HotFile[list[PointSpec]]
    keys: KeyTable
    recaller: Recaller | None
    clock: Callable[[], datetime]
    store_ready: Callable[[], None]
    api_recall_log: Path | None = None
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)


class _FlowWindowCollector(Collector):
    """The latest flow window's gauges and counters, when the flow writes metrics (no tenant labels)."""

    def __init__(self, metrics_log: MetricsLog) -> None:
        self._log = metrics_log

    def collect(self):  # type: ignore[no-untyped-def]
        last = self._log.last(1)
        if not last:
            return
        fam = GaugeMetricFamily("recallflow_window_value", "latest flow window metric", labels=["name"])
        w = last[0]
        for name, value in sorted({**{k: float(v) for k, v in w.counters.items()}, **w.gauges}.items()):
            fam.add_metric([name], float(value))
        yield fam


def create_app(ctx: ApiContext) -> FastAPI:
    cfg = ctx.settings.serve
    app = FastAPI(
        title="RecallFlow",
        version="1",
        description="Recall and state over HTTP, and the inspector (/inspector/). Errors are "
        '`{"error": {"code", "message"}}`.',
        responses={
            code: {"model": ErrorBody, "description": text}
            for code, text in (
                (400, "bad request"),
                (401, "no or unknown API key"),
                (403, "tenant mismatch"),
                (404, "not found (or another tenant's)"),
                (413, "body too large"),
                (422, "invalid request"),
                (502, "store failed"),
                (503, "store unavailable (retry)"),
            )
        },
    )
    errors.install(app)
    app.add_middleware(BodyLimit, max_bytes=cfg.max_body_bytes)

    requests_total = Counter(
        "recallflow_api_requests", "API requests", ["route", "method", "status"], registry=ctx.registry
    )
    latency = Histogram("recallflow_api_request_seconds", "API latency", ["route"], registry=ctx.registry)
    store_open = Gauge("recallflow_api_store_open", "1 when the store handle is open", registry=ctx.registry)
    recalls_total = Counter("recallflow_api_recalls", "POST /recall answered", ["outcome"], registry=ctx.registry)
    ctx.registry.register(_FlowWindowCollector(ctx.metrics_log))
    store_open.set_function(lambda: float(bool(getattr(ctx.store, "is_open", True))))

    @app.middleware("http")
    async def _measure(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        started = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        name = getattr(route, "path", None) or (
            "/inspector" if request.url.path.startswith("/inspector") else "unmatched"
        )
        requests_total.labels(name, request.method, str(response.status_code)).inc()
        latency.labels(name).observe(time.perf_counter() - started)
        return response

    key_header = APIKeyHeader(name=cfg.api_key_header, auto_error=False, description="API key (when auth is on)")

    def caller(
        api_key: Annotated[str | None, Depends(key_header)],
        tenant: Annotated[
            str | None, Header(alias=cfg.tenant_header, description="tenant (auth off); must match the key (auth on)")
        ] = None,
    ) -> Caller:
        return ctx.keys.caller(api_key, tenant)

    CallerDep = Annotated[Caller, Depends(caller)]

    # -- helpers -------------------------------------------------------------------------

    def units_of(
        tenant: str, session: str, extra: Mapping[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], bool]:
        match: dict[str, Any] = {"tenant_id": tenant, "session_id": session, **(extra or {})}
        hits = ctx.store.scroll(StoreFilter(match=match), limit=cfg.max_scan)
        payloads = [h.payload for h in hits if h.payload.get("tenant_id") == tenant]  # isolation, twice
        payloads.sort(key=lambda p: (str(p.get("ts")), str(p.get("event_id")), int(p.get("unit_index", 0))))
        return payloads, len(hits) >= cfg.max_scan

    def require_session(tenant: str, session: str) -> None:
        if ctx.store.count(StoreFilter(match={"tenant_id": tenant, "session_id": session})) > 0:
            return
        if ctx.records.states(tenant, session) or ctx.records.recalls(tenant, session):
            return
        raise ApiError(404, "session_not_found", f"no session {session!r} for this tenant")

    def last_state(tenant: str, session: str) -> SessionState | None:
        states = ctx.records.states(tenant, session)
        return states[-1] if states else None

    # -- probes and metrics --------------------------------------------------------------

    @app.get("/healthz", response_model=Probe, tags=["ops"], summary="liveness")
    def healthz() -> Probe:
        return Probe(status="ok", checks={"process": "ok"})

    @app.get(
        "/readyz",
        response_model=Probe,
        tags=["ops"],
        summary="readiness: the store opens and recall is loaded",
        responses={503: {"model": Probe}},
    )
    def readyz(response: Response) -> Probe:
        checks = {"recall": "ok" if ctx.recaller is not None else "disabled"}
        try:
            ctx.store_ready()
            checks["store"] = "ok"
        except StoreUnavailableError as exc:
            checks["store"] = str(exc)
            response.status_code = 503
            return Probe(status="unavailable", checks=checks)
        return Probe(status="ok", checks=checks)

    @app.get("/metrics", tags=["ops"], summary="Prometheus text format", response_class=PlainTextResponse)
    def metrics() -> Response:
        return Response(generate_latest(ctx.registry), media_type="text/plain; version=0.0.4; charset=utf-8")

    # -- recall --------------------------------------------------------------------------

    @app.post(
        "/recall",
        response_model=RecallResult,
        tags=["recall"],
        summary="scored, explained recall for one user turn (the stream's RecallResult)",
        responses={401: {}, 403: {}, 413: {}, 422: {}, 503: {}},
    )
    def recall(body: RecallBody, who: CallerDep) -> RecallResult:
        if body.tenant_id is not None and body.tenant_id != who.tenant_id:
            raise ApiError(403, "tenant_mismatch", "tenant_id in the body is not the caller's tenant")
        limit = ctx.settings.input.max_text_chars
        if len(body.text) > limit:
            raise ApiError(422, "text_too_long", f"text is longer than {limit} characters")
        if ctx.recaller is None:
            raise ApiError(503, "recall_disabled", "recall is switched off (recall.enabled=false)")
        units, _ = units_of(who.tenant_id, body.session_id)
        request = build_request(
            body,
            tenant_id=who.tenant_id,
            now=ctx.clock(),
            units=units,
            state=last_state(who.tenant_id, body.session_id),
        )
        result = ctx.recaller(request)
        recalls_total.labels("cues" if result.cues else "empty").inc()
        ctx.records.add_recall(result)
        if ctx.api_recall_log is not None:
            ctx.api_recall_log.parent.mkdir(parents=True, exist_ok=True)
            with ctx.api_recall_log.open("a", encoding="utf-8") as fh:
                fh.write(result.model_dump_json() + "\n")
        return result

    @app.get(
        "/recalls/{query_event_id}", response_model=RecallResult, tags=["recall"], summary="one recall by its query"
    )
    def get_recall(
        query_event_id: Annotated[str, PathParam(min_length=1, max_length=200)], who: CallerDep
    ) -> RecallResult:
        found = ctx.records.recall(who.tenant_id, query_event_id)
        if found is None:
            raise ApiError(404, "recall_not_found", f"no recall for query {query_event_id!r} in this tenant")
        return found

    @app.get(
        "/debug-marker",
        response_model=MarkerLookup,
        tags=["recall"],
        summary="find the recalls behind a pasted [DEBUG:cue=…,css=…] marker",
    )
    def debug_marker(
        who: CallerDep, marker: Annotated[str, Query(min_length=1, max_length=4000, description="pasted text")]
    ) -> MarkerLookup:
        found = parse_markers(marker)
        if not found:
            raise ApiError(422, "no_marker", "no [DEBUG:cue=…,css=…] marker in the text")
        seen: dict[str, RecallResult] = {}
        for m in found:
            for r in ctx.records.find_marker(who.tenant_id, m):
                seen.setdefault(r.query_event_id, r)
        return MarkerLookup(
            markers=[MarkerMatch(cue_id=m.cue_id, css=m.css) for m in found], recalls=list(seen.values())
        )

    # -- sessions ------------------------------------------------------------------------

    @app.get("/sessions", response_model=SessionList, tags=["sessions"], summary="the tenant's sessions")
    def sessions(who: CallerDep) -> SessionList:
        hits = ctx.store.scroll(StoreFilter(match={"tenant_id": who.tenant_id}), limit=cfg.max_scan)
        by_session: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for h in hits:
            if h.payload.get("tenant_id") == who.tenant_id:
                by_session[str(h.payload.get("session_id"))].append(h.payload)
        out = []
        for sid in sorted(set(by_session) | ctx.records.sessions(who.tenant_id)):
            payloads = by_session.get(sid, [])
            stamps = sorted(datetime.fromisoformat(str(p["ts"])) for p in payloads)
            state = last_state(who.tenant_id, sid)
            out.append(
                SessionSummary(
                    session_id=sid,
                    user_ids=sorted({str(p["user_id"]) for p in payloads if p.get("user_id")}),
                    units=len(payloads),
                    first_ts=stamps[0] if stamps else None,
                    last_ts=stamps[-1] if stamps else None,
                    recalls=len(ctx.records.recalls(who.tenant_id, sid)),
                    task_id=state.task_id if state else None,
                    stage=state.current_stage if state else None,
                )
            )
        out.sort(key=lambda s: s.last_ts or datetime.min.replace(tzinfo=UTC), reverse=True)
        return SessionList(tenant_id=who.tenant_id, sessions=out, truncated=len(hits) >= cfg.max_scan)

    @app.get("/sessions/{session_id}/state", response_model=StateView, tags=["sessions"], summary="current task state")
    def session_state(session_id: SessionId, who: CallerDep) -> StateView:
        require_session(who.tenant_id, session_id)
        state = last_state(who.tenant_id, session_id)
        archived = [
            a.model_copy(update={"final_state": _slim(a.final_state)})
            for a in ctx.records.archived(who.tenant_id, session_id)
        ]
        return StateView(
            session_id=session_id,
            source=str(ctx.settings.task.state_log_path),
            state=_slim(state) if state else None,
            archived=archived,
        )

    @app.get(
        "/sessions/{session_id}/history",
        response_model=StateHistory,
        tags=["sessions"],
        summary="task state and intent chain after each turn",
    )
    def session_history(session_id: SessionId, who: CallerDep) -> StateHistory:
        require_session(who.tenant_id, session_id)
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

    @app.get(
        "/sessions/{session_id}/memories",
        response_model=MemoryPage,
        tags=["sessions"],
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
        require_session(who.tenant_id, session_id)
        extra: dict[str, Any] = {}
        if unit_type:
            extra["unit_type"] = list(dict.fromkeys(unit_type))
        if intent:
            extra["intent_label"] = list(dict.fromkeys(intent))
        if validity:
            extra["validity.validity_type"] = list(dict.fromkeys(validity))
        payloads, _ = units_of(who.tenant_id, session_id, extra)
        page = payloads[offset : offset + limit]
        total = len(payloads)
        return MemoryPage(
            items=[MemoryUnit.model_validate(p) for p in page],
            total=total,
            offset=offset,
            limit=limit,
            next_offset=offset + limit if offset + limit < total else None,
        )

    @app.get(
        "/sessions/{session_id}/turns",
        response_model=TurnsView,
        tags=["sessions"],
        summary="the session's turns, each with the memory units cut from it",
    )
    def session_turns(session_id: SessionId, who: CallerDep) -> TurnsView:
        require_session(who.tenant_id, session_id)
        payloads, truncated = units_of(who.tenant_id, session_id)
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

    @app.get(
        "/sessions/{session_id}/recalls", response_model=RecallList, tags=["sessions"], summary="recalls run in it"
    )
    def session_recalls(session_id: SessionId, who: CallerDep) -> RecallList:
        require_session(who.tenant_id, session_id)
        return RecallList(session_id=session_id, recalls=ctx.records.recalls(who.tenant_id, session_id))

    # -- cues ------------------------------------------------------------------------------

    @app.get("/cues/{cue_id}", response_model=CueView, tags=["memories"], summary="a memory unit with every annotation")
    def cue(
        cue_id: Annotated[str, PathParam(pattern=CUE_PATTERN, description="CUE-xxxxxxxx or a memory id")],
        who: CallerDep,
    ) -> CueView:
        tenant = who.tenant_id
        payload: dict[str, Any] | None = None
        if cue_id.upper().startswith("CUE-"):
            handle = "CUE-" + cue_id[4:].lower()
            mid = ctx.records.memory_for_cue(tenant, handle)
            if mid is not None:
                payload = next((h.payload for h in ctx.store.retrieve([mid])), None)
            else:  # a cue id never seen in a recall: match the id prefix among the tenant's memories
                prefix = handle[4:]
                hits = ctx.store.scroll(StoreFilter(match={"tenant_id": tenant}), limit=cfg.max_scan)
                payload = next((h.payload for h in hits if h.id.replace("-", "").startswith(prefix)), None)
        else:
            mid = str(uuid.UUID(cue_id))
            payload = next((h.payload for h in ctx.store.retrieve([mid])), None)
        if payload is None or payload.get("tenant_id") != tenant:
            raise ApiError(404, "cue_not_found", f"no memory {cue_id!r} for this tenant")
        unit = MemoryUnit.model_validate(payload)
        handle = "CUE-" + unit.memory_id.replace("-", "")[:8]
        recalled = [
            r.query_event_id for r in ctx.records.recalls(tenant) if any(c.memory_id == unit.memory_id for c in r.cues)
        ]
        return CueView(cue_id=handle, memory=unit, recalled_in=recalled)

    # -- inspector helpers -----------------------------------------------------------------

    @app.get(
        "/decision-health",
        response_model=HealthPanel,
        tags=["inspector"],
        summary="the health of each decision point over the last windows",
    )
    def decision_health(who: CallerDep) -> HealthPanel:
        points = ctx.points.get()
        windows = ctx.metrics_log.last(cfg.health_windows)
        if windows and not ctx.keys.required:
            return flow_panel(
                points, windows, detail=f"the flow's window metrics ({ctx.metrics_log.path}), all tenants"
            )
        hits = ctx.store.scroll(StoreFilter(match={"tenant_id": who.tenant_id}), limit=cfg.max_scan)
        units = [h.payload for h in hits if h.payload.get("tenant_id") == who.tenant_id]
        states = [s for sid in ctx.records.sessions(who.tenant_id) for s in ctx.records.states(who.tenant_id, sid)]
        why = (
            "flow metrics are all-tenant: shown only when auth is off"
            if windows
            else f"no flow metrics at {ctx.metrics_log.path}"
        )
        return compute_panel(
            points,
            units=units,
            states=states,
            recalls=ctx.records.recalls(who.tenant_id),
            window_s=cfg.health_window_s,
            n=cfg.health_windows,
            detail=f"computed here from this tenant's stored units, task states and recalls ({why}); "
            "mirror misses, response cue use and dead letters are only measured by the flow",
        )

    @app.get("/inspector/config", response_model=InspectorConfig, tags=["inspector"], summary="what the page needs")
    def inspector_config() -> InspectorConfig:
        tenants: list[str] = []
        if not ctx.keys.required:
            hits = ctx.store.scroll(StoreFilter(), limit=cfg.max_scan)
            tenants = sorted({str(h.payload.get("tenant_id")) for h in hits if h.payload.get("tenant_id")})
        return InspectorConfig(
            auth="required" if ctx.keys.required else "off",
            api_key_header=cfg.api_key_header,
            tenant_header=cfg.tenant_header,
            tenants=tenants,
            default_tenant=cfg.default_tenant,
        )

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/inspector/")

    static = Path(str(files("flows.api") / "static"))
    app.mount("/inspector", StaticFiles(directory=static, html=True), name="inspector")
    return app
