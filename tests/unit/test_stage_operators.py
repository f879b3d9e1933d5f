"""The stateful logic of the tagging and entropy operators: timers, session close, snapshots."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime, timedelta

from bytewax.operators import StatefulLogic

from operators.entropy import EntropyOpConfig, _EntropyLogic
from operators.tagging import TaggingConfig, _TagLogic
from schemas.events import ConversationEvent
from state.core.closing import SessionClosed, closed_of
from state.core.embedding import Embedder
from state.normalise.turn import NormaliseConfig, Turn, normalise_turn
from state.tagging.lexicon import load_lexicon
from state.tagging.tagger import TagState
from state.units.entropy import EntropyConfig, load_entropy_table

NOW = datetime(2026, 1, 1, 9, tzinfo=UTC)
LEX = load_lexicon()
TABLE = load_entropy_table()
LOOKAHEAD = EntropyConfig(lookahead=timedelta(seconds=10))  # a turn waits for its session's next one


def _turn(text: str, event_id: str = "e") -> Turn:
    ev = ConversationEvent(event_id=event_id, session_id="s", ts=NOW, text=text)
    return normalise_turn(ev, NormaliseConfig())


def test_tag_logic_forwards_closings_and_expires() -> None:
    logic = _TagLogic(None, TaggingConfig(idle_ttl=timedelta(minutes=5)), lambda: LEX, None, lambda: NOW)
    assert logic.notify_at() is None
    out, discard = logic.on_item(_turn("Could you help me?"))
    assert discard is StatefulLogic.RETAIN
    [tagged] = out
    assert isinstance(tagged, Turn)
    assert tagged.turn_intent_label == "request"
    assert logic.notify_at() == NOW + timedelta(minutes=5)
    state = pickle.loads(pickle.dumps(logic.snapshot()))
    assert state == TagState(prev_intent="request", prev_speaker="customer")
    resumed = _TagLogic(state, TaggingConfig(), lambda: LEX, None, lambda: NOW)
    assert resumed.notify_at() is not None
    closing = SessionClosed("s", NOW)
    assert logic.on_item(closing) == ((closing,), StatefulLogic.DISCARD)
    assert logic.on_notify() == ((), StatefulLogic.DISCARD)


def test_entropy_logic_holds_then_releases_on_timer_then_expires(static_embedder: Embedder) -> None:
    clock = [NOW]
    config = EntropyOpConfig(LOOKAHEAD, hold_timeout=timedelta(seconds=12), idle_ttl=timedelta(minutes=30))
    logic = _EntropyLogic(None, config, lambda: TABLE, static_embedder, lambda: clock[0])
    out, keep = logic.on_item(_turn("订单号是12345"))
    assert list(out) == []
    assert keep is StatefulLogic.RETAIN
    assert logic.notify_at() == NOW + timedelta(seconds=12)  # held: never forever
    snapshot = pickle.loads(pickle.dumps(logic.snapshot()))
    assert snapshot.held is not None
    clock[0] = NOW + timedelta(seconds=13)
    released, keep = logic.on_notify()
    assert [t.event.event_id for t in released] == ["e"]
    assert released[0].unit_cut
    assert keep is StatefulLogic.RETAIN
    assert logic.notify_at() == clock[0] + timedelta(minutes=30)
    assert logic.on_notify() == ((), StatefulLogic.DISCARD)
    resumed = _EntropyLogic(snapshot, config, lambda: TABLE, static_embedder, lambda: clock[0])
    assert resumed.notify_at() == clock[0] + timedelta(seconds=12)
    out, _ = resumed.on_eof()
    assert [t.event.event_id for t in out] == ["e"]


def test_entropy_logic_releases_on_session_close(static_embedder: Embedder) -> None:
    logic = _EntropyLogic(None, EntropyOpConfig(LOOKAHEAD), lambda: TABLE, static_embedder, lambda: NOW)
    logic.on_item(_turn("订单号是12345"))
    out, discard = logic.on_item(SessionClosed("s", NOW))
    assert [t.event.event_id for t in out] == ["e"]
    assert discard is StatefulLogic.DISCARD


def test_entropy_logic_releases_a_turn_at_once_without_lookahead(static_embedder: Embedder) -> None:
    logic = _EntropyLogic(None, EntropyOpConfig(), lambda: TABLE, static_embedder, lambda: NOW)
    out, keep = logic.on_item(_turn("订单号是12345"))
    assert [t.event.event_id for t in out] == ["e"]
    assert keep is StatefulLogic.RETAIN
    assert logic.notify_at() == NOW + EntropyOpConfig().idle_ttl  # nothing held: only the idle timer
    assert logic.on_eof()[0] == []


def test_entropy_logic_segments_untagged_turns(static_embedder: Embedder) -> None:
    logic = _EntropyLogic(None, EntropyOpConfig(), lambda: TABLE, static_embedder, lambda: NOW)
    out, _ = logic.on_item(_turn("好的收到，关于接口文档麻烦补充下错误码说明，另外测试账号权限我们已开通，谢谢"))
    assert len(out[0].segments) == 4
    assert len(out[0].segment_entropy) == 4


def test_only_session_ends_close() -> None:
    from schemas.events import SessionEnd

    end = SessionEnd(event_id="x", session_id="s", ts=NOW)
    assert closed_of(end) == SessionClosed("s", NOW)
    assert closed_of(ConversationEvent(event_id="y", session_id="s", ts=NOW, text="hi")) is None
