"""Turn settings into live resources: the store, the state mirror, the embedder, the I/O specs.

Resources are built here (in flows/, at start), never at import time and never inside an
operator. The store is one handle per process, shared by the workers of that process.
"""

from __future__ import annotations

import threading
from dataclasses import fields
from datetime import timedelta
from pathlib import Path
from typing import Literal

from bytewax.dataflow import Dataflow
from bytewax.outputs import Sink
from bytewax.recovery import RecoveryConfig, init_db_dir
from bytewax.run import cli_main

from flows.io import KafkaInput, OutputSpec
from flows.settings import KafkaSettings, Settings
from schemas.deadletter import DeadLetter
from schemas.errors import ConfigurationError
from schemas.memory import MemoryUnit
from schemas.metrics import WindowMetrics
from sinks.embedders import load_embedder
from sinks.jsonl_sink import JsonlSink
from sinks.kafka_sink import KafkaRecordSink
from sinks.metrics_sinks import PrometheusMetricsSink, RedisMetricsSink
from sinks.state_mirror import InMemoryStateMirror, RedisStateMirror, StateMirror, StateMirrorSink
from sinks.store.base import MemoryStore
from sinks.store.sink import StoreSink
from state.embedding import Embedder

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


# OutputSpec field → the KafkaSettings attribute naming its topic. In `run` mode every
# OutputSpec field listed here gets a Kafka sink on its topic, so a stage that adds its
# output field (recalls, response_requests, responses, archived ...) is on Kafka with no
# further wiring.
OUTPUT_TOPICS: dict[str, str] = {
    "deadletters": "deadletter_topic",
    "memory_units": "memory_topic",
    "metrics": "metrics_topic",
    "recalls": "recall_topic",
    "response_requests": "response_request_topic",
    "responses": "response_topic",
    "archived": "archived_topic",
}


def output_topics(settings: Settings) -> list[str]:
    """Every topic the flow reads or writes (what `recallflow topics create` creates)."""
    cfg = settings.kafka
    return [cfg.input_topic, *(getattr(cfg, attr) for attr in OUTPUT_TOPICS.values())]


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
    sinks: list[Sink[WindowMetrics]] = [JsonlSink(cfg.path)]
    if cfg.redis if cfg.redis is not None else mode == "run":
        sinks.append(RedisMetricsSink(settings.redis.url, cfg.redis_prefix, cfg.redis_ttl_s, settings.redis.timeout_s))
    if cfg.prometheus_port is not None:
        sinks.append(PrometheusMetricsSink(cfg.prometheus_port, cfg.prometheus_host))
    return sinks


def outputs_for(settings: Settings, mode: Mode, mirror: StateMirror, embedder: Embedder) -> OutputSpec:
    """Sinks per mode: replay writes dead letters to a file; run writes every record to its topic too."""
    store_sink = StoreSink(lambda: open_store(settings), dim=embedder.dim)
    deadletters: list[Sink[DeadLetter]] = [JsonlSink(settings.deadletter.path)]
    units: list[Sink[MemoryUnit]] = []
    if mode == "run":
        deadletters.append(kafka_sink(settings, settings.kafka.deadletter_topic))
        units.append(kafka_sink(settings, settings.kafka.memory_topic))
    outputs = OutputSpec(
        deadletters=deadletters,
        memory_points=[store_sink],
        memory_units=units,
        states=[StateMirrorSink(mirror)],
        metrics=metric_sinks(settings, mode),
    )
    if mode == "run":
        attach_topic_sinks(settings, outputs)  # issue 7: every other topic-backed output (metrics ...)
    return outputs


# -- issue 7: recovery and execution (workers, processes, snapshots) --


def recovery_partitions(directory: Path) -> list[Path]:
    return sorted(directory.glob("part-*.sqlite3"))


def init_recovery(directory: Path, partitions: int, *, process_id: int | None = None, processes: int = 1) -> list[Path]:
    """Create `partitions` empty recovery partitions (`python -m bytewax.recovery DIR N`).

    In a cluster without a shared volume, each process keeps the partitions it owns
    (index % processes == process_id) in its own directory; together they hold all N, which
    is what Bytewax needs to resume. Refuses a directory that already holds partitions:
    re-initialising would throw away the snapshots.
    """
    if partitions < 1 or processes < 1:
        raise ConfigurationError(f"recovery needs partitions >= 1 and processes >= 1, got {partitions} and {processes}")
    if process_id is not None and not 0 <= process_id < processes:
        raise ConfigurationError(f"process id {process_id} is outside 0..{processes - 1}")
    if recovery_partitions(directory):
        raise ConfigurationError(f"{directory} already holds recovery partitions; remove them to start from scratch")
    directory.mkdir(parents=True, exist_ok=True)
    init_db_dir(directory, partitions)  # type: ignore[no-untyped-call]
    if process_id is not None:
        for part in recovery_partitions(directory):
            if int(part.stem.split("-", 1)[1]) % processes != process_id:
                part.unlink()
    return recovery_partitions(directory)


def recovery_for(settings: Settings, *, auto_init: bool) -> RecoveryConfig | None:
    """The RecoveryConfig of these settings (None when recovery is off).

    A single process initialises an empty directory itself (`auto_init`); a process of a
    cluster does not, because its partitions must be laid out once for the whole cluster.
    """
    cfg = settings.recovery
    if not cfg.enabled:
        return None
    if not recovery_partitions(cfg.dir):
        if not auto_init:
            raise ConfigurationError(
                f"recovery is on but {cfg.dir} holds no partitions; "
                "run `recallflow recovery init` on each process first"
            )
        init_recovery(cfg.dir, cfg.partitions)
    backup = timedelta(seconds=cfg.backup_interval_s) if cfg.backup_interval_s else None
    return RecoveryConfig(cfg.dir, backup)  # type: ignore[no-untyped-call]


def execute(
    flow: Dataflow,
    settings: Settings,
    *,
    workers: int = 1,
    process_id: int | None = None,
    addresses: list[str] | None = None,
) -> None:
    """Run a dataflow: `workers` threads per process; a cluster when `addresses` are given (`-i/-a`)."""
    if (process_id is None) != (not addresses):
        raise ConfigurationError("a cluster run needs both a process id (-i) and every process address (-a)")
    if process_id is not None and addresses is not None and not 0 <= process_id < len(addresses):
        raise ConfigurationError(f"process id {process_id} is outside the {len(addresses)} addresses given")
    recovery = recovery_for(settings, auto_init=process_id is None)
    cli_main(  # type: ignore[no-untyped-call]
        flow,
        workers_per_process=workers,
        process_id=process_id,
        addresses=addresses,
        epoch_interval=timedelta(seconds=settings.recovery.snapshot_interval_s),
        recovery_config=recovery,
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
