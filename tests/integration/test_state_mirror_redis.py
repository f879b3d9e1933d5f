"""The Redis mirror `task_state:{session_id}` against the real Redis (127.0.0.1:6379, db 15).

TTL 900 s, idempotent keyed writes, a read gives back the same state, and an outage (the port
closed, then open again) neither stops the flow nor loses the latest state of a session.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
import redis

from flows.settings import Settings
from schemas.session import CriticalEntity, GoalAnchor, SessionState
from sinks.redis.state_mirror import RedisStateMirror, StateMirrorSink, state_key
from tests.fixtures.task_support import T0, run_flow, turn_event
from tests.fixtures.tcp_proxy import TcpProxy

pytestmark = pytest.mark.integration

REDIS = ("127.0.0.1", 6379)
DB = 15
PREFIX = "it-task-"


@pytest.fixture
def client() -> Iterator[redis.Redis]:
    c = redis.Redis(host=REDIS[0], port=REDIS[1], db=DB)
    c.ping()
    yield c
    for key in c.scan_iter(f"task_state:{PREFIX}*"):
        c.delete(key)


@pytest.fixture
def proxy() -> Iterator[TcpProxy]:
    p = TcpProxy(REDIS)
    p.start()
    yield p
    p.stop()


def _state(sid: str, n: int) -> SessionState:
    return SessionState(
        session_id=f"{PREFIX}{sid}",
        task_id="TSK-2026-11-abc123",
        current_stage="logistics",
        intent_chain=("track_logistics", "cancel_order")[: 1 + n % 2],
        critical_entities=(CriticalEntity(kind="order_id", value="DD20261130001", turn_id="t1"),),
        goal_text="帮我查物流",
        goal_vector=(0.1, -0.25, 1 / 3),
        anchor=GoalAnchor(decision="continue", similarity=0.8123456789, embedder="x", thresholds=(0.72, 0.45)),
        turn_count=n,
        last_event_ts=T0 + timedelta(minutes=n),
        timeout_at=T0 + timedelta(minutes=n + 15),
    )


def test_write_read_round_trip_with_ttl_and_idempotence(client: redis.Redis) -> None:
    mirror = RedisStateMirror(f"redis://{REDIS[0]}:{REDIS[1]}/{DB}", ttl_s=900)
    state = _state("a", 1)
    mirror.write([state])
    assert mirror.read(state.session_id) == state
    assert 890 <= client.ttl(state_key(state.session_id)) <= 900
    raw = client.get(state_key(state.session_id))
    mirror.write([state, state])  # at-least-once replays write the same key and value again
    assert client.get(state_key(state.session_id)) == raw
    assert mirror.read(f"{PREFIX}absent") is None


def test_latest_state_per_session_wins_within_a_batch(client: redis.Redis) -> None:
    mirror = RedisStateMirror(f"redis://{REDIS[0]}:{REDIS[1]}/{DB}", ttl_s=900)
    mirror.write([_state("a", 1), _state("b", 1), _state("a", 2)])
    assert mirror.read(f"{PREFIX}a") == _state("a", 2)
    assert mirror.read(f"{PREFIX}b") == _state("b", 1)


def test_outage_keeps_pending_states_and_the_mirror_catches_up(client: redis.Redis, proxy: TcpProxy) -> None:
    mirror = RedisStateMirror(f"redis://127.0.0.1:{proxy.port}/{DB}", ttl_s=900, timeout_s=0.5)
    part = StateMirrorSink(mirror).build("state_out_0", 0, 1)
    part.write_batch([_state("a", 1)])
    assert part.pending == {}
    proxy.stop()  # Redis "goes away": the port is closed
    part.write_batch([_state("a", 2), _state("b", 1)])  # no exception: the flow goes on
    part.write_batch([_state("a", 3)])
    assert set(part.pending) == {f"{PREFIX}a", f"{PREFIX}b"}
    assert RedisStateMirror(f"redis://{REDIS[0]}:{REDIS[1]}/{DB}", 900).read(f"{PREFIX}a") == _state("a", 1)
    proxy.start()  # ... and comes back on the same port
    time.sleep(1.1)  # past the 1 s back-off after the failed write
    part.write_batch([_state("c", 1)])
    assert part.pending == {}
    direct = RedisStateMirror(f"redis://{REDIS[0]}:{REDIS[1]}/{DB}", 900)
    assert direct.read(f"{PREFIX}a") == _state("a", 3)
    assert direct.read(f"{PREFIX}b") == _state("b", 1)
    assert direct.read(f"{PREFIX}c") == _state("c", 1)


def test_close_flushes_pending_states(client: redis.Redis, proxy: TcpProxy) -> None:
    mirror = RedisStateMirror(f"redis://127.0.0.1:{proxy.port}/{DB}", ttl_s=900, timeout_s=0.5)
    part = StateMirrorSink(mirror).build("state_out_0", 0, 1)
    proxy.stop()
    part.write_batch([_state("d", 1)])
    proxy.start()
    part.close()
    assert RedisStateMirror(f"redis://{REDIS[0]}:{REDIS[1]}/{DB}", 900).read(f"{PREFIX}d") == _state("d", 1)


def test_flow_mirrors_the_task_state(client: redis.Redis) -> None:
    mirror = RedisStateMirror(f"redis://{REDIS[0]}:{REDIS[1]}/{DB}", ttl_s=900)
    events = [
        turn_event(1, "帮我查一下订单DD20261130001的物流到哪了", session=f"{PREFIX}flow"),
        turn_event(2, "顺便帮我取消这个订单", minutes=1, session=f"{PREFIX}flow"),
    ]
    settings = Settings(task={"archive_on_eof": False})
    run = run_flow(events, settings, extra_state_sinks=[StateMirrorSink(mirror)])
    assert mirror.read(f"{PREFIX}flow") == run.last_state(f"{PREFIX}flow")
    assert mirror.read(f"{PREFIX}flow").current_stage == "cancellation"  # type: ignore[union-attr]


def test_flow_keeps_running_while_redis_is_down(client: redis.Redis, proxy: TcpProxy) -> None:
    proxy.stop()
    mirror = RedisStateMirror(f"redis://127.0.0.1:{proxy.port}/{DB}", ttl_s=900, timeout_s=0.3)
    events = [
        turn_event(i, "我要退货" if i == 1 else "退货地址是哪里", minutes=i, session=f"{PREFIX}down") for i in (1, 2)
    ]
    run = run_flow(events, extra_state_sinks=[StateMirrorSink(mirror)])
    assert len(run.units) == 2
    assert run.last_state(f"{PREFIX}down").turn_count == 2
    assert client.get(state_key(f"{PREFIX}down")) is None
