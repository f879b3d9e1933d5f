"""Input records: conversation turns (text or ASR) and control events.

Every input record carries `kind`; the union `InputEvent` is discriminated on it. Times
are timezone-aware UTC: a naive `ts` is read as UTC (documented ingress rule), any other
zone is converted.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Final, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

# Final so that mypy reads it as Literal[1], the type of every record's `schema_version`.
SCHEMA_VERSION: Final = 1

SpeakerRole = Literal["customer", "agent", "third_party"]
Modality = Literal["text", "asr"]
MetaValue = str | int | float | bool | None


def as_utc(value: datetime) -> datetime:
    """Read a naive datetime as UTC and convert an aware one to UTC.

    >>> as_utc(datetime(2026, 1, 1, 8, 0)).isoformat()
    '2026-01-01T08:00:00+00:00'
    """
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


# The widest event-time range any record may carry (UTC years, inclusive). Far from
# datetime's own limits (years 1 and 9999), so that every `ts ± timeout`, window bound or
# validity span computed downstream stays representable. docs/robustness.md explains why.
EVENT_YEAR_MIN: Final = 1900
EVENT_YEAR_MAX: Final = 2999


def checked_event_time(value: datetime) -> datetime:
    """`as_utc`, refusing (ValueError) times outside years EVENT_YEAR_MIN..EVENT_YEAR_MAX in UTC.

    An offset can push a representable local time out of range ("9999-12-31T23:00-05:00" is
    year 10000 in UTC): that is refused here too, never raised later as an OverflowError.

    >>> checked_event_time(datetime(2026, 1, 1, 8, 0)).isoformat()
    '2026-01-01T08:00:00+00:00'
    >>> checked_event_time(datetime(9999, 12, 31))
    Traceback (most recent call last):
    ...
    ValueError: 9999-12-31T00:00:00 is outside the years 1900-2999 (UTC)
    """
    try:
        utc = as_utc(value)
    except OverflowError as exc:
        msg = f"{value.isoformat()} is outside the years {EVENT_YEAR_MIN}-{EVENT_YEAR_MAX} (UTC)"
        raise ValueError(msg) from exc
    if not EVENT_YEAR_MIN <= utc.year <= EVENT_YEAR_MAX:
        msg = f"{value.isoformat()} is outside the years {EVENT_YEAR_MIN}-{EVENT_YEAR_MAX} (UTC)"
        raise ValueError(msg)
    return utc


# A validated event time: timezone-aware UTC, within EVENT_YEAR_MIN..EVENT_YEAR_MAX.
EventTime = Annotated[datetime, AfterValidator(checked_event_time)]


class Record(BaseModel):
    """Base of every record: frozen, strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class AsrPause(Record):
    after_char: int = Field(ge=0)
    duration_ms: int = Field(ge=0)


class AsrWord(Record):
    word: str
    start_ms: int = Field(ge=0)
    end_ms: int = Field(ge=0)
    probability: float | None = Field(default=None, ge=0.0, le=1.0)


class AsrInfo(Record):
    confidence: float = Field(ge=0.0, le=1.0)
    start_ms: int = Field(ge=0)
    end_ms: int = Field(ge=0)
    pauses: tuple[AsrPause, ...] = ()
    words: tuple[AsrWord, ...] = ()


class _EventBase(Record):
    schema_version: Literal[1] = SCHEMA_VERSION
    event_id: str = Field(min_length=1, max_length=200)
    session_id: str = Field(min_length=1, max_length=200)
    tenant_id: str = Field(default="default", min_length=1, max_length=200)
    user_id: str | None = Field(default=None, max_length=200)
    ts: EventTime


class ConversationEvent(_EventBase):
    """One chat turn or ASR segment."""

    kind: Literal["turn"] = "turn"
    turn_id: str | None = Field(default=None, max_length=200)
    speaker: str | None = Field(default=None, max_length=200)
    speaker_role: SpeakerRole = "customer"
    modality: Modality = "text"
    text: str
    asr: AsrInfo | None = None
    lang: str | None = Field(default=None, max_length=16)
    tz: str | None = Field(
        default=None,
        max_length=64,
        description="IANA zone of the speaker's wall clock (明天下午三点); default from settings",
    )
    meta: dict[str, MetaValue] = Field(default_factory=dict)

    @field_validator("tz")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError) as exc:
                raise ValueError(f"unknown time zone {value!r}") from exc
        return value

    @property
    def turn_key(self) -> str:
        """The turn id, falling back to the event id."""
        return self.turn_id or self.event_id


class ResolutionUpdate(_EventBase):
    """A complaint or issue was resolved (or reopened); recall uses it for resolution_gap."""

    kind: Literal["resolution"] = "resolution"
    target_event_id: str | None = None
    topic: str | None = None
    status: Literal["resolved", "pending", "reopened"] = "resolved"


class SessionEnd(_EventBase):
    """The session is over: per-session state can be archived and discarded."""

    kind: Literal["session_end"] = "session_end"
    reason: str | None = None


class UserCorrection(_EventBase):
    """The user states that an earlier answer or memory is wrong and gives the right value."""

    kind: Literal["correction"] = "correction"
    target_event_id: str | None = None
    corrected_text: str


InputEvent = Annotated[
    ConversationEvent | ResolutionUpdate | SessionEnd | UserCorrection,
    Field(discriminator="kind"),
]
