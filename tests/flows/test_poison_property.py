"""Property: whatever times (years 1-9999, any offset), ids, duplicates and sizes a stream
carries, the whole flow (metrics windows, recall, task timers, validity, store) keeps running;
every bad record is one dead letter, every redelivery one counted duplicate, and every valid
turn is stored exactly once.

The expected fate of each record is computed here, independently of the flow: valid when its
time is within years 1900-2999 in UTC, its text is non-blank and within the size limits; then
the first valid event with an id wins, a later one with the same content is a duplicate, with
other content a `duplicate_event` dead letter.
"""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.events import ConversationEvent
from tests.flows.whole_flow import records, run_whole

# Small limits, so that records at and past them stay cheap to run through the flow.
MAX_TEXT, MAX_BYTES = 300, 1_200
LIMITS = {"max_text_chars": MAX_TEXT, "max_record_bytes": MAX_BYTES}
_WORDS = st.sampled_from(
    [
        "我的订单 DD20260101001 还没到",
        "明天下午三点",
        "next Tuesday at 9am",
        "in 9999 years",
        "9999年12月31日",
        "9999年内",
        "9999小时内",
        "公元1年1月1日",
        "上个月",
        "退款什么时候到账？",
        "the year 10000",
        "😀",
        "okay",
    ]
)
_TEXT = st.one_of(
    st.lists(_WORDS, min_size=1, max_size=6).map("，".join),
    st.integers(MAX_TEXT - 3, MAX_TEXT + 3).map(lambda n: ("订单到了吗" * (n // 5 + 1))[:n]),  # chars
    st.integers(MAX_TEXT - 3, MAX_TEXT).map(lambda n: "订" * n),  # past the byte limit once encoded
    st.just("   "),
)
_OFFSET = st.integers(-(24 * 60 - 1), 24 * 60 - 1).map(lambda m: timezone(timedelta(minutes=m)))


@st.composite
def _ts(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["recent", "recent", "any", "edge"]))
    if kind == "recent":
        moment = datetime(2026, 3, 1, tzinfo=UTC) + timedelta(seconds=draw(st.integers(0, 4 * 3600)))
        return moment.astimezone(draw(_OFFSET)).isoformat()
    if kind == "edge":
        year = draw(st.sampled_from([1, 1899, 1900, 2999, 3000, 9999]))
        local = datetime(year, draw(st.sampled_from([1, 12])), draw(st.sampled_from([1, 31])), 23, 30)
    else:
        local = draw(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59)))
    zone = draw(st.one_of(st.none(), _OFFSET))
    return local.isoformat() if zone is None else local.replace(tzinfo=zone).isoformat()


@st.composite
def _stream(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 12))):
        if out and draw(st.integers(0, 4)) == 0:  # a redelivery, or an id reused with other content
            again = dict(draw(st.sampled_from(out)))
            if draw(st.booleans()):
                again["text"] = draw(_TEXT)
            out.append(again)
            continue
        out.append(
            {
                "event_id": draw(st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h"])),
                "session_id": draw(st.sampled_from(["s1", "s2", "客服/3"])),
                "tenant_id": "acme",
                "ts": draw(_ts()),
                "speaker_role": draw(st.sampled_from(["customer", "customer", "agent"])),
                "text": draw(_TEXT),
            }
        )
    return out


def _valid(doc: dict[str, Any]) -> ConversationEvent | None:
    text = doc["text"]
    if not text.strip() or len(text) > MAX_TEXT or len(json.dumps(doc, ensure_ascii=False).encode()) > MAX_BYTES:
        return None
    moment = datetime.fromisoformat(doc["ts"])
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
    try:
        year = moment.astimezone(UTC).year
    except OverflowError:
        return None
    if not 1900 <= year <= 2999:
        return None
    return ConversationEvent.model_validate(doc)


def _expected(stream: list[dict[str, Any]]) -> tuple[dict[int, str], dict[tuple[str, str], str]]:
    """Fate of each record ("event", "dead", "duplicate") and the stored text of each event."""
    fate: dict[int, str] = {}
    first: dict[tuple[str, str], ConversationEvent] = {}
    for i, doc in enumerate(stream):
        event = _valid(doc)
        key = (doc["session_id"], doc["event_id"])
        if event is None:
            fate[i] = "dead"
        elif key not in first:
            first[key] = event
            fate[i] = "event"
        else:
            fate[i] = "duplicate" if first[key].model_dump_json() == event.model_dump_json() else "dead"
    return fate, {k: e.text for k, e in first.items()}


@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,  # the same bounded run every time (about a minute on two cores)
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(_stream())
def test_any_stream_is_processed_dead_lettered_or_counted_once(stream: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = run_whole(records(stream), Path(tmp), input=LIMITS)
    fate, texts = _expected(stream)
    got = {int(d.source.split(":")[1]): "dead" for d in out.dead}
    got |= {int(d.source.split(":")[1]): "duplicate" for d in out.duplicates}
    assert len(out.dead) + len(out.duplicates) == len(got)  # one record, one fate
    assert {i: f for i, f in fate.items() if f != "event"} == got
    assert sorted((e.session_id, e.event_id) for e in out.events) == sorted(texts)
    stored = {(p["session_id"], p["event_id"]): p["source_text"] for p in out.stored}
    assert stored == texts  # every valid turn stored, with the first text
    assert len({p["memory_id"] for p in out.stored}) == len(out.stored)
    assert max((s.turn_count for s in out.states if s.session_id == "s1"), default=0) <= sum(
        1 for k in texts if k[0] == "s1"
    )
    if texts:
        assert out.metrics  # the windows kept closing
    customers = {(d["session_id"], d["event_id"]) for d in stream if d["speaker_role"] == "customer"}
    assert {(r.session_id, r.query_event_id) for r in out.recalls} <= customers
    json.dumps([m.model_dump(mode="json") for m in out.metrics])  # every window serialisable
