"""Async client for an OpenAI-compatible chat endpoint (`vllm serve`, `/v1/chat/completions`).

One place for the call's limits: a per-attempt timeout, an overall deadline, and one retry
policy (retry once, after a short backoff, on connection failure, timeout, 5xx/429 or a
garbage body; never on other 4xx). It logs one JSON line per attempt and raises
`ChatEndpointError` with a reason (endpoint_down, timeout, http_error, garbage) when the
policy gives up; concurrency is bounded by the caller (the responder's semaphore).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from schemas.errors import ChatEndpointError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ChatConfig:
    base_url: str = "http://127.0.0.1:8000/v1"
    model: str = "microsoft/Phi-3-mini-4k-instruct"
    api_key: str | None = None
    max_tokens: int = 256
    temperature: float = 0.2
    timeout_s: float = 8.0
    connect_timeout_s: float = 1.0
    deadline_s: float = 15.0
    retries: int = 1
    retry_backoff_s: float = 0.2


@dataclass(frozen=True, slots=True)
class ChatResult:
    text: str
    model: str
    attempts: int
    latency_ms: float
    completion_tokens: int | None = None


class _Attempt(Exception):
    def __init__(self, reason: str, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.reason = reason
        self.retryable = retryable


def parse_completion(body: Any) -> tuple[str, str | None, int | None]:
    """The reply text, model and completion token count of a chat completion body.

    >>> body = {"model": "m", "choices": [{"message": {"content": " hi "}}], "usage": {"completion_tokens": 1}}
    >>> parse_completion(body)
    ('hi', 'm', 1)
    """
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise _Attempt("garbage", f"no choices[0].message.content in body: {str(body)[:200]}", retryable=True) from exc
    if not isinstance(content, str) or not content.strip():
        raise _Attempt("garbage", "empty or non-text content", retryable=True)
    model = body.get("model") if isinstance(body.get("model"), str) else None
    usage = body.get("usage")
    tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
    return content.strip(), model, tokens if isinstance(tokens, int) else None


class ChatClient:
    """`await client.complete(messages, request_id=...)` → ChatResult, or ChatEndpointError."""

    def __init__(self, config: ChatConfig, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.config = config
        headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        self._client = httpx.AsyncClient(
            base_url=config.base_url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(config.timeout_s, connect=config.connect_timeout_s),
            transport=transport,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _attempt(self, payload: dict[str, Any], timeout_s: float) -> tuple[str, str | None, int | None]:
        timeout = httpx.Timeout(timeout_s, connect=min(self.config.connect_timeout_s, timeout_s))
        try:
            response = await self._client.post("/chat/completions", json=payload, timeout=timeout)
        except httpx.TimeoutException as exc:
            raise _Attempt("timeout", f"no answer within {timeout_s:.2f} s", retryable=True) from exc
        except httpx.TransportError as exc:
            raise _Attempt("endpoint_down", f"{type(exc).__name__}: {exc}", retryable=True) from exc
        if response.status_code >= 500 or response.status_code == 429:
            raise _Attempt("http_error", f"HTTP {response.status_code}", retryable=True)
        if response.status_code >= 400:
            raise _Attempt("http_error", f"HTTP {response.status_code}: {response.text[:200]}", retryable=False)
        try:
            body = response.json()
        except ValueError as exc:
            raise _Attempt("garbage", f"body is not JSON: {response.text[:200]!r}", retryable=True) from exc
        return parse_completion(body)

    async def complete(
        self, messages: Sequence[dict[str, str]], *, request_id: str, max_tokens: int | None = None
    ) -> ChatResult:
        cfg = self.config
        payload = {
            "model": cfg.model,
            "messages": list(messages),
            "max_tokens": max_tokens or cfg.max_tokens,
            "temperature": cfg.temperature,
        }
        started = time.perf_counter()
        attempts = 0
        last: _Attempt | None = None
        while attempts <= cfg.retries:
            remaining = cfg.deadline_s - (time.perf_counter() - started)
            if remaining <= 0:
                break
            attempts += 1
            t0 = time.perf_counter()
            try:
                text, model, tokens = await self._attempt(payload, min(cfg.timeout_s, remaining))
            except _Attempt as exc:
                last = exc
                log.warning(
                    json.dumps(
                        {
                            "op": "chat.completions",
                            "request_id": request_id,
                            "attempt": attempts,
                            "ok": False,
                            "reason": exc.reason,
                            "error": str(exc)[:300],
                            "ms": round((time.perf_counter() - t0) * 1000, 1),
                        }
                    )
                )
                if not exc.retryable:
                    break
                if attempts <= cfg.retries:
                    await asyncio.sleep(
                        min(cfg.retry_backoff_s * attempts, max(0.0, remaining - (time.perf_counter() - t0)))
                    )
                continue
            latency_ms = (time.perf_counter() - started) * 1000
            log.info(
                json.dumps(
                    {
                        "op": "chat.completions",
                        "request_id": request_id,
                        "attempt": attempts,
                        "ok": True,
                        "model": model or cfg.model,
                        "tokens": tokens,
                        "ms": round((time.perf_counter() - t0) * 1000, 1),
                    }
                )
            )
            return ChatResult(
                text=text, model=model or cfg.model, attempts=attempts, latency_ms=latency_ms, completion_tokens=tokens
            )
        reason = last.reason if last is not None else "timeout"
        raise ChatEndpointError(reason, f"chat endpoint gave up after {attempts} attempt(s): {last}", attempts=attempts)
