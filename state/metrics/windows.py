"""Windowed metrics over decision records (docs/design.md#metrics), as pure functions.

Input: `Decision` records — one observation at one decision point, stamped with the event
time of the turn it belongs to (`value` 1/0 for a rate, an amount for a count, a measure
for a distribution). Output: one `WindowMetrics` per closed event-time window, with the
alerts of the metric catalog (`resources/metrics.yaml`, hot-reloaded).
State: a `WindowAcc` per open window (held by Bytewax's window operator, discarded when the
window closes); `Revisions` (the last closed windows, so late items are folded in, bounded).

Any stage plugs its own decision points in by emitting `Decision` records (or by
registering an extractor in `state/metrics/decisions.py`); unknown names are summarised by their
name's convention (see the catalog), so nothing has to be declared first.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import yaml

from schemas.errors import ConfigurationError
from schemas.events import EVENT_YEAR_MAX, EVENT_YEAR_MIN
from schemas.metrics import WindowMetrics

MetricKind = Literal["rate", "count", "distribution"]
# Windows are aligned to the Unix epoch, so every process and every run cuts the same windows.
ALIGN_TO = datetime(1970, 1, 1, tzinfo=UTC)
# Values kept per metric per window for quantiles; past this, only n/sum/min/max grow.
SAMPLE_CAP = 4096
LATE_WINDOWS_KEPT = 1024
PACKAGED_CATALOG = Path(__file__).parent / "resources" / "metrics.yaml"
_KINDS: frozenset[str] = frozenset({"rate", "count", "distribution"})


@dataclass(frozen=True, slots=True)
class Decision:
    """One observation at one decision point.

    `ts` is the event time of the turn (None when the record carries none, e.g. a dead
    letter of unparseable bytes: it is then stamped with the latest event time seen).
    """

    ts: datetime | None
    name: str
    value: float = 1.0


@dataclass(frozen=True, slots=True)
class MetricSpec:
    name: str
    kind: MetricKind
    alert_above: float | None = None
    alert_below: float | None = None
    min_samples: int = 1
    bins: tuple[float, ...] = ()
    description: str = ""


@dataclass(frozen=True)
class MetricCatalog:
    """Metric specs by exact name, plus `prefix.*` patterns; see `spec_for`."""

    specs: Mapping[str, MetricSpec]
    default_min_samples: int = 5

    def spec_for(self, name: str) -> MetricSpec:
        """The spec of a decision name: exact, else the longest `prefix.*`, else by convention.

        >>> MetricCatalog({}).spec_for("goal_drift_rate").kind
        'rate'
        >>> MetricCatalog({}).spec_for("latency_ms.embed").kind
        'distribution'
        """
        spec = self.specs.get(name)
        if spec is not None:
            return spec
        prefixes = [k for k in self.specs if k.endswith(".*") and name.startswith(k[:-1])]
        if prefixes:
            base = self.specs[max(prefixes, key=len)]
            return MetricSpec(name, base.kind, base.alert_above, base.alert_below, base.min_samples, base.bins)
        kind: MetricKind = "rate" if name.endswith(("_rate", "_precision", "_stability")) else "distribution"
        return MetricSpec(name, kind, min_samples=self.default_min_samples)


def parse_catalog(raw: Any, source: str = "<catalog>") -> MetricCatalog:
    """Validate a decoded YAML catalog; ConfigurationError says what is wrong and where."""
    if not isinstance(raw, dict) or not isinstance(raw.get("metrics"), dict):
        raise ConfigurationError(f"{source}: expected a mapping with a 'metrics' mapping")
    defaults = raw.get("defaults", {})
    if not isinstance(defaults, dict):
        raise ConfigurationError(f"{source}: 'defaults' must be a mapping")
    default_min = defaults.get("min_samples", 5)
    specs: dict[str, MetricSpec] = {}
    for name, body in raw["metrics"].items():
        if not isinstance(body, dict):
            raise ConfigurationError(f"{source}: metric {name!r} must be a mapping")
        kind = body.get("kind")
        if kind not in _KINDS:
            raise ConfigurationError(f"{source}: metric {name!r} has kind {kind!r}; use one of {sorted(_KINDS)}")
        min_samples: Any = body.get("min_samples", default_min)
        try:
            bins = tuple(float(b) for b in body.get("bins", ()))
            spec = MetricSpec(
                name=str(name),
                kind=kind,
                alert_above=None if body.get("alert_above") is None else float(body["alert_above"]),
                alert_below=None if body.get("alert_below") is None else float(body["alert_below"]),
                min_samples=int(min_samples),
                bins=bins,
                description=str(body.get("description", "")),
            )
        except (TypeError, ValueError) as exc:
            raise ConfigurationError(f"{source}: metric {name!r}: {exc}") from exc
        if list(bins) != sorted(bins) or len(bins) == 1:
            raise ConfigurationError(f"{source}: metric {name!r}: bins must be ascending edges (at least 2)")
        specs[str(name)] = spec
    return MetricCatalog(specs=specs, default_min_samples=int(default_min))


def load_catalog(path: Path) -> MetricCatalog:
    """Read and validate the catalog at `path` (hot-reload it with `state.core.hotfile.HotFile`).

    >>> load_catalog(PACKAGED_CATALOG).spec_for("latency_ms.embed").kind
    'distribution'
    """
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigurationError(f"cannot read metric catalog {path}: {exc}") from exc
    return parse_catalog(raw, str(path))


@dataclass(slots=True)
class Series:
    """Running summary of one decision name within one window."""

    n: int = 0
    total: float = 0.0
    lo: float = math.inf
    hi: float = -math.inf
    sample: list[float] = field(default_factory=list)

    def add(self, value: float) -> None:
        self.n += 1
        self.total += value
        self.lo = min(self.lo, value)
        self.hi = max(self.hi, value)
        if len(self.sample) < SAMPLE_CAP:
            self.sample.append(value)

    def merge(self, other: Series) -> None:
        self.n += other.n
        self.total += other.total
        self.lo = min(self.lo, other.lo)
        self.hi = max(self.hi, other.hi)
        self.sample.extend(other.sample[: max(0, SAMPLE_CAP - len(self.sample))])


@dataclass(slots=True)
class WindowAcc:
    """The fold state of one window: a `Series` per decision name."""

    series: dict[str, Series] = field(default_factory=dict)


def fold_decision(acc: WindowAcc, decision: Decision) -> WindowAcc:
    """Add one decision to a window's accumulator (Bytewax fold_window folder)."""
    series = acc.series.get(decision.name)
    if series is None:
        series = acc.series[decision.name] = Series()
    series.add(decision.value)
    return acc


def merge_acc(a: WindowAcc, b: WindowAcc) -> WindowAcc:
    for name, series in b.series.items():
        if name in a.series:
            a.series[name].merge(series)
        else:
            a.series[name] = series
    return a


def quantile(values: list[float], q: float) -> float:
    """Nearest-rank quantile of a non-empty list.

    >>> quantile([5.0, 1.0, 3.0, 2.0, 4.0], 0.5)
    3.0
    >>> quantile([1.0, 2.0, 3.0, 4.0, 100.0], 0.95)
    100.0
    """
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


def window_bounds(window_id: int, length: timedelta) -> tuple[datetime, datetime]:
    """Start and end of a tumbling window id (aligned to ALIGN_TO).

    >>> [t.isoformat() for t in window_bounds(1, timedelta(seconds=60))]
    ['1970-01-01T00:01:00+00:00', '1970-01-01T00:02:00+00:00']
    """
    start = ALIGN_TO + window_id * length
    return start, start + length


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _alert(spec: MetricSpec, value: float, n: int) -> str | None:
    if n < spec.min_samples:
        return None
    if spec.alert_above is not None and value > spec.alert_above:
        return f"{spec.name}={_fmt(value)} > {_fmt(spec.alert_above)} (n={n})"
    if spec.alert_below is not None and value < spec.alert_below:
        return f"{spec.name}={_fmt(value)} < {_fmt(spec.alert_below)} (n={n})"
    return None


def finalize(acc: WindowAcc, window_id: int, length: timedelta, catalog: MetricCatalog) -> WindowMetrics:
    """The WindowMetrics record of a closed window, alerts included."""
    start, end = window_bounds(window_id, length)
    counters: dict[str, int] = {}
    gauges: dict[str, float] = {}
    alerts: list[str] = []
    for name in sorted(acc.series):
        series = acc.series[name]
        spec = catalog.spec_for(name)
        if spec.kind == "count":
            value = series.total
            counters[name] = round(value)
        elif spec.kind == "rate":
            value = series.total / series.n
            gauges[name] = value
            counters[f"{name}.n"] = series.n
        else:
            value = quantile(series.sample, 0.95)
            gauges[f"{name}.mean"] = series.total / series.n
            gauges[f"{name}.p50"] = quantile(series.sample, 0.5)
            gauges[f"{name}.p95"] = value
            gauges[f"{name}.max"] = series.hi
            counters[f"{name}.n"] = series.n
            for lo, hi in zip(spec.bins, spec.bins[1:], strict=False):
                last = hi == spec.bins[-1]
                inside = sum(1 for v in series.sample if lo <= v < hi or (last and v == hi))
                counters[f"{name}.bin.{lo:g}-{hi:g}"] = inside
        alert = _alert(spec, value, series.n)
        if alert is not None:
            alerts.append(alert)
    if "events" in acc.series:
        gauges["events_per_s"] = acc.series["events"].total / length.total_seconds()
    return WindowMetrics(window_start=start, window_end=end, counters=counters, gauges=gauges, alerts=tuple(alerts))


# --- closed windows and late items --------------------------------------------------


@dataclass(slots=True)
class Closed:
    """A window as it closed, kept so late items can still be folded into it."""

    acc: WindowAcc
    revision: int = 0
    late_events: int = 0
    late_decisions: int = 0


Revisions = dict[int, Closed]  # window id → the window, for the last LATE_WINDOWS_KEPT windows


def _emit(window_id: int, closed: Closed, length: timedelta, catalog: MetricCatalog) -> WindowMetrics:
    record = finalize(closed.acc, window_id, length, catalog)
    if closed.revision == 0 and not closed.late_decisions:
        return record
    counters = {**record.counters, "late_decisions": closed.late_decisions, "late_events": closed.late_events}
    return record.model_copy(update={"counters": counters, "revision": closed.revision})


def close_window(
    state: Revisions | None, window_id: int, acc: WindowAcc, length: timedelta, catalog: MetricCatalog
) -> tuple[Revisions, WindowMetrics]:
    """Keep a window that just closed and return its record (revision 0)."""
    revisions: Revisions = state if state is not None else {}
    closed = revisions.get(window_id)
    if closed is None:
        closed = revisions[window_id] = Closed(acc)
    else:  # late items for this id were seen before it closed (Bytewax may report such ids)
        closed.acc = merge_acc(acc, closed.acc)
    while len(revisions) > LATE_WINDOWS_KEPT:
        del revisions[next(iter(revisions))]
    return revisions, _emit(window_id, closed, length, catalog)


def fold_late(
    state: Revisions | None, late: Iterable[tuple[int, Decision]], length: timedelta, catalog: MetricCatalog
) -> tuple[Revisions, list[WindowMetrics]]:
    """Count late items and fold them into their windows; one new revision per window touched.

    >>> from datetime import UTC, datetime, timedelta
    >>> cat = MetricCatalog({})
    >>> t = datetime(1970, 1, 1, tzinfo=UTC)
    >>> minute = timedelta(seconds=60)
    >>> state, first = close_window(None, 0, fold_decision(WindowAcc(), Decision(t, "events")), minute, cat)
    >>> state, out = fold_late(state, [(0, Decision(t, "events")), (0, Decision(t, "x", 0.2))], minute, cat)
    >>> out[0].revision, out[0].counters["late_events"], out[0].counters["late_decisions"], out[0].counters["x.n"]
    (1, 1, 2, 1)
    """
    revisions: Revisions = state if state is not None else {}
    touched: list[int] = []
    for window_id, decision in late:
        closed = revisions.get(window_id)
        if closed is None:  # older than anything kept, or never closed here: a window of late items only
            closed = revisions[window_id] = Closed(WindowAcc())
        fold_decision(closed.acc, decision)
        closed.late_decisions += 1
        closed.late_events += decision.name == "events"
        if window_id not in touched:
            touched.append(window_id)
    out = []
    for window_id in sorted(touched):
        closed = revisions[window_id]
        closed.revision += 1
        out.append(_emit(window_id, closed, length, catalog))
    while len(revisions) > LATE_WINDOWS_KEPT:
        del revisions[next(iter(revisions))]
    return revisions, out


# --- undated decisions -----------------------------------------------------------------


@dataclass(slots=True)
class Stamper:
    """Latest event time seen, and undated decisions waiting for the first one."""

    latest: datetime | None = None
    pending: list[Decision] = field(default_factory=list)


def stamp(state: Stamper, decision: Decision) -> list[Decision]:
    """Give an undated decision the latest event time seen (hold it until there is one).

    Dead letters of unparseable bytes carry no event time; stamping them with the stream's
    own event time (never the processing clock) keeps a replay of old data from pushing the
    watermark to today and turning every later event late. A time outside the event-time
    range (years EVENT_YEAR_MIN..EVENT_YEAR_MAX) is treated as no time at all: a window bound
    computed from it would overflow and stop the stream.

    >>> from datetime import UTC, datetime
    >>> s = Stamper(latest=datetime(2026, 1, 1, tzinfo=UTC))
    >>> stamp(s, Decision(datetime(9999, 12, 31, tzinfo=UTC), "deadletters"))[0].ts.year
    2026
    """
    if decision.ts is not None and not _in_range(decision.ts):
        decision = Decision(None, decision.name, decision.value)
    if decision.ts is None:
        if state.latest is None:
            state.pending.append(decision)
            return []
        return [Decision(state.latest, decision.name, decision.value)]
    if state.latest is None or decision.ts > state.latest:
        state.latest = decision.ts
    if state.pending:
        held, state.pending = state.pending, []
        return [decision, *(Decision(decision.ts, d.name, d.value) for d in held)]
    return [decision]


def _in_range(ts: datetime) -> bool:
    return ts.tzinfo is not None and EVENT_YEAR_MIN <= ts.astimezone(UTC).year <= EVENT_YEAR_MAX


def flush_pending(state: Stamper, fallback: datetime) -> list[Decision]:
    """At end of input: undated decisions that never saw an event time get `fallback`."""
    held, state.pending = state.pending, []
    return [Decision(state.latest or fallback, d.name, d.value) for d in held]
