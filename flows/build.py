"""build_flow(settings, ...) -> Dataflow: the RecallFlow write path, composed.

    input → parse & validate ──errors──> dead letters
          → key by session_id → session state ──> state mirror
          → normalise (language mix, sentences, times) → memory units
          → embed → memory store (idempotent upsert) [+ memory topic]
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import bytewax.operators as op
from bytewax.dataflow import Dataflow

from flows.io import InputSpec, OutputSpec
from flows.settings import Settings
from flows.tagging_stage import write_filters_ii
from operators.embed import EmbedConfig, embed_units
from operators.ingress import parse_events
from operators.normalise import normalise
from operators.session import SessionConfig, track_sessions
from operators.units import assemble_units
from state.embedding import Embedder
from state.ingress import IngressLimits
from state.turn import NormaliseConfig


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
    # (returns the store embedder behind the cache the tagger's head shares, used by `embed` below)
    turns, embedder = write_filters_ii(settings, turns, steps, embedder=embedder, clock=clock)

    # -- → task state machine, goal anchoring, temporal validity (issue 4) --

    units = op.key_rm("units_unkeyed", assemble_units("units", turns))
    for i, unit_sink in enumerate(outputs.memory_units):
        op.output(f"memory_unit_out_{i}", units, unit_sink)
    embedded = embed_units("embed", units, EmbedConfig(batch_size=settings.embedder.batch_size), embedder=embedder)
    for i, point_sink in enumerate(outputs.memory_points):
        op.output(f"memory_out_{i}", embedded, point_sink)

    # -- recall trigger on user turns → RecallResult → ResponseRequest (issue 5) --

    # -- windowed metrics (issue 7) --

    return flow
