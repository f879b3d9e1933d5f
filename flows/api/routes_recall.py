"""Recall routes: POST /recall, GET /recalls/{query_event_id}, GET /debug-marker.

Input: a user turn (or a query id, or pasted text with debug markers) and the caller. Output:
the stream's `RecallResult`, or the recalls behind a marker. State: a posted result is indexed
in the records and appended to the API's recall log. Posting names a session but does not
create one: sessions come from stored turns (see `flows.api.context`).
"""

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi import Path as PathParam
from prometheus_client import Counter

from flows.api.context import ApiContext, CallerDependency
from flows.api.errors import ApiError
from flows.api.models import MarkerLookup, MarkerMatch, RecallBody
from flows.api.recall_request import build_request
from flows.api.records import parse_markers
from flows.api.security import Caller
from schemas.recall import RecallResult

QueryId = Annotated[str, PathParam(min_length=1, max_length=200, description="query event id (may contain '/')")]


def recall_routes(ctx: ApiContext, caller: CallerDependency, recalls_total: Counter) -> APIRouter:
    router = APIRouter(tags=["recall"])
    CallerDep = Annotated[Caller, Depends(caller)]

    @router.post(
        "/recall",
        response_model=RecallResult,
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
        units, _ = ctx.units_of(who.tenant_id, body.session_id)
        request = build_request(
            body,
            tenant_id=who.tenant_id,
            now=ctx.clock(),
            units=units,
            state=ctx.last_state(who.tenant_id, body.session_id),
        )
        result = ctx.recaller(request)
        recalls_total.labels("cues" if result.cues else "empty").inc()
        ctx.records.add_recall(result)
        if ctx.api_recall_log is not None:
            ctx.api_recall_log.parent.mkdir(parents=True, exist_ok=True)
            with ctx.api_recall_log.open("a", encoding="utf-8") as fh:
                fh.write(result.model_dump_json() + "\n")
        return result

    # `:path` so that an id with '/' (sent as %2F, decoded before routing) still matches.
    @router.get("/recalls/{query_event_id:path}", response_model=RecallResult, summary="one recall by its query")
    def get_recall(query_event_id: QueryId, who: CallerDep) -> RecallResult:
        found = ctx.records.recall(who.tenant_id, query_event_id)
        if found is None:
            raise ApiError(404, "recall_not_found", f"no recall for query {query_event_id!r} in this tenant")
        return found

    @router.get(
        "/debug-marker",
        response_model=MarkerLookup,
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

    return router
