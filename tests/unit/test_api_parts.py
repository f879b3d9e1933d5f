"""The API's parts: store lease, JSONL record indexes, debug markers, health panel, recall request."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.api.health import PointSpec, compute_panel, flow_panel, load_points, parse_points, window_start
from flows.api.models import RecallBody, RecallContextTurn
from flows.api.recall_request import build_request, context_from_units
from flows.api.records import DebugMarker, MetricsLog, SessionRecords, parse_markers
from flows.api.security import KeyTable, auth_required
from flows.api.store_lease import IdleReleaser, LeasedStore
from flows.settings import Settings
from schemas.errors import ConfigurationError, ResourceFileError, StoreError, StoreUnavailableError
from schemas.metrics import WindowMetrics
from schemas.session import CriticalEntity
from sinks.store.base import StoreFilter
from tests.fakes.api_world import T0, recall_result, state
from tests.fakes.memory_store import DictStore

# -- store lease -----------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_lease_opens_lazily_and_releases_when_idle() -> None:
    opened: list[DictStore] = []

    def opener() -> DictStore:
        opened.append(DictStore())
        return opened[-1]

    clock = Clock()
    lease = LeasedStore(opener, dim=4, idle_release_s=10, monotonic=clock)
    assert not lease.is_open
    assert lease.backend == "closed"
    assert lease.count() == 0
    assert lease.is_open
    assert lease.backend == "dict"
    clock.t = 5
    assert not lease.release_if_idle()
    clock.t = 16
    assert lease.release_if_idle()
    assert not lease.is_open
    assert lease.scroll(StoreFilter()) == []
    assert len(opened) == 2
    assert lease.opens == 2


def test_lease_without_idle_release_keeps_the_handle() -> None:
    lease = LeasedStore(DictStore, dim=4, idle_release_s=None)
    lease.ping()
    assert not lease.release_if_idle()
    assert lease.is_open
    lease.close()
    assert not lease.is_open


def test_lease_turns_a_locked_store_into_unavailable() -> None:
    def locked() -> DictStore:
        raise StoreError("Can't init WAL: WouldBlock")

    lease = LeasedStore(locked, dim=4, idle_release_s=1)
    with pytest.raises(StoreUnavailableError, match="replay"):
        lease.count()
    assert lease.last_error is not None
    assert "WouldBlock" in lease.last_error


def test_lease_lets_configuration_errors_through() -> None:
    class WrongDim(DictStore):
        def ensure_collection(self, dim: int) -> None:
            raise ConfigurationError("does not hold 4-dim vectors")

    with pytest.raises(ConfigurationError):
        LeasedStore(WrongDim, dim=4, idle_release_s=1).ping()
    lease = LeasedStore(DictStore, dim=4, idle_release_s=1)
    with pytest.raises(ConfigurationError, match="8"):
        lease.ensure_collection(8)


def test_lease_delegates_every_store_call() -> None:
    import numpy as np

    from sinks.store.base import StoredPoint

    lease = LeasedStore(DictStore, dim=2, idle_release_s=None)
    lease.ensure_collection(2)
    pid = "00000000-0000-4000-8000-000000000001"
    lease.upsert([StoredPoint(pid, np.array([1.0, 0.0], np.float32), {"tenant_id": "t"})])
    assert [h.id for h in lease.search(np.array([1.0, 0.0], np.float32), StoreFilter(), 3)] == [pid]
    assert [h.id for h in lease.retrieve([pid])] == [pid]
    lease.delete([pid])
    assert lease.count() == 0


def test_idle_releaser_thread_closes_the_store() -> None:
    lease = LeasedStore(DictStore, dim=2, idle_release_s=0.0)
    lease.ping()
    releaser = IdleReleaser(lease, period_s=0.01)
    releaser.start()
    try:
        for _ in range(200):
            if not lease.is_open:
                break
            import time

            time.sleep(0.01)
    finally:
        releaser.stop()
    assert not lease.is_open


# -- records ---------------------------------------------------------------------------------------


def test_records_follow_appends_skip_bad_lines_and_reload_a_replaced_file(tmp_path: Path) -> None:
    log = tmp_path / "states.jsonl"
    recalls = tmp_path / "recall.jsonl"
    log.write_text(state("t", "s", "u", 1, ("a",)).model_dump_json() + "\n", encoding="utf-8")
    rec = SessionRecords(state_log=log, archived_log=tmp_path / "none.jsonl", recall_logs=[recalls], interval_s=0)
    assert [s.turn_count for s in rec.states("t", "s")] == [1]
    with log.open("a", encoding="utf-8") as fh:
        fh.write("{not json}\n")
        fh.write(state("t", "s", "u", 2, ("a", "b")).model_dump_json() + "\n")
        fh.write(state("t", "s", "u", 3, ("a", "b")).model_dump_json())  # no newline yet: still being written
    assert [s.turn_count for s in rec.states("t", "s")] == [1, 2]
    assert rec.bad_lines == 1
    with log.open("a", encoding="utf-8") as fh:
        fh.write("\n")
    assert [s.turn_count for s in rec.states("t", "s")] == [1, 2, 3]
    replacement = tmp_path / "new.jsonl"
    replacement.write_text(state("t", "s", "u", 9, ()).model_dump_json() + "\n", encoding="utf-8")
    os.replace(replacement, log)
    assert [s.turn_count for s in rec.states("t", "s")] == [9]
    assert rec.bad_lines == 0
    assert rec.states("other", "s") == []


def test_records_index_recalls_by_tenant_and_marker(tmp_path: Path) -> None:
    path = tmp_path / "recall.jsonl"
    mid = "3f2a9c1e-0000-5000-8000-000000000000"
    a = recall_result("t1", "s", "q1", mid, 0.871)
    b = recall_result("t2", "s", "q2", mid, 0.871)
    path.write_text(
        a.model_dump_json() + "\n" + b.model_dump_json() + "\n" + a.model_dump_json() + "\n", encoding="utf-8"
    )
    rec = SessionRecords(state_log=None, archived_log=None, recall_logs=[path], interval_s=0)
    assert [r.query_event_id for r in rec.recalls("t1", "s")] == ["q1"]  # written twice, indexed once
    assert rec.sessions("t2") == set()  # a recall alone does not make a session
    assert [r.query_event_id for r in rec.find_marker("t1", DebugMarker("CUE-3f2a9c1e", 0.871))] == ["q1"]
    assert rec.find_marker("t1", DebugMarker("CUE-3f2a9c1e", 0.5)) == []
    assert [r.query_event_id for r in rec.find_marker("t1", DebugMarker("CUE-3f2a9c1e", None))] == ["q1"]
    assert rec.memory_for_cue("t2", "CUE-3f2a9c1e") == mid
    assert rec.memory_for_cue("t3", "CUE-3f2a9c1e") is None
    added = recall_result("t1", "s2", "q3", mid, 0.5)
    rec.add_recall(added)
    assert rec.recall("t1", "q3") == added
    assert rec.recall("t2", "q3") is None


def test_metrics_log_keeps_the_last_version_of_each_window(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    ws = [
        WindowMetrics(window_start=T0, window_end=T0 + timedelta(minutes=1), counters={"memory_units": 1}, gauges={}),
        WindowMetrics(window_start=T0, window_end=T0 + timedelta(minutes=1), counters={"memory_units": 5}, gauges={}),
        WindowMetrics(
            window_start=T0 + timedelta(minutes=1),
            window_end=T0 + timedelta(minutes=2),
            counters={"memory_units": 2},
            gauges={"intent_chain_stability": 0.5},
        ),
    ]
    path.write_text("".join(w.model_dump_json() + "\n" for w in ws), encoding="utf-8")
    log = MetricsLog(path, interval_s=0)
    assert log.present()
    assert [w.counters["memory_units"] for w in log.last(5)] == [5, 2]
    panel = flow_panel(load_points().get(), log.last(5), detail="test")
    points = {p.key: p for p in panel.points}
    assert panel.source == "flow_metrics"
    assert panel.window_s == 60
    assert points["memory_units"].values == [5.0, 2.0]
    assert points["intent_chain_stability"].status == "alert"  # 0.5 < 0.85
    assert points["state_machine_miss_rate"].status == "no_data"
    assert not MetricsLog(None).present()
    assert MetricsLog(None).last(3) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[DEBUG:cue=CUE-7891,css=0.87]", [DebugMarker("CUE-7891", 0.87)]),
        ("reply text [DEBUG: cue = CUE-ab12 , css = .5 ]", [DebugMarker("CUE-ab12", 0.5)]),
        ("DEBUG:cue=CUE-1", [DebugMarker("CUE-1", None)]),
        ("nothing", []),
    ],
)
def test_parse_markers(text: str, expected: list[DebugMarker]) -> None:
    assert parse_markers(text) == expected


@given(st.text(max_size=300))
@settings(max_examples=200, deadline=None)
def test_parse_markers_never_fails(text: str) -> None:
    for m in parse_markers(text):
        assert 1 <= len(m.cue_id) <= 64


# -- health ---------------------------------------------------------------------------------------


def test_points_table_rejects_unknown_rules(tmp_path: Path) -> None:
    bad = tmp_path / "points.yaml"
    bad.write_text("points:\n  - {key: k, decision_point: d, label: l, alert: {sideways: 1}}\n", encoding="utf-8")
    with pytest.raises(ResourceFileError):
        load_points(bad)
    assert parse_points({"points": [{"key": "k", "decision_point": "d", "label": "l"}]})[0].rule is None


def _unit(ts: datetime, **kw: Any) -> dict[str, Any]:
    return {
        "ts": ts.isoformat(),
        "entropy": 0.5,
        "confidence_score": 0.9,
        "validity": {"validity_type": "permanent"},
        **kw,
    }


def test_computed_panel_counts_per_window() -> None:
    points = load_points().get()
    units = [
        _unit(T0, coref=[{"needs_human_review": True}], priority_flag=True),
        _unit(T0 + timedelta(seconds=10), coref=[{"needs_human_review": False}], confidence_score=0.2),
        _unit(T0 + timedelta(minutes=5), validity={"validity_type": "transient"}, merged_from=["x"]),
        {"ts": "garbage"},
    ]
    states = [
        state("t", "s", "u", i, ("a",) if i < 4 else ("a", "b"), "clarify" if i == 2 else "continue")
        for i in (1, 2, 3, 4)
    ]
    recalls = [recall_result("t", "s", "q", "3f2a9c1e-0000-5000-8000-000000000000", 0.5)]
    panel = compute_panel(points, units=units, states=states, recalls=recalls, window_s=60, n=10, detail="d")
    v = {p.key: p.values for p in panel.points}
    starts = [w.start for w in panel.windows]
    assert starts[0] == T0
    assert len(starts) == len(set(starts))
    assert starts == sorted(starts)
    first = starts.index(T0)
    assert v["memory_units"][first] == 2
    assert v["coref_needs_review_rate"][first] == 0.5
    assert v["priority_flag_rate"][first] == 0.5
    assert v["low_confidence_rate"][first] == 0.5
    later = starts.index(T0 + timedelta(minutes=5))
    assert v["transient_rate"][later] == 1.0
    assert v["merged_rate"][later] == 1.0
    # 3-turn runs: (1,2,3) stable, (2,3,4) not
    stab = [x for x in v["intent_chain_stability"] if x is not None]
    assert sorted(stab) == [0.0, 1.0]
    assert 1.0 in [x for x in v["clarification_rate"] if x is not None]
    assert panel.source == "computed"


@given(
    st.lists(
        st.tuples(
            st.integers(0, 3600),
            st.floats(0, 1),
            st.booleans(),
            st.sampled_from(["permanent", "periodic", "transient"]),
        ),
        max_size=40,
    ),
    st.integers(1, 600),
    st.integers(1, 20),
)
@settings(max_examples=60, deadline=None)
def test_computed_rates_are_rates(rows: list[tuple[int, float, bool, str]], window_s: int, n: int) -> None:
    units = [
        _unit(T0 + timedelta(seconds=s), confidence_score=c, priority_flag=p, validity={"validity_type": v})
        for s, c, p, v in rows
    ]
    panel = compute_panel(load_points().get(), units=units, states=[], recalls=[], window_s=window_s, n=n, detail="")
    assert len(panel.windows) <= n
    assert all(w.end - w.start == timedelta(seconds=window_s) for w in panel.windows)
    total = 0.0
    for p in panel.points:
        assert len(p.values) == len(panel.windows)
        for val in p.values:
            if val is not None and p.key.endswith("_rate"):
                assert 0.0 <= val <= 1.0
        if p.key == "memory_units":
            total = sum(x or 0 for x in p.values)
    if len({window_start(T0 + timedelta(seconds=s), window_s) for s, *_ in rows}) <= n:
        assert total == len(rows)


def test_point_spec_rules() -> None:
    assert PointSpec("k", "d", "l", above=0.1).alerting(0.2)
    assert not PointSpec("k", "d", "l", below=0.1).alerting(0.2)
    assert PointSpec("k", "d", "l", below=0.1).rule == "< 0.1"


# -- recall request ---------------------------------------------------------------------------------


def _stored(event: str, minute: int, text: str, role: str = "customer") -> dict[str, Any]:
    return {
        "event_id": event,
        "ts": (T0 + timedelta(minutes=minute)).isoformat(),
        "source_text": text,
        "speaker_role": role,
    }


def test_context_is_the_last_three_turns_before_the_question() -> None:
    units = [_stored(f"e{i}", i, f"turn {i}") for i in range(6)] + [_stored("e2", 2, "second unit of e2")]
    ctx = context_from_units(units, T0 + timedelta(minutes=4, seconds=30))
    assert [t.event_id for t in ctx] == ["e2", "e3", "e4"]
    assert ctx[0].text == "turn 2"
    assert context_from_units(units, T0, 3) == ()
    assert context_from_units(units, T0 + timedelta(hours=1), 0) == ()


def test_build_request_takes_task_and_entities_from_the_state() -> None:
    st_ = state("t", "s", "u-li", 3, ("track", "refund")).model_copy(
        update={
            "critical_entities": (
                CriticalEntity(kind="order_id", value="DD1", turn_id="t1"),
                CriticalEntity(kind="person", value="小王", turn_id="t1"),
                CriticalEntity(kind="order_id", value="这个订单", turn_id="t2", strength="weak"),
            )
        }
    )
    now = datetime(2026, 12, 1, tzinfo=UTC)
    req = build_request(RecallBody(session_id="s", text="到了吗"), tenant_id="t", now=now, units=[], state=st_)
    assert req.ts == now
    assert req.user_id == "u-li"
    assert req.entities == ("DD1",)
    assert req.known_people == ("小王",)
    assert req.task_id == st_.task_id
    assert req.intent_chain == ("track", "refund")
    assert req.query_event_id.startswith("api-")
    again = build_request(RecallBody(session_id="s", text="到了吗"), tenant_id="t", now=now, units=[], state=st_)
    assert again.query_event_id == req.query_event_id
    own = build_request(
        RecallBody(
            session_id="s",
            text="q",
            user_id="u2",
            event_id="e9",
            context=[RecallContextTurn(text="earlier", speaker="Ann")],
        ),
        tenant_id="t",
        now=now,
        units=[_stored("e1", 0, "stored")],
        state=None,
    )
    assert own.user_id == "u2"
    assert own.query_event_id == "e9"
    assert [t.text for t in own.context] == ["earlier"]
    assert own.known_people == ("Ann",)
    assert own.task_id is None


# -- security ---------------------------------------------------------------------------------------


def test_auth_modes() -> None:
    assert not auth_required(Settings(serve={}))
    assert auth_required(Settings(serve={"api_keys": {"t": "k"}}))
    assert auth_required(Settings(serve={"auth": "auto", "api_keys": {"t": "k"}}, store={"backend": "qdrant_server"}))
    assert not auth_required(Settings(serve={"auth": "off", "api_keys": {"t": "k"}}))
    with pytest.raises(ConfigurationError):
        auth_required(Settings(serve={"auth": "required"}))
    with pytest.raises(ConfigurationError):
        KeyTable(Settings(serve={}).serve, required=True)
    with pytest.raises(ConfigurationError, match="empty"):
        KeyTable(Settings(serve={"api_keys": {"t": ""}}).serve, required=True)
    table = KeyTable(Settings(serve={"api_keys": {"a": "ka", "b": "kb"}}).serve, required=True)
    assert table.caller("kb", None).tenant_id == "b"
    assert table.caller("ka", "a").authenticated
    open_table = KeyTable(Settings(serve={"default_tenant": "d"}).serve, required=False)
    assert open_table.caller(None, "  ").tenant_id == "d"
    assert open_table.caller("ignored", "x").tenant_id == "x"
