"""Windowed metrics: decision records → event-time tumbling windows → WindowMetrics.

Input: streams of any records the flow emits (dead letters, session states, memory units,
recall results, responses, turns after the task state machine, ready-made `Decision`s) and,
optionally, `StageMark`s; session states for the intent-chain stability (keyed by session,
state: the last two turn states, discarded when the session ends).
Output: `WindowMetrics` — one record per closed window (revision 0), and a new revision of
a window each time items that arrived after it closed are counted and folded into it.
Key: every decision goes to the single key "all" (a window aggregates the whole stream; the
volume is a few small records per turn). Latency marks are keyed by session id.
State: the stamper (latest event time seen), Bytewax's window state (an accumulator per
open window, discarded at close), closed windows kept for late items (last 1,024), latency marks per
session (discarded when no turn of the session is in flight).
Time: event time (`ts`) through Bytewax's `EventClock`; the watermark trails the latest
event time by `lateness` of wall-clock time (the injected `now`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import bytewax.operators as op
import bytewax.operators.windowing as win
from bytewax.dataflow import Stream, operator
from bytewax.operators import KeyedStream, StatefulLogic

from schemas.metrics import WindowMetrics
from schemas.session import SessionState
from state.metrics.decisions import LatencyState, StageMark, decisions_of, mark_stage
from state.metrics.task_decisions import ChainHistory, chain_stability
from state.metrics.windows import (
    ALIGN_TO,
    Decision,
    MetricCatalog,
    Revisions,
    Stamper,
    WindowAcc,
    close_window,
    flush_pending,
    fold_decision,
    fold_late,
    merge_acc,
    stamp,
)

ALL = "all"


@dataclass(frozen=True)
class MetricsConfig:
    window: timedelta = timedelta(seconds=60)
    lateness: timedelta = timedelta(seconds=5)
    late_batch_timeout: timedelta = timedelta(seconds=1)


class _StampLogic(StatefulLogic[Decision, Decision, Stamper]):
    def __init__(self, state: Stamper | None, now: Callable[[], datetime]) -> None:
        self._state = state or Stamper()
        self._now = now

    def on_item(self, value: Decision) -> tuple[Iterable[Decision], bool]:
        return stamp(self._state, value), StatefulLogic.RETAIN

    def on_eof(self) -> tuple[Iterable[Decision], bool]:
        return flush_pending(self._state, self._now()), StatefulLogic.RETAIN

    def snapshot(self) -> Stamper:
        return self._state


class _LatencyLogic(StatefulLogic[StageMark, Decision, LatencyState]):
    def __init__(self, state: LatencyState | None) -> None:
        self._state = state

    def on_item(self, value: StageMark) -> tuple[Iterable[Decision], bool]:
        self._state, out = mark_stage(self._state, value)
        return out, (StatefulLogic.DISCARD if self._state is None else StatefulLogic.RETAIN)

    def snapshot(self) -> LatencyState:
        return self._state or LatencyState()


@operator
def extract_decisions(step_id: str, *taps: Stream[Any]) -> Stream[Decision]:
    """Every decision carried by the records of `taps` (see state/metrics/decisions.py)."""
    merged = op.merge("taps", *taps)
    return op.flat_map("decisions_of", merged, decisions_of)


@operator
def stage_marks(
    step_id: str,
    up: Stream[Any],
    stage: str,
    get: Callable[[Any], tuple[str, str, datetime] | None],
    *,
    now_ns: Callable[[], int],
    final: bool = False,
) -> Stream[StageMark]:
    """Stamp each item passing here: `get(item)` → (session id, event id, event ts) or None to skip."""

    def to_mark(item: Any) -> StageMark | None:
        ids = get(item)
        return None if ids is None else StageMark(ids[0], ids[1], ids[2], stage, now_ns(), final)

    return op.filter_map("mark", up, to_mark)


@operator
def stage_latency(step_id: str, *marks: Stream[StageMark]) -> Stream[Decision]:
    """`latency_ms.<stage>` decisions from the marks of each turn (keyed by session)."""
    merged = op.merge("marks", *marks)
    keyed = op.key_on("key_session", merged, lambda m: m.session_id)
    out = op.stateful("latency", keyed, lambda resume: _LatencyLogic(resume))
    return op.key_rm("unkey", out)


class _ChainLogic(StatefulLogic[SessionState, Decision, ChainHistory | None]):
    """A session's last turns for the chain decisions; dropped at its end or after `idle_ttl` of
    processing time without a state (a session that just goes quiet sends no end)."""

    def __init__(self, state: ChainHistory | None, idle_ttl: timedelta, clock: Callable[[], datetime]) -> None:
        self._state = state
        self._idle_ttl = idle_ttl
        self._clock = clock
        self._wake = clock() + idle_ttl

    def on_item(self, value: SessionState) -> tuple[Iterable[Decision], bool]:
        self._state, out = chain_stability(self._state, value)
        self._wake = self._clock() + self._idle_ttl
        return out, (StatefulLogic.DISCARD if self._state is None else StatefulLogic.RETAIN)

    def on_notify(self) -> tuple[Iterable[Decision], bool]:
        return (), StatefulLogic.DISCARD

    def notify_at(self) -> datetime | None:
        return self._wake

    def snapshot(self) -> ChainHistory | None:
        return self._state


@operator
def intent_chain_decisions(
    step_id: str,
    states: Stream[SessionState],
    *,
    idle_ttl: timedelta = timedelta(hours=1),
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> Stream[Decision]:
    """`intent_chain_stability` decisions from each session's turn states (keyed by tenant and session)."""
    keyed = op.key_on("key_session", states, lambda s: f"{s.tenant_id}\x1f{s.session_id}")
    out = op.stateful("chain", keyed, lambda resume: _ChainLogic(resume, idle_ttl, clock))
    return op.key_rm("unkey", out)


@operator
def windowed_metrics(
    step_id: str,
    up: Stream[Decision],
    config: MetricsConfig,
    *,
    catalog: Callable[[], MetricCatalog],
    now: Callable[[], datetime],
) -> Stream[WindowMetrics]:
    """Tumbling event-time windows of decisions, closed into WindowMetrics (+ late corrections)."""
    keyed: KeyedStream[Decision] = op.key_on("key_all", up, lambda _: ALL)
    dated = op.stateful("stamp", keyed, lambda resume: _StampLogic(resume, now))
    clock: win.EventClock[Decision] = win.EventClock(
        ts_getter=_ts, wait_for_system_duration=config.lateness, now_getter=now
    )
    windower = win.TumblingWindower(length=config.window, align_to=ALIGN_TO)
    # Unordered: the aggregates do not depend on order, and ordering would hold every item
    # until the watermark passes it (a replay's whole input).
    folded = win.fold_window("fold", dated, clock, windower, WindowAcc, fold_decision, merge_acc, ordered=False)
    batches = op.collect("late_batches", folded.late, timeout=config.late_batch_timeout, max_size=10_000)
    closed = op.map_value("tag_closed", folded.down, lambda id_acc: ("closed", id_acc))
    late = op.map_value("tag_late", batches, lambda batch: ("late", batch))

    def revise(state: Revisions | None, item: tuple[str, Any]) -> tuple[Revisions, list[WindowMetrics]]:
        tag, body = item
        if tag == "closed":
            state, record = close_window(state, body[0], body[1], config.window, catalog())
            return state, [record]
        return fold_late(state, body, config.window, catalog())

    revised = op.stateful_map("revise", op.merge("closed_and_late", closed, late), revise)
    return op.flat_map("records", op.key_rm("unkeyed", revised), _ident)


def _ts(decision: Decision) -> datetime:
    # The stamper dates every decision before the window operator sees it.
    if decision.ts is None:
        raise TypeError("undated decision reached the window operator")
    return decision.ts


def _ident(records: list[WindowMetrics]) -> list[WindowMetrics]:
    return records
