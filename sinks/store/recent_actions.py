"""The recent-actions tier (docs/design.md#recall): a user's last 7 days of actions.

Redis layout per (tenant, user): a sorted set `recent_actions:{tenant}:{user}` of memory ids
scored by event time, and a hash `recent_units:{tenant}:{user}` from memory id to the unit's
JSON. Writes are idempotent (same id → same member and field), entries older than the
window are trimmed on every write, and both keys expire `window_s` after the last write.
`InMemoryRecentActions` is the same read model in-process (embedded mode and tests).
`RecentActionsSink` writes the memory units whose `unit_type` is an action.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Protocol, cast

import redis
from bytewax.outputs import DynamicSink, StatelessSinkPartition

from schemas.errors import StateMirrorError
from schemas.memory import MemoryUnit

log = logging.getLogger(__name__)

SEVEN_DAYS_S = 7 * 24 * 3600
DEFAULT_ACTION_TYPES: frozenset[str] = frozenset(
    {
        "action_request",
        "commitment",
        "complaint",
        "status_update",
        "repeat_complaint",
        "third_party_commitment",
        "resolution_confirmation",
    }
)


def _ids_key(tenant: str, user: str) -> str:
    return f"recent_actions:{tenant}:{user}"


def _units_key(tenant: str, user: str) -> str:
    return f"recent_units:{tenant}:{user}"


class RecentActions(Protocol):
    def write(self, units: Sequence[MemoryUnit]) -> None: ...

    def read(self, tenant_id: str, user_id: str, now: datetime, limit: int = 5) -> list[MemoryUnit]:
        """The user's newest actions in (now - window, now], newest first."""
        ...


class InMemoryRecentActions:
    def __init__(self, window_s: int = SEVEN_DAYS_S) -> None:
        self._window_s = window_s
        self._lock = threading.Lock()
        self._by_user: dict[tuple[str, str], dict[str, MemoryUnit]] = {}

    def write(self, units: Sequence[MemoryUnit]) -> None:
        with self._lock:
            for u in units:
                if u.user_id is None:
                    continue
                bucket = self._by_user.setdefault((u.tenant_id, u.user_id), {})
                bucket[u.memory_id] = u
                newest = max(x.ts.timestamp() for x in bucket.values())
                for mid in [m for m, x in bucket.items() if x.ts.timestamp() < newest - self._window_s]:
                    del bucket[mid]

    def read(self, tenant_id: str, user_id: str, now: datetime, limit: int = 5) -> list[MemoryUnit]:
        t = now.timestamp()
        with self._lock:
            units = list(self._by_user.get((tenant_id, user_id), {}).values())
        fresh = [u for u in units if t - self._window_s < u.ts.timestamp() <= t]
        return sorted(fresh, key=lambda u: (u.ts, u.memory_id), reverse=True)[:limit]


class RedisRecentActions:
    def __init__(self, url: str, window_s: int = SEVEN_DAYS_S, timeout_s: float = 2.0) -> None:
        self._client = redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
        self._window_s = window_s

    def write(self, units: Sequence[MemoryUnit]) -> None:
        try:
            pipe = self._client.pipeline(transaction=False)
            for u in units:
                if u.user_id is None:
                    continue
                ids, blobs = _ids_key(u.tenant_id, u.user_id), _units_key(u.tenant_id, u.user_id)
                ts = u.ts.timestamp()
                pipe.zadd(ids, {u.memory_id: ts})
                pipe.hset(blobs, u.memory_id, u.model_dump_json())
                pipe.expire(ids, self._window_s)
                pipe.expire(blobs, self._window_s)
            pipe.execute()
            self._trim({(u.tenant_id, u.user_id) for u in units if u.user_id is not None})
        except redis.RedisError as exc:
            raise StateMirrorError(f"recent actions write of {len(units)} units failed: {exc}") from exc

    def _trim(self, users: Iterable[tuple[str, str]]) -> None:
        for tenant, user in users:
            ids, blobs = _ids_key(tenant, user), _units_key(tenant, user)
            newest = self._client.zrevrange(ids, 0, 0, withscores=True)
            if not newest:
                continue
            cutoff = float(newest[0][1]) - self._window_s
            old = self._client.zrangebyscore(ids, "-inf", f"({cutoff}")
            if old:
                self._client.zrem(ids, *old)
                self._client.hdel(blobs, *old)

    def read(self, tenant_id: str, user_id: str, now: datetime, limit: int = 5) -> list[MemoryUnit]:
        t = now.timestamp()
        try:
            ids = self._client.zrevrangebyscore(
                _ids_key(tenant_id, user_id), t, f"({t - self._window_s}", start=0, num=limit
            )
            if not ids:
                return []
            blobs = self._client.hmget(_units_key(tenant_id, user_id), cast(list[bytes], ids))
        except redis.RedisError as exc:
            raise StateMirrorError(f"recent actions read failed: {exc}") from exc
        return [MemoryUnit.model_validate_json(b) for b in blobs if b is not None]


class _RecentPartition(StatelessSinkPartition[MemoryUnit]):
    def __init__(self, store: RecentActions, kinds: frozenset[str]) -> None:
        self._store = store
        self._kinds = kinds

    def write_batch(self, items: list[MemoryUnit]) -> None:
        actions = [u for u in items if u.unit_type in self._kinds or u.priority_flag]
        if not actions:
            return
        try:
            self._store.write(actions)
        except StateMirrorError as exc:
            # A read model: the store keeps the truth, so a Redis outage costs only the tier.
            log.warning(json.dumps({"op": "recent_actions.write", "units": len(actions), "error": str(exc)}))


class RecentActionsSink(DynamicSink[MemoryUnit]):
    def __init__(self, store: RecentActions, kinds: frozenset[str] = DEFAULT_ACTION_TYPES) -> None:
        self._store = store
        self._kinds = kinds

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _RecentPartition:
        return _RecentPartition(self._store, self._kinds)
