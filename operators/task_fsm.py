"""Task state machine: task ids, stages, intent chain, entities, goal anchoring, timeout.

Why and with which numbers: docs/design.md#task-state-machine.

Input: keyed `Turn` (after tagging) merged with keyed `SessionEnd` control events. Output:
keyed `Turn` (with `task_id` and `task` set), `SessionState` (after every item; to the state
sinks and the Redis mirror) and `ArchivedTask` records. Key: session id. State: `SessionState`.

Time. Every decision uses event time only, so a replay and a live run agree. The task's
`timeout_at` is `last event ts + 15 min`:
* the next item of the session whose ts is past `timeout_at` archives the task first
  (`archived_at = timeout_at`), then starts a new one: deterministic in replay and live;
* a session that goes silent is archived by a timer. Bytewax's `notify_at` runs on the
  processing clock, so the operator converts the event-time deadline with the processing time
  at which the last event was seen: `wake = seen_at + (deadline - last_ts) + grace`. When it
  fires, event time is advanced to the deadline (the record is identical to the one the next
  event would have produced);
* at the end of a bounded input (a replay) event time goes to +∞: every open task is archived
  at its own `timeout_at` (or session end) and the state is discarded.
State is discarded on end of input, after a SessionEnd once its task is archived, and after
`session_ttl` of event-time inactivity with no open task, so keyed state never leaks.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import bytewax.operators as op
from bytewax.dataflow import operator
from bytewax.operators import KeyedStream, StatefulLogic

from schemas.events import SessionEnd
from schemas.session import ArchivedTask, SessionState
from state.normalise.turn import Turn
from state.task.data import TaskData
from state.task.fsm import Output, TaskConfig, expire, step

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskOperatorConfig:
    task: TaskConfig = field(default_factory=TaskConfig)
    archive_grace: timedelta = timedelta(seconds=60)
    session_ttl: timedelta = timedelta(hours=24)
    archive_on_eof: bool = True


@dataclass(frozen=True, slots=True)
class TaskStreams:
    turns: KeyedStream[Turn]
    states: KeyedStream[SessionState]
    archived: KeyedStream[ArchivedTask]


def next_deadline(state: SessionState | None, session_ttl: timedelta) -> datetime | None:
    """The next event-time instant at which something is due for this session."""
    if state is None or state.last_event_ts is None:
        return None
    due = [state.last_event_ts + session_ttl]
    if state.timeout_at is not None and state.task_id is not None:
        due.append(state.timeout_at)
    if state.ended_at is not None:
        due.append(state.ended_at)
    return min(due)


def discardable(state: SessionState | None, now: datetime | None, session_ttl: timedelta) -> bool:
    """No open task and either the session ended, or it has been idle past `session_ttl`."""
    if state is None:
        return True
    if state.task_id is not None:
        return False
    if now is None or state.ended_at is not None:
        return True
    return state.last_event_ts is None or now >= state.last_event_ts + session_ttl


class TaskLogic(StatefulLogic[Turn | SessionEnd, Output, SessionState | None]):
    """Thin adapter: the transition is `state.task.fsm.step`; this class only handles timers."""

    def __init__(
        self,
        state: SessionState | None,
        data: TaskData,
        config: TaskOperatorConfig,
        clock: Callable[[], datetime],
    ) -> None:
        self._state = state
        self._data = data
        self._config = config
        self._clock = clock
        self._deadline: datetime | None = None
        self._wake: datetime | None = None
        # After a resume the processing time of the last event is unknown: count from now
        # (late by the downtime at most; the record itself does not depend on it).
        self._schedule(clock())

    def _schedule(self, seen_at: datetime) -> None:
        self._deadline = next_deadline(self._state, self._config.session_ttl)
        if self._deadline is None or self._state is None or self._state.last_event_ts is None:
            self._wake = None
            return
        # Event time "now" for this session: its latest event (a SessionEnd counts too).
        seen = max(t for t in (self._state.last_event_ts, self._state.ended_at) if t is not None)
        lag = max(timedelta(0), self._deadline - seen)
        self._wake = seen_at + lag + self._config.archive_grace

    def on_item(self, value: Turn | SessionEnd) -> tuple[Iterable[Output], bool]:
        self._state, out = step(self._state, value, self._data.resources(), self._config.task)
        self._schedule(self._clock())
        return out, StatefulLogic.RETAIN

    def on_notify(self) -> tuple[Iterable[Output], bool]:
        deadline = self._deadline
        # The timer means event time has moved past the deadline (a session end archives only
        # strictly after its own ts, so turns stamped at the end still count).
        past = deadline + timedelta(microseconds=1) if deadline is not None else None
        self._state, out = expire(self._state, past, self._config.task)
        if out:
            log.info(json.dumps({"op": "task.timer", "deadline": deadline.isoformat() if deadline else None}))
        if discardable(self._state, deadline, self._config.session_ttl):
            return out, StatefulLogic.DISCARD
        self._schedule(self._clock())
        return out, StatefulLogic.RETAIN

    def on_eof(self) -> tuple[Iterable[Output], bool]:
        if not self._config.archive_on_eof:
            return (), StatefulLogic.RETAIN
        self._state, out = expire(self._state, None, self._config.task)
        return out, StatefulLogic.DISCARD

    def notify_at(self) -> datetime | None:
        return self._wake

    def snapshot(self) -> SessionState | None:
        return self._state  # a frozen pydantic model: immutable, picklable


def _turn(o: Output) -> Turn | None:
    return o if isinstance(o, Turn) else None


def _state(o: Output) -> SessionState | None:
    return o if isinstance(o, SessionState) else None


def _archived(o: Output) -> ArchivedTask | None:
    return o if isinstance(o, ArchivedTask) else None


@operator
def track_tasks(
    step_id: str,
    up: KeyedStream[Turn],
    controls: KeyedStream[SessionEnd],
    config: TaskOperatorConfig,
    *,
    data: TaskData,
    clock: Callable[[], datetime],
) -> TaskStreams:
    merged: KeyedStream[Turn | SessionEnd] = op.merge("task_inputs", up, controls)
    outs = op.stateful("task_logic", merged, lambda resume: TaskLogic(resume, data, config, clock))
    return TaskStreams(
        turns=op.filter_map_value("task_turns", outs, _turn),
        states=op.filter_map_value("task_states", outs, _state),
        archived=op.filter_map_value("task_archived", outs, _archived),
    )
