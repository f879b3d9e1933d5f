"""Shared fixtures: factories for events and raw records, the fast embedder, a fixed clock."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from schemas.raw import RawRecord
from state.core.embedding import Embedder

BASE_TS = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)


def fixed_clock() -> datetime:
    return BASE_TS


@pytest.fixture
def clock() -> Callable[[], datetime]:
    return fixed_clock


def event_dict(**overrides: Any) -> dict[str, Any]:
    """A valid ConversationEvent as JSON-ready dict; override any field."""
    base: dict[str, Any] = {
        "event_id": "e1",
        "session_id": "s1",
        "tenant_id": "t1",
        "user_id": "u1",
        "turn_id": "turn-1",
        "ts": "2026-01-01T08:00:00Z",
        "speaker": "Li",
        "speaker_role": "customer",
        "text": "明天下午三点开会",
    }
    base.update(overrides)
    return base


@pytest.fixture
def make_event() -> Callable[..., dict[str, Any]]:
    return event_dict


def raw(obj: dict[str, Any] | bytes, source: str = "test:1") -> RawRecord:
    payload = obj if isinstance(obj, bytes) else json.dumps(obj, ensure_ascii=False).encode()
    return RawRecord(source=source, payload=payload)


@pytest.fixture
def make_raw() -> Callable[..., RawRecord]:
    return raw


@pytest.fixture(scope="session")
def static_embedder() -> Embedder:
    from sinks.models.embedders import load_embedder

    return load_embedder("static")
