"""build_flow(settings, ...) -> Dataflow: the RecallFlow write path, composed.

    input → parse & validate ──errors──> dead letters
          → key by session_id → session state ──> state mirror
          → normalise (language mix, sentences, times) → memory units
          → embed → memory store (idempotent upsert) [+ memory topic]
    dead letters, states, units, ... → decisions → event-time windows → metrics sinks
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import bytewax.operators as op
from bytewax.dataflow import Dataflow, Stream

from flows.io import InputSpec, OutputSpec
from flows.settings import Settings
from operators.embed import EmbedConfig, embed_units
from operators.ingress import parse_events
from operators.metrics import MetricsConfig, extract_decisions, stage_latency, stage_marks, windowed_metrics
from operators.normalise import normalise
from operators.session import SessionConfig, track_sessions
from operators.units import assemble_units
from schemas.events import ConversationEvent, InputEvent
from schemas.memory import EmbeddedUnit, MemoryUnit
from state.embedding import Embedder
from state.ingress import IngressLimits
from state.metrics import PACKAGED_CATALOG, CatalogReloader
from state.turn import NormaliseConfig, Turn


def _system_clock() -> datetime:
    return datetime.now(tz=UTC)


def build_flow(
    settings: Settings,
    source: InputSpec,
    outputs: OutputSpec,
    *,
    embedder: Embedder,
    clock: Callable[[], datetime] = _system_clock,
    flow_id: str = "recallflow",
) -> Dataflow:
    """Compose the dataflow. `clock` only stamps dead letters and idle timers, never event logic."""
    flow = Dataflow(flow_id)
    raws, transport_errors = source.attach(flow, clock)
    limits = IngressLimits(
        max_record_bytes=settings.input.max_record_bytes,
        max_text_chars=settings.input.max_text_chars,
        max_json_depth=settings.input.max_json_depth,
    )
    ingress = parse_events("parse_events", raws, limits, clock=clock)
    dead = ingress.errors if transport_errors is None else op.merge("all_dead", ingress.errors, transport_errors)
    for i, sink in enumerate(outputs.deadletters):
        op.output(f"deadletter_out_{i}", dead, sink)

    keyed = op.key_on("key_session", ingress.events, lambda ev: ev.session_id)
    steps = track_sessions("session", keyed, SessionConfig(), clock=clock)
    states = op.key_rm("states_unkeyed", op.filter_map_value("session_states", steps, lambda s: s.state))
    for i, state_sink in enumerate(outputs.states):
        op.output(f"state_out_{i}", states, state_sink)

    turns = normalise("normalise", steps, NormaliseConfig(timezone=settings.time.timezone))

    # -- the three filters, in this fixed order: coreference → terms/authority (issue 3) --

    # -- → intent & emotion tagging → entropy windows and unit cut (issue 9) --

    # -- → task state machine, goal anchoring, temporal validity (issue 4) --

    units = op.key_rm("units_unkeyed", assemble_units("units", turns))
    for i, unit_sink in enumerate(outputs.memory_units):
        op.output(f"memory_unit_out_{i}", units, unit_sink)
    embedded = embed_units("embed", units, EmbedConfig(batch_size=settings.embedder.batch_size), embedder=embedder)
    for i, point_sink in enumerate(outputs.memory_points):
        op.output(f"memory_out_{i}", embedded, point_sink)

    # -- recall trigger on user turns → RecallResult → ResponseRequest (issue 5) --

    # -- windowed metrics (issue 7) --
    # Add your stage's output stream (records or ready-made `Decision`s) to `metric_taps`;
    # state/decisions.py turns known record types into decisions (register_extractor).
    metric_taps: list[Stream[Any]] = [dead, states, units]
    if settings.metrics.enabled and outputs.metrics:
        decisions = extract_decisions("decisions", *metric_taps)
        if settings.metrics.stage_latency:
            marks = [
                stage_marks("mark_parsed", ingress.events, "parsed", _event_ids, now_ns=time.time_ns),
                stage_marks(
                    "mark_normalise", op.key_rm("turns_unkeyed", turns), "normalise", _turn_ids, now_ns=time.time_ns
                ),
                stage_marks("mark_units", units, "units", _unit_ids, now_ns=time.time_ns),
                stage_marks("mark_embed", embedded, "embed", _embedded_ids, now_ns=time.time_ns, final=True),
            ]
            decisions = op.merge("decisions_all", decisions, stage_latency("stage_latency", *marks))
        catalog = CatalogReloader(settings.metrics.catalog or PACKAGED_CATALOG)
        window_cfg = MetricsConfig(
            window=timedelta(seconds=settings.metrics.window_s),
            lateness=timedelta(seconds=settings.metrics.allowed_lateness_s),
        )
        windows = windowed_metrics("metrics", decisions, window_cfg, catalog=catalog, now=clock)
        for i, metrics_sink in enumerate(outputs.metrics):
            op.output(f"metrics_out_{i}", windows, metrics_sink)

    return flow


# -- issue 7: ids of a turn at each latency mark (the first unit of a turn stands for it) --


def _event_ids(event: InputEvent) -> tuple[str, str, datetime] | None:
    return (event.session_id, event.event_id, event.ts) if isinstance(event, ConversationEvent) else None


def _turn_ids(turn: Turn) -> tuple[str, str, datetime]:
    return turn.event.session_id, turn.event.event_id, turn.event.ts


def _unit_ids(unit: MemoryUnit) -> tuple[str, str, datetime] | None:
    return (unit.session_id, unit.event_id, unit.ts) if unit.unit_index == 0 else None


def _embedded_ids(item: EmbeddedUnit) -> tuple[str, str, datetime] | None:
    return _unit_ids(item.unit)
