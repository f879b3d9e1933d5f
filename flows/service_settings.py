"""The settings sections of the services around the flow: input limits, the store, Redis, Kafka,
dead letters, recovery, replay, ASR and the HTTP server. `flows.settings.Settings` holds one of
each; the stage sections (coreference, tagging, task, recall …) are in `flows/settings.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from schemas.events import EVENT_YEAR_MAX, EVENT_YEAR_MIN


class Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class InputSettings(Section):
    max_record_bytes: int = Field(default=256_000, gt=0, description="raw record limit; larger → dead letter")
    max_text_chars: int = Field(default=8_000, gt=0, description="turn text limit; longer → dead letter")
    max_json_depth: int = Field(default=32, gt=0, description="nesting limit; deeper → dead letter")
    min_year: int = Field(
        default=EVENT_YEAR_MIN, ge=EVENT_YEAR_MIN, description="event times before this year (UTC) → dead letter"
    )
    max_year: int = Field(
        default=EVENT_YEAR_MAX, le=EVENT_YEAR_MAX, description="event times after this year (UTC) → dead letter"
    )


class StoreSettings(Section):
    backend: Literal["qdrant_edge", "qdrant_local", "qdrant_server"] = "qdrant_edge"
    path: Path = Path("var/store")
    url: str | None = None
    api_key: SecretStr | None = None
    collection: str = "memory"
    timeout_s: float = Field(default=5.0, gt=0)
    timeline_rows: int = Field(
        default=100_000,
        ge=0,
        description="qdrant_edge: memories the per-user recall timeline index holds (~2 KB each, payload as JSON)",
    )


class RedisSettings(Section):
    enabled: bool | None = Field(default=None, description="None: on for `run`, off for embedded `replay`")
    url: str = "redis://127.0.0.1:6379/0"
    state_ttl_s: int = Field(default=900, gt=0)
    timeout_s: float = Field(default=2.0, gt=0)


class KafkaSettings(Section):
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
    log_level: int = Field(
        default=2,
        ge=0,
        le=7,
        description="librdkafka's own stderr log, as a syslog level: 2 keeps its per-retry connection lines out "
        "(failures still surface as errors); `recallflow --debug` raises it to 7",
    )


class DeadLetterSettings(Section):
    path: Path = Path("var/deadletter.jsonl")


class RecoverySettings(Section):
    """Bytewax recovery: snapshots of every stateful step, resumed after a crash or a kill."""

    enabled: bool = Field(default=False, description="snapshot state and resume from the recovery dir")
    dir: Path = Field(default=Path("var/recovery"), description="local dir of the recovery partitions (sqlite)")
    partitions: int = Field(default=1, gt=0, description="partitions created by `recallflow recovery init`")
    snapshot_interval_s: float = Field(default=10.0, gt=0, description="epoch length: state is snapshotted this often")
    backup_interval_s: float = Field(default=0.0, ge=0, description="keep superseded snapshots this long (for backups)")


class ReplaySettings(Section):
    rate: float | None = Field(default=None, gt=0, description="events per second; None: full speed")
    batch_size: int = Field(default=64, gt=0)


class AsrSettings(Section):
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


class ServeSettings(Section):
    """`recallflow serve`: the HTTP API and inspector (docs/serve.md)."""

    host: str = Field(default="127.0.0.1", description="bind address; keep it on loopback unless auth is required")
    port: int = Field(default=8080, gt=0, lt=65536)
    auth: Literal["auto", "required", "off"] = Field(
        default="auto", description="auto: required when api_keys are set or the store is a server, else off"
    )
    api_keys: dict[str, SecretStr] = Field(
        default_factory=dict, description='tenant → API key, e.g. {"acme": "…"}; a key reaches its tenant only'
    )
    api_key_header: str = Field(default="X-API-Key", min_length=1)
    tenant_header: str = Field(default="X-Tenant-Id", min_length=1, description="tenant when auth is off")
    default_tenant: str = Field(default="default", min_length=1, description="tenant when auth is off and no header")
    max_body_bytes: int = Field(default=64_000, gt=0, description="larger request bodies → 413")
    max_page_size: int = Field(default=200, gt=0, le=10_000)
    max_scan: int = Field(default=20_000, gt=0, description="most memories read for one session listing")
    store_idle_release_s: float | None = Field(
        default=30.0, gt=0, description="close an embedded store after this idle time so a replay can open it"
    )
    recall_log_paths: tuple[Path, ...] = Field(
        default=(), description="RecallResult JSONL files to index; empty: recall.jsonl beside the dead letters"
    )
    api_recall_log: Path | None = Field(
        default=None, description="POST /recall results are appended here; None: api_recall.jsonl by the dead letters"
    )
    metrics_path: Path | None = Field(
        default=None, description="WindowMetrics JSONL of the flow; None: metrics.path (the flow's metrics sink)"
    )
    health_windows: int = Field(default=12, gt=0, le=500, description="windows shown in the health panel")
    health_window_s: int = Field(default=60, gt=0, description="window length when counts are computed here")
