"""Request body limit for the HTTP API (ASGI middleware).

Input: an HTTP request. Output: the request passed on, or 413 `payload_too_large` as JSON when
the declared `Content-Length` or the bytes actually received exceed `max_bytes` (a chunked body
is counted as it streams). State: per request, the bytes seen so far.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


from flows.api.errors import ApiError


class _TooLarge(ApiError):
    """Raised from `receive` mid-body; the API's ApiError handler answers it as JSON 413."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, "payload_too_large", f"request body over {max_bytes} bytes")


class BodyLimit:
    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def _reject(self, send: Send) -> None:
        body = json.dumps(
            {"error": {"code": "payload_too_large", "message": f"request body over {self.max_bytes} bytes"}}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > self.max_bytes or declared < 0:
                    await self._reject(send)
                    return
        seen = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge(self.max_bytes)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except _TooLarge:
            if not started:
                await self._reject(send)
