"""A tiny OpenAI-compatible chat server on 127.0.0.1 for responder tests.

Modes: "ok" (answers from the first memory fact, citing its label), "slow" (sleeps `delay_s`
before answering), "garbage" (200 with a non-JSON body), "no_choices" (200 JSON without
choices), "error" (HTTP 500), "bad_request" (HTTP 400); `fail_first` = N makes the first N
calls answer 503. `delay_when` maps a substring of the user message to a delay, so
one request can hang while the others are answered. Every request body is kept in `requests`.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _answer(user: str) -> str:
    facts = []
    for line in user.splitlines():
        if line.startswith("{") and '"label"' in line:
            record = json.loads(line)
            if record.get("label"):
                facts.append(record)
    if not facts:
        return "No record matches your question."
    first = facts[0]
    return f"According to the records [{first['label']}]: {first['fact']}"


class FakeOpenAI:
    def __init__(self) -> None:
        self.mode = "ok"
        self.delay_s = 2.0
        self.delay_when: dict[str, float] = {}
        self.requests: list[dict[str, Any]] = []
        self.calls = 0
        self.fail_first = 0  # the first N calls answer HTTP 503, then the mode applies
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                self._send(200, json.dumps({"data": [{"id": "fake-model"}]}).encode())

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with owner._lock:
                    owner.requests.append(body)
                    owner.calls += 1
                    failing = owner.calls <= owner.fail_first
                if failing:
                    self._send(503, b'{"error": "warming up"}')
                    return
                user = body["messages"][-1]["content"]
                delay = next((d for marker, d in owner.delay_when.items() if marker in user), 0.0)
                if owner.mode == "slow":
                    delay = max(delay, owner.delay_s)
                if delay:
                    time.sleep(delay)
                if owner.mode == "error":
                    self._send(500, b'{"error": "boom"}')
                elif owner.mode == "bad_request":
                    self._send(400, b'{"error": "context length exceeded"}')
                elif owner.mode == "garbage":
                    self._send(200, b"<html>not json</html>")
                elif owner.mode == "no_choices":
                    self._send(200, b'{"object": "chat.completion", "choices": []}')
                else:
                    reply = {
                        "id": "cmpl-1",
                        "object": "chat.completion",
                        "model": body.get("model", "fake-model"),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": _answer(user)}}],
                        "usage": {"completion_tokens": 12},
                    }
                    self._send(200, json.dumps(reply, ensure_ascii=False).encode())

            def _send(self, status: int, payload: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): expected in slow-mode tests

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens (the endpoint is down)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
