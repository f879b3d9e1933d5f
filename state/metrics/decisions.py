"""Decision records extracted from what the flow emits, and per-stage latency marks.

Input: any record the flow produces (DeadLetter, input events, MemoryUnit, RecallResult,
AgentResponse, or a ready-made `Decision`). Output: `Decision` records for the windowed
metrics. Extractors are looked up by the record's type in a registry: a stage whose records
are not covered here calls `register_extractor` (or emits `Decision`s itself).

Stage latency: `StageMark`s taken as a turn passes named points of the write path are
folded per session by `mark_stage`; when the turn's last mark arrives, one
`latency_ms.<stage>` decision per stage (and `latency_ms.total`) comes out. State:
`LatencyState` per session id, discarded when no turn of the session is in flight.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from typing import Any, TypeVar

from schemas.deadletter import DeadLetter, DuplicateDelivery
from schemas.events import ConversationEvent, ResolutionUpdate, SessionEnd, UserCorrection, checked_event_time
from schemas.memory import MemoryUnit
from schemas.recall import RecallResult
from schemas.response import AgentResponse
from schemas.session import ArchivedTask
from state.metrics.task_decisions import turn_decisions
from state.metrics.windows import Decision
from state.normalise.turn import Turn

T = TypeVar("T")
Extractor = Callable[[Any], Iterable[Decision]]
_EXTRACTORS: dict[type, Extractor] = {}
# Validity decisions that mean "a transient memory was checked" and which of them failed.
_VERIFIED = frozenset({"verified", "verify_failed_downweighted", "verify_failed_dropped", "fallback"})
_VERIFY_FAILED = frozenset({"verify_failed_downweighted", "verify_failed_dropped", "fallback"})
# In-flight turns remembered per session for latency; older ones are forgotten past this.
MAX_IN_FLIGHT = 256


def register_extractor(record_type: type[T], extractor: Callable[[T], Iterable[Decision]]) -> None:
    """Make `decisions_of` turn records of `record_type` into decisions (last registration wins)."""
    _EXTRACTORS[record_type] = extractor


def decisions_of(record: object) -> list[Decision]:
    """Every decision a record carries; [] for a type nobody registered.

    >>> from datetime import UTC, datetime
    >>> from schemas.events import SessionEnd
    >>> decisions_of(SessionEnd(event_id="e", session_id="s", ts=datetime(2026, 1, 1, tzinfo=UTC)))[0].name
    'events'
    """
    if isinstance(record, Decision):
        return [record]
    for klass in type(record).__mro__:
        extractor = _EXTRACTORS.get(klass)
        if extractor is not None:
            return list(extractor(record))
    return []


def event_time_of_raw(raw: bytes) -> datetime | None:
    """Best-effort event time of a dead letter's raw bytes (its `ts` field), else None.

    >>> event_time_of_raw(b'{"ts": "2026-01-01T08:00:00"}').isoformat()
    '2026-01-01T08:00:00+00:00'
    >>> event_time_of_raw(b"not json") is None
    True
    >>> event_time_of_raw(b'{"ts": "9999-12-31T23:00:00-05:00"}') is None
    True
    """
    try:
        obj = json.loads(raw)
    except ValueError:  # not UTF-8 or not JSON
        return None
    value = obj.get("ts") if isinstance(obj, dict) else None
    if not isinstance(value, str):
        return None
    try:
        return checked_event_time(datetime.fromisoformat(value))
    except ValueError:  # not ISO 8601, or outside the event-time range
        return None


def _deadletter(dead: DeadLetter) -> Iterable[Decision]:
    ts = event_time_of_raw(base64.b64decode(dead.raw_b64))
    yield Decision(ts, "deadletters")
    yield Decision(ts, f"deadletters.{dead.error_type}")


def _duplicate(_: DuplicateDelivery) -> Iterable[Decision]:
    # A redelivered record carries the event time of its first delivery; counting it undated
    # (stamped with the stream's latest time) is enough for a count.
    yield Decision(None, "duplicates")


def _event(event: ConversationEvent | ResolutionUpdate | SessionEnd | UserCorrection) -> Iterable[Decision]:
    # Every validated input event, turns and control events alike: the throughput of the write path.
    yield Decision(event.ts, "events")


def _unit(unit: MemoryUnit) -> Iterable[Decision]:
    yield Decision(unit.ts, "memory_units")
    yield Decision(unit.ts, "entropy", unit.entropy)
    for anchor in unit.coref:
        yield Decision(unit.ts, "coref_needs_review_rate", 1.0 if anchor.needs_human_review else 0.0)


def _recall(result: RecallResult) -> Iterable[Decision]:
    yield Decision(result.ts, "recalls")
    yield Decision(result.ts, "recall_empty_rate", 0.0 if result.cues else 1.0)
    for decision in result.validity_decisions:
        if decision.decision in _VERIFIED:
            yield Decision(result.ts, "temporal_verification_fail_rate", float(decision.decision in _VERIFY_FAILED))


def _response(response: AgentResponse) -> Iterable[Decision]:
    yield Decision(response.ts, "responses")
    yield Decision(response.ts, "response_fallback_rate", 1.0 if response.fallback else 0.0)
    yield Decision(response.ts, "latency_ms.responder", response.latency_ms)


def _archived(task: ArchivedTask) -> Iterable[Decision]:
    yield Decision(task.archived_at, "archived_tasks")
    yield Decision(task.archived_at, f"archived_tasks.{task.reason}")


register_extractor(DeadLetter, _deadletter)
register_extractor(DuplicateDelivery, _duplicate)
register_extractor(ArchivedTask, _archived)
# One call per event class, not a loop: a loop variable's type is their common base class,
# which `_event` (typed on the union) does not accept.
register_extractor(ConversationEvent, _event)
register_extractor(ResolutionUpdate, _event)
register_extractor(SessionEnd, _event)
register_extractor(UserCorrection, _event)
register_extractor(MemoryUnit, _unit)
register_extractor(RecallResult, _recall)
register_extractor(AgentResponse, _response)
register_extractor(Turn, turn_decisions)


# --- per-stage latency -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StageMark:
    """A turn passed the point `stage` at wall-clock `at_ns`; `final` is the last point."""

    session_id: str
    event_id: str
    ts: datetime
    stage: str
    at_ns: int
    final: bool = False


@dataclass(slots=True)
class LatencyState:
    """Marks of the session's turns in flight: event id → [(stage, at_ns), ...]."""

    in_flight: dict[str, list[tuple[str, int]]] = field(default_factory=dict)


def mark_stage(state: LatencyState | None, mark: StageMark) -> tuple[LatencyState | None, list[Decision]]:
    """Fold one mark; on the final one, the latency of each stage since the previous mark.

    Marks are ordered by their own clock, not by arrival (marks of one turn can cross on
    their way between workers). Returns None as state when nothing is in flight (discard).

    >>> from datetime import UTC, datetime
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> s, _ = mark_stage(None, StageMark("s", "e", t, "parsed", 0))
    >>> s, out = mark_stage(s, StageMark("s", "e", t, "embed", 3_000_000, final=True))
    >>> [(d.name, d.value) for d in out], s
    ([('latency_ms.embed', 3.0), ('latency_ms.total', 3.0)], None)
    """
    state = state or LatencyState()
    marks = state.in_flight.pop(mark.event_id, [])
    if mark.final:
        if not any(stage == mark.stage for stage, _ in marks):
            marks.append((mark.stage, mark.at_ns))
        out = _latencies(mark.ts, marks)
    else:
        if not any(stage == mark.stage for stage, _ in marks):
            marks.append((mark.stage, mark.at_ns))
        state.in_flight[mark.event_id] = marks
        while len(state.in_flight) > MAX_IN_FLIGHT:
            del state.in_flight[next(iter(state.in_flight))]
        out = []
    return (state if state.in_flight else None), out


def _latencies(ts: datetime, marks: list[tuple[str, int]]) -> list[Decision]:
    ordered = sorted(marks, key=lambda m: m[1])
    out = [Decision(ts, f"latency_ms.{stage}", (at - prev_at) / 1e6) for (_, prev_at), (stage, at) in pairwise(ordered)]
    if len(ordered) > 1:
        out.append(Decision(ts, "latency_ms.total", (ordered[-1][1] - ordered[0][1]) / 1e6))
    return out
