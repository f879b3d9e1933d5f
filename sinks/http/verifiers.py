"""Verifiers for transient facts (docs/design.md#recall): "is the Dongguan warehouse still under maintenance?"

One verifier per fact kind (a memory's `topic`, e.g. `warehouse_status`, `stock`), kept in a
`VerifierRegistry`. `HttpVerifier` POSTs `{"kind", "subject", "text", "memory_id"}` to its URL
with an explicit timeout (2 s by default) and expects `{"valid": bool, "value": str | null}`.
Every failure (timeout, connection refused, 429, 5xx, a body that is not a verdict) raises
`VerifierError`, flagged `rate_limited` / `timed_out`; the guard in `flows.verification` counts it.
Calls run on `VerifierPool`, a bounded thread pool, so recall can wait a short budget and
move on: a late answer still lands in the guard and the answer cache for the next recall.
One JSON log line per call.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

import httpx

from schemas.errors import ConfigurationError, VerifierError
from schemas.recall import VerifierAnswer

log = logging.getLogger(__name__)


def _utc_now() -> datetime:
    return datetime.now(tz=UTC)


@dataclass(frozen=True, slots=True)
class VerifyRequest:
    kind: str
    subject: str
    text: str
    memory_id: str
    tenant_id: str
    user_id: str | None


class Verifier(Protocol):
    kind: str

    def check(self, request: VerifyRequest) -> VerifierAnswer:
        """The current truth about the fact; raises VerifierError when it cannot tell."""
        ...


class HttpVerifier:
    """A verifier behind an HTTP endpoint (explicit timeout, no retries: the guard decides)."""

    def __init__(
        self,
        kind: str,
        url: str,
        *,
        timeout_s: float = 2.0,
        client: httpx.Client | None = None,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ConfigurationError(f"verifier {kind!r}: url must be http(s), got {url!r}")
        self.kind = kind
        self._url = url
        self._timeout = httpx.Timeout(timeout_s)
        self._client = client or httpx.Client(timeout=self._timeout)
        self._clock = clock

    def check(self, request: VerifyRequest) -> VerifierAnswer:
        body = {"kind": request.kind, "subject": request.subject, "text": request.text, "memory_id": request.memory_id}
        started = time.perf_counter()
        try:
            resp = self._client.post(self._url, json=body, timeout=self._timeout)
        except httpx.TimeoutException as exc:
            self._log(request, started, "timeout")
            raise VerifierError(f"verifier {self.kind} timed out after {self._timeout.read}s", timed_out=True) from exc
        except httpx.HTTPError as exc:
            self._log(request, started, "transport")
            raise VerifierError(f"verifier {self.kind} transport error: {exc}") from exc
        if resp.status_code == 429:
            self._log(request, started, "429")
            raise VerifierError(f"verifier {self.kind} rate limited upstream (429)", rate_limited=True)
        if resp.status_code >= 400:
            self._log(request, started, str(resp.status_code))
            raise VerifierError(f"verifier {self.kind} answered HTTP {resp.status_code}")
        try:
            doc = resp.json()
        except ValueError as exc:
            self._log(request, started, "bad_body")
            raise VerifierError(f"verifier {self.kind} answered a body that is not JSON") from exc
        if not isinstance(doc, dict) or not isinstance(doc.get("valid"), bool):
            self._log(request, started, "bad_body")
            raise VerifierError(f"verifier {self.kind} answered without a boolean 'valid'")
        latency = (time.perf_counter() - started) * 1000
        self._log(request, started, "ok")
        value = doc.get("value")
        return VerifierAnswer(
            kind=self.kind,
            subject=request.subject,
            valid=doc["valid"],
            value=None if value is None else str(value),
            checked_at=self._clock(),
            latency_ms=round(latency, 2),
        )

    def _log(self, request: VerifyRequest, started: float, outcome: str) -> None:
        ms = round((time.perf_counter() - started) * 1000, 2)
        log.info(
            json.dumps(
                {"op": "verifier.check", "kind": self.kind, "subject": request.subject, "outcome": outcome, "ms": ms}
            )
        )

    def close(self) -> None:
        self._client.close()


class VerifierRegistry:
    """Verifiers by fact kind; `register` replaces an earlier verifier of the same kind."""

    def __init__(self) -> None:
        self._by_kind: dict[str, Verifier] = {}
        self._lock = threading.Lock()

    def register(self, verifier: Verifier) -> None:
        with self._lock:
            self._by_kind[verifier.kind] = verifier

    def get(self, kind: str | None) -> Verifier | None:
        if kind is None:
            return None
        return self._by_kind.get(kind)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(sorted(self._by_kind))


class VerifierPool:
    """Bounded concurrency for verifier calls; recall waits on the futures for a short budget."""

    def __init__(self, max_workers: int = 4) -> None:
        if max_workers < 1:
            raise ConfigurationError("verifier pool needs at least one worker")
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="verifier")

    def submit(self, verifier: Verifier, request: VerifyRequest) -> Future[VerifierAnswer]:
        return self._pool.submit(verifier.check, request)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
