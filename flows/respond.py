"""Compose the responder from settings: embedded (in-process, a Bytewax sink or a file of
responder items) and run mode (the Kafka service behind `recallflow respond`).

Both take `ResponderItem`s — ResponseRequests and UserCorrections, per session in order — and
the responder dispatches on the type: a request is answered, a correction reflected on.

Settings are read once by the caller and passed in; resources (store, embedder) open lazily,
only when a correction actually has to supersede a memory.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from flows.runtime import embedder_for, kafka_config, open_store
from flows.settings import Settings
from schemas.events import Record
from schemas.reflection import SupersedeRequest
from sinks.http.chat_client import ChatConfig
from sinks.respond.responder import Outcome, Responder, ResponderConfig, ResponseOutcome
from sinks.respond.runner import OutcomeHandler, ResponderRunner, ResponderSink
from sinks.respond.service import RespondService, RespondTopics
from sinks.store.supersede import SupersedeExecutor
from state.respond.decisions import DecisionSwitches
from state.respond.tables import decision_tables, response_text

Mode = Literal["replay", "run"]


def responder_config(settings: Settings) -> ResponderConfig:
    cfg = settings.responder
    sw = cfg.switches
    return ResponderConfig(
        chat=ChatConfig(
            base_url=cfg.base_url,
            model=cfg.model,
            api_key=cfg.api_key.get_secret_value() if cfg.api_key else None,
            max_tokens=cfg.max_tokens,
            temperature=cfg.temperature,
            timeout_s=cfg.timeout_s,
            connect_timeout_s=cfg.connect_timeout_s,
            deadline_s=cfg.deadline_s,
            retries=cfg.retries,
            retry_backoff_s=cfg.retry_backoff_s,
        ),
        concurrency=cfg.concurrency,
        fact_tokens=cfg.fact_tokens,
        max_cues=cfg.max_cues,
        max_sessions=cfg.max_sessions,
        timezone=settings.time.timezone,
        switches=DecisionSwitches(
            route=sw.route, planning=sw.planning, promise=sw.promise, channel=sw.channel, llm_enabled=sw.llm_enabled
        ),
        reflection=sw.reflection,
        supersede=sw.supersede,
    )


def build_responder(settings: Settings) -> Responder:
    """A responder with the configured tables (hot-reloaded) and endpoint."""
    cfg = settings.responder
    return Responder(
        responder_config(settings), tables=decision_tables(cfg.decisions_path), text=response_text(cfg.text_path)
    )


class LazySupersede:
    """Executes supersede requests on the configured store, opening store and embedder on first use."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._executor: SupersedeExecutor | None = None
        self._lock = threading.Lock()

    def __call__(self, request: SupersedeRequest) -> None:
        with self._lock:
            if self._executor is None:
                embedder = embedder_for(self._settings)
                store = open_store(self._settings)
                store.ensure_collection(embedder.dim)
                self._executor = SupersedeExecutor(store, embedder)
            self._executor.execute(request)


class JsonlWriter:
    """Appends records to a JSONL file (thread-safe), creating its folder."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, record: Record) -> None:
        with self._lock:
            self._file.write(record.model_dump_json() + "\n")
            self._file.flush()

    def close(self) -> None:
        self._file.close()


def file_handlers(
    settings: Settings, supersede: Callable[[SupersedeRequest], None] | None
) -> tuple[list[OutcomeHandler], list[JsonlWriter]]:
    """Embedded outputs: responses and reflections (from answers and corrections) to JSONL files,
    supersedes to the store."""
    responses = JsonlWriter(settings.responder.responses_path)
    reflections = JsonlWriter(settings.responder.reflections_path)

    def handle(outcome: Outcome) -> None:
        if isinstance(outcome, ResponseOutcome):
            responses.write(outcome.response)
        if outcome.reflection is not None:
            reflections.write(outcome.reflection)
        if outcome.supersede is not None and supersede is not None:
            supersede(outcome.supersede)

    return [handle], [responses, reflections]


def responder_sink(settings: Settings, handlers: Sequence[OutcomeHandler]) -> ResponderSink:
    """The Bytewax sink the flow's responder items (requests and corrections) go to (embedded mode)."""
    return ResponderSink(
        lambda: ResponderRunner(build_responder(settings), handlers, drain_timeout_s=settings.responder.drain_timeout_s)
    )


def respond_service(settings: Settings) -> RespondService:
    """The Kafka responder service of `recallflow respond`."""
    k = settings.kafka
    consumer = {"bootstrap.servers": k.bootstrap_servers, **kafka_config(k, consumer=True)}
    consumer["group.id"] = f"{k.group_id}-responder"
    consumer["auto.offset.reset"] = "earliest"
    producer = {"bootstrap.servers": k.bootstrap_servers, "enable.idempotence": True, **kafka_config(k, consumer=False)}
    return RespondService(
        build_responder(settings),
        consumer_config=consumer,
        producer_config=producer,
        topics=RespondTopics(
            requests=k.response_request_topic,
            responses=k.response_topic,
            reflections=settings.responder.reflection_topic,
            deadletters=k.deadletter_topic,
        ),
        supersede=LazySupersede(settings),
        batch_size=settings.responder.batch_size,
    )
