"""A real HTTP verifier on 127.0.0.1 that tests can make slow, failing or rate-limited.

Paths: /ok (valid, "operational"), /down (not valid, "maintenance"), /fail (500),
/limited (429), /garbage (not JSON), /novalid (JSON without `valid`), /slow/<ms> (sleeps,
then valid). Every request is counted per path.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Handler(BaseHTTPRequestHandler):
    hits: Counter[str]

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        return

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            return

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length) or b"{}")
        path = self.path
        self.server.hits[path.split("/")[1]] += 1  # type: ignore[attr-defined]
        if path == "/ok":
            self._send(
                200, json.dumps({"valid": True, "value": "operational", "subject": request.get("subject")}).encode()
            )
        elif path == "/down":
            self._send(200, json.dumps({"valid": False, "value": "maintenance"}).encode())
        elif path == "/fail":
            self._send(500, b'{"error": "boom"}')
        elif path == "/limited":
            self._send(429, b'{"error": "slow down"}')
        elif path == "/garbage":
            self._send(200, b"<html>not json</html>", "text/html")
        elif path == "/novalid":
            self._send(200, b'{"status": "operational"}')
        elif path.startswith("/slow/"):
            time.sleep(int(path.rsplit("/", 1)[1]) / 1000)
            self._send(200, b'{"valid": true, "value": "operational"}')
        else:
            self._send(404, b"{}")


@contextmanager
def verifier_server() -> Iterator[tuple[str, Counter[str]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.hits = Counter()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.hits  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
