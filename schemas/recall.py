"""RecallResult: the scored, explained top cues for one query."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from schemas.events import SCHEMA_VERSION, EventTime, Record, SpeakerRole
from schemas.memory import EmotionLoad, TimeExpression

QuestionClass = Literal["order", "logistics", "after_sales", "promotion", "account", "other"]


class ScoreComponents(Record):
    emotion_match: float = 0.0
    time_proximity: float = 0.0
    severity: float = 0.0
    resolution_gap: float = 0.0
    commitment_strength: float = 0.0
    semantic: float = 0.0
    lexical: float = 0.0
    person: float = 0.0
    entity: float = 0.0
    relevance: float = 0.0
    css: float = 0.0
    final: float = 0.0


class ValidityDecision(Record):
    memory_id: str
    decision: Literal[
        "kept",
        "expired",
        "verified",
        "verify_failed_downweighted",
        "verify_failed_dropped",
        "low_confidence",
        "superseded",
        "fallback",
    ]
    detail: str = ""


class EvidenceLink(Record):
    """One override in arbitration: which source beat which, and why."""

    winner: Literal["user_statement", "verifier", "memory"]
    loser: Literal["user_statement", "verifier", "memory"]
    memory_id: str | None = None
    detail: str


class Cue(Record):
    memory_id: str
    cue_id: str = ""
    tier: Literal["recent", "long_term"] = "long_term"
    text: str
    unit_type: str
    score: float
    components: ScoreComponents
    explanation: str
    is_fallback: bool = False
    # Optional context for the responder: when the memory was said, by whom, and its
    # emotion load; low certainty with high urgency lowers the promise strength of the reply.
    ts: datetime | None = None
    speaker_role: SpeakerRole | None = None
    emotion: EmotionLoad | None = None
    # The memory in context, as stored with it: the whole utterance the unit was cut from, and the
    # session's turn before it as "speaker: text" (None for a session's first turn).
    turn_text: str | None = None
    context_prev: str | None = None
    # A weak cue: recall abstained (nothing cleared the relevance floor) and shows what it would have
    # offered, for a person to look at; the responder never reads weak cues.
    weak: bool = False


class ContextTurn(Record):
    """One of the last turns of the session: the immediate context, never retrieved."""

    event_id: str
    ts: EventTime
    text: str
    speaker: str | None = None
    speaker_role: SpeakerRole = "customer"


class RecallRequest(Record):
    """A user turn that asks for recall (emitted by the trigger, or built by the CLI / API)."""

    schema_version: Literal[1] = SCHEMA_VERSION
    query_event_id: str
    session_id: str
    tenant_id: str = "default"
    user_id: str | None = None
    query_text: str
    ts: EventTime
    speaker: str | None = None
    context: tuple[ContextTurn, ...] = Field(default=(), max_length=3)
    known_people: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    task_id: str | None = None
    task_stage: str | None = None
    intent_chain: tuple[str, ...] = ()
    # The question's time expressions as the write path read them (`Turn.times`, in the event's
    # time zone); None: recall reads them from `query_text` itself (a question from the CLI or API).
    times: tuple[TimeExpression, ...] | None = None


class VerifierAnswer(Record):
    """What a verifier said about a transient fact: still true or not, and the current value."""

    kind: str
    subject: str
    valid: bool
    value: str | None = None
    checked_at: datetime
    latency_ms: float = 0.0


class RecallResult(Record):
    schema_version: Literal[1] = SCHEMA_VERSION
    query_event_id: str
    session_id: str
    tenant_id: str
    user_id: str | None = None
    query_text: str
    question_class: QuestionClass = "other"
    ts: datetime
    cues: tuple[Cue, ...] = Field(default=(), max_length=3)
    # When recall abstains: the picks that stayed under the relevance floor, marked weak (never
    # handed to the responder; empty whenever `cues` is not).
    weak_cues: tuple[Cue, ...] = Field(default=(), max_length=3)
    validity_decisions: tuple[ValidityDecision, ...] = ()
    evidence_chain: tuple[EvidenceLink, ...] = ()
    explanation: str = ""
    debug_marker: str = ""
