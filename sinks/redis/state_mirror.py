"""Mirror of per-session state for other services: Redis key `task_state:{session_id}`, TTL.

The state lives in the dataflow (recoverable); the mirror is a read model. Writes are
keyed SETs with EX (idempotent). A Redis outage never stops the flow: the latest state of
each session waits in `pending` and is written on the next successful batch (failed writes
back off, so a hanging Redis does not slow the flow either).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Protocol

import redis
from bytewax.outputs import DynamicSink, StatelessSinkPartition

from schemas.errors import StateMirrorError
from schemas.session import SessionState

log = logging.getLogger(__name__)

KEY_PREFIX = "task_state:"


def state_key(session_id: str) -> str:
    """The Redis key of a session's task state.

    >>> state_key("s1")
    'task_state:s1'
    """
    return f"{KEY_PREFIX}{session_id}"


class StateMirror(Protocol):
    def write(self, states: list[SessionState]) -> None: ...

    def read(self, session_id: str) -> SessionState | None: ...


class InMemoryStateMirror:
    """Embedded mode: the same read model in-process (no servers)."""

    def __init__(self) -> None:
        self.states: dict[str, SessionState] = {}

    def write(self, states: list[SessionState]) -> None:
        for state in states:
            self.states[state.session_id] = state

    def read(self, session_id: str) -> SessionState | None:
        return self.states.get(session_id)


class RedisStateMirror:
    def __init__(self, url: str, ttl_s: int, timeout_s: float = 2.0) -> None:
        self._client = redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
        self._ttl_s = ttl_s

    def write(self, states: list[SessionState]) -> None:
        latest = {s.session_id: s for s in states}
        try:
            pipe = self._client.pipeline(transaction=False)
            for sid, state in latest.items():
                pipe.set(state_key(sid), state.model_dump_json(), ex=self._ttl_s)
            pipe.execute()
        except redis.RedisError as exc:
            raise StateMirrorError(f"redis mirror write of {len(latest)} sessions failed: {exc}") from exc

    def read(self, session_id: str) -> SessionState | None:
        try:
            raw = self._client.get(state_key(session_id))
        except redis.RedisError as exc:
            raise StateMirrorError(f"redis mirror read failed: {exc}") from exc
        if raw is None:
            return None
        return SessionState.model_validate_json(raw)


class _MirrorPartition(StatelessSinkPartition[SessionState]):
    """Writes the latest state per session; during an outage it keeps them and backs off.

    After a failed write the next attempt waits `backoff` (1 s doubling to 30 s of the process
    clock), so a Redis that hangs instead of refusing does not slow every batch of the flow.
    """

    def __init__(self, mirror: StateMirror, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._mirror = mirror
        self._monotonic = monotonic
        self.pending: dict[str, SessionState] = {}
        self._backoff = 0.0
        self._next_try = 0.0

    def write_batch(self, items: list[SessionState], *, force: bool = False) -> None:
        for state in items:
            self.pending[state.session_id] = state
        if not self.pending or (not force and self._monotonic() < self._next_try):
            return
        try:
            self._mirror.write(list(self.pending.values()))
        except StateMirrorError as exc:
            # The dataflow holds the truth; keep the latest per session and catch up later.
            self._backoff = min(30.0, max(1.0, self._backoff * 2))
            self._next_try = self._monotonic() + self._backoff
            log.warning(
                json.dumps(
                    {"op": "mirror.write", "pending": len(self.pending), "retry_in_s": self._backoff, "error": str(exc)}
                )
            )
            return
        self._backoff = 0.0
        self.pending.clear()

    def close(self) -> None:
        """Last chance to hand pending states over (the next run would rewrite them anyway)."""
        self.write_batch([], force=True)


class StateMirrorSink(DynamicSink[SessionState]):
    def __init__(self, mirror: StateMirror) -> None:
        self._mirror = mirror

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _MirrorPartition:
        return _MirrorPartition(self._mirror)
