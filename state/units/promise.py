"""Is a memory an agent's promise with a deadline?

Input: a `MemoryUnit` (or its payload as the store returns it). Output: a bool. State: none;
the markers are a data file (`resources/promise.yaml`). Used at write time (a promise keeps
its deadline as a time, not as the end of its validity) and at recall time (a promise past its
deadline with no confirmation is overdue). The tagger's commitment label is one signal; an
agent sentence with an arranging or future marker and a time later than itself is another
("今天下午4点前会有专员给您回电话", "A technician will call you tomorrow before 12pm").
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from schemas.errors import ConfigurationError

PROMISE = Path(__file__).resolve().parent / "resources" / "promise.yaml"


@cache
def _lexicon(path: Path = PROMISE) -> tuple[tuple[str, ...], float]:
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        markers = tuple(str(w).lower() for words in doc["markers"].values() for w in words)
        return markers, float(doc["min_strength"])
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ConfigurationError(f"cannot read promise markers {path}: {exc}") from exc


def _time(value: object) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


def is_promise(payload: Mapping[str, Any]) -> bool:
    """An agent's commitment: tagged as one, or a marker with a time later than the sentence.

    >>> p = {"speaker_role": "agent", "text": "明天中午前会重新送到您家", "ts": "2025-06-10T10:00:00+00:00",
    ...      "times": [{"end": "2025-06-11T12:00:00+00:00"}]}
    >>> is_promise(p), is_promise({**p, "speaker_role": "customer"}), is_promise({**p, "times": []})
    (True, False, False)
    """
    if payload.get("speaker_role") != "agent":
        return False
    markers, min_strength = _lexicon()
    if payload.get("unit_type") == "commitment" or float(payload.get("commitment_strength") or 0.0) >= min_strength:
        return True
    times = payload.get("times") or ()
    if not times:
        return False
    ts = _time(payload["ts"])
    future = any(t.get("end") and _time(t["end"]) > ts for t in times)
    lowered = str(payload.get("text", "")).lower()
    return future and any(m in lowered for m in markers)


def deadline(payload: Mapping[str, Any]) -> datetime | None:
    """The latest end among the promise's time expressions (None without one)."""
    ends = [_time(t["end"]) for t in payload.get("times") or () if t.get("end")]
    return max(ends) if ends else None
