"""The HTTP API and inspector of `recallflow serve` (FastAPI; OpenAPI at /openapi.json).

Input: HTTP requests. Output: JSON records (the same RecallResult, MemoryUnit, SessionState as
the stream), Prometheus text, the inspector's static page. State: an `ApiContext` built once at
start: the store lease, the indexed JSONL records, the key table, the recall function.

The routes live by group: `routes_ops` (probes, metrics), `routes_recall`, `routes_sessions`,
`routes_inspector` (cues, decision health, the page). Every data route resolves the caller's
tenant first (security.py) and reads only that tenant's records: a session or cue of another
tenant answers 404, exactly like one that does not exist. Handlers are plain `def`s: FastAPI runs
them in its thread pool, so store calls never block the event loop.
"""

from __future__ import annotations

from fastapi import FastAPI

from flows.api import errors
from flows.api.context import ApiContext, Recaller, caller_dependency
from flows.api.limits import BodyLimit
from flows.api.models import ErrorBody
from flows.api.routes_inspector import inspector_routes, mount_page
from flows.api.routes_ops import install_telemetry, ops_routes
from flows.api.routes_recall import recall_routes
from flows.api.routes_sessions import session_routes

__all__ = ["ApiContext", "Recaller", "create_app"]

_ERRORS = (
    (400, "bad request"),
    (401, "no or unknown API key"),
    (403, "tenant mismatch"),
    (404, "not found (or another tenant's)"),
    (413, "body too large"),
    (422, "invalid request"),
    (502, "store failed"),
    (503, "store unavailable (retry)"),
)


def create_app(ctx: ApiContext) -> FastAPI:
    app = FastAPI(
        title="RecallFlow",
        version="1",
        description="Recall and state over HTTP, and the inspector (/inspector/). Errors are "
        '`{"error": {"code", "message"}}`.',
        responses={code: {"model": ErrorBody, "description": text} for code, text in _ERRORS},
    )
    errors.install(app)
    app.add_middleware(BodyLimit, max_bytes=ctx.settings.serve.max_body_bytes)
    recalls_total = install_telemetry(app, ctx)
    caller = caller_dependency(ctx)
    app.include_router(ops_routes(ctx))
    app.include_router(recall_routes(ctx, caller, recalls_total))
    app.include_router(session_routes(ctx, caller))
    app.include_router(inspector_routes(ctx, caller))
    mount_page(app)
    return app
