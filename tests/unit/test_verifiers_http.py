"""Verifiers and the guard against a real local HTTP server made slow, failing and rate-limited."""

from __future__ import annotations

import time

import pytest

from flows.verification import VerificationGuard
from schemas.errors import ConfigurationError, VerifierError
from sinks.http.verifiers import HttpVerifier, VerifierPool, VerifierRegistry, VerifyRequest
from state.recall.tool_guard import GuardConfig
from tests.verifier_server import verifier_server


def _req(subject: str = "dongguan", kind: str = "warehouse_status") -> VerifyRequest:
    return VerifyRequest(kind=kind, subject=subject, text="东莞仓维护中", memory_id="m1", tenant_id="t", user_id="u")


def _guard(
    url: str,
    path: str,
    *,
    wait_s: float = 3.0,  # generous: a loaded CI box must not turn a prompt answer into a timeout
    timeout_s: float = 2.0,
    config: GuardConfig | None = None,
    ttl: float = 60.0,
) -> tuple[VerificationGuard, VerifierPool]:
    registry = VerifierRegistry()
    registry.register(HttpVerifier("warehouse_status", url + path, timeout_s=timeout_s))
    pool = VerifierPool(4)
    guard = VerificationGuard(
        registry,
        pool,
        config or GuardConfig(),
        wait_s=wait_s,
        answer_ttl_s=ttl,
        fallback_values={"warehouse_status": "operational"},
    )
    return guard, pool


def test_http_verifier_answers_and_each_failure_is_a_verifier_error() -> None:
    with verifier_server() as (url, hits):
        ok = HttpVerifier("warehouse_status", url + "/ok").check(_req())
        assert ok.valid
        assert ok.value == "operational"
        assert ok.kind == "warehouse_status"
        assert not HttpVerifier("warehouse_status", url + "/down").check(_req()).valid
        with pytest.raises(VerifierError, match="HTTP 500"):
            HttpVerifier("k", url + "/fail").check(_req())
        with pytest.raises(VerifierError, match="429") as limited:
            HttpVerifier("k", url + "/limited").check(_req())
        assert limited.value.rate_limited
        with pytest.raises(VerifierError, match="not JSON"):
            HttpVerifier("k", url + "/garbage").check(_req())
        with pytest.raises(VerifierError, match="boolean 'valid'"):
            HttpVerifier("k", url + "/novalid").check(_req())
        with pytest.raises(VerifierError, match="timed out") as slow:
            HttpVerifier("k", url + "/slow/600", timeout_s=0.2).check(_req())
        assert slow.value.timed_out
        assert hits["ok"] == 1
        assert hits["fail"] == 1


def test_transport_errors_and_bad_urls() -> None:
    with pytest.raises(VerifierError, match="transport"):
        HttpVerifier("k", "http://127.0.0.1:9/").check(_req())  # nothing listens on the discard port
    with pytest.raises(ConfigurationError, match="http"):
        HttpVerifier("k", "ftp://example")
    with pytest.raises(ConfigurationError, match="worker"):
        VerifierPool(0)


def test_default_timeout_is_two_seconds() -> None:
    v = HttpVerifier("k", "http://127.0.0.1:1/")
    assert v._timeout.read == 2.0
    v.close()


def test_breaker_opens_after_two_failures_and_stops_calling() -> None:
    with verifier_server() as (url, hits):
        guard, pool = _guard(url, "/fail")
        first = guard.verify([(0, _req("a"))], "u1")
        second = guard.verify([(0, _req("b"))], "u1")
        assert first[0].status == second[0].status == "failed"
        third = guard.verify([(0, _req("c"))], "u1")
        assert third[0].status == "failed"
        assert "breaker open" in third[0].detail
        assert hits["fail"] == 2
        assert guard.state("warehouse_status").breaker_until is not None
        pool.close()


def test_a_slow_verifier_never_blocks_and_its_late_answer_is_used_next_time() -> None:
    with verifier_server() as (url, hits):
        guard, pool = _guard(url, "/slow/400", wait_s=0.05)
        started = time.perf_counter()
        out = guard.verify([(0, _req())], "u1")
        assert time.perf_counter() - started < 0.3
        assert out[0].status == "fallback"
        assert "operational" in out[0].detail
        time.sleep(0.6)
        again = guard.verify([(0, _req())], "u1")
        assert again[0].status == "verified"
        assert "cached" in again[0].detail
        assert hits["slow"] == 1
        pool.close()


def test_p95_over_the_limit_degrades_to_the_fallback() -> None:
    with verifier_server() as (url, hits):
        guard, pool = _guard(url, "/slow/120", config=GuardConfig(slow_p95_ms=100), ttl=0.0)
        for subject in ("a", "b", "c"):  # one slow call is jitter; three are a trend
            assert guard.verify([(0, _req(subject))], "u" + subject)[0].status == "verified"
        out = guard.verify([(0, _req("d"))], "u1")[0]
        assert out.status == "fallback"
        assert "p95" in out.detail
        assert hits["slow"] == 3
        pool.close()


def test_per_user_rate_limit_and_upstream_429() -> None:
    with verifier_server() as (url, hits):
        guard, pool = _guard(url, "/ok", ttl=0.0)
        statuses = [guard.verify([(0, _req(f"s{i}"))], "u1")[0].status for i in range(4)]
        assert statuses == ["verified", "verified", "verified", "fallback"]
        assert guard.verify([(0, _req("s9"))], "u2")[0].status == "verified"
        assert hits["ok"] == 4
        pool.close()
        limited, pool2 = _guard(url, "/limited", config=GuardConfig(breaker_failures=99))
        assert limited.verify([(0, _req("x"))], "u1")[0].status == "failed"
        assert limited.health("warehouse_status") < 0.9
        pool2.close()


def test_unknown_kind_is_unverified() -> None:
    guard = VerificationGuard(VerifierRegistry(), VerifierPool(1))
    outcome = guard.verify([(3, _req(kind="stock"))], "u")[3]
    assert outcome.status == "fallback"  # nothing to ask: stored value kept, flagged, not a failed check
    assert "no verifier registered" in outcome.detail
    assert VerifierRegistry().get(None) is None
