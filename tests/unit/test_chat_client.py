"""The chat client's one retry policy, deadline and body checks."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from schemas.errors import ChatEndpointError
from sinks.http.chat_client import ChatClient, ChatConfig, ChatResult
from tests.fakes.fake_openai import FakeOpenAI, closed_port_url

MESSAGES = ({"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"})


@pytest.fixture
def server():
    srv = FakeOpenAI().start()
    yield srv
    srv.stop()


def _complete(config: ChatConfig) -> ChatResult:
    async def run() -> ChatResult:
        client = ChatClient(config)
        try:
            return await client.complete(MESSAGES, request_id="r1")
        finally:
            await client.aclose()

    return asyncio.run(run())


def _config(url: str, **kw: object) -> ChatConfig:
    base = {"base_url": url, "model": "m", "timeout_s": 0.5, "deadline_s": 2.0, "retry_backoff_s": 0.01}
    base.update(kw)
    return ChatConfig(**base)  # type: ignore[arg-type]


def test_a_transient_failure_is_retried_once(server: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    server.fail_first = 1
    with caplog.at_level(logging.INFO, logger="sinks.http.chat_client"):
        result = _complete(_config(server.base_url))
    assert result.attempts == 2
    assert result.text.startswith("No record")
    assert server.requests[0]["max_tokens"] == 256
    assert server.requests[0]["model"] == "m"
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "sinks.http.chat_client"]
    assert [(line["attempt"], line["ok"]) for line in lines] == [(1, False), (2, True)]  # one JSON line per call


def test_two_failures_exhaust_the_policy(server: FakeOpenAI) -> None:
    server.fail_first = 2
    with pytest.raises(ChatEndpointError, match="after 2 attempt") as info:
        _complete(_config(server.base_url))
    assert info.value.reason == "http_error"
    assert info.value.attempts == 2


def test_a_client_error_is_not_retried(server: FakeOpenAI) -> None:
    server.mode = "bad_request"
    with pytest.raises(ChatEndpointError) as info:
        _complete(_config(server.base_url))
    assert info.value.reason == "http_error"
    assert server.calls == 1


def test_zero_retries_means_one_attempt() -> None:
    with pytest.raises(ChatEndpointError) as info:
        _complete(_config(closed_port_url(), retries=0))
    assert info.value.reason == "endpoint_down"
    assert info.value.attempts == 1


def test_the_deadline_bounds_the_retry(server: FakeOpenAI) -> None:
    server.mode, server.delay_s = "slow", 2.0
    with pytest.raises(ChatEndpointError) as info:
        _complete(_config(server.base_url, timeout_s=0.3, deadline_s=0.35))
    assert info.value.reason == "timeout"
    assert server.calls <= 2


def test_an_exhausted_deadline_makes_no_call(server: FakeOpenAI) -> None:
    with pytest.raises(ChatEndpointError, match="after 0 attempt") as info:
        _complete(_config(server.base_url, deadline_s=1e-9))
    assert info.value.reason == "timeout"
    assert server.calls == 0


def test_api_key_is_sent_as_a_bearer_token(server: FakeOpenAI) -> None:
    seen: dict[str, str] = {}
    original = server._server.RequestHandlerClass.do_POST

    def spy(handler):  # type: ignore[no-untyped-def]
        seen["auth"] = handler.headers.get("Authorization", "")
        original(handler)

    server._server.RequestHandlerClass.do_POST = spy
    _complete(_config(server.base_url, api_key="sk-test"))
    assert seen["auth"] == "Bearer sk-test"
