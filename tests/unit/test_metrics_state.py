"""Windowed-metrics logic without Bytewax: catalog, fold/merge/finalize, alerts, late revisions, stamping."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemas.errors import ConfigurationError
from state.core.hotfile import HotFile
from state.metrics.windows import (
    LATE_WINDOWS_KEPT,
    PACKAGED_CATALOG,
    Decision,
    MetricCatalog,
    Stamper,
    WindowAcc,
    close_window,
    finalize,
    flush_pending,
    fold_decision,
    fold_late,
    load_catalog,
    merge_acc,
    parse_catalog,
    quantile,
    stamp,
)

T0 = datetime(2026, 1, 1, 8, tzinfo=UTC)
MINUTE = timedelta(seconds=60)
CATALOG = load_catalog(PACKAGED_CATALOG)


def _acc(*decisions: Decision) -> WindowAcc:
    acc = WindowAcc()
    for d in decisions:
        fold_decision(acc, d)
    return acc


def test_packaged_catalog_has_every_spec_decision_point_with_spec_thresholds() -> None:
    assert CATALOG.spec_for("state_machine_miss_rate").alert_above == 0.05
    assert CATALOG.spec_for("cue_activation_precision").alert_below == 0.70
    assert CATALOG.spec_for("temporal_verification_fail_rate").alert_above == 0.15
    assert CATALOG.spec_for("intent_chain_stability").alert_below == 0.85
    for name in ("goal_drift_rate", "clarification_rate", "coref_needs_review_rate"):
        assert CATALOG.spec_for(name).kind == "rate"
    assert CATALOG.spec_for("entropy").kind == "distribution"
    assert CATALOG.spec_for("deadletters").kind == "count"
    assert CATALOG.spec_for("latency_ms.normalise").kind == "distribution"
    assert CATALOG.spec_for("latency_ms.total").alert_above == 50


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([], "expected a mapping"),
        ({"metrics": {"x": "rate"}}, "must be a mapping"),
        ({"metrics": {"x": {"kind": "median"}}}, "has kind"),
        ({"metrics": {"x": {"kind": "rate", "alert_above": "high"}}}, "metric 'x'"),
        ({"metrics": {"x": {"kind": "distribution", "bins": [0.5, 0.1]}}}, "bins must be ascending"),
        ({"defaults": [], "metrics": {}}, "'defaults' must be a mapping"),
    ],
)
def test_invalid_catalogs_fail_at_start(raw: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        parse_catalog(raw)


def test_unreadable_catalog_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read metric catalog"):
        load_catalog(tmp_path / "missing.yaml")


def test_catalog_hot_reload_keeps_last_good_on_a_broken_edit(tmp_path: Path) -> None:
    path = tmp_path / "metrics.yaml"
    path.write_text("metrics:\n  x_rate: {kind: rate, alert_above: 0.1}\n")
    reload = HotFile(path, load_catalog, check_every_s=0)
    assert reload().spec_for("x_rate").alert_above == 0.1
    path.write_text("metrics:\n  x_rate: {kind: rate, alert_above: 0.3}\n")
    import os

    os.utime(path, ns=(1, 1))
    assert reload().spec_for("x_rate").alert_above == 0.3
    path.write_text("metrics: [broken")
    os.utime(path, ns=(2, 2))
    assert reload().spec_for("x_rate").alert_above == 0.3


def test_finalize_summarises_each_kind_and_raises_alerts() -> None:
    acc = _acc(
        *(Decision(T0, "events") for _ in range(120)),
        *(Decision(T0, "state_machine_miss_rate", v) for v in (1, 0, 0, 0, 0, 0, 0, 0, 0, 1)),
        *(Decision(T0, "entropy", v) for v in (0.05, 0.15, 0.95, 1.0)),
        Decision(T0, "deadletters"),
    )
    record = finalize(acc, int(T0.timestamp()) // 60, MINUTE, CATALOG)  # the window of 2026-01-01 08:00
    assert record.window_start == T0
    assert record.counters["events"] == 120
    assert record.gauges["events_per_s"] == 2.0
    assert record.gauges["state_machine_miss_rate"] == pytest.approx(0.2)
    assert record.counters["state_machine_miss_rate.n"] == 10
    assert record.gauges["entropy.max"] == 1.0
    assert record.counters["entropy.bin.0-0.1"] == 1
    assert record.counters["entropy.bin.0.9-1"] == 2  # the last bin is closed on the right
    assert record.alerts == ("deadletters=1 > 0 (n=1)", "state_machine_miss_rate=0.2 > 0.05 (n=10)")


def test_alerts_wait_for_min_samples() -> None:
    acc = _acc(*(Decision(T0, "state_machine_miss_rate", 1.0) for _ in range(4)))
    assert finalize(acc, 0, MINUTE, CATALOG).alerts == ()


def test_unknown_names_are_summarised_by_convention() -> None:
    acc = _acc(Decision(T0, "handoff_rate", 1.0), Decision(T0, "queue_depth", 7.0))
    record = finalize(acc, 0, MINUTE, MetricCatalog({}))
    assert record.gauges["handoff_rate"] == 1.0
    assert record.gauges["queue_depth.p50"] == 7.0


values = st.lists(st.floats(min_value=0, max_value=1, allow_nan=False), min_size=1, max_size=60)


@given(values, values)
def test_merging_two_accumulators_equals_folding_everything(a: list[float], b: list[float]) -> None:
    merged = merge_acc(_acc(*(Decision(T0, "x_rate", v) for v in a)), _acc(*(Decision(T0, "x_rate", v) for v in b)))
    whole = _acc(*(Decision(T0, "x_rate", v) for v in a + b))
    left, right = finalize(merged, 0, MINUTE, CATALOG), finalize(whole, 0, MINUTE, CATALOG)
    assert left.counters == right.counters
    assert left.gauges["x_rate"] == pytest.approx(right.gauges["x_rate"])
    assert 0.0 <= left.gauges["x_rate"] <= 1.0


@given(st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1, max_size=100))
def test_quantiles_are_order_statistics(xs: list[float]) -> None:
    assert min(xs) <= quantile(xs, 0.5) <= quantile(xs, 0.95) <= max(xs)
    assert quantile(xs, 0.5) in xs


def test_late_items_revise_their_window_and_are_counted() -> None:
    state, first = close_window(None, 7, _acc(Decision(T0, "events")), MINUTE, CATALOG)
    assert first.revision == 0
    assert "late_events" not in first.counters
    state, (second,) = fold_late(
        state, [(7, Decision(T0, "events")), (7, Decision(T0, "entropy", 0.3))], MINUTE, CATALOG
    )
    assert (second.revision, second.counters["events"], second.counters["late_events"]) == (1, 2, 1)
    state, (third,) = fold_late(state, [(7, Decision(T0, "memory_units"))], MINUTE, CATALOG)
    assert (third.revision, third.counters["late_decisions"], third.counters["memory_units"]) == (2, 3, 1)
    state, (orphan,) = fold_late(state, [(3, Decision(T0, "events"))], MINUTE, CATALOG)
    assert (orphan.revision, orphan.counters["events"], orphan.counters["late_events"]) == (1, 1, 1)


def test_kept_windows_are_bounded() -> None:
    state = None
    for wid in range(LATE_WINDOWS_KEPT + 10):
        state, _ = close_window(state, wid, WindowAcc(), MINUTE, CATALOG)
    assert state is not None
    assert len(state) == LATE_WINDOWS_KEPT
    assert min(state) == 10


def test_undated_decisions_take_the_streams_own_event_time() -> None:
    s = Stamper()
    assert stamp(s, Decision(None, "deadletters")) == []
    out = stamp(s, Decision(T0, "events"))
    assert [(d.name, d.ts) for d in out] == [("events", T0), ("deadletters", T0)]
    later = T0 + MINUTE
    stamp(s, Decision(later, "events"))
    stamp(s, Decision(T0, "events"))  # an older event does not move the stamp back
    assert stamp(s, Decision(None, "deadletters")) == [Decision(later, "deadletters")]


def test_undated_decisions_with_no_event_at_all_get_the_fallback() -> None:
    s = Stamper()
    stamp(s, Decision(None, "deadletters"))
    assert flush_pending(s, T0) == [Decision(T0, "deadletters")]
    assert flush_pending(s, T0) == []
