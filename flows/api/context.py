"""What every route of the HTTP API shares: the `ApiContext` (built once by `flows.api.serve`), the
caller dependency, and the tenant-scoped lookups the session and recall routes build on.

Input: the context and a request's headers. Output: the caller's tenant, a session's stored
units and last task state. State: none beyond the context.

A session exists for a tenant when the tenant has stored memory units or task states in it: the
turns the flow processed. A recall request names a session but never creates one, so a session id
another tenant owns (or one nobody owns) answers 404 however many recalls were asked in it.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Header
from fastapi import Path as PathParam
from fastapi.security import APIKeyHeader
from prometheus_client import CollectorRegistry

from flows.api.errors import ApiError
from flows.api.health import PointSpec
from flows.api.records import MetricsLog, SessionRecords
from flows.api.security import Caller, KeyTable
from flows.settings import Settings
from schemas.recall import RecallRequest, RecallResult
from schemas.session import SessionState
from sinks.store.base import MemoryStore, StoreFilter
from state.core.hotfile import HotFile

Recaller = Callable[[RecallRequest], RecallResult]
CallerDependency = Callable[..., Caller]
SessionId = Annotated[str, PathParam(min_length=1, max_length=200, description="session id (may contain '/')")]


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

    # -- tenant-scoped lookups -------------------------------------------------------------

    def units_of(
        self, tenant: str, session: str, extra: Mapping[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], bool]:
        """The session's stored unit payloads in turn order, and whether the scan limit cut them."""
        limit = self.settings.serve.max_scan
        match: dict[str, Any] = {"tenant_id": tenant, "session_id": session, **(extra or {})}
        hits = self.store.scroll(StoreFilter(match=match), limit=limit)
        payloads = [h.payload for h in hits if h.payload.get("tenant_id") == tenant]  # isolation, twice
        payloads.sort(key=lambda p: (str(p.get("ts")), str(p.get("event_id")), int(p.get("unit_index", 0))))
        return payloads, len(hits) >= limit

    def require_session(self, tenant: str, session: str) -> None:
        """404 unless the tenant has stored units or task states in the session."""
        if self.store.count(StoreFilter(match={"tenant_id": tenant, "session_id": session})) > 0:
            return
        if self.records.states(tenant, session):
            return
        raise ApiError(404, "session_not_found", f"no session {session!r} for this tenant")

    def last_state(self, tenant: str, session: str) -> SessionState | None:
        states = self.records.states(tenant, session)
        return states[-1] if states else None


def caller_dependency(ctx: ApiContext) -> CallerDependency:
    """The FastAPI dependency that resolves a request to its caller (header names from settings)."""
    cfg = ctx.settings.serve
    key_header = APIKeyHeader(name=cfg.api_key_header, auto_error=False, description="API key (when auth is on)")

    def caller(
        api_key: Annotated[str | None, Depends(key_header)],
        tenant: Annotated[
            str | None, Header(alias=cfg.tenant_header, description="tenant (auth off); must match the key (auth on)")
        ] = None,
    ) -> Caller:
        return ctx.keys.caller(api_key, tenant)

    return caller


def slim(state: SessionState) -> SessionState:
    """A state without its goal vectors (hundreds of floats nobody reads in a browser)."""
    return state.model_copy(update={"goal_vector": None, "candidate_goal_vector": None})
