"""The health of each decision point over the last windows, for the inspector's panel.

Input: either the flow's own `WindowMetrics` (the flow's metrics sink writes them to a JSONL
file; preferred when present) or the tenant's stored records: memory unit payloads, task states,
recall results. Output: `HealthPanel`, one row per decision point listed in
`resources/health_points.yaml` (labels and alert rules are data, hot-reloaded), one value per
event-time window. State: none (the caller passes the records).

When computed here the numbers are simple counts and rates over the records, in tumbling
event-time windows of `window_s`, showing the last `n` windows that hold any record. Metrics
that need what only the flow sees (Redis misses, whether a response used the top cue) are
shown as "no data" with the reason in `source_detail`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from flows.api.models import HealthPanel, HealthPoint, HealthWindow
from schemas.events import checked_event_time
from schemas.metrics import WindowMetrics
from schemas.recall import RecallResult
from schemas.session import SessionState
from state.core.datafiles import data_loader
from state.core.hotfile import HotFile

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_VERIFY_FAILED = frozenset({"verify_failed_downweighted", "verify_failed_dropped"})
_VERIFIED = frozenset({"verified"})


@dataclass(frozen=True, slots=True)
class PointSpec:
    key: str
    decision_point: str
    label: str
    above: float | None = None
    below: float | None = None

    @property
    def rule(self) -> str | None:
        if self.above is not None:
            return f"> {self.above:g}"
        if self.below is not None:
            return f"< {self.below:g}"
        return None

    def alerting(self, value: float) -> bool:
        return (self.above is not None and value > self.above) or (self.below is not None and value < self.below)


def parse_points(raw: Any) -> list[PointSpec]:
    """The points table; a malformed table raises KeyError/TypeError/ValueError (ResourceFileError)."""
    out = []
    for item in raw["points"]:
        alert = item.get("alert") or {}
        unknown = set(alert) - {"above", "below"}
        if unknown:
            raise ValueError(f"unknown alert rule {sorted(unknown)} for {item['key']}")
        out.append(
            PointSpec(
                key=str(item["key"]),
                decision_point=str(item["decision_point"]),
                label=str(item["label"]),
                above=float(alert["above"]) if "above" in alert else None,
                below=float(alert["below"]) if "below" in alert else None,
            )
        )
    return out


def packaged_points() -> Path:
    return Path(str(files("flows.api") / "resources" / "health_points.yaml"))


def load_points(path: Path | None = None, *, interval_s: float = 5.0) -> HotFile[list[PointSpec]]:
    return HotFile(path or packaged_points(), data_loader(parse_points), check_every_s=interval_s)


def window_start(ts: datetime, window_s: int) -> datetime:
    """The start of the tumbling window holding `ts`.

    >>> window_start(datetime(2026, 1, 1, 8, 0, 59, tzinfo=UTC), 60).isoformat()
    '2026-01-01T08:00:00+00:00'
    """
    secs = int((ts - _EPOCH).total_seconds()) // window_s * window_s
    return _EPOCH + timedelta(seconds=secs)


def _rate(hits: int, total: int) -> float | None:
    return hits / total if total else None


def _ts(value: Any) -> datetime | None:
    """A stored time, or None when it is unreadable or outside the event-time range (its
    window bounds would overflow)."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    try:
        return checked_event_time(value)
    except ValueError:
        return None


def _unit_metrics(units: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    n = len(units)
    with_coref = [u for u in units if u.get("coref")]
    review = sum(any(a.get("needs_human_review") for a in u["coref"]) for u in with_coref)
    entropies = [float(u.get("entropy", 0.0)) for u in units]
    return {
        "memory_units": float(n),
        "coref_needs_review_rate": _rate(review, len(with_coref)),
        "priority_flag_rate": _rate(sum(bool(u.get("priority_flag")) for u in units), n),
        "low_confidence_rate": _rate(sum(float(u.get("confidence_score", 1.0)) < 0.5 for u in units), n),
        "entropy.mean": sum(entropies) / n if n else None,
        "merged_rate": _rate(sum(bool(u.get("merged_from")) for u in units), n),
        "transient_rate": _rate(sum((u.get("validity") or {}).get("validity_type") == "transient" for u in units), n),
    }


def _state_metrics(
    runs: Sequence[tuple[SessionState, ...]], anchored: Sequence[SessionState]
) -> dict[str, float | None]:
    stable = sum(len({len(s.intent_chain) for s in run}) == 1 for run in runs)
    decisions = [s.anchor.decision for s in anchored if s.anchor is not None]
    return {
        "intent_chain_stability": _rate(stable, len(runs)),
        "clarification_rate": _rate(decisions.count("clarify"), len(decisions)),
        "goal_drift_rate": _rate(decisions.count("drift"), len(decisions)),
    }


def _recall_metrics(recalls: Sequence[RecallResult]) -> dict[str, float | None]:
    decisions = [d.decision for r in recalls for d in r.validity_decisions]
    failed = sum(d in _VERIFY_FAILED for d in decisions)
    checked = failed + sum(d in _VERIFIED for d in decisions)
    return {
        "recalls": float(len(recalls)),
        "recall_empty_rate": _rate(sum(not r.cues for r in recalls), len(recalls)),
        "temporal_verification_fail_rate": _rate(failed, checked),
    }


def _state_runs(states: Iterable[SessionState]) -> list[tuple[datetime, tuple[SessionState, ...]]]:
    """Runs of 3 consecutive turn states of one session, keyed by the time of the last one."""
    by_session: dict[tuple[str, str], list[SessionState]] = defaultdict(list)
    for s in states:
        if s.last_event_ts is not None and s.turn_count > 0:
            by_session[(s.tenant_id, s.session_id)].append(s)
    out: list[tuple[datetime, tuple[SessionState, ...]]] = []
    for seq in by_session.values():
        seq.sort(key=lambda s: (s.last_event_ts or _EPOCH, s.turn_count))
        for i in range(2, len(seq)):
            run = (seq[i - 2], seq[i - 1], seq[i])
            if run[0].task_id == run[2].task_id:
                out.append((seq[i].last_event_ts or _EPOCH, run))
    return out


def compute_panel(
    points: Sequence[PointSpec],
    *,
    units: Sequence[Mapping[str, Any]],
    states: Sequence[SessionState],
    recalls: Sequence[RecallResult],
    window_s: int,
    n: int,
    detail: str,
) -> HealthPanel:
    """Counts and rates from stored records, per event-time window (the last `n` with data)."""
    buckets_u: dict[datetime, list[Mapping[str, Any]]] = defaultdict(list)
    for u in units:
        ts = _ts(u.get("ts"))
        if ts is not None:
            buckets_u[window_start(ts, window_s)].append(u)
    buckets_runs: dict[datetime, list[tuple[SessionState, ...]]] = defaultdict(list)
    for ts, run in _state_runs(states):
        buckets_runs[window_start(ts, window_s)].append(run)
    buckets_s: dict[datetime, list[SessionState]] = defaultdict(list)
    for s in states:
        if s.last_event_ts is not None and s.anchor is not None:
            buckets_s[window_start(s.last_event_ts, window_s)].append(s)
    buckets_r: dict[datetime, list[RecallResult]] = defaultdict(list)
    for r in recalls:
        buckets_r[window_start(r.ts, window_s)].append(r)
    starts = sorted({*buckets_u, *buckets_runs, *buckets_s, *buckets_r})[-n:]
    per_window: list[dict[str, float | None]] = []
    for start in starts:
        values = _unit_metrics(buckets_u.get(start, []))
        values |= _state_metrics(buckets_runs.get(start, []), buckets_s.get(start, []))
        values |= _recall_metrics(buckets_r.get(start, []))
        per_window.append(values)
    windows = [HealthWindow(start=s, end=s + timedelta(seconds=window_s)) for s in starts]
    return HealthPanel(
        source="computed",
        source_detail=detail,
        window_s=window_s,
        windows=windows,
        points=[_point(p, [w.get(p.key) for w in per_window]) for p in points],
    )


def flow_panel(points: Sequence[PointSpec], windows: Sequence[WindowMetrics], *, detail: str) -> HealthPanel:
    """The flow's own window metrics: counters and gauges by name; the points table picks the rows."""
    per_window: list[dict[str, float]] = [{**{k: float(v) for k, v in w.counters.items()}, **w.gauges} for w in windows]
    span = int((windows[-1].window_end - windows[-1].window_start).total_seconds()) if windows else None
    return HealthPanel(
        source="flow_metrics",
        source_detail=detail,
        window_s=span,
        windows=[HealthWindow(start=w.window_start, end=w.window_end) for w in windows],
        points=[_point(p, [w.get(p.key) for w in per_window]) for p in points],
    )


def _point(spec: PointSpec, values: list[float | None]) -> HealthPoint:
    cleaned = [None if v is None else round(float(v), 4) for v in values]
    latest = next((v for v in reversed(cleaned) if v is not None), None)
    status: Literal["ok", "alert", "no_data"] = (
        "no_data" if latest is None else ("alert" if spec.alerting(latest) else "ok")
    )
    return HealthPoint(
        key=spec.key,
        decision_point=spec.decision_point,
        label=spec.label,
        rule=spec.rule,
        values=cleaned,
        latest=latest,
        status=status,
    )
