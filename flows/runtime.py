"""Turn settings into live resources: the store, the state mirror, the embedder, the I/O specs.

Resources are built here (in flows/, at start), never at import time and never inside an
operator. The store is one handle per process, shared by the workers of that process.
"""

from __future__ import annotations

import os
import threading
from dataclasses import fields
from typing import Literal

from bytewax.outputs import Sink

from flows.execution import execute as execute  # re-exported: running a flow lives in flows/execution.py
from flows.execution import init_recovery as init_recovery
from flows.execution import recovery_for as recovery_for
from flows.execution import recovery_partitions as recovery_partitions
from flows.io import KafkaInput, OutputSpec
from flows.recall import RecallService
from flows.settings import KafkaSettings, Settings
from flows.verification import VerificationGuard
from schemas.deadletter import DeadLetter
from schemas.errors import ConfigurationError
from schemas.memory import MemoryUnit
from schemas.metrics import WindowMetrics
from schemas.recall import RecallResult
from schemas.response import ResponderItem
from schemas.session import ArchivedTask, SessionState
from sinks.files.jsonl_sink import JsonlSink
from sinks.files.keyed_jsonl import KeyedJsonlSink
from sinks.http.verifiers import HttpVerifier, VerifierPool, VerifierRegistry
from sinks.kafka.sink import KafkaRecordSink, R
from sinks.metrics.exporters import PrometheusMetricsSink, RedisMetricsSink
from sinks.models.embedders import load_embedder
from sinks.models.embedding_memo import MemoEmbedder
from sinks.models.query_vectors import QueryVectors
from sinks.redis.state_mirror import InMemoryStateMirror, RedisStateMirror, StateMirror, StateMirrorSink
from sinks.store.base import MemoryStore
from sinks.store.recent_actions import InMemoryRecentActions, RecentActions, RecentActionsSink, RedisRecentActions
from sinks.store.sink import StoreSink
from state.core.embedding import Embedder
from state.recall.config import DEFAULT_LEXICON, DEFAULT_WEIGHTS, tables_file
from state.recall.tool_guard import GuardConfig

Mode = Literal["replay", "run"]

_STORES: dict[tuple[str, str, str], MemoryStore] = {}
_STORES_LOCK = threading.Lock()


def open_store(settings: Settings) -> MemoryStore:
    """The process-wide store for these settings (opened on first use)."""
    cfg = settings.store
    key = (cfg.backend, str(cfg.path.resolve()) if cfg.backend != "qdrant_server" else cfg.url or "", cfg.collection)
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None:
            store = _build_store(settings)
            _STORES[key] = store
        return store


def close_stores() -> None:
    with _STORES_LOCK:
        for store in _STORES.values():
            store.close()
        _STORES.clear()


def new_store(settings: Settings) -> MemoryStore:
    """A fresh store handle, not shared with the process-wide one (the HTTP API's lease opens and
    closes its own so that a replay can take an embedded store in between)."""
    return _build_store(settings)


def _build_store(settings: Settings) -> MemoryStore:
    cfg = settings.store
    if cfg.backend == "qdrant_edge":
        from sinks.store.qdrant_edge import QdrantEdgeStore

        return QdrantEdgeStore(cfg.path / "edge", collection=cfg.collection, timeline_rows=cfg.timeline_rows)
    from sinks.store.qdrant_client_store import QdrantClientStore

    if cfg.backend == "qdrant_local":
        return QdrantClientStore.local(cfg.path / "local", collection=cfg.collection)
    if not cfg.url:
        raise ConfigurationError("store.backend=qdrant_server needs store.url (RECALLFLOW_STORE__URL)")
    api_key = cfg.api_key.get_secret_value() if cfg.api_key else None
    return QdrantClientStore.server(cfg.url, api_key, collection=cfg.collection, timeout_s=cfg.timeout_s)


def embed_threads(settings: Settings) -> int:
    """Threads one embedding call is split over: `embedder.threads`, or one per core when 0."""
    return settings.embedder.threads or max(1, os.cpu_count() or 1)


def embedder_for(settings: Settings) -> Embedder:
    """The memory embedder, behind a bounded memo unless `embedder.memo_size` is 0."""
    return embedder_over(
        settings, load_embedder(settings.embedder.kind, settings.embedder.model, embed_threads(settings))
    )


def embedder_over(settings: Settings, model: Embedder) -> Embedder:
    """`model` as the flow uses it: behind the memo, answering `passage` in `embedder.memory_prefix` mode.

    The memo sits under the mode switch, so a text asked for in both roles is one entry.
    """
    embedder = MemoEmbedder(model, settings.embedder.memo_size) if settings.embedder.memo_size else model
    return QueryVectors(embedder) if settings.embedder.memory_prefix == "query" else embedder


def anchor_embedder_for(settings: Settings, memory_embedder: Embedder) -> Embedder:
    """The goal-anchoring model: the memory embedder unless `task.anchor_embedder` names another."""
    kind = settings.task.anchor_embedder
    same_model = settings.task.anchor_model in (None, settings.embedder.model)
    if kind == "same" or (kind == settings.embedder.kind and same_model):
        return memory_embedder
    return load_embedder(kind, settings.task.anchor_model)


def state_mirror_for(settings: Settings, mode: Mode) -> StateMirror:
    enabled = settings.redis.enabled if settings.redis.enabled is not None else mode == "run"
    if not enabled:
        return InMemoryStateMirror()
    return RedisStateMirror(settings.redis.url, settings.redis.state_ttl_s, settings.redis.timeout_s)


def kafka_config(cfg: KafkaSettings, *, consumer: bool) -> dict[str, str]:
    """librdkafka settings, security included (secrets unwrapped only here)."""
    conf: dict[str, str] = {"security.protocol": cfg.security_protocol, "log_level": str(cfg.log_level)}
    if consumer:
        conf |= {
            "group.id": cfg.group_id,
            "session.timeout.ms": str(cfg.session_timeout_ms),
            "enable.auto.commit": "false",
        }
    if cfg.sasl_mechanism:
        conf["sasl.mechanism"] = cfg.sasl_mechanism
    if cfg.sasl_username:
        conf["sasl.username"] = cfg.sasl_username
    if cfg.sasl_password:
        conf["sasl.password"] = cfg.sasl_password.get_secret_value()
    if cfg.ssl_ca_location:
        conf["ssl.ca.location"] = cfg.ssl_ca_location
    return conf


def kafka_input(settings: Settings, *, tail: bool = True) -> KafkaInput:
    cfg = settings.kafka
    return KafkaInput(
        brokers=cfg.bootstrap_servers.split(","),
        topic=cfg.input_topic,
        config=kafka_config(cfg, consumer=True),
        tail=tail,
    )


def kafka_sink(settings: Settings, topic: str) -> KafkaRecordSink[R]:
    """A Kafka sink on `topic`; its record type is the one of the sink list it joins."""
    cfg = settings.kafka
    return KafkaRecordSink(cfg.bootstrap_servers, topic, kafka_config(cfg, consumer=False))


# OutputSpec field → the KafkaSettings attribute naming its topic. In `run` mode every
# OutputSpec field listed here gets a Kafka sink on its topic, so a stage that adds its
# output field (recalls, response_requests, responses, archived ...) is on Kafka with no
# further wiring.
OUTPUT_TOPICS: dict[str, str] = {
    "deadletters": "deadletter_topic",
    "memory_units": "memory_topic",
    "metrics": "metrics_topic",
    "recall_results": "recall_topic",
    "response_requests": "response_request_topic",
    "responses": "response_topic",
    "archived": "archived_topic",
}


# The key of each keyed output file: the fields that identify a record across runs.
DEADLETTER_KEY = ("step", "source")
RECALL_KEY = ("tenant_id", "session_id", "query_event_id")
RESPONDER_ITEM_KEY = ("kind", "tenant_id", "session_id", "request_id", "event_id")
ARCHIVED_KEY = ("session_id", "task_id")
WINDOW_KEY = ("window_start", "revision")


def output_topics(settings: Settings) -> list[str]:
    """Every topic the flow and the responder read or write (what `recallflow topics create` creates)."""
    cfg = settings.kafka
    flow = [cfg.input_topic, *(getattr(cfg, attr) for attr in OUTPUT_TOPICS.values())]
    return [*flow, settings.responder.reflection_topic]


def attach_topic_sinks(settings: Settings, outputs: OutputSpec) -> None:
    """Give every topic-backed output a Kafka sink (key = session id, value = the record's JSON).

    Idempotent: an output that already writes to its topic is left alone, so explicit wiring
    and this loop can coexist without writing a record twice.
    """
    for spec_field in fields(outputs):
        attr = OUTPUT_TOPICS.get(spec_field.name)
        if attr is None:
            continue
        topic = getattr(settings.kafka, attr)
        sinks = getattr(outputs, spec_field.name)
        if not any(isinstance(s, KafkaRecordSink) and s.topic == topic for s in sinks):
            sinks.append(kafka_sink(settings, topic))


def metric_sinks(settings: Settings, mode: Mode) -> list[Sink[WindowMetrics]]:
    """Windowed-metrics sinks: the run's JSONL file, Redis (run mode by default), Prometheus if a port is set."""
    cfg = settings.metrics
    if not cfg.enabled:
        return []
    sinks: list[Sink[WindowMetrics]] = [KeyedJsonlSink(cfg.path, WINDOW_KEY)]
    if cfg.redis if cfg.redis is not None else mode == "run":
        sinks.append(RedisMetricsSink(settings.redis.url, cfg.redis_prefix, cfg.redis_ttl_s, settings.redis.timeout_s))
    if cfg.prometheus_port is not None:
        sinks.append(PrometheusMetricsSink(cfg.prometheus_port, cfg.prometheus_host))
    return sinks


def outputs_for(
    settings: Settings, mode: Mode, mirror: StateMirror, embedder: Embedder, recent: RecentActions | None = None
) -> OutputSpec:
    """Sinks per mode: replay writes dead letters and recall results to files; run also writes
    every record to its topic."""
    store_sink = StoreSink(lambda: open_store(settings), dim=embedder.dim)
    # Keyed files: a repeated run or replay replaces its records instead of appending them again.
    deadletters: list[Sink[DeadLetter]] = [KeyedJsonlSink(settings.deadletter.path, DEADLETTER_KEY)]
    units: list[Sink[MemoryUnit]] = []
    states: list[Sink[SessionState]] = [StateMirrorSink(mirror)]
    archived: list[Sink[ArchivedTask]] = []
    if recent is not None:
        units.append(RecentActionsSink(recent))
    results: list[Sink[RecallResult]] = [KeyedJsonlSink(settings.deadletter.path.parent / "recall.jsonl", RECALL_KEY)]
    responses: list[Sink[ResponderItem]] = [
        KeyedJsonlSink(settings.deadletter.path.parent / "response_requests.jsonl", RESPONDER_ITEM_KEY)
    ]
    if mode == "run":
        deadletters.append(kafka_sink(settings, settings.kafka.deadletter_topic))
        units.append(kafka_sink(settings, settings.kafka.memory_topic))
        archived.append(kafka_sink(settings, settings.kafka.archived_topic))
        results.append(kafka_sink(settings, settings.kafka.recall_topic))
        responses.append(kafka_sink(settings, settings.kafka.response_request_topic))
    else:
        archived.append(KeyedJsonlSink(settings.task.archived_path, ARCHIVED_KEY))
        if settings.task.state_log_path is not None:
            states.append(JsonlSink(settings.task.state_log_path))
    outputs = OutputSpec(
        deadletters=deadletters,
        memory_points=[store_sink],
        memory_units=units,
        states=states,
        archived=archived,
        recall_results=results,
        response_requests=responses,
        metrics=metric_sinks(settings, mode),
    )
    if mode == "run":
        attach_topic_sinks(settings, outputs)  # every other topic-backed output (metrics ...)
    return outputs


def recent_actions_for(settings: Settings, mode: Mode) -> RecentActions:
    """The 7-day tier: Redis where the state mirror is Redis, in-process otherwise."""
    enabled = settings.redis.enabled if settings.redis.enabled is not None else mode == "run"
    window = settings.recall.recent_window_s
    if not enabled:
        return InMemoryRecentActions(window)
    return RedisRecentActions(settings.redis.url, window, settings.redis.timeout_s)


def verification_for(settings: Settings) -> VerificationGuard:
    """Verifiers from settings (fact kind → URL) behind the tool guard."""
    cfg = settings.verifiers
    registry = VerifierRegistry()
    for kind, url in cfg.endpoints.items():
        registry.register(HttpVerifier(kind, url, timeout_s=cfg.timeout_s))
    guard = GuardConfig(
        per_user_per_minute=cfg.per_user_per_minute,
        slow_p95_ms=cfg.slow_p95_ms,
        breaker_failures=cfg.breaker_failures,
        breaker_s=cfg.breaker_s,
        degrade_below=cfg.degrade_below,
        break_below=cfg.break_below,
    )
    return VerificationGuard(
        registry,
        VerifierPool(cfg.max_workers),
        guard,
        wait_s=settings.recall.verify_wait_ms / 1000,
        answer_ttl_s=settings.recall.answer_ttl_s,
        fallback_values=dict(cfg.fallback_values),
    )


def recall_service_for(
    settings: Settings, embedder: Embedder, *, recent: RecentActions | None = None, store: MemoryStore | None = None
) -> RecallService:
    """The recall service over the process-wide store (the flow's executor and the CLI's API),
    or over `store` (the HTTP API passes its lease, which opens the store lazily)."""
    cfg = settings.recall
    tables = tables_file(cfg.weights_path or DEFAULT_WEIGHTS, cfg.lexicon_path or DEFAULT_LEXICON)
    if store is None:
        store = open_store(settings)
        store.ensure_collection(embedder.dim)
    return RecallService(
        store,
        embedder,
        tables,
        candidate_limit=cfg.candidate_limit,
        recent=recent,
        recent_limit=cfg.recent_limit,
        verification=None if cfg.skip_verification else verification_for(settings),
    )


# A replay at full speed compresses days of event time into milliseconds: the records of one
# event reach the window operator along paths of different lengths, so any watermark races
# them. A replay therefore closes its windows at the end of its input unless told otherwise.
REPLAY_TO_THE_END_S = 100 * 365 * 86400.0


def replay_settings(settings: Settings) -> Settings:
    """The settings a replay runs with: metric windows use `metrics.replay_lateness_s`."""
    lateness = settings.metrics.replay_lateness_s
    metrics = settings.metrics.model_copy(
        update={"allowed_lateness_s": REPLAY_TO_THE_END_S if lateness is None else lateness}
    )
    return settings.model_copy(update={"metrics": metrics})
