from hypothesis import given
from hypothesis import strategies as st

from state.recall.tool_guard import GuardConfig, GuardState, admit, health, p95_ms, record

C = GuardConfig()


def test_three_calls_per_user_per_minute_then_rate_limited_then_free_again() -> None:
    s = GuardState()
    assert [admit(s, "u1", 0.0 + i, C).verdict for i in range(3)] == ["call"] * 3
    assert admit(s, "u1", 10.0, C).verdict == "rate_limited"
    assert admit(s, "u2", 10.0, C).verdict == "call"  # per user
    assert admit(s, "u1", 61.0, C).verdict == "call"  # the minute has passed


def test_two_consecutive_failures_open_a_fifteen_minute_breaker() -> None:
    s = GuardState()
    record(s, 0.0, ok=False, latency_ms=5, config=C)
    assert s.breaker_until is None
    record(s, 1.0, ok=False, latency_ms=5, config=C)
    assert s.breaker_until == 901.0
    assert admit(s, "u", 500.0, C).verdict == "breaker_open"
    assert admit(s, "u", 902.0, C).verdict == "call"  # half-open after 15 minutes
    assert s.consecutive_failures == 0


def test_a_success_between_failures_resets_the_count() -> None:
    s = GuardState()
    record(s, 0.0, ok=False, latency_ms=5, config=C)
    record(s, 1.0, ok=True, latency_ms=5, config=C)
    record(s, 2.0, ok=False, latency_ms=5, config=C)
    assert s.breaker_until is None


def test_one_slow_or_failed_call_is_jitter_not_a_trend() -> None:
    s = GuardState()
    record(s, 0.0, ok=False, latency_ms=3000.0, config=C)
    assert admit(s, "u", 1.0, C).verdict == "call"


def test_slow_p95_degrades_to_the_fallback() -> None:
    s = GuardState()
    for i in range(5):
        record(s, float(i), ok=True, latency_ms=1500.0, config=C)
    assert p95_ms(s, C) == 1500.0
    a = admit(s, "u", 10.0, C)
    assert a.verdict == "degraded"
    assert "p95" in a.reason


def test_health_formula_and_thresholds() -> None:
    s = GuardState()
    for i in range(10):
        record(s, float(i), ok=i < 5, latency_ms=2000.0, config=GuardConfig(breaker_failures=99))
    # success 0.5, p95 2000 ms → 0.6*0.5 + 0.3*0.5 = 0.45 (< 0.55: degrade)
    assert abs(health(s, 20.0, C) - 0.45) < 1e-9
    cfg = GuardConfig(breaker_failures=99, slow_p95_ms=10_000)
    assert admit(s, "u", 20.0, cfg).verdict == "degraded"
    for i in range(10, 40):
        record(s, float(i), ok=False, latency_ms=2000.0, config=cfg)
    a = admit(s, "u", 41.0, cfg)
    assert a.verdict == "breaker_open"
    assert "health" in a.reason
    assert s.breaker_until == 41.0 + cfg.breaker_s


def test_rate_limited_ratio_lowers_health_and_old_events_age_out() -> None:
    s = GuardState()
    for i in range(3):
        admit(s, "u", float(i), C)
    admit(s, "u", 3.0, C)
    assert health(s, 4.0, C) < 0.9
    assert abs(health(s, 4.0 + C.window_s + 1, C) - 0.9) < 1e-9
    record(s, 10.0, ok=False, latency_ms=1, config=C, rate_limited=True)
    assert s.refusals


@given(st.lists(st.tuples(st.booleans(), st.floats(0, 5000), st.floats(0, 30)), max_size=60))
def test_health_stays_bounded_and_the_breaker_only_opens_on_failures(events) -> None:
    s = GuardState()
    now = 0.0
    for ok, latency, gap in events:
        now += gap
        record(s, now, ok=ok, latency_ms=latency, config=C)
        assert -0.1 <= health(s, now, C) <= 0.9 + 1e-9
    if s.breaker_until is not None:
        assert any(not ok for ok, _, _ in events)
