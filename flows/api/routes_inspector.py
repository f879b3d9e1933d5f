"""The inspector's routes: a cue with every annotation, the decision-health panel, the page's
config, and the static page itself (/inspector/).

Input: a cue or memory id, the caller. Output: `CueView`, `HealthPanel`, `InspectorConfig`.
State: none; the health panel reads the flow's window metrics when there are some and auth is
off (they are all-tenant), and otherwise computes the panel from the tenant's own records.
"""

import uuid
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI
from fastapi import Path as PathParam
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles

from flows.api.context import ApiContext, CallerDependency
from flows.api.errors import ApiError
from flows.api.health import compute_panel, flow_panel
from flows.api.models import CueView, HealthPanel, InspectorConfig
from flows.api.security import Caller
from schemas.memory import MemoryUnit
from sinks.store.base import StoreFilter

CUE_PATTERN = r"^(CUE-[0-9a-fA-F]{4,32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$"


def inspector_routes(ctx: ApiContext, caller: CallerDependency) -> APIRouter:
    router = APIRouter()
    CallerDep = Annotated[Caller, Depends(caller)]
    cfg = ctx.settings.serve

    @router.get(
        "/cues/{cue_id}", response_model=CueView, tags=["memories"], summary="a memory unit with every annotation"
    )
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

    @router.get(
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

    @router.get("/inspector/config", response_model=InspectorConfig, tags=["inspector"], summary="what the page needs")
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

    @router.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/inspector/")

    return router


def mount_page(app: FastAPI) -> None:
    """The static inspector page under /inspector/ (after the routes, so /inspector/config wins)."""
    static = Path(str(files("flows.api") / "static"))
    app.mount("/inspector", StaticFiles(directory=static, html=True), name="inspector")
