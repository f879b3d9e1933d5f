"""Resolution and promises over time, read from one user's stored memories at recall time.

Input: the user's memories (store payloads, any order, any session) and the question time.
Output: one `IssueView` per memory whose status the timeline changes: an open complaint or
request a later confirmation settled (`resolved`, with `resolved_at`), a settled one a new
report of the same problem reopened, an agent's promise kept, or a promise whose deadline
passed with no confirmation (`overdue`). State: none; the lexicon is a data file.

Why at recall time and not in a keyed write-time step: the confirmation often arrives in a
later session ("Great, I see the refund now" two days after the complaint), and sessions
are the dataflow's key, so no keyed step sees both. A replay gives the same answer because
only stored fields and the question's own time are used. Each memory's part in the pass
(`issue_mark`) reads that memory alone, so the user's timeline index
(`state.recall.timeline_index`) keeps it beside the memory, and a question passes over the few
memories that take part (`settle_marks`) instead of classifying the whole timeline again.

The rule, deliberately simple and explainable:
* a confirmation (a customer turn matching the lexicon, or typed `resolution_confirmation` by the
  tagger) settles the open issue it answers:
  the one sharing most words with it, ties to the most recent; the other open issues and
  promises of that issue's session go with it (a complaint and the agent's promise about it
  are one thread);
* an agent saying it is done ("已为您取消", "Done, it now goes to …") settles the latest open
  request of the same session (a complaint waits for the customer);
* a later complaint or request sharing at least `reopen_min_overlap` words with a settled
  issue reopens it;
* an agent's promise (`state.units.promise`) with a time expression whose end has passed,
  not settled, is overdue.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from schemas.errors import ConfigurationError
from state.core.hotfile import HotFile
from state.recall.focus import says, says_done, says_unnegated
from state.recall.lexical import tokenize
from state.units.promise import is_agent_promise, payload_deadline

_ASKED = ("?", "？", "吗")
DEFAULT_RESOLUTION = Path(__file__).resolve().parent / "resources" / "resolution.yaml"


@dataclass(frozen=True, slots=True)
class ResolutionLexicon:
    confirmations: tuple[str, ...]
    completions: tuple[str, ...]
    still_waiting: tuple[str, ...]
    status_questions: tuple[str, ...]
    outcome_questions: tuple[str, ...]
    issue_types: frozenset[str]
    reopen_min_overlap: int
    fulfilments: tuple[str, ...] = ()
    fulfil_min_overlap: int = 1
    done_questions: tuple[str, ...] = ()
    progress_steps: tuple[str, ...] = ()
    earlier_questions: tuple[str, ...] = ()
    repeat_reports: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class IssueView:
    """What the timeline says about one memory."""

    status: str  # "pending" | "resolved" | "none" (a confirmation: no issue of its own, whatever its write-time status)
    resolved_at: float | None  # epoch seconds
    overdue: bool
    reopened: bool
    settled_by: str | None
    promise: bool = False


def _phrases(doc: Mapping[str, Any], key: str) -> tuple[str, ...]:
    section = doc.get(key)
    if not isinstance(section, Mapping):
        raise ConfigurationError(f"resolution lexicon: section {key!r} is missing or not a mapping")
    out: list[str] = []
    for lang, words in section.items():
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise ConfigurationError(f"resolution lexicon: {key}.{lang} must be a list of strings")
        out.extend(w.lower() for w in words)
    return tuple(out)


def load_resolution(path: Path = DEFAULT_RESOLUTION) -> ResolutionLexicon:
    """Read and validate the lexicon.

    >>> "问题解决了" in load_resolution().confirmations
    True
    """
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigurationError(f"cannot read resolution lexicon {path}: {exc}") from exc
    if not isinstance(doc, Mapping):
        raise ConfigurationError(f"resolution lexicon {path} is not a mapping")
    types = doc.get("issue_types")
    if not isinstance(types, list) or not types:
        raise ConfigurationError("resolution lexicon: issue_types must be a non-empty list")
    try:
        overlap = int(doc["reopen_min_overlap"])
        fulfil_overlap = int(doc["fulfil_min_overlap"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigurationError(
            "resolution lexicon: reopen_min_overlap and fulfil_min_overlap (integers) are required"
        ) from exc
    return ResolutionLexicon(
        confirmations=_phrases(doc, "confirmations"),
        completions=_phrases(doc, "completions"),
        still_waiting=_phrases(doc, "still_waiting"),
        status_questions=_phrases(doc, "status_questions"),
        outcome_questions=_phrases(doc, "outcome_questions"),
        issue_types=frozenset(str(t) for t in types),
        reopen_min_overlap=overlap,
        fulfilments=_phrases(doc, "fulfilments"),
        done_questions=_phrases(doc, "done_questions"),
        progress_steps=_phrases(doc, "progress_steps"),
        earlier_questions=_phrases(doc, "earlier_questions"),
        repeat_reports=_phrases(doc, "repeat_reports"),
        fulfil_min_overlap=fulfil_overlap,
    )


def resolution_file(path: Path = DEFAULT_RESOLUTION) -> HotFile[ResolutionLexicon]:
    """The lexicon, re-read when the file changes."""
    return HotFile((path,), load_resolution)


def _epoch(value: object) -> float:
    if isinstance(value, datetime):
        return value.timestamp()
    return datetime.fromisoformat(str(value)).timestamp()


def is_confirmation(text: str, lexicon: ResolutionLexicon) -> bool:
    """A turn that says an earlier problem is settled.

    >>> is_confirmation("Great, I see the refund now. Thanks!", load_resolution())
    True
    >>> is_confirmation("退款什么时候到？", load_resolution()), is_confirmation("现在能到账了吗", load_resolution())
    (False, False)
    >>> is_confirmation("第三章视频能看了", load_resolution()), is_confirmation("I'm in the UK", load_resolution())
    (True, False)
    >>> lexicon = load_resolution()
    >>> is_confirmation("路由器还是不能用了", lexicon), is_confirmation("It's not working again", lexicon)
    (False, False)

    Phrases match as the focus phrases do (`state.recall.focus.says`): Latin ones as whole words,
    '…' a gap of a few characters; one said right after a negation does not count.
    """
    lowered = text.lower()
    if any(q in lowered for q in _ASKED):  # "现在能到账了吗" asks; it does not confirm
        return False
    return says_unnegated(lowered, lexicon.confirmations)  # 不能用了 is no 能用了


def asks_still_waiting(text: str, lexicon: ResolutionLexicon) -> bool:
    """A question about something that should have happened and has not.

    >>> asks_still_waiting("上次说好的补偿到现在还没收到", load_resolution())
    True
    """
    lowered = text.lower()
    return any(p in lowered for p in lexicon.still_waiting)


def asks_status(text: str, lexicon: ResolutionLexicon) -> bool:
    """A question about how an open matter stands (still-waiting questions included).

    >>> asks_status("我的投诉处理得怎么样了？", load_resolution()), asks_status("Hi there", load_resolution())
    (True, False)
    """
    lowered = text.lower()
    return (
        asks_still_waiting(text, lexicon)
        or any(p in lowered for p in lexicon.status_questions)
        or any(p in lowered for p in lexicon.done_questions)
    )


def asks_outcome(text: str, lexicon: ResolutionLexicon) -> bool:
    """A question about how a matter ended ("what happened with it in the end?", "后来怎么样了"):
    the turn that settled it holds the answer, not the report that opened it.

    >>> asks_outcome("How did the password thing get fixed in the end?", load_resolution())
    True
    >>> asks_outcome("Is the double charge still being looked at?", load_resolution())
    False
    """
    return says(text, lexicon.outcome_questions)


def asks_open(text: str, lexicon: ResolutionLexicon) -> bool:
    """A question about what is still open (a status or still-waiting question that does not ask
    how a matter ended, nor only whether a thing was done): settled issues are not its answer.

    >>> asks_open("which of my tickets is still open?", load_resolution())
    True
    >>> asks_open("冰箱那个后来怎么样了", load_resolution()), asks_open("那个粮现在什么情况了", load_resolution())
    (False, False)
    """
    lowered = text.lower()
    asked = asks_still_waiting(text, lexicon) or any(p in lowered for p in lexicon.status_questions)
    return asked and not asks_outcome(text, lexicon)


def asks_latest(text: str, lexicon: ResolutionLexicon) -> bool:
    """A question whether a thing was done at all ("餐厅那边答应了没", "现在什么情况了", "did you actually
    pause my plan?"), neither about what is still open nor about how a matter ended: a settled
    thread is answered by its end, the turn that settled it.

    >>> asks_latest("之前说到货通知我的那个粮，现在什么情况了", load_resolution())
    True
    >>> asks_latest("那个还没处理好的退款呢", load_resolution()), asks_latest("后来怎么样了", load_resolution())
    (False, False)
    """
    lowered = text.lower()
    done = any(p in lowered for p in lexicon.done_questions)
    return done and not asks_open(text, lexicon) and not asks_outcome(text, lexicon)


def asks_earlier(text: str, lexicon: ResolutionLexicon) -> bool:
    """A question about an earlier episode of a problem ("上回卡纸那次你们动了哪个零件", "what did you tell me
    last time?"), not a still-waiting one: when the problem came back, its later episode defers.

    >>> asks_earlier("上回充不上电 你们是怎么处理的?", load_resolution())
    True
    >>> asks_earlier("上次说好的补偿到现在还没收到", load_resolution()), asks_earlier("怎么处理的", load_resolution())
    (False, False)
    """
    return says(text, lexicon.earlier_questions) and not asks_still_waiting(text, lexicon)


def _is_issue(p: Mapping[str, Any], lexicon: ResolutionLexicon) -> bool:
    return str(p.get("unit_type")) in lexicon.issue_types or p.get("resolution_status") == "pending"


@dataclass(slots=True)
class _Open:
    mid: str
    session: str
    ts: float
    tokens: frozenset[str]
    promise: bool
    deadline: float | None
    resolved_at: float | None = None
    settled_by: str | None = None
    reopened: bool = False
    request: bool = False


@dataclass(frozen=True, slots=True)
class IssueMark:
    """What one memory is to the pass over the timeline; it reads only that memory (not the time
    of the question), so an index can keep it beside the memory."""

    ts: float  # epoch seconds; the pass runs in (ts, unit_index) order
    unit_index: int
    session: str
    tokens: frozenset[str]
    confirms: bool  # a customer's confirmation: settles the open issue it answers
    completes: bool  # an agent's confirmation or completion: settles the session's latest request
    fulfils: bool  # an agent's report that something is done: keeps the earlier promise it answers
    issue: bool  # a customer's complaint or request (may reopen a settled one)
    request: bool
    promise: bool  # an agent's promise (not also an issue)
    deadline: float | None


def issue_mark(payload: Mapping[str, Any], lexicon: ResolutionLexicon, stopwords: frozenset[str]) -> IssueMark | None:
    """The memory's part in the pass, or None when it plays none (most small talk)."""
    text = str(payload.get("text", ""))
    lowered = text.lower()
    role = payload.get("speaker_role")
    confirmed = payload.get("unit_type") == "resolution_confirmation" or is_confirmation(text, lexicon)
    confirms = role == "customer" and confirmed
    completes = not confirms and role == "agent" and (confirmed or any(c in lowered for c in lexicon.completions))
    issue = not confirms and _is_issue(payload, lexicon) and role != "agent"
    fulfils = (
        role == "agent"
        and not any(q in lowered for q in _ASKED)
        and says_done(lowered, lexicon.fulfilments, lexicon.progress_steps)
    )
    promise = not confirms and not issue and is_agent_promise(payload)
    if not (confirms or completes or fulfils or issue or promise):
        return None
    due = payload_deadline(payload) if promise else None
    return IssueMark(
        ts=_epoch(payload["ts"]),
        unit_index=int(payload.get("unit_index", 0)),
        session=str(payload.get("session_id")),
        tokens=frozenset(tokenize(text, stopwords)),
        confirms=confirms,
        completes=completes,
        fulfils=fulfils,
        issue=issue,
        request=str(payload.get("unit_type")) == "action_request",
        promise=promise,
        deadline=due.timestamp() if due else None,
    )


def issue_views(
    ids: Sequence[str],
    payloads: Sequence[Mapping[str, Any]],
    now: datetime,
    lexicon: ResolutionLexicon,
    stopwords: frozenset[str] = frozenset(),
) -> dict[str, IssueView]:
    """The status of every issue and promise in the user's timeline at `now` (see the module docstring)."""
    t_now = now.timestamp()
    order = sorted(range(len(ids)), key=lambda i: (_epoch(payloads[i]["ts"]), int(payloads[i].get("unit_index", 0))))
    marked: list[tuple[str, IssueMark]] = []
    for i in order:
        if _epoch(payloads[i]["ts"]) > t_now:
            break
        mark = issue_mark(payloads[i], lexicon, stopwords)
        if mark is not None:
            marked.append((ids[i], mark))
    return settle_marks(marked, t_now, lexicon.reopen_min_overlap, lexicon.fulfil_min_overlap)


def settle_marks(
    marked: Iterable[tuple[str, IssueMark]], t_now: float, reopen_min_overlap: int, fulfil_min_overlap: int = 1
) -> dict[str, IssueView]:
    """The pass itself, over the marked memories of a timeline in (ts, unit_index) order, said by `t_now`."""
    tracked: list[_Open] = []
    out: dict[str, IssueView] = {}
    for mid, m in marked:
        if m.confirms:
            _settle(tracked, m.tokens, m.ts, mid)
            out[mid] = IssueView(status="none", resolved_at=None, overdue=False, reopened=False, settled_by=None)
            continue
        if m.completes:
            asked = [o for o in tracked if o.request and o.session == m.session and o.resolved_at is None]
            if asked:
                asked[-1].resolved_at, asked[-1].settled_by = m.ts, mid
        # A report that keeps an earlier promise is the end of that thread, not a new promise of its own
        # ("餐厅confirm了，window seat已经帮你留好，蛋糕会在上甜品时端出来" carries a future marker too);
        # one that keeps none ("已经加急了，师傅上门前会先给您打电话", in the promise's own session) stays a promise.
        kept = m.fulfils and _fulfil(tracked, m, mid, fulfil_min_overlap)
        if m.issue:
            for item in tracked:
                if item.resolved_at is not None and len(item.tokens & m.tokens) >= reopen_min_overlap:
                    item.resolved_at, item.settled_by, item.reopened = None, None, True
            tracked.append(_Open(mid, m.session, m.ts, m.tokens, promise=False, deadline=None, request=m.request))
        elif m.promise and not kept:
            tracked.append(_Open(mid, m.session, m.ts, m.tokens, promise=True, deadline=m.deadline))
    for item in tracked:
        settled = item.resolved_at is not None
        overdue = item.promise and not settled and item.deadline is not None and item.deadline < t_now
        out[item.mid] = IssueView(
            status="resolved" if settled else "pending",
            resolved_at=item.resolved_at,
            overdue=overdue,
            reopened=item.reopened,
            settled_by=item.settled_by,
            promise=item.promise,
        )
    return out


def _content(tokens: frozenset[str]) -> frozenset[str]:
    """The tokens that say what a turn is about: words and CJK pairs, not single characters
    (two Chinese turns share 您, 了 and 的 whatever they are about)."""
    return frozenset(t for t in tokens if len(t) > 1)


def _fulfil(tracked: list[_Open], m: IssueMark, by: str, min_overlap: int) -> bool:
    """An agent's report in a later session ("皇家幼猫粮今天到货了，已经给您留了两袋", "Good news, the
    depot agreed: …", "the refund for order 20418 was processed") keeps the open promise, or settles
    the open issue, of an earlier session it shares most words with (at least `min_overlap` words
    or CJK pairs; ties: a promise, then the most recent), and with it the other open issues and
    promises of that session, as a customer's confirmation settles its issue's thread. Whether it
    settled one."""
    mine = _content(m.tokens)
    earlier = [
        (len(_content(o.tokens) & mine), o)
        for o in tracked
        if o.resolved_at is None and o.session != m.session and o.ts < m.ts
    ]
    best = max(earlier, key=lambda x: (x[0], x[1].promise, x[1].ts), default=None)
    if best is None or best[0] < min_overlap:
        return False
    session = best[1].session  # the target and the rest of its thread
    for o in tracked:
        if o.resolved_at is None and o.session == session:
            o.resolved_at, o.settled_by = m.ts, by
    return True


def _settle(tracked: list[_Open], tokens: frozenset[str], ts: float, by: str) -> None:
    open_items = [o for o in tracked if o.resolved_at is None]
    if not open_items:
        return
    target = max(open_items, key=lambda o: (len(o.tokens & tokens), o.ts))
    for o in open_items:
        if o is target or o.session == target.session:
            o.resolved_at, o.settled_by = ts, by
