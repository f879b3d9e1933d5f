"""Who an agent is, from how they introduce themselves ("Hi, Maria here", "this is Kevin from billing").

Chat logs often store every agent turn under one role name ("Agent"), and the agent's own name
lives only in the text. A question that names them ("what did Maria say I'd get?") asks for what
that person said: from the turn an agent introduces themself on, their turns of that session are
theirs. Only English introductions are read (a Chinese agent's name is usually in the speaker
field already: "客服小王").

Input: store payloads (speaker, role, session, time, turn text). Output: per payload the speaker
it counts as, lower-cased: the introduced name, or the stored speaker. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_NAME = r"([A-Z][a-z]{1,15})"
_INTRO = re.compile(
    rf"(?:^|[,.!?]\s*|\b(?:hi|hello|hey)\b[,!]?\s*){_NAME} here\b"
    rf"|\b(?:this is|my name is|name's)\s+{_NAME}\b"
    rf"|\bI'?m\s+{_NAME}(?=\s+(?:from|with|at|in|on)\b|[,.!]|$)"
)
_NOT_NAMES = frozenset({"Sorry", "Afraid", "Happy", "Glad", "Here", "Just", "Still", "Not", "Sure", "Back", "Good"})


def introduced_name(text: str) -> str | None:
    """The name an agent introduces themself by in a turn, if any.

    >>> introduced_name("Hi, Maria here. I've rebooked you"), introduced_name("this is Kevin from billing")
    ('Maria', 'Kevin')
    >>> introduced_name("I'm Tom, happy to help"), introduced_name("I'm Sorry, that's on us")
    ('Tom', None)
    >>> introduced_name("Maria said so") is None
    True
    """
    for m in _INTRO.finditer(text):
        name = next(g for g in m.groups() if g)
        if name not in _NOT_NAMES:
            return name
    return None


def spoken_by(payloads: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """Per payload the lower-cased speaker it counts as: an agent turn said at or after its session's
    agent introduced themself counts as that person's (the latest introduction before it).

    >>> ps = [{"speaker": "Agent", "speaker_role": "agent", "session_id": "s", "ts": "2025-01-01T10:00:00",
    ...        "source_text": "Hi, Maria here."},
    ...       {"speaker": "Agent", "speaker_role": "agent", "session_id": "s", "ts": "2025-01-01T10:02:00",
    ...        "text": "Refund sent"},
    ...       {"speaker": "Customer", "speaker_role": "customer", "session_id": "s", "ts": "2025-01-01T10:01:00",
    ...        "text": "ok"}]
    >>> spoken_by(ps)
    ('maria', 'maria', 'customer')
    """
    out = [str(p.get("speaker") or "").lower() for p in payloads]
    agent = [i for i, p in enumerate(payloads) if str(p.get("speaker_role")) == "agent"]
    intros: dict[str, list[tuple[str, str]]] = {}
    for i in agent:
        p = payloads[i]
        name = introduced_name(str(p.get("source_text") or p.get("text") or ""))
        if name:
            intros.setdefault(str(p.get("session_id")), []).append((str(p.get("ts")), name.lower()))
    if not intros:
        return tuple(out)
    for i in agent:
        p = payloads[i]
        said = [name for ts, name in sorted(intros.get(str(p.get("session_id")), [])) if ts <= str(p.get("ts"))]
        if said:
            out[i] = said[-1]
    return tuple(out)
