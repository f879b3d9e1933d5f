"""Operations routes and telemetry: /healthz, /readyz, /metrics and the per-request counters.

Input: requests (no key needed: probes and aggregates only, no tenant label). Output: probe JSON
and Prometheus text. State: the counters in the context's registry; the latest flow window is
read from the metrics log on each scrape.
"""

import time
from collections.abc import Awaitable, Callable

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import PlainTextResponse, Response
from prometheus_client import Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from flows.api.context import ApiContext
from flows.api.models import Probe
from flows.api.records import MetricsLog
from schemas.errors import StoreUnavailableError


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


def install_telemetry(app: FastAPI, ctx: ApiContext) -> Counter:
    """Count and time every request; returns the counter of answered recalls (by outcome)."""
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

    return recalls_total


def ops_routes(ctx: ApiContext) -> APIRouter:
    router = APIRouter(tags=["ops"])

    @router.get("/healthz", response_model=Probe, summary="liveness")
    def healthz() -> Probe:
        return Probe(status="ok", checks={"process": "ok"})

    @router.get(
        "/readyz",
        response_model=Probe,
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

    @router.get("/metrics", summary="Prometheus text format", response_class=PlainTextResponse)
    def metrics() -> Response:
        return Response(generate_latest(ctx.registry), media_type="text/plain; version=0.0.4; charset=utf-8")

    return router
