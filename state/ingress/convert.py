"""Map a chat export's rows onto RecallFlow input events, as pure functions.

Input: one row (a JSONL object or a CSV row) whose fields have other names, and a `FieldMap`:
target field ← source field renames (`--map speaker=author,text=message`), speaker (or role)
values → roles (`--role user=customer`), a tenant and a default role. Output: a validated
`InputEvent`, or an `InputError` saying what is wrong with that row (the caller writes it to a
dead-letter file and goes on).

Rules: a field named like an event field is taken as is unless a rename already set it; any
other field goes into `meta` (values that are not scalars as JSON text); an empty CSV cell is
an absent value; without an `event_id` the row's `turn_id` is used, else `SESSION#LINE`. The
dialogue sets' layout (`session_id, turn_id, speaker, text, ts, …`) converts with roles alone:
`--role A=customer --role B=agent`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, get_args

from schemas.errors import EventValidationError
from schemas.events import ConversationEvent, InputEvent, SpeakerRole
from state.ingress.parse import IngressLimits, validate_event

ROLES: frozenset[str] = frozenset(get_args(SpeakerRole))
TARGETS: frozenset[str] = frozenset(ConversationEvent.model_fields) | {"kind", "target_event_id", "corrected_text"}
_SCALARS = (str, int, float, bool)


def parse_pairs(items: Iterable[str], what: str) -> dict[str, str]:
    """`a=b,c=d` items (an option given once or repeated) → {a: b, c: d}; ValueError on a bad item.

    >>> parse_pairs(["speaker=author,text=message", "ts=sent_at"], "--map")
    {'speaker': 'author', 'text': 'message', 'ts': 'sent_at'}
    """
    out: dict[str, str] = {}
    for item in items:
        for pair in item.split(","):
            if not pair.strip():
                continue
            left, sep, right = pair.partition("=")
            if not sep or not left.strip() or not right.strip():
                raise ValueError(f"{what}: {pair.strip()!r} is not NAME=VALUE")
            out[left.strip()] = right.strip()
    return out


@dataclass(frozen=True)
class FieldMap:
    """How an export's rows become events."""

    renames: Mapping[str, str] = field(default_factory=dict)  # event field ← source field
    roles: Mapping[str, str] = field(default_factory=dict)  # speaker (or speaker_role) value → role
    tenant_id: str | None = None
    default_role: str | None = None

    def __post_init__(self) -> None:
        unknown = sorted(set(self.renames) - TARGETS)
        if unknown:
            raise ValueError(f"--map: {', '.join(unknown)} is not an event field (one of {', '.join(sorted(TARGETS))})")
        bad = sorted({r for r in self.roles.values() if r not in ROLES})
        if self.default_role is not None and self.default_role not in ROLES:
            bad.append(self.default_role)
        if bad:
            raise ValueError(f"--role: {', '.join(bad)} is not a role (one of {', '.join(sorted(ROLES))})")


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


def _meta_value(value: Any) -> str | int | float | bool | None:
    if value is None or isinstance(value, _SCALARS):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def map_row(row: Mapping[str, Any], fmap: FieldMap, line: int) -> dict[str, Any]:
    """The row with the event's field names (not validated yet).

    >>> fmap = FieldMap(renames={"text": "message", "speaker": "author"}, roles={"A": "customer"})
    >>> sorted(map_row({"conv": "c1", "message": "hi", "author": "A", "session_id": "s", "ts": "2026-01-01"},
    ...                fmap, 3).items())  # doctest: +NORMALIZE_WHITESPACE
    [('event_id', 's#3'), ('meta', {'conv': 'c1'}), ('session_id', 's'), ('speaker', 'A'),
     ('speaker_role', 'customer'), ('text', 'hi'), ('ts', '2026-01-01')]
    """
    out: dict[str, Any] = {}
    used: set[str] = set()
    for target, source in fmap.renames.items():
        if _present(row.get(source)):
            out[target] = row[source]
            used.add(source)
    meta: dict[str, Any] = dict(row["meta"]) if isinstance(row.get("meta"), Mapping) else {}
    for key, value in row.items():
        if key in used or key == "meta" or not _present(value):
            continue
        if key in TARGETS:
            out.setdefault(key, value)
        else:
            meta[str(key)] = _meta_value(value)
    if meta:
        out["meta"] = meta
    role = out.get("speaker_role")
    if role is not None and str(role) in fmap.roles:
        out["speaker_role"] = fmap.roles[str(role)]
    elif role is None:
        speaker = out.get("speaker")
        if speaker is not None and str(speaker) in fmap.roles:
            out["speaker_role"] = fmap.roles[str(speaker)]
        elif fmap.default_role is not None:
            out["speaker_role"] = fmap.default_role
    if fmap.tenant_id is not None:
        out.setdefault("tenant_id", fmap.tenant_id)
    if "event_id" not in out:
        if "turn_id" in out:
            out["event_id"] = out["turn_id"]
        elif "session_id" in out:
            out["event_id"] = f"{out['session_id']}#{line}"
    for key in ("event_id", "session_id", "tenant_id", "user_id", "turn_id", "speaker"):
        if key in out and isinstance(out[key], int | float) and not isinstance(out[key], bool):
            out[key] = str(out[key])  # numeric ids in a CSV or JSON export
    return out


def convert_row(row: Mapping[str, Any], fmap: FieldMap, line: int, limits: IngressLimits) -> InputEvent:
    """One export row → a validated input event; EventValidationError (or another InputError) if not."""
    if not isinstance(row, Mapping):
        raise EventValidationError(f"expected an object, got {type(row).__name__}")
    return validate_event(map_row(row, fmap, line), limits)
