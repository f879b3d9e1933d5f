"""Every error the HTTP API answers is JSON: `{"error": {"code", "message", "detail"?}}`.

Input: exceptions raised while handling a request. Output: a JSON response with a stable
`code`, never a stack trace. `ApiError` is the API's own (status, code, message); validation
errors become 422 `invalid_request` with per-field details (input values left out, they may be
large or sensitive); `StoreUnavailableError` becomes 503 with Retry-After; other `StoreError`s
502 `store_error`; anything unexpected is logged with its traceback and answered 500
`internal_error`. State: none.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from schemas.errors import ConfigurationError, StoreError, StoreUnavailableError

log = logging.getLogger(__name__)

_STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "too_many_requests",
}


class ApiError(Exception):
    """An answer other than 2xx, decided by the API itself (not found, auth, limits)."""

    def __init__(self, status: int, code: str, message: str, *, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers


def error_response(
    status: int,
    code: str,
    message: str,
    *,
    detail: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {"code": code, "message": message}
    if detail is not None:
        body["detail"] = detail
    return JSONResponse({"error": body}, status_code=status, headers=headers)


def _field_problems(exc: RequestValidationError) -> list[dict[str, Any]]:
    out = []
    for err in exc.errors():
        out.append(
            {
                "loc": [str(p) for p in err.get("loc", ())],
                "msg": str(err.get("msg", "")),
                "type": str(err.get("type", "")),
            }
        )
    return out


def install(app: FastAPI) -> None:
    """Register the handlers on `app`."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(
            422, "invalid_request", "the request does not match the schema", detail=_field_problems(exc)
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _STATUS_CODES.get(exc.status_code, "http_error")
        message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
        return error_response(exc.status_code, code, message, headers=getattr(exc, "headers", None))

    @app.exception_handler(StoreUnavailableError)
    async def _store_busy(request: Request, exc: StoreUnavailableError) -> JSONResponse:
        return error_response(503, "store_unavailable", str(exc), headers={"Retry-After": "5"})

    @app.exception_handler(StoreError)
    async def _store(request: Request, exc: StoreError) -> JSONResponse:
        log.warning(json.dumps({"op": "api.store", "path": request.url.path, "error": str(exc)}))
        return error_response(502, "store_error", "the memory store failed; see the server log")

    @app.exception_handler(ConfigurationError)
    async def _config(request: Request, exc: ConfigurationError) -> JSONResponse:
        log.error(json.dumps({"op": "api.config", "path": request.url.path, "error": str(exc)}))
        return error_response(500, "configuration_error", str(exc))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Last resort: keep the traceback in the log, never in the answer.
        log.exception("api: unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, "internal_error", "unexpected server error; see the server log")
