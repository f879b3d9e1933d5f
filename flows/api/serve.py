"""`recallflow serve`: build the API's context from settings and run it under uvicorn.

Input: `Settings` (env `RECALLFLOW_*`, section `serve`). Output: a running ASGI server on
`serve.host:serve.port`. State: the `ApiContext` (store lease, record indexes, recall service),
built once here; the store lease's idle-release thread runs for the app's lifetime.

The embedder and recall service are the replay's own (same settings → same model, same
weights), so POST /recall answers what the stream would have answered.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

from fastapi import FastAPI

from flows.api.app import ApiContext, Recaller, create_app
from flows.api.health import load_points
from flows.api.records import MetricsLog, SessionRecords
from flows.api.security import KeyTable, auth_required
from flows.api.store_lease import IdleReleaser, LeasedStore
from flows.settings import Settings
from sinks.store.base import MemoryStore
from state.core.embedding import Embedder

log = logging.getLogger(__name__)


def _system_clock() -> datetime:
    return datetime.now(tz=UTC)


def run_dir(settings: Settings) -> Path:
    """Where a replay leaves its JSONL records (beside the dead letters)."""
    return settings.deadletter.path.parent


def build_context(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    opener: Callable[[], MemoryStore] | None = None,
    recaller: Recaller | None = None,
    clock: Callable[[], datetime] = _system_clock,
    with_recall: bool = True,
) -> ApiContext:
    """Everything the routes need. Tests pass `opener` (a fake store) and `recaller`."""
    from flows.runtime import embedder_for, new_store, recall_service_for

    cfg = settings.serve
    keys = KeyTable(cfg, required=auth_required(settings))
    if embedder is None:
        embedder = embedder_for(settings)
    idle = cfg.store_idle_release_s if settings.store.backend != "qdrant_server" else None
    lease = LeasedStore(opener or (lambda: new_store(settings)), dim=embedder.dim, idle_release_s=idle)
    if recaller is None and with_recall and settings.recall.enabled:
        recaller = recall_service_for(settings, embedder, store=lease).recall
    where = run_dir(settings)
    records = SessionRecords(
        state_log=settings.task.state_log_path,
        archived_log=settings.task.archived_path,
        recall_logs=(
            *(cfg.recall_log_paths or (where / "recall.jsonl",)),
            cfg.api_recall_log or where / "api_recall.jsonl",
        ),
    )
    return ApiContext(
        settings=settings,
        store=lease,
        records=records,
        metrics_log=MetricsLog(cfg.metrics_path or settings.metrics.path),
        points=load_points(),
        keys=keys,
        recaller=recaller,
        clock=clock,
        store_ready=lease.ping,
        api_recall_log=cfg.api_recall_log or where / "api_recall.jsonl",
    )


def build_app(ctx: ApiContext) -> FastAPI:
    """The app with a lifespan that runs the store's idle release and closes the store at exit."""
    app = create_app(ctx)
    lease = ctx.store

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        releaser = IdleReleaser(lease) if isinstance(lease, LeasedStore) else None
        if releaser is not None:
            releaser.start()
        try:
            yield
        finally:
            if releaser is not None:
                releaser.stop()
            lease.close()

    app.router.lifespan_context = lifespan
    return app


def serve(settings: Settings, *, host: str | None = None, port: int | None = None) -> None:
    import uvicorn

    app = build_app(build_context(settings))
    uvicorn.run(
        app,
        host=host or settings.serve.host,
        port=port or settings.serve.port,
        log_level="warning",
        access_log=False,
        server_header=False,
    )
