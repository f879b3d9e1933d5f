"""Verification of transient facts: the tool guard (state/) in front of the verifiers (sinks/).

`VerificationGuard.verify` never blocks recall longer than its wait budget: admitted calls go
to the verifier pool; what has not answered within the budget is served as a fallback
(`is_fallback`) and, when it does answer (or fails), is recorded in the guard and the
answer cache for the next recall. Guard windows run on the wall clock (they are about the
real tool), not on event time.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass
from functools import partial

from schemas.errors import VerifierError
from schemas.recall import VerifierAnswer
from sinks.http.verifiers import VerifierPool, VerifierRegistry, VerifyRequest
from state.recall.arbitration import VerifyOutcome
from state.recall.tool_guard import GuardConfig, GuardState, admit, health, record

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Pending:
    key: tuple[str, str]
    submitted: float
    # Set once the call is recorded. Kept on the call itself: a set of `id(future)` could take a new
    # future for a settled one once the old one was collected (ids are reused), and drop its record.
    settled: bool = False


class VerificationGuard:
    def __init__(
        self,
        registry: VerifierRegistry,
        pool: VerifierPool,
        config: GuardConfig | None = None,
        *,
        wait_s: float = 0.25,
        answer_ttl_s: float = 60.0,
        fallback_values: dict[str, str] | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._registry = registry
        self._pool = pool
        self._config = config or GuardConfig()
        self._wait_s = wait_s
        self._ttl = answer_ttl_s
        self._fallback_values = fallback_values or {}
        self._wall = wall
        self._lock = threading.Lock()
        self._states: dict[str, GuardState] = {}
        self._answers: dict[tuple[str, str], tuple[float, VerifierAnswer]] = {}

    def state(self, kind: str) -> GuardState:
        with self._lock:
            return self._states.setdefault(kind, GuardState())

    def health(self, kind: str) -> float:
        with self._lock:
            return health(self._states.setdefault(kind, GuardState()), self._wall(), self._config)

    def _settle(self, fut: Future[VerifierAnswer], pending: _Pending, kind: str) -> None:
        """Record a finished call exactly once (from recall's thread or the pool's callback)."""
        with self._lock:
            if pending.settled:
                return
            pending.settled = True
            now = self._wall()
            latency = (now - pending.submitted) * 1000
            state = self._states.setdefault(kind, GuardState())
            exc = fut.exception()
            if exc is None:
                record(state, now, ok=True, latency_ms=latency, config=self._config)
                self._answers[pending.key] = (now, fut.result())
            else:
                limited = isinstance(exc, VerifierError) and exc.rate_limited
                record(state, now, ok=False, latency_ms=latency, config=self._config, rate_limited=limited)

    def _fresh(self, key: tuple[str, str], now: float) -> VerifierAnswer | None:
        hit = self._answers.get(key)
        if hit is None or now - hit[0] > self._ttl:
            return None
        return hit[1]

    def _fallback(self, kind: str, why: str) -> VerifyOutcome:
        value = self._fallback_values.get(kind)
        suffix = f"; fallback value {value!r}" if value is not None else "; stored value kept"
        return VerifyOutcome("fallback", f"{kind}: {why}{suffix}")

    @staticmethod
    def _from_answer(answer: VerifierAnswer, cached: bool) -> VerifyOutcome:
        how = "cached" if cached else "fresh"
        if answer.valid:
            return VerifyOutcome("verified", f"{answer.kind} {how} answer: still valid ({answer.value})", answer)
        return VerifyOutcome("contradicted", f"{answer.kind} {how} answer: {answer.value}", answer)

    def verify(self, items: Sequence[tuple[int, VerifyRequest]], user: str) -> dict[int, VerifyOutcome]:
        """Outcome per index; waits at most the budget, whatever the verifiers do."""
        outcomes: dict[int, VerifyOutcome] = {}
        futures: dict[int, tuple[Future[VerifierAnswer], _Pending, str]] = {}
        for idx, req in items:
            verifier = self._registry.get(req.kind)
            if verifier is None:
                # Nothing to ask is not a failed check: keep the stored value, flagged as unverified.
                outcomes[idx] = self._fallback(req.kind, "no verifier registered")
                continue
            key = (req.kind, req.subject)
            with self._lock:
                now = self._wall()
                cached = self._fresh(key, now)
                if cached is not None:
                    outcomes[idx] = self._from_answer(cached, cached=True)
                    continue
                decision = admit(self._states.setdefault(req.kind, GuardState()), user, now, self._config)
            if decision.verdict == "breaker_open":
                outcomes[idx] = VerifyOutcome("failed", f"{req.kind}: {decision.reason}")
            elif not decision.allowed:
                outcomes[idx] = self._fallback(req.kind, f"{decision.verdict} ({decision.reason})")
            else:
                pending = _Pending(key, now)
                fut = self._pool.submit(verifier, req)
                futures[idx] = (fut, pending, req.kind)
        if futures:
            wait([f for f, _, _ in futures.values()], timeout=self._wait_s)
        for idx, (fut, pending, kind) in futures.items():
            if not fut.done():
                fut.add_done_callback(partial(self._settle, pending=pending, kind=kind))
                outcomes[idx] = self._fallback(kind, f"no answer within {self._wait_s * 1000:.0f} ms")
                continue
            self._settle(fut, pending, kind)
            exc = fut.exception()
            if exc is None:
                outcomes[idx] = self._from_answer(fut.result(), cached=False)
            else:
                outcomes[idx] = VerifyOutcome("failed", f"{kind}: {exc}")
        if outcomes:
            log.debug(
                json.dumps(
                    {"op": "verify", "items": len(items), "statuses": sorted(o.status for o in outcomes.values())}
                )
            )
        return outcomes
