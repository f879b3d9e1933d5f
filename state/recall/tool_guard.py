"""The tool guard in front of every verifier (docs/design.md#verification).

Input: "may I call tool T for user U now?" and, afterwards, how the call went. Output: an
`Admission` (call, or serve the fallback and why) and the tool's health. State: one
`GuardState` per tool: admissions per user in the last minute, call outcomes of the last
five minutes, consecutive failures, breaker deadline. Old entries are pruned on every use,
so the state is bounded by the traffic of five minutes.

Rules, all from configuration:
* at most `per_user_per_minute` (3) calls per user per tool per minute, beyond that → fallback;
* p95 latency over the window > `slow_p95_ms` (1200) → degrade to the fallback value;
* `breaker_failures` (2) consecutive failures → breaker open for `breaker_s` (900 s);
* health = 0.6·success_rate_5m + 0.3·min(1, 1000/p95_ms) − 0.1·rate_limited_ratio;
  health < 0.55 → degrade, < 0.3 → open the breaker.
Health and p95 act only once `min_samples` calls are in the window (one slow or failed call
is jitter, not a trend; the consecutive-failure rule covers a tool that is simply down).
Time is passed in (`now`, epoch seconds), never read here, so the rules are testable.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

Verdict = Literal["call", "rate_limited", "breaker_open", "degraded"]


@dataclass(frozen=True, slots=True)
class GuardConfig:
    per_user_per_minute: int = 3
    slow_p95_ms: float = 1200.0
    breaker_failures: int = 2
    breaker_s: float = 900.0
    window_s: float = 300.0
    degrade_below: float = 0.55
    break_below: float = 0.3
    latency_samples: int = 100
    min_samples: int = 3  # health and p95 act only on this many calls in the window: one jitter is not a trend


@dataclass(frozen=True, slots=True)
class Admission:
    verdict: Verdict
    health: float
    reason: str

    @property
    def allowed(self) -> bool:
        return self.verdict == "call"


@dataclass(slots=True)
class GuardState:
    """Mutable per-tool record; the functions below are its only writers."""

    per_user: dict[str, deque[float]] = field(default_factory=dict)
    outcomes: deque[tuple[float, bool, float]] = field(default_factory=deque)  # (at, ok, latency_ms)
    refusals: deque[float] = field(default_factory=deque)  # rate-limited admissions (ours or upstream 429)
    admissions: deque[float] = field(default_factory=deque)
    consecutive_failures: int = 0
    breaker_until: float | None = None


def _prune(state: GuardState, now: float, config: GuardConfig) -> None:
    horizon = now - config.window_s
    for q in (state.refusals, state.admissions):
        while q and q[0] < horizon:
            q.popleft()
    while state.outcomes and state.outcomes[0][0] < horizon:
        state.outcomes.popleft()
    minute = now - 60.0
    for user in list(state.per_user):
        calls = state.per_user[user]
        while calls and calls[0] < minute:
            calls.popleft()
        if not calls:
            del state.per_user[user]


def p95_ms(state: GuardState, config: GuardConfig) -> float:
    """95th percentile latency of the recent calls (0 when none)."""
    lat = [o[2] for o in list(state.outcomes)[-config.latency_samples :]]
    return float(np.percentile(lat, 95)) if lat else 0.0


def health(state: GuardState, now: float, config: GuardConfig) -> float:
    """0.6·success_rate_5m + 0.3·min(1, 1000/p95_ms) − 0.1·rate_limited_ratio.

    >>> s, c = GuardState(), GuardConfig()
    >>> record(s, 0.0, ok=True, latency_ms=200.0, config=c)
    >>> round(health(s, 1.0, c), 3)
    0.9
    """
    _prune(state, now, config)
    success = sum(1 for o in state.outcomes if o[1]) / len(state.outcomes) if state.outcomes else 1.0
    p95 = p95_ms(state, config)
    speed = min(1.0, 1000.0 / p95) if p95 > 0 else 1.0
    limited = len(state.refusals) / len(state.admissions) if state.admissions else 0.0
    return 0.6 * success + 0.3 * speed - 0.1 * limited


def admit(state: GuardState, user: str, now: float, config: GuardConfig) -> Admission:
    """Decide whether this call may go out; a granted call counts against the user's minute.

    >>> s, c = GuardState(), GuardConfig()
    >>> [admit(s, "u", float(i), c).verdict for i in range(4)]
    ['call', 'call', 'call', 'rate_limited']
    """
    _prune(state, now, config)
    state.admissions.append(now)
    score = health(state, now, config)
    if state.breaker_until is not None:
        if now < state.breaker_until:
            return Admission("breaker_open", score, f"breaker open until +{state.breaker_until - now:.0f}s")
        state.breaker_until = None
        state.consecutive_failures = 0
    trend = len(state.outcomes) >= config.min_samples
    if trend and score < config.break_below:
        state.breaker_until = now + config.breaker_s
        return Admission("breaker_open", score, f"health {score:.2f} < {config.break_below}")
    calls = state.per_user.setdefault(user, deque())
    if len(calls) >= config.per_user_per_minute:
        state.refusals.append(now)
        return Admission("rate_limited", score, f"{len(calls)} calls by this user in the last minute")
    p95 = p95_ms(state, config)
    if trend and p95 > config.slow_p95_ms:
        return Admission("degraded", score, f"p95 {p95:.0f} ms > {config.slow_p95_ms:.0f} ms")
    if trend and score < config.degrade_below:
        return Admission("degraded", score, f"health {score:.2f} < {config.degrade_below}")
    calls.append(now)
    return Admission("call", score, "healthy")


def record(
    state: GuardState, now: float, *, ok: bool, latency_ms: float, config: GuardConfig, rate_limited: bool = False
) -> None:
    """Account one finished call; the breaker opens after `breaker_failures` failures in a row.

    >>> s, c = GuardState(), GuardConfig()
    >>> record(s, 0.0, ok=False, latency_ms=10.0, config=c)
    >>> record(s, 1.0, ok=False, latency_ms=10.0, config=c)
    >>> s.breaker_until
    901.0
    """
    _prune(state, now, config)
    state.outcomes.append((now, ok, latency_ms))
    if rate_limited:
        state.refusals.append(now)
    if ok:
        state.consecutive_failures = 0
        return
    state.consecutive_failures += 1
    if state.consecutive_failures >= config.breaker_failures:
        state.breaker_until = now + config.breaker_s
