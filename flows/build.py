"""build_flow(settings, ...) -> Dataflow: the RecallFlow write path, composed.

    input → parse & validate ──errors──> dead letters
          → key by session_id → session state ──> state mirror
          → normalise (language mix, sentences, times) → coreference → terms/authority → memory units
          → embed → memory store (idempotent upsert) [+ memory topic]
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import bytewax.operators as op
from bytewax.dataflow import Dataflow

from flows.io import InputSpec, OutputSpec
from flows.settings import Settings
from operators.coref import CorefOperatorConfig, CorefSessionEnd, resolve_coreference
from operators.embed import EmbedConfig, embed_units
from operators.ingress import parse_events
from operators.normalise import normalise
from operators.session import SessionConfig, track_sessions
from operators.terms import whitelist_terms
from operators.units import assemble_units
from schemas.events import SessionEnd
from state.coref import CorefConfig
from state.coref_lexicon import DEFAULT_ENTITIES, DEFAULT_LEXICON, CorefLexicon, load_coref_lexicon
from state.embedding import Embedder
from state.hotfile import HotFile
from state.ingress import IngressLimits
from state.session import SessionStep
from state.terms import DEFAULT_AUTHORITY_FILE, DEFAULT_TERM_FILES, TermLexicon, TermsConfig, load_term_lexicon
from state.turn import NormaliseConfig


def _coref_end_marker(step: SessionStep) -> CorefSessionEnd | None:
    return CorefSessionEnd(step.event.ts) if isinstance(step.event, SessionEnd) else None


def _issue3_lexicons(settings: Settings) -> tuple[HotFile[CorefLexicon], HotFile[TermLexicon]]:
    """The coreference lexicon/dictionary and the term/authority lists, read once here, hot-reloaded after."""
    coref = load_coref_lexicon(
        settings.coref.lexicon_path or DEFAULT_LEXICON,
        settings.coref.entities_path or DEFAULT_ENTITIES,
        check_every_s=settings.coref.reload_check_s,
    )
    terms = load_term_lexicon(
        settings.terms.term_files or DEFAULT_TERM_FILES,
        settings.terms.authority_path or DEFAULT_AUTHORITY_FILE,
        check_every_s=settings.terms.reload_check_s,
    )
    return coref, terms


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
    coref_lexicon, term_lexicon = _issue3_lexicons(settings)
    session_ends = op.filter_map_value("coref_session_ends", steps, _coref_end_marker)
    turns = resolve_coreference(
        "coref",
        op.merge("coref_in", turns, session_ends),
        CorefOperatorConfig(
            resolver=CorefConfig(window=settings.coref.window, wide_window=settings.coref.wide_window),
            idle_ttl=timedelta(seconds=settings.coref.idle_ttl_s),
            end_grace=timedelta(seconds=settings.coref.end_grace_s),
        ),
        lexicon=coref_lexicon.get,
        clock=clock,
    )
    turns = whitelist_terms(
        "terms",
        turns,
        TermsConfig(
            short_sentence_chars=settings.terms.short_sentence_chars,
            shortcut_entropy=settings.terms.shortcut_entropy,
            authority_entropy_floor=settings.terms.authority_entropy_floor,
        ),
        lexicon=term_lexicon.get,
    )

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

    return flow
