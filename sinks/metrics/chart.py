"""Render the windows of a run (metrics JSONL) as one PNG: a panel per decision point.

Each panel plots one metric per window in event-time order (x = window index; the dates
of the first and last windows are in the axis label), with the alert threshold as a
dashed line and alerting windows in red; the panel title says the share of windows that
alerted (green: none). Panels of decision points the run never observed say so instead
of drawing an empty axis. Late corrections are merged into their window (latest totals).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, never a display
import matplotlib.pyplot as plt

from schemas.metrics import WindowMetrics
from state.metrics.windows import PACKAGED_CATALOG, MetricCatalog, load_catalog


@dataclass(frozen=True)
class Panel:
    title: str
    series: tuple[tuple[str, str], ...]  # (label, "gauges.NAME" | "counters.NAME")
    threshold_of: str | None = None  # catalog metric whose alert threshold is drawn


PANELS: tuple[Panel, ...] = (
    Panel("state_machine_miss_rate", (("miss rate", "gauges.state_machine_miss_rate"),), "state_machine_miss_rate"),
    Panel("cue_activation_precision", (("precision", "gauges.cue_activation_precision"),), "cue_activation_precision"),
    Panel(
        "temporal_verification_fail_rate",
        (("fail rate", "gauges.temporal_verification_fail_rate"),),
        "temporal_verification_fail_rate",
    ),
    Panel("intent_chain_stability", (("stability", "gauges.intent_chain_stability"),), "intent_chain_stability"),
    Panel(
        "goal drift / clarification",
        (("goal_drift_rate", "gauges.goal_drift_rate"), ("clarification_rate", "gauges.clarification_rate")),
    ),
    Panel("coref needs_review rate", (("needs_review", "gauges.coref_needs_review_rate"),), "coref_needs_review_rate"),
    Panel(
        "entropy of memory units",
        (("p50", "gauges.entropy.p50"), ("p95", "gauges.entropy.p95"), ("mean", "gauges.entropy.mean")),
    ),
    Panel("dead letters per window", (("dead letters", "counters.deadletters"),), "deadletters"),
    Panel(
        "throughput (events per window)",
        (
            ("events", "counters.events"),
            ("memory units", "counters.memory_units"),
            ("late events", "counters.late_events"),
        ),
    ),
    Panel(
        "per-stage latency p95 (ms)",
        (
            ("normalise", "gauges.latency_ms.normalise.p95"),
            ("units", "gauges.latency_ms.units.p95"),
            ("embed", "gauges.latency_ms.embed.p95"),
            ("total", "gauges.latency_ms.total.p95"),
        ),
        "latency_ms.total",
    ),
)


def load_windows(path: Path) -> list[WindowMetrics]:
    """The windows of a run, one per window start (its highest revision), in time order.

    A file appended by several runs keeps, per window, the last record of the highest revision.
    """
    windows: dict[datetime, WindowMetrics] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                record = WindowMetrics.model_validate_json(line)
                kept = windows.get(record.window_start)
                if kept is None or record.revision >= kept.revision:
                    windows[record.window_start] = record
    return [windows[k] for k in sorted(windows)]


def _value(window: WindowMetrics, path: str) -> float | None:
    """A gauge (None when the window did not observe it) or a counter (0 when absent: nothing counted)."""
    section, name = path.split(".", 1)
    if section == "gauges":
        return window.gauges.get(name)
    return float(window.counters.get(name, 0))


def _threshold(catalog: MetricCatalog, name: str | None) -> tuple[float | None, float | None]:
    if name is None:
        return None, None
    spec = catalog.spec_for(name)
    return spec.alert_above, spec.alert_below


def _alerting(window: WindowMetrics, metric: str | None) -> bool:
    return metric is not None and any(a.split("=", 1)[0] == metric for a in window.alerts)


def render_chart(
    windows: Sequence[WindowMetrics],
    out: Path,
    *,
    title: str = "RecallFlow windowed metrics",
    catalog: MetricCatalog | None = None,
) -> Path:
    """Write the PNG and return its path; a run with no window still gets a chart that says so."""
    catalog = catalog or load_catalog(PACKAGED_CATALOG)
    columns = 2
    rows = (len(PANELS) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(14, 2.6 * rows), squeeze=False, sharex=True)
    xs = list(range(len(windows)))
    span = (
        f"{len(windows)} windows, {windows[0].window_start:%Y-%m-%d %H:%M} → "
        f"{windows[-1].window_end:%Y-%m-%d %H:%M} UTC"
        if windows
        else "no windows"
    )
    for panel, ax in zip(PANELS, axes.flat, strict=False):
        _draw_panel(ax, panel, windows, xs, catalog)
    for ax in list(axes.flat)[len(PANELS) :]:
        ax.axis("off")
    if windows:
        axes.flat[0].set_xlim(-0.5, max(0.5, len(windows) - 0.5))
    alerting = sum(1 for w in windows if w.alerts)
    fig.suptitle(f"{title}\n{span}; {alerting} windows with alerts", fontsize=12)
    fig.supxlabel("window (event time, in order)")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def _draw_panel(ax: Any, panel: Panel, windows: Sequence[WindowMetrics], xs: list[int], catalog: MetricCatalog) -> None:
    seen = False
    for label, path in panel.series:
        points = [(x, v) for x, w in zip(xs, windows, strict=True) if (v := _value(w, path)) is not None]
        if not points:
            continue
        seen = True
        px, py = zip(*points, strict=True)
        dense = len(points) > 200
        ax.plot(px, py, marker=None if dense else ".", linewidth=0.6 if dense else 1, markersize=3, label=label)
    above, below = _threshold(catalog, panel.threshold_of)
    for limit, word in ((above, "alert above"), (below, "alert below")):
        if limit is not None and seen:
            ax.axhline(limit, color="crimson", linestyle="--", linewidth=1, label=f"{word} {limit:g}")
    if seen:
        _show_zero(ax)
    bad = [x for x, w in zip(xs, windows, strict=True) if _alerting(w, panel.threshold_of)]
    if bad and seen:
        first_path = panel.series[0][1]
        ax.scatter(bad, [_value(windows[x], first_path) or 0 for x in bad], color="crimson", s=10, zorder=3)
    observed = sum(1 for w in windows if any(_value(w, p) is not None for _, p in panel.series))
    if not seen:
        ax.text(0.5, 0.5, "not observed in this run", ha="center", va="center", transform=ax.transAxes, color="grey")
        ax.set_title(f"{panel.title}: no data", fontsize=10, color="grey")
        ax.set_yticks([])
        return
    share = len(bad) / observed if observed else 0.0
    health = "ok" if not bad else f"{len(bad)}/{observed} windows alert ({share:.0%})"
    ax.set_title(f"{panel.title}: {health}", fontsize=10, color="darkgreen" if not bad else "crimson")
    ax.legend(fontsize=7, loc="upper right")
    ax.grid(alpha=0.3)


def _show_zero(ax: Any) -> None:
    """Every plotted value here is >= 0: start the y axis below 0 so that zeros (no dead letter,
    no miss) sit visibly on the plot, not under its frame or off an autoscaled range."""
    low, high = ax.get_ylim()
    top = max(high, 1e-9)
    if low >= 0 or low < -0.05 * top:
        ax.set_ylim(-0.05 * top, top)
