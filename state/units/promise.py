"""A promise carries its deadline, even when the deadline was said in the next clause.

"我们会给您退款。三个工作日内到账。" and "We will send you a replacement. It should arrive within 5
business days." are cut into two units: the promise, then the clause with the limit. Recall's
overdue check reads the promise's `MemoryUnit.deadline`, so a promise (a commitment unit, or any
unit with commitment strength) that has no deadline of its own takes the deadline expressions of
the unit right after it in the same turn, when that unit is no promise in its own words. The expressions are
copied as they are (their spans still point into the turn's text); the later unit keeps them too.

An agent's promise, as stored (`is_agent_promise`, `payload_deadline`): used at write time (a
promise keeps its deadline as a time, not as the end of its validity) and at recall time (a
promise past its deadline with no confirmation is overdue). The tagger's commitment label is one
signal; an agent sentence with an arranging or future marker (`resources/promise.yaml`) and a time
later than itself is another ("今天下午4点前会有专员给您回电话").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from schemas.errors import ConfigurationError
from schemas.memory import MemoryUnit, TimeExpression


def is_promise(unit: MemoryUnit) -> bool:
    return unit.unit_type == "commitment" or unit.commitment_strength > 0


def _own_promise(unit: MemoryUnit) -> bool:
    """A promise in its own words (commitment strength from its own cues): not a clause that only
    continues the promise before it, which the unit typing may also call a commitment from context."""
    return unit.commitment_strength > 0


def _deadlines(unit: MemoryUnit) -> tuple[TimeExpression, ...]:
    return tuple(t for t in unit.times if t.kind == "deadline")


def carry_deadlines(units: Sequence[MemoryUnit]) -> tuple[MemoryUnit, ...]:
    """The turn's units, each promise without a deadline given the next unit's deadlines."""
    out = list(units)
    for i, unit in enumerate(out[:-1]):
        following = out[i + 1]
        if not is_promise(unit) or _deadlines(unit) or _own_promise(following):
            continue
        limits = _deadlines(following)
        if limits:
            out[i] = unit.model_copy(update={"times": unit.times + limits})
    return tuple(out)


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


def is_agent_promise(payload: Mapping[str, Any]) -> bool:
    """An agent's commitment: tagged as one, or a marker with a time later than the sentence.

    >>> p = {"speaker_role": "agent", "text": "明天中午前会重新送到您家", "ts": "2025-06-10T10:00:00+00:00",
    ...      "times": [{"end": "2025-06-11T12:00:00+00:00"}]}
    >>> is_agent_promise(p), is_agent_promise({**p, "speaker_role": "customer"}), is_agent_promise({**p, "times": []})
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


def payload_deadline(payload: Mapping[str, Any]) -> datetime | None:
    """When a stored promise is due: its earliest exact deadline, else the latest end of its times."""
    times = payload.get("times") or ()
    exact = [_time(t["deadline"]) for t in times if t.get("kind") == "deadline" and t.get("deadline")]
    if exact:
        return min(exact)
    ends = [_time(t["end"]) for t in times if t.get("end")]
    return max(ends) if ends else None
