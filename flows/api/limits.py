"""Request body limit for the HTTP API (ASGI middleware).

Input: an HTTP request. Output: the request passed on, or 413 `payload_too_large` as JSON when
the declared `Content-Length` or the bytes actually received exceed `max_bytes`. A body without
a length (chunked) is read here first, at most `max_bytes` + 1 bytes, and replayed to the app,
so an over-long stream is refused before anything parses it. State: per request, the body.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


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
                declared = int(value) if value.isdigit() else -1
                if declared > self.max_bytes or declared < 0:
                    await self._reject(send)
                    return
                await self.app(scope, receive, send)  # the server enforces the declared length
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break  # client went away: let the app see an empty body
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._reject(send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
