"""The recent-actions tier on the real Redis (db 15)."""

from datetime import timedelta

import pytest
import redis

from schemas.errors import StateMirrorError
from sinks.store.recent_actions import RedisRecentActions
from tests.recall_support import T0, unit

URL = "redis://127.0.0.1:6379/15"
pytestmark = pytest.mark.integration


@pytest.fixture
def client():
    c = redis.Redis.from_url(URL)
    try:
        c.ping()
    except redis.ConnectionError as exc:  # the integration run starts Redis; say so plainly if it did not
        pytest.fail(f"Redis is not running at {URL}: {exc}")
    for key in c.scan_iter("recent_*:t1:*"):
        c.delete(key)
    yield c
    for key in c.scan_iter("recent_*:t1:*"):
        c.delete(key)


def test_write_read_trim_and_ttl(client) -> None:
    store = RedisRecentActions(URL, window_s=7 * 24 * 3600)
    old = unit("old", n=1, ts=T0 - timedelta(days=9))
    a = unit("a", n=2, ts=T0 - timedelta(days=1))
    b = unit("b", n=3, ts=T0 - timedelta(hours=1))
    store.write([old])
    store.write([a, b, b])  # idempotent
    assert [u.text for u in store.read("t1", "u1", T0)] == ["b", "a"]
    assert client.zcard("recent_actions:t1:u1") == 2  # the old one was trimmed
    assert 0 < client.ttl("recent_actions:t1:u1") <= 7 * 24 * 3600
    assert store.read("t1", "nobody", T0) == []


def test_outage_raises_state_mirror_error() -> None:
    store = RedisRecentActions("redis://127.0.0.1:1/15", timeout_s=0.2)
    with pytest.raises(StateMirrorError):
        store.write([unit("a", n=1)])
    with pytest.raises(StateMirrorError):
        store.read("t1", "u1", T0)
