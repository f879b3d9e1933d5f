"""ResponseRequest (flow → responder) and AgentResponse (responder → responses topic).

What the responder consumes is a `ResponderItem`: a `ResponseRequest` (kind "request") or a
`UserCorrection` control event (kind "correction"), on one stream/topic keyed by session so that
a correction reaches the responder after the answer it corrects. `parse_responder_item` reads
either from JSON; a request written before `kind` existed still reads as a request.

An AgentResponse carries every rule-table decision that shaped it (`decisions`), so a reply
can be audited without the logs: which route (LLM or calculator), the planning depth and its
complexity score, the delivery channel, the promise strength, and which incident switches
overrode what.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, TypeAdapter

from schemas.events import SCHEMA_VERSION, Record, UserCorrection
from schemas.recall import Cue

Route = Literal["llm", "calculator", "template"]
PlanDepth = Literal["direct", "plan"]
PromiseStrength = Literal["firm", "neutral", "hedged"]
UrgencyLevel = Literal["realtime", "high", "medium", "low"]
CueAttribution = Literal["cited", "overlap", "supplied", "none"]
FallbackReason = Literal["endpoint_down", "timeout", "http_error", "garbage", "switched_off"]


class ResponseRequest(Record):
    schema_version: Literal[1] = SCHEMA_VERSION
    kind: Literal["request"] = Field(default="request", description="discriminator among responder items")
    request_id: str
    session_id: str
    tenant_id: str
    user_id: str | None = None
    query_event_id: str
    query_text: str
    ts: datetime
    task_id: str | None = None
    task_stage: str | None = None
    intent_chain: tuple[str, ...] = ()
    cues: tuple[Cue, ...] = ()
    preferred_channel: str | None = Field(default=None, description="the user's delivery preference, if known")


class Calculation(Record):
    """The calculator route's work: what was computed from which numbers, and the result."""

    expression: str
    result: float
    operation: str


class ResponseDecisions(Record):
    """The rule-table decisions (docs/design.md#responder), written on every response."""

    route: Route
    route_reason: str
    calculation: Calculation | None = None
    complexity_score: int
    planning: PlanDepth
    urgency: UrgencyLevel
    channel: str
    promise: PromiseStrength
    overrides: tuple[str, ...] = Field(default=(), description="incident switches that changed a decision")


class AgentResponse(Record):
    schema_version: Literal[1] = SCHEMA_VERSION
    request_id: str
    session_id: str
    tenant_id: str
    text: str
    cue_ids: tuple[str, ...] = ()
    cue_attribution: CueAttribution | None = Field(
        default=None,
        description="how cue_ids were found: cited [M1] labels, repeated words, all cues supplied (template), none",
    )
    model: str
    latency_ms: float
    fallback: bool = False
    ts: datetime
    fallback_reason: FallbackReason | None = None
    attempts: int = Field(default=0, ge=0, description="chat endpoint calls made (0 when no LLM was asked)")
    lang: str | None = None
    decisions: ResponseDecisions | None = None
    reflection_id: str | None = Field(default=None, description="set when this turn was a correction")


ResponderItem = ResponseRequest | UserCorrection
"""What the responder handles, in per-session order: a question to answer or a correction to reflect on."""


def _responder_kind(value: Any) -> str:
    # A ResponseRequest serialised before `kind` existed has none: it is a request.
    kind = value.get("kind", "request") if isinstance(value, dict) else getattr(value, "kind", "request")
    return kind if isinstance(kind, str) else "request"


_RESPONDER_ITEM: TypeAdapter[ResponderItem] = TypeAdapter(
    Annotated[
        Annotated[ResponseRequest, Tag("request")] | Annotated[UserCorrection, Tag("correction")],
        Discriminator(_responder_kind),
    ]
)


def parse_responder_item(raw: bytes | str) -> ResponderItem:
    """Read one responder item from JSON; raises pydantic's ValidationError on anything else.

    >>> parse_responder_item('{"kind": "correction", "event_id": "c1", "session_id": "s", '
    ...                      '"ts": "2026-06-10T09:00:00Z", "corrected_text": "5月16日"}').kind
    'correction'
    """
    return _RESPONDER_ITEM.validate_json(raw)
