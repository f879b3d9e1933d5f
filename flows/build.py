"""build_flow(settings, ...) -> Dataflow: the RecallFlow write path, composed.

input → parse & validate ──errors──> dead letters
      → key by session_id → normalise (language mix, sentences, times)
      → coreference → terms/authority → task state machine ──> task states (mirror) / archived tasks
      → memory units → temporal validity → embed → memory store (idempotent upsert) [+ memory topic]
      → recall trigger (customer turns, with the last 3 turns as context)
      → recall service (batch map) → recall results → response requests ─┐
      → user corrections (control events) ───────────────────────────────┴→ responder feed (per session,
        a correction after the requests before it) → responder items (requests + corrections)
dead letters, states, units, archived tasks, recall results → decisions → event-time windows → metrics sinks
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import bytewax.operators as op
from bytewax.dataflow import Dataflow, Stream

from flows.io import InputSpec, OutputSpec
from flows.settings import Settings
from flows.tagging_stage import write_filters_ii
from operators.context import ContextConfig, attach_context
from operators.coref import CorefOperatorConfig, CorefSessionEnd, resolve_coreference
from operators.dedupe import DedupeOperatorConfig, dedupe_events
from operators.embed import EmbedConfig, embed_units
from operators.ingress import parse_events
from operators.metrics import (
    MetricsConfig,
    extract_decisions,
    intent_chain_decisions,
    stage_latency,
    stage_marks,
    windowed_metrics,
)
from operators.normalise import normalise
from operators.prefetch import PrefetchConfig
from operators.recall import recall_trigger
from operators.responder_feed import FeedConfig, responder_feed
from operators.task_fsm import TaskOperatorConfig, track_tasks
from operators.terms import whitelist_terms
from operators.units import assemble_units
from operators.validity import tag_validity
from schemas.events import ConversationEvent, InputEvent, SessionEnd, UserCorrection
from schemas.memory import EmbeddedUnit, MemoryUnit
from schemas.recall import RecallRequest, RecallResult
from schemas.response import ResponderItem
from state.core.embedding import Embedder
from state.core.hotfile import HotFile
from state.coref.lexicon import DEFAULT_ENTITIES, DEFAULT_LEXICON, CorefLexicon, load_coref_lexicon
from state.coref.resolver import CorefConfig
from state.ingress.parse import IngressLimits
from state.metrics.windows import PACKAGED_CATALOG, load_catalog
from state.normalise.turn import NormaliseConfig, Turn
from state.recall.trigger import TriggerConfig, response_request
from state.task.data import TaskData, TaskDataPaths
from state.task.fsm import TaskConfig
from state.terms.whitelist import (
    DEFAULT_AUTHORITY_FILE,
    DEFAULT_TERM_FILES,
    TermLexicon,
    TermsConfig,
    load_term_lexicon,
)
from state.validity.rules import ValidityData


class RecallExecutor(Protocol):
    """What the flow needs from recall (flows.recall.RecallService): requests in, results out."""

    def run_batch(self, requests: list[RecallRequest]) -> list[tuple[RecallRequest, RecallResult]]: ...


def _coref_end_marker(event: InputEvent) -> CorefSessionEnd | None:
    return CorefSessionEnd(event.ts) if isinstance(event, SessionEnd) else None


def _filter_lexicons(settings: Settings) -> tuple[HotFile[CorefLexicon], HotFile[TermLexicon]]:
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


def _session_end(event: InputEvent) -> SessionEnd | None:
    return event if isinstance(event, SessionEnd) else None


def _correction(event: InputEvent) -> UserCorrection | None:
    return event if isinstance(event, UserCorrection) else None


def _prefetch(settings: Settings, embedder: Embedder, anchor_embedder: Embedder | None) -> PrefetchConfig | None:
    """What to embed a batch at a time before the head and the task machine ask the memo one by one."""
    if not (settings.embedder.prefetch and settings.embedder.memo_size):
        return None
    same_model = anchor_embedder is None or anchor_embedder is embedder
    return PrefetchConfig(
        memory_prefix=settings.embedder.memory_prefix, anchor_roles=("customer",) if same_model else ()
    )


def task_operator_config(settings: Settings) -> TaskOperatorConfig:
    cfg = settings.task
    return TaskOperatorConfig(
        task=TaskConfig(
            timeout=timedelta(seconds=cfg.timeout_s),
            shortcut_confidence=cfg.shortcut_confidence,
            max_entities=cfg.max_entities,
            keep_previous_tasks=cfg.keep_previous_tasks,
        ),
        archive_grace=timedelta(seconds=cfg.archive_grace_s),
        session_ttl=timedelta(seconds=cfg.session_ttl_s),
        archive_on_eof=cfg.archive_on_eof,
    )


def task_data(settings: Settings, embedder: Embedder) -> TaskData:
    """The task state machine's data files (read once here; hot-reloaded afterwards)."""
    cfg = settings.task
    paths = TaskDataPaths(
        table=cfg.table_path,
        cues=cfg.cues_path,
        entities=cfg.entity_patterns_path,
        thresholds=cfg.anchor_thresholds_path,
        continue_at=cfg.continue_at,
        clarify_at=cfg.clarify_at,
        reload_interval_s=cfg.reload_interval_s,
    )
    return TaskData(paths, embedder)


def build_flow(
    settings: Settings,
    source: InputSpec,
    outputs: OutputSpec,
    *,
    embedder: Embedder,
    anchor_embedder: Embedder | None = None,
    clock: Callable[[], datetime] = _system_clock,
    flow_id: str = "recallflow",
    recall: RecallExecutor | None = None,
) -> Dataflow:
    """Compose the dataflow. `clock` only stamps dead letters and idle timers, never event logic.

    `anchor_embedder` embeds turns for goal anchoring (default: `embedder`).
    `recall` runs the recall branch; without it (or with `recall.enabled` off) the flow is write-only.
    """
    flow = Dataflow(flow_id)
    raws, transport_errors = source.attach(flow, clock)
    limits = IngressLimits(
        max_record_bytes=settings.input.max_record_bytes,
        max_text_chars=settings.input.max_text_chars,
        max_json_depth=settings.input.max_json_depth,
        min_year=settings.input.min_year,
        max_year=settings.input.max_year,
    )
    ingress = parse_events("parse_events", raws, limits, clock=clock)
    # Each event id once: a redelivery is dropped and counted, a conflicting reuse is a dead letter.
    deduped = dedupe_events("dedupe", ingress.events, DedupeOperatorConfig(), clock=clock)
    dead_streams = [ingress.errors, deduped.dead] + ([] if transport_errors is None else [transport_errors])
    dead = op.merge("all_dead", *dead_streams)
    for i, sink in enumerate(outputs.deadletters):
        op.output(f"deadletter_out_{i}", dead, sink)
    for i, duplicate_sink in enumerate(outputs.duplicates):
        op.output(f"duplicate_out_{i}", deduped.duplicates, duplicate_sink)

    keyed = deduped.events
    events = op.key_rm("events_unkeyed", keyed)
    for i, event_sink in enumerate(outputs.events):
        op.output(f"event_out_{i}", events, event_sink)
    turns = normalise("normalise", keyed, NormaliseConfig(timezone=settings.time.timezone))

    # -- the three filters, in this fixed order (docs/design.md#principles): coreference → terms/authority --
    coref_lexicon, term_lexicon = _filter_lexicons(settings)
    session_ends = op.filter_map_value("coref_session_ends", keyed, _coref_end_marker)
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

    # -- → intent & emotion tagging → entropy windows and unit cut --
    # (returns the store embedder behind the cache the tagger's head shares, used by `embed` below)
    turns, embedder = write_filters_ii(
        settings, turns, keyed, embedder=embedder, clock=clock, prefetch=_prefetch(settings, embedder, anchor_embedder)
    )

    # -- → task state machine, goal anchoring, temporal validity --
    controls = op.filter_map_value("session_controls", keyed, _session_end)
    tasks = track_tasks(
        "task",
        turns,
        controls,
        task_operator_config(settings),
        data=task_data(settings, anchor_embedder or embedder),
        clock=clock,
    )
    turns = tasks.turns
    states = op.key_rm("states_unkeyed", tasks.states)
    for i, state_sink in enumerate(outputs.states):
        op.output(f"state_out_{i}", states, state_sink)
    archived = op.key_rm("archived_unkeyed", tasks.archived)
    for i, archived_sink in enumerate(outputs.archived):
        op.output(f"archived_out_{i}", archived, archived_sink)
    validity = ValidityData(
        settings.validity.lexicon_path,
        settings.validity.promotion_calendar_path,
        reload_interval_s=settings.task.reload_interval_s,
    )

    units = op.key_rm(
        "units_unkeyed", attach_context("context", assemble_units("units", turns), ContextConfig(), clock=clock)
    )
    units = tag_validity("validity", units, data=validity)  # every unit gets its temporal validity
    for i, unit_sink in enumerate(outputs.memory_units):
        op.output(f"memory_unit_out_{i}", units, unit_sink)
    embedded = embed_units("embed", units, EmbedConfig(batch_size=settings.embedder.batch_size), embedder=embedder)
    for i, point_sink in enumerate(outputs.memory_points):
        op.output(f"memory_out_{i}", embedded, point_sink)

    # -- recall trigger on user turns → RecallResult → ResponseRequest --
    if recall is not None and settings.recall.enabled:
        trigger = TriggerConfig(
            context_turns=settings.recall.context_turns, trigger_roles=settings.recall.trigger_roles
        )
        idle = timedelta(seconds=settings.recall.idle_ttl_s)
        requests = op.key_rm(
            "recall_requests_unkeyed",
            recall_trigger("recall_trigger", turns, controls, trigger, clock=clock, idle_ttl=idle),
        )
        recalled = op.flat_map_batch("recall_execute", requests, recall.run_batch)
        results = op.map("recall_results", recalled, lambda pair: pair[1])
        for i, result_sink in enumerate(outputs.recall_results):
            op.output(f"recall_out_{i}", results, result_sink)
        responses = op.map("response_requests", recalled, lambda pair: response_request(*pair))
        # UserCorrection events join the requests here, per session, after the answers they correct.
        fed = responder_feed(
            "responder_feed",
            keyed,
            op.key_on("response_requests_keyed", responses, lambda r: r.session_id),
            FeedConfig(trigger=trigger, wait=timedelta(seconds=settings.responder.correction_wait_s)),
            clock=clock,
        )
        responder_items: Stream[ResponderItem] = op.key_rm("responder_items", fed)
    else:
        # No requests are made here: corrections go straight on (the responder may hold earlier answers).
        responder_items = op.filter_map("responder_items", events, _correction)
    for i, response_sink in enumerate(outputs.response_requests):
        op.output(f"response_request_out_{i}", responder_items, response_sink)

    # -- windowed metrics --
    # Add your stage's output stream (records or ready-made `Decision`s) to `metric_taps`;
    # state/metrics/decisions.py turns known record types into decisions (register_extractor).
    metric_taps: list[Stream[Any]] = [dead, deduped.duplicates, events, units, archived]
    if recall is not None and settings.recall.enabled:
        metric_taps.append(results)
    if settings.metrics.enabled and outputs.metrics:
        metric_taps.append(op.key_rm("task_turns_unkeyed", tasks.turns))  # miss, drift and clarification
        metric_taps.append(
            intent_chain_decisions(
                "intent_chain", states, idle_ttl=timedelta(seconds=settings.metrics.idle_ttl_s), clock=clock
            )
        )
        decisions = extract_decisions("decisions", *metric_taps)
        if settings.metrics.stage_latency:
            marks = [
                stage_marks("mark_parsed", events, "parsed", _event_ids, now_ns=time.time_ns),
                stage_marks(
                    "mark_normalise", op.key_rm("turns_unkeyed", turns), "normalise", _turn_ids, now_ns=time.time_ns
                ),
                stage_marks("mark_units", units, "units", _unit_ids, now_ns=time.time_ns),
                stage_marks("mark_embed", embedded, "embed", _embedded_ids, now_ns=time.time_ns, final=True),
            ]
            latencies = stage_latency("stage_latency", *marks)
            for i, latency_sink in enumerate(outputs.stage_latencies):
                op.output(f"stage_latency_out_{i}", latencies, latency_sink)
            decisions = op.merge("decisions_all", decisions, latencies)
        catalog = HotFile(settings.metrics.catalog or PACKAGED_CATALOG, load_catalog, check_every_s=0)
        window_cfg = MetricsConfig(
            window=timedelta(seconds=settings.metrics.window_s),
            lateness=timedelta(seconds=settings.metrics.allowed_lateness_s),
        )
        windows = windowed_metrics("metrics", decisions, window_cfg, catalog=catalog, now=clock)
        for i, metrics_sink in enumerate(outputs.metrics):
            op.output(f"metrics_out_{i}", windows, metrics_sink)

    return flow


# -- ids of a turn at each latency mark (the first unit of a turn stands for it) --


def _event_ids(event: InputEvent) -> tuple[str, str, datetime] | None:
    return (event.session_id, event.event_id, event.ts) if isinstance(event, ConversationEvent) else None


def _turn_ids(turn: Turn) -> tuple[str, str, datetime]:
    return turn.event.session_id, turn.event.event_id, turn.event.ts


def _unit_ids(unit: MemoryUnit) -> tuple[str, str, datetime] | None:
    return (unit.session_id, unit.event_id, unit.ts) if unit.unit_index == 0 else None


def _embedded_ids(item: EmbeddedUnit) -> tuple[str, str, datetime] | None:
    return _unit_ids(item.unit)
