"""Turn settings into live resources: the store, the state mirror, the embedder, the I/O specs.

Resources are built here (in flows/, at start), never at import time and never inside an
operator. The store is one handle per process, shared by the workers of that process.
"""

from __future__ import annotations

import threading
from typing import Literal

from bytewax.outputs import Sink

from flows.io import KafkaInput, OutputSpec
from flows.recall import RecallService
from flows.settings import KafkaSettings, Settings
from flows.verification import VerificationGuard
from schemas.deadletter import DeadLetter
from schemas.errors import ConfigurationError
from schemas.memory import MemoryUnit
from schemas.recall import RecallResult
from schemas.response import ResponseRequest
from schemas.session import ArchivedTask, SessionState
from sinks.embedders import load_embedder
from sinks.jsonl_sink import JsonlSink
from sinks.kafka_sink import KafkaRecordSink
from sinks.recent_actions import InMemoryRecentActions, RecentActions, RecentActionsSink, RedisRecentActions
from sinks.state_mirror import InMemoryStateMirror, RedisStateMirror, StateMirror, StateMirrorSink
from sinks.store.base import MemoryStore
from sinks.store.sink import StoreSink
from sinks.verifiers import HttpVerifier, VerifierPool, VerifierRegistry
from state.embedding import Embedder
from state.recall_config import DEFAULT_LEXICON, DEFAULT_WEIGHTS, HotTables
from state.tool_guard import GuardConfig

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


def _build_store(settings: Settings) -> MemoryStore:
    cfg = settings.store
    if cfg.backend == "qdrant_edge":
        from sinks.store.qdrant_edge import QdrantEdgeStore

        return QdrantEdgeStore(cfg.path / "edge", collection=cfg.collection)
    from sinks.store.qdrant_client_store import QdrantClientStore

    if cfg.backend == "qdrant_local":
        return QdrantClientStore.local(cfg.path / "local", collection=cfg.collection)
    if not cfg.url:
        raise ConfigurationError("store.backend=qdrant_server needs store.url (RECALLFLOW_STORE__URL)")
    api_key = cfg.api_key.get_secret_value() if cfg.api_key else None
    return QdrantClientStore.server(cfg.url, api_key, collection=cfg.collection, timeout_s=cfg.timeout_s)


def embedder_for(settings: Settings) -> Embedder:
    return load_embedder(settings.embedder.kind, settings.embedder.model)


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
    conf: dict[str, str] = {"security.protocol": cfg.security_protocol}
    if consumer:
        conf |= {"group.id": cfg.group_id, "session.timeout.ms": str(cfg.session_timeout_ms), "enable.auto.commit": "false"}
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
        brokers=cfg.bootstrap_servers.split(","), topic=cfg.input_topic, config=kafka_config(cfg, consumer=True), tail=tail
    )


def kafka_sink(settings: Settings, topic: str) -> KafkaRecordSink:
    cfg = settings.kafka
    return KafkaRecordSink(cfg.bootstrap_servers, topic, kafka_config(cfg, consumer=False))


def outputs_for(
    settings: Settings, mode: Mode, mirror: StateMirror, embedder: Embedder, recent: RecentActions | None = None
) -> OutputSpec:
    """Sinks per mode: replay writes dead letters and recall results to files; run writes every record to its topic too."""
    store_sink = StoreSink(lambda: open_store(settings), dim=embedder.dim)
    deadletters: list[Sink[DeadLetter]] = [JsonlSink(settings.deadletter.path)]
    units: list[Sink[MemoryUnit]] = []
    states: list[Sink[SessionState]] = [StateMirrorSink(mirror)]
    archived: list[Sink[ArchivedTask]] = []
    if recent is not None:
        units.append(RecentActionsSink(recent))
    results: list[Sink[RecallResult]] = [JsonlSink(settings.deadletter.path.parent / "recall.jsonl")]
    responses: list[Sink[ResponseRequest]] = [JsonlSink(settings.deadletter.path.parent / "response_requests.jsonl")]
    if mode == "run":
        deadletters.append(kafka_sink(settings, settings.kafka.deadletter_topic))
        units.append(kafka_sink(settings, settings.kafka.memory_topic))
        archived.append(kafka_sink(settings, settings.kafka.archived_topic))
        results.append(kafka_sink(settings, settings.kafka.recall_topic))
        responses.append(kafka_sink(settings, settings.kafka.response_request_topic))
    else:
        archived.append(JsonlSink(settings.task.archived_path))
        if settings.task.state_log_path is not None:
            states.append(JsonlSink(settings.task.state_log_path))
    return OutputSpec(
        deadletters=deadletters,
        memory_points=[store_sink],
        memory_units=units,
        states=states,
        archived=archived,
        recall_results=results,
        response_requests=responses,
    )


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
    settings: Settings, embedder: Embedder, *, recent: RecentActions | None = None
) -> RecallService:
    """The recall service over the process-wide store (the flow's executor and the CLI's API)."""
    cfg = settings.recall
    tables = HotTables(cfg.weights_path or DEFAULT_WEIGHTS, cfg.lexicon_path or DEFAULT_LEXICON)
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
