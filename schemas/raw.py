"""RawRecord: input bytes exactly as they arrived, before any validation."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RawRecord:
    """Bytes as they arrived, plus where from (`file:line` or `topic/partition@offset`)."""

    source: str
    payload: bytes
    key: bytes | None = None
