"""DeadLetter: a record that could not be processed, with the reason and the raw bytes.
DuplicateDelivery: a record dropped because its event was already processed (same id, same content).
"""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Literal

from pydantic import Field

from schemas.events import SCHEMA_VERSION, Record


class DeadLetter(Record):
    schema_version: Literal[1] = SCHEMA_VERSION
    step: str
    key: str | None = None
    source: str = Field(description="where the raw record came from: file:line or topic/partition@offset")
    error_type: str
    message: str
    raw_b64: str = Field(description="the raw bytes, base64: invalid UTF-8 survives intact")
    raw_preview: str = Field(description="the first bytes decoded with replacement, for humans")
    at: datetime

    @classmethod
    def from_raw(
        cls,
        *,
        step: str,
        key: str | None,
        source: str,
        error_type: str,
        message: str,
        raw: bytes,
        at: datetime,
    ) -> DeadLetter:
        """Build a dead letter keeping the raw bytes losslessly."""
        return cls(
            step=step,
            key=key,
            source=source,
            error_type=error_type,
            message=message[:2000],
            raw_b64=base64.b64encode(raw).decode("ascii"),
            raw_preview=raw[:300].decode("utf-8", errors="replace"),
            at=at,
        )

    def raw_bytes(self) -> bytes:
        """The original bytes.

        >>> from datetime import UTC, datetime
        >>> DeadLetter.from_raw(step="s", key=None, source="f:1", error_type="x", message="m",
        ...     raw=b"\\xff", at=datetime(2026, 1, 1, tzinfo=UTC)).raw_bytes()
        b'\\xff'
        """
        return base64.b64decode(self.raw_b64)


class DuplicateDelivery(Record):
    """An input record repeating an event already processed (same id, same content): dropped.

    Counted so that a run's figures add up (records read = events + dead letters + duplicates).
    """

    schema_version: Literal[1] = SCHEMA_VERSION
    step: str
    source: str = Field(description="where the repeated record came from: file:line or topic/partition@offset")
    session_id: str
    tenant_id: str
    event_id: str
    at: datetime
