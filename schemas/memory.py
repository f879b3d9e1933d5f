"""MemoryUnit: the annotated, faithful unit that lands in the vector store as a point payload."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field

from schemas.events import SCHEMA_VERSION, Modality, Record, SpeakerRole

# Fixed namespace: memory ids must be identical across runs, replays and machines.
MEMORY_NAMESPACE = uuid.UUID("6f1b0c2e-5a43-4d8e-9b7a-3c2f1e0d9a55")

# The first nine are the original types (stored units keep reading); the customer-service ones
# after them: a complaint said again, a promise someone else made (reported by the speaker),
# and the confirmation that a problem is solved (it closes the open complaint it answers).
UnitType = Literal[
    "action_request",
    "status_update",
    "commitment",
    "question",
    "complaint",
    "refusal",
    "clarification",
    "statement",
    "smalltalk",
    "repeat_complaint",
    "third_party_commitment",
    "resolution_confirmation",
]
IntentLabel = Literal["commitment", "clarify", "question", "request", "refuse", "neutral"]
Granularity = Literal["year", "month", "week", "day", "hour", "minute", "second", "range"]
# point: an instant or a day (明天下午三点, next Tuesday); range: a longer span (下周, 这周末, 月初);
# deadline: a limit ("12月20日前", "by 4pm", "within 5 business days"), exact instant in `deadline`;
# duration: a length of time from (or, said in the past, up to) the event ("需要三个工作日", "for two weeks").
TimeKind = Literal["point", "range", "deadline", "duration"]
ValidityType = Literal["permanent", "periodic", "transient"]
Severity = Literal["high", "medium", "low"]
ResolutionStatus = Literal["pending", "resolved", "none"]


def memory_id(tenant_id: str, session_id: str, event_id: str, unit_index: int) -> str:
    """Deterministic point id: UUIDv5 of tenant, session, event and unit index.

    >>> memory_id("t", "s", "e", 0) == memory_id("t", "s", "e", 0)
    True
    """
    name = f"{tenant_id}\x1f{session_id}\x1f{event_id}\x1f{unit_index}"
    return str(uuid.uuid5(MEMORY_NAMESPACE, name))


def turn_embedding_text(turn_text: str) -> str:
    """The text a turn's stored vector is computed from, which the units' trained heads read too:
    the whole turn as said, without its speaker (`MemoryUnit.embedding_text` says why). The one
    place that decides it, for the store, the heads and the batch prefetch.

    >>> turn_embedding_text("我们会补偿五十元优惠券，两天内发到您的账户。")
    '我们会补偿五十元优惠券，两天内发到您的账户。'
    """
    return turn_text


CorefKind = Literal["entity", "anaphor", "weak", "zero", "contrast"]


class CorefAnchor(Record):
    """A structured coreference anchor (docs/design.md#coreference): the guess made explicit and traceable.

    `kind`: an `entity` named in the unit itself (its own anchor), an `anaphor` (这家餐馆, it),
    a `weak` reference bound by a descriptor (那个蓝色的盒子, the blue one), or a `zero` anaphor (a
    question about an attribute with no referent said: 电话是多少？), or a `contrast` (换一家酒店, 别的餐馆,
    another hotel: a new one of a type; resolved to the one of that type it goes beyond). `mention_span`: offsets of
    `mention` in the turn text; `antecedent_span`: offsets of the antecedent in `context_window`
    (the sentence where it was last named, in turn `antecedent_turn_id`).
    """

    mention: str
    core_referent: str | None = None
    resolved_entity: str | None = None
    entity_type: str | None = None
    antecedent_span: tuple[int, int] | None = None
    antecedent_turn_id: str | None = None
    context_window: str | None = None
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    needs_human_review: bool = False
    kind: CorefKind = "anaphor"
    mention_span: tuple[int, int] | None = None


class TimeExpression(Record):
    """A time expression as said (`original_form`) and as instants from the event's own ts.

    A deadline runs from the event (`start`) to its limit (`end` = `deadline`, the exact instant:
    16:00 for "下午4点前", the end of the day for "12月20日前"); `granularity` is that of the limit.
    """

    original_form: str
    start: datetime
    end: datetime
    granularity: Granularity
    span: tuple[int, int]
    parser: str
    kind: TimeKind = "point"
    deadline: datetime | None = None


class IntentScores(Record):
    commitment: float = Field(default=0.0, ge=0.0, le=1.0)
    clarify: float = Field(default=0.0, ge=0.0, le=1.0)
    question: float = Field(default=0.0, ge=0.0, le=1.0)
    request: float = Field(default=0.0, ge=0.0, le=1.0)
    refuse: float = Field(default=0.0, ge=0.0, le=1.0)
    neutral: float = Field(default=1.0, ge=0.0, le=1.0)


class EmotionLoad(Record):
    stress: float = Field(default=0.0, ge=0.0, le=1.0)
    certainty: float = Field(default=0.5, ge=0.0, le=1.0)
    urgency: float = Field(default=0.0, ge=0.0, le=1.0)
    cooperation: float = Field(default=0.5, ge=0.0, le=1.0)


class Validity(Record):
    validity_type: ValidityType = "permanent"
    effective_from: datetime | None = None
    effective_to: datetime | None = None
    cycle_pattern: str | None = None
    last_verified: datetime | None = None


class MemoryUnit(Record):
    """One memory: the payload of one vector-store point."""

    schema_version: Literal[1] = SCHEMA_VERSION
    memory_id: str
    unit_index: int = Field(ge=0)
    tenant_id: str
    session_id: str
    user_id: str | None = None
    task_id: str | None = None
    turn_id: str
    event_id: str
    ts: datetime
    text: str
    source_text: str
    speaker: str | None = None
    speaker_role: SpeakerRole = "customer"
    modality: Modality = "text"
    lang: str | None = None
    coref: tuple[CorefAnchor, ...] = ()
    terms: tuple[str, ...] = ()
    priority_flag: bool = False
    entropy: float = Field(default=0.5, ge=0.0, le=1.0)
    unit_type: UnitType = "statement"
    merged_from: tuple[str, ...] = ()
    intent: IntentScores = IntentScores()
    intent_label: IntentLabel = "neutral"
    confidence_score: float = Field(default=0.75, ge=0.0, le=1.0)
    emotion: EmotionLoad = EmotionLoad()
    commitment_strength: float = Field(default=0.0, ge=0.0, le=1.0)
    times: tuple[TimeExpression, ...] = ()
    validity: Validity = Validity()
    topic: str | None = None
    severity: Severity = "low"
    resolution_status: ResolutionStatus = "none"
    resolved_at: datetime | None = None
    # Set when a user's explicit statement replaced this memory (reflection, docs/design.md#responder): the id of
    # the memory that holds the user's statement. A superseded memory also gets
    # validity.effective_to = the correction time, so valid_at filters drop it from recall.
    superseded_by: str | None = None
    # The session's previous turn as "speaker: text" (None for a session's first turn): the context
    # a unit is read and shown in (recall also scores it in context, through the neighbouring turns).
    context_prev: str | None = None

    @property
    def embedding_text(self) -> str:
        """What the stored vector is computed from: the whole turn as said, so a unit cut from a turn
        ("两天内发到您的账户。") is found by what the turn is about; the unit text is what a cue shows and
        what lexical relevance reads. The units of one turn share it, and so do their trained heads
        (emotion, unit type): one embedding per turn. The speaker stays out of the vector (lexical
        relevance and the name rules read it): with it, the heads, trained on plain sentences,
        misread the turn (unit-type macro-F1 0.726 → 0.618 on the second own set), and recall did
        not need it (LoCoMo R@5 / R@10 0.671 / 0.746 with it, 0.665 / 0.752 without).

        >>> from datetime import UTC, datetime
        >>> u = MemoryUnit(memory_id="m", unit_index=1, tenant_id="t", session_id="s", turn_id="e", event_id="e",
        ...                ts=datetime(2025, 6, 1, tzinfo=UTC), text="两天内发到您的账户。",
        ...                source_text="我们会补偿五十元优惠券，两天内发到您的账户。", speaker="客服")
        >>> u.embedding_text
        '我们会补偿五十元优惠券，两天内发到您的账户。'
        """
        return turn_embedding_text(self.source_text)

    @property
    def deadline(self) -> datetime | None:
        """The earliest deadline among the unit's times (a promise's due instant), or None.

        Computed from `times` (each deadline expression keeps its own `deadline` in the payload), so it
        can never disagree with them.
        """
        limits = [t.deadline for t in self.times if t.kind == "deadline" and t.deadline is not None]
        return min(limits, default=None)


@dataclass(frozen=True, slots=True)
class EmbeddedUnit:
    """A memory unit with its stored vector, on its way to the store."""

    unit: MemoryUnit
    vector: npt.NDArray[np.float32]
