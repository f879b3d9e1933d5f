"""The Bytewax adapter of the task state machine: event-time archiving through timers."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime, timedelta

from operators.task_fsm import TaskLogic, TaskOperatorConfig, discardable, next_deadline
from schemas.session import ArchivedTask, SessionState
from state.normalise.turn import NormaliseConfig, Turn, normalise_turn
from tests.fixtures.task_support import T0, end_event, task_data, turn_event

DATA = task_data()
CFG = TaskOperatorConfig(archive_grace=timedelta(seconds=60), session_ttl=timedelta(hours=24))


class Clock:
    """Processing time, deliberately far from event time (a replay of last year's archive)."""

    def __init__(self) -> None:
        self.now = datetime(2031, 6, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _turn(i: int, text: str, minutes: float) -> Turn:
    return normalise_turn(turn_event(i, text, minutes=minutes), NormaliseConfig())


def test_silent_session_is_archived_by_the_timer_at_its_event_time_deadline() -> None:
    clock = Clock()
    logic = TaskLogic(None, DATA, CFG, clock)
    assert logic.notify_at() is None
    logic.on_item(_turn(1, "我要退货", 0))
    logic.on_item(_turn(2, "退货地址是哪里", 3))
    # 15 min of event time after the last event, counted from when it was seen, plus the grace
    assert logic.notify_at() == clock.now + timedelta(minutes=15, seconds=60)
    clock.now += timedelta(minutes=16)
    out, discard = logic.on_notify()
    (rec,) = [o for o in out if isinstance(o, ArchivedTask)]
    assert (rec.reason, rec.archived_at) == ("timeout", T0 + timedelta(minutes=18))
    state = [o for o in out if isinstance(o, SessionState)][-1]
    assert state.task_id is None
    assert state.intent_chain == ()
    assert discard is False  # the session itself lives on until session_ttl
    assert logic.notify_at() == clock.now + timedelta(hours=24, seconds=60)  # session_ttl after the last event
    clock.now += timedelta(hours=25)
    out, discard = logic.on_notify()
    assert out == []
    assert discard is True


def test_timer_archive_equals_the_archive_a_later_event_would_make() -> None:
    clock = Clock()
    by_timer = TaskLogic(None, DATA, CFG, clock)
    by_event = TaskLogic(None, DATA, CFG, clock)
    for logic in (by_timer, by_event):
        logic.on_item(_turn(1, "帮我查一下订单DD20261130001的物流", 0))
    timer_out, _ = by_timer.on_notify()
    event_out, _ = by_event.on_item(_turn(2, "我要投诉", 30))
    assert [o for o in timer_out if isinstance(o, ArchivedTask)] == [
        o for o in event_out if isinstance(o, ArchivedTask)
    ]


def test_session_end_is_archived_after_the_grace_and_the_state_discarded() -> None:
    clock = Clock()
    logic = TaskLogic(None, DATA, CFG, clock)
    logic.on_item(_turn(1, "我要退货", 0))
    out, discard = logic.on_item(end_event(1, minutes=2))
    assert discard is False
    assert not [o for o in out if isinstance(o, ArchivedTask)]
    assert logic.notify_at() == clock.now + timedelta(seconds=60)
    out, discard = logic.on_notify()
    assert [o.reason for o in out if isinstance(o, ArchivedTask)] == ["session_end"]
    assert discard is True


def test_end_of_input_archives_and_discards() -> None:
    logic = TaskLogic(None, DATA, CFG, Clock())
    logic.on_item(_turn(1, "我要退货", 0))
    out, discard = logic.on_eof()
    assert [o.reason for o in out if isinstance(o, ArchivedTask)] == ["timeout"]
    assert discard is True


def test_archive_on_eof_can_be_switched_off() -> None:
    logic = TaskLogic(None, DATA, TaskOperatorConfig(archive_on_eof=False), Clock())
    logic.on_item(_turn(1, "我要退货", 0))
    assert logic.on_eof() == ((), False)


def test_resume_reschedules_from_the_snapshot() -> None:
    clock = Clock()
    logic = TaskLogic(None, DATA, CFG, clock)
    logic.on_item(_turn(1, "我要退货", 0))
    snap = pickle.loads(pickle.dumps(logic.snapshot()))
    clock.now += timedelta(hours=1)
    resumed = TaskLogic(snap, DATA, CFG, clock)
    assert resumed.snapshot() == logic.snapshot()
    assert resumed.notify_at() == clock.now + timedelta(minutes=15, seconds=60)


def test_deadline_and_discard_rules() -> None:
    assert next_deadline(None, timedelta(hours=1)) is None
    idle = SessionState(session_id="s", last_event_ts=T0)
    assert next_deadline(idle, timedelta(hours=1)) == T0 + timedelta(hours=1)
    assert discardable(None, T0, timedelta(hours=1))
    assert not discardable(idle, T0, timedelta(hours=1))
    assert discardable(idle, T0 + timedelta(hours=1), timedelta(hours=1))
    assert discardable(idle, None, timedelta(hours=1))
    assert not discardable(idle.model_copy(update={"task_id": "TSK-2026-11-abcdef"}), None, timedelta(hours=1))


def test_mirror_partition_backs_off_during_an_outage_and_catches_up() -> None:
    from schemas.errors import StateMirrorError
    from sinks.redis.state_mirror import InMemoryStateMirror, _MirrorPartition

    class Flaky(InMemoryStateMirror):
        def __init__(self) -> None:
            super().__init__()
            self.down = True
            self.calls = 0

        def write(self, states: list[SessionState]) -> None:
            self.calls += 1
            if self.down:
                raise StateMirrorError("redis mirror write failed: connection refused")
            super().write(states)

    now = [0.0]
    mirror = Flaky()
    part = _MirrorPartition(mirror, monotonic=lambda: now[0])
    a1, a2 = SessionState(session_id="a", turn_count=1), SessionState(session_id="a", turn_count=2)
    part.write_batch([a1])
    part.write_batch([a2, SessionState(session_id="b")])  # within the back-off: not even tried
    assert mirror.calls == 1
    assert set(part.pending) == {"a", "b"}
    mirror.down = False
    now[0] = 1.5
    part.write_batch([])
    assert mirror.calls == 2
    assert part.pending == {}
    assert mirror.read("a") == a2
