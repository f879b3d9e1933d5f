"""The causal cue activator (docs/recall.md): validity filtering and one vectorised scoring pass.

Input: a `CandidateBatch` (the memories recall fetched, as arrays) and a `QueryAnalysis`.
Output: `PoolScores`, one array per score component plus the eligibility mask and the
validity decisions. State: none; weights come in as `RecallTables` (hot-reloaded data).

    relevance = max(semantic + lexical, a share of a neighbouring turn's: larger across a question
                    and its answer than between turns merely adjacent; which turn of an exchange
                    holds the answer is the question's focus, state.recall.focus)
              + person (said by the person the question names) + entity (same identifier)
              + topic (the memory's topic belongs to the question's class)
              + overdue (an overdue promise, for "still not" questions)
              + open_issue (pending, for "how is it going / still not" questions)
              + promise (commitment strength, for "you promised / still not" questions)
              + time_match (said in the period the question names: "上周五", "last Monday")
    css       = 0.40·emotion_match + 0.25·time_proximity + 0.20·severity
              + 0.15·resolution_gap + 0.10·commitment_strength
    final     = relevance × (1 + min(css_bound, alpha_base + alpha_cue·cue_intensity + class css_boost)·css),
                × verification factor

Labels (question class, topic, unit type, commitment) are evidence, never gates: a memory
typed wrongly at write time is still found by its words and meaning. The only exclusions
are isolation (the store filter), supersession and ended validity.

The causal-cue score re-ranks within a bounded share: it multiplies relevance by at most
1 + css_bound·1.1, so it reorders memories that are about equally relevant (the open,
severe complaint over a similar-sounding chit-chat on "the same problem again") but cannot
lift an unrelated memory over a relevant one. Both relevance signals are absolute, never
scaled inside the pool (a pool of unrelated memories must not stretch its best one to 1):
semantic is the cosine mapped through the embedder's calibrated range (cosines differ by
model), lexical is BM25 as a share of the query's full match (IDF over the user's memories
when the caller gives it, else over the pool). `absolute` (the larger of semantic, lexical,
identifier, named period) is what the abstain floor reads, with `owned` (the user's own issues
and promises, when the question refers back to one) where the question names nothing missing;
see docs/recall.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

from state.recall.candidates import CandidateBatch as CandidateBatch  # re-exported
from state.recall.candidates import candidate_batch as candidate_batch
from state.recall.config import RecallTables
from state.recall.focus import Focus, link_directions, said_by_customer, says
from state.recall.lexical import bm25_share, tokenize
from state.recall.query import QueryAnalysis
from state.recall.updates import apply_updates
from state.recall.versions import apply_versions

F = npt.NDArray[np.float64]
B = npt.NDArray[np.bool_]

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


@dataclass(frozen=True, slots=True)
class Decision:
    index: int
    decision: str
    detail: str


@dataclass(frozen=True, slots=True)
class PoolScores:
    emotion_match: F
    time_proximity: F
    severity: F
    resolution_gap: F
    commitment_strength: F
    semantic: F
    lexical: F
    person: F
    entity: F
    topic: F
    overdue: F
    open_issue: F
    promise: F
    time_match: F
    relevance: F
    absolute: F
    grounded: F  # the part of `absolute` not read from word similarity: identifier, named period, referent
    owned: F  # the user's own issue or promise a question refers back to (the floor reads it, see state.recall.abstain)
    css: F
    final: F
    eligible: B
    decisions: tuple[Decision, ...]
    people: tuple[str, ...]


def _cycle_active(pattern: str | None, now: datetime) -> bool:
    """Periodic rules: `every_<weekday>`, `weekends`, `weekdays`; other patterns are not judged here."""
    if not pattern:
        return True
    p = pattern.lower()
    day = now.weekday()
    if p.startswith("every_") and p[6:] in _WEEKDAYS:
        return _WEEKDAYS.index(p[6:]) == day
    if p == "weekends":
        return day >= 5
    if p == "weekdays":
        return day < 5
    return True


def validity_filter(
    batch: CandidateBatch,
    now: datetime,
    tables: RecallTables,
    *,
    needs_certainty: bool,
) -> tuple[B, list[Decision]]:
    """Which candidates may be recalled at `now`: never expired, not yet effective, off-cycle,
    or below `min_confidence` when certainty is needed. Labels never exclude (see the module)."""
    t = now.timestamp()
    with np.errstate(invalid="ignore"):
        expired = batch.effective_to < t
        not_yet = batch.effective_from > t
    low = batch.confidence < tables.validity.min_confidence if needs_certainty else np.zeros(len(batch), bool)
    eligible = ~(expired | not_yet | low)
    decisions: list[Decision] = []
    for i in np.flatnonzero(expired | not_yet):
        what = "effective_to" if expired[i] else "effective_from"
        decisions.append(Decision(int(i), "expired", f"{what} {batch.payloads[i]['validity'].get(what)}"))
    for i in np.flatnonzero(low & ~(expired | not_yet)):
        decisions.append(Decision(int(i), "low_confidence", f"confidence {batch.confidence[i]:.2f}"))
    for i in np.flatnonzero((batch.validity == 1) & eligible):
        pattern = (batch.payloads[i].get("validity") or {}).get("cycle_pattern")
        if not _cycle_active(pattern, now):
            eligible[i] = False
            decisions.append(Decision(int(i), "expired", f"cycle {pattern} not active on {now:%A}"))
    return eligible, decisions


_ASKING_TYPES = frozenset({"question", "clarification"})
_NOT_AN_ISSUE = 2  # the resolution code of a memory that is neither an issue nor a promise (candidates.py)


def _asks(batch: CandidateBatch) -> B:
    """Which candidates ask something: typed a question, or said with a question mark."""
    return np.array(
        [
            str(p.get("unit_type")) in _ASKING_TYPES or str(p.get("text", "")).rstrip().endswith(("?", "？"))
            for p in batch.payloads
        ],
        dtype=bool,
    )


def _neighbours(batch: CandidateBatch, rel: F, max_gap_s: float, focus: Focus) -> tuple[F, F, B, B, B, B]:
    """Relevance of each candidate's previous and next turn in the same session (0 if absent), and
    the kind of each link: whether this turn holds the answer of the exchange with its previous
    (`prev_holds`) or next (`next_holds`) turn, or defers to it as the asking side (`prev_defers`,
    `next_defers`). Which side holds the answer depends on the question's focus
    (`state.recall.focus`): by default a turn that asks is answered by the next one. Merely
    adjacent turns get a smaller share (the agent's earlier promise must not ride on the
    customer's next, unrelated question).

    Neighbours are turns, not units: the units cut from one turn are one turn here (its relevance
    the best of its units', it asks when any of them does), so a question's answer is the next
    speaker's turn even when the question's turn was cut into several units."""
    n = len(batch)
    prev, nxt = np.zeros(n), np.zeros(n)
    none = np.zeros(n, dtype=bool)
    if n < 2:
        return prev, nxt, none, none.copy(), none.copy(), none.copy()
    turn = batch.turn if batch.turn is not None else np.arange(n)
    codes, of_turn = np.unique(turn, return_inverse=True)
    m = codes.size
    if m < 2:
        return prev, nxt, none, none.copy(), none.copy(), none.copy()
    customer = said_by_customer(batch.payloads)
    t_rel, t_asks = np.zeros(m), np.zeros(m, dtype=bool)
    np.maximum.at(t_rel, of_turn, rel)
    np.logical_or.at(t_asks, of_turn, _asks(batch))
    t_customer = np.zeros(m, dtype=bool)
    t_customer[of_turn] = customer
    t_ts, t_sess = np.full(m, np.nan), np.zeros(m, dtype=np.int64)
    t_ts[of_turn] = batch.ts
    t_sess[of_turn] = batch.session
    # A turn without content ("您好，我查一下", "Let me check") is no side of an exchange: the customer's
    # report is answered by the agent's next turn that says something.
    content = batch.content if batch.content is not None else np.ones(n, dtype=bool)
    t_content = np.zeros(m, dtype=bool)
    np.logical_or.at(t_content, of_turn, content)
    said = np.flatnonzero(t_content)
    if said.size < 2:
        return prev, nxt, none, none.copy(), none.copy(), none.copy()
    order = said[np.lexsort((t_ts[said], t_sess[said]))]
    ts, sess, r = t_ts[order], t_sess[order], t_rel[order]
    with np.errstate(invalid="ignore"):
        linked = (sess[1:] == sess[:-1]) & (np.abs(ts[1:] - ts[:-1]) <= max_gap_s)
    forward, backward = link_directions(focus, t_asks[order], t_customer[order])
    t_prev, t_next = np.zeros(m), np.zeros(m)
    t_prev[order[1:]] = np.where(linked, r[:-1], 0.0)
    t_next[order[:-1]] = np.where(linked, r[1:], 0.0)
    kinds = [np.zeros(m, dtype=bool) for _ in range(4)]
    prev_holds, prev_defers, next_holds, next_defers = kinds
    prev_holds[order[1:]] = forward
    prev_defers[order[1:]] = backward
    next_holds[order[:-1]] = backward
    next_defers[order[:-1]] = forward
    return (
        t_prev[of_turn],
        t_next[of_turn],
        prev_holds[of_turn],
        prev_defers[of_turn],
        next_holds[of_turn],
        next_defers[of_turn],
    )


@dataclass(frozen=True, slots=True)
class _Turns:
    """A pool's units gathered into turns: each unit's turn, and per turn its best relevance, time and
    words (the units cut from one turn are one turn here)."""

    of_turn: npt.NDArray[np.int64]
    rel: F
    ts: F
    words: list[frozenset[str]]

    @property
    def size(self) -> int:
        return self.rel.size

    def to_units(self, rel: F, t_new: F) -> F:
        """Unit relevance with the turns' new relevance: every unit of a turn is scaled as its turn is."""
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where(self.rel > 0, t_new / self.rel, 0.0)
        return np.where(self.rel[self.of_turn] > 0, rel * scale[self.of_turn], t_new[self.of_turn])


def _turns(batch: CandidateBatch, rel: F, min_word: int = 1) -> _Turns:
    turn = batch.turn if batch.turn is not None else np.arange(len(batch))
    _, of_turn = np.unique(turn, return_inverse=True)
    m = int(of_turn.max()) + 1
    t_rel, t_ts = np.zeros(m), np.full(m, np.nan)
    np.maximum.at(t_rel, of_turn, rel)
    t_ts[of_turn] = batch.ts
    words: list[set[str]] = [set() for _ in range(m)]
    for i, toks in enumerate(batch.tokens):
        words[of_turn[i]].update(t for t in toks if len(t) >= min_word)
    return _Turns(of_turn, t_rel, t_ts, [frozenset(w) for w in words])


def _newer_versions(batch: CandidateBatch, rel: F, inherit: float, outdated: float, min_overlap: float) -> F:
    """Relevance with newer versions of a turn applied (`state.recall.versions`), at turn level."""
    if len(batch) < 2:
        return rel
    turns = _turns(batch, rel)
    _, speaker_codes = np.unique(np.array(batch.speakers, dtype=object).astype(str), return_inverse=True)
    t_speaker = np.zeros(turns.size, dtype=np.int64)
    t_speaker[turns.of_turn] = speaker_codes
    t_new = apply_versions(
        turns.rel, turns.words, turns.ts, t_speaker, inherit=inherit, outdated=outdated, min_overlap=min_overlap
    )
    return turns.to_units(rel, t_new)


def _later_updates(batch: CandidateBatch, rel: F, min_shared: int, keep: float) -> F:
    """Relevance with later updates applied (`state.recall.updates`), at turn level, over content
    words (not single characters)."""
    if len(batch) < 2:
        return rel
    turns = _turns(batch, rel, min_word=2)
    t_agent = np.zeros(turns.size, dtype=bool)
    t_agent[turns.of_turn] = ~said_by_customer(batch.payloads)
    t_new = apply_updates(turns.rel, turns.words, turns.ts, t_agent, min_shared=min_shared, keep=keep)
    return turns.to_units(rel, t_new)


def _with_replies(batch: CandidateBatch, settled_by: npt.NDArray[np.int64], max_gap_s: float) -> npt.NDArray[np.int64]:
    """The settled threads with the agent's replies to a settled issue: an agent turn of the same
    session said within `max_gap_s` after it (before the customer speaks again) is settled by the
    same turn ("已反馈技术部门" after a complaint the customer later confirmed fixed)."""
    out = settled_by.copy()
    customer = said_by_customer(batch.payloads)
    for i in np.flatnonzero((settled_by >= 0) & customer):
        after = (batch.session == batch.session[i]) & (batch.ts > batch.ts[i]) & (batch.ts <= batch.ts[i] + max_gap_s)
        spoke_again = after & customer
        if spoke_again.any():
            after &= batch.ts < batch.ts[spoke_again].min()
        out[after & ~customer & (out < 0)] = settled_by[i]
    return out


def _settled(
    rel: F, settled_by: npt.NDArray[np.int64], outcome: bool, inherit: float, defer: float, keep: F | float
) -> F:
    """Relevance with the resolution threads applied: for a question about how a matter ended
    (`outcome`), the turn that settled an issue inherits `inherit` of the issue's relevance and the
    issue keeps `defer` of its own (the end of the thread answers, not its start); for a question
    about what is still open, a settled issue and its settler keep `keep` of theirs.

    >>> r = np.array([0.6, 0.1, 0.5]); by = np.array([1, -1, -1])
    >>> _settled(r, by, True, 1.0, 0.8, 0.6).round(2).tolist(), _settled(r, by, False, 1.0, 0.8, 0.6).round(2).tolist()
    ([0.48, 0.6, 0.5], [0.36, 0.06, 0.5])
    """
    settled = settled_by >= 0
    if not settled.any():
        return rel
    out = rel.copy()
    by = settled_by[settled]
    if outcome:
        inherited = np.zeros(rel.size)
        np.maximum.at(inherited, by, inherit * rel[settled])
        out = np.maximum(out, inherited)
        out[settled] = np.minimum(out[settled], defer * rel[settled])
        return out
    out[settled] = keep * rel[settled]
    out[by] = keep * rel[by]
    return out


def _later_episodes(batch: CandidateBatch, repeat_reports: Sequence[str]) -> B:
    """The turns of a problem's later episodes: a customer turn reporting it again ("又卡纸了！跟上次一模一样",
    "scratching like crazy again") and the turns after it in its session."""
    customer = said_by_customer(batch.payloads)
    later = np.zeros(len(batch), dtype=bool)
    for i in np.flatnonzero(customer):
        if says(batch.lowered[i], repeat_reports):
            later |= (batch.session == batch.session[i]) & (batch.ts >= batch.ts[i])
    return later


def _time_match(ts: F, ranges: Sequence[tuple[float, float]]) -> F:
    """1 for a memory said inside one of the periods, exp(-days outside) near one, 0 without periods."""
    if not ranges or ts.size == 0:
        return np.zeros(ts.size)
    best = np.zeros(ts.size)
    for start, end in ranges:
        outside = np.maximum(0.0, np.maximum(start - ts, ts - end)) / 86400.0
        best = np.maximum(best, np.exp(-outside))
    return np.where(np.isnan(best), 0.0, best)


_ABOUT_MAX_S = 2 * 86400.0


def _about(payloads: Sequence[Mapping[str, Any]], ranges: Sequence[tuple[float, float]]) -> F:
    """1 for a memory one of whose own times (at most two days long) overlaps one of the periods, else 0.

    >>> p = {"times": [{"start": "2025-07-09T08:00:00+00:00", "end": "2025-07-09T08:59:59+00:00"}]}
    >>> day = (datetime.fromisoformat("2025-07-09T00:00:00+00:00").timestamp(),) * 2
    >>> _about([p, {}], [(day[0], day[0] + 86399)]).tolist(), _about([p], []).tolist()
    ([1.0, 0.0], [0.0])
    """
    out = np.zeros(len(payloads))
    if not ranges:
        return out
    for i, p in enumerate(payloads):
        for t in p.get("times") or ():
            if not t.get("start") or not t.get("end"):
                continue
            start = datetime.fromisoformat(str(t["start"])).timestamp()
            end = datetime.fromisoformat(str(t["end"])).timestamp()
            if end - start <= _ABOUT_MAX_S and any(start <= hi and end >= lo for lo, hi in ranges):
                out[i] = 1.0
                break
    return out


def confirmed_people(query: QueryAnalysis, batch: CandidateBatch, known_people: Sequence[str]) -> tuple[str, ...]:
    """Name candidates that are people: a speaker in the pool, or known to the caller."""
    speakers = set(batch.speakers)
    known = set(known_people)
    return tuple(n for n in query.name_candidates if n.lower() in speakers or n in known)


def score_pool(
    query: QueryAnalysis,
    batch: CandidateBatch,
    tables: RecallTables,
    now: datetime,
    *,
    known_people: Sequence[str] = (),
    factors: F | None = None,
    still_waiting: bool = False,
    asks_status: bool = False,
    asks_open: bool = False,
    asks_outcome: bool = False,
    asks_latest: bool = False,
    repeat_reports: Sequence[str] = (),
    cosine_scale: tuple[float, float] = (0.0, 1.0),
    time_ranges: Sequence[tuple[float, float]] = (),
    about_ranges: Sequence[tuple[float, float]] = (),
) -> PoolScores:
    """Score every candidate in one pass; `factors` are verification multipliers (1 = untouched).

    `still_waiting`: the question asks about something not done yet (overdue promises count);
    `asks_status`: it asks how a matter stands (open issues and promises count);
    `asks_open`: it asks what is still open: a settled issue, and the turn that settled it, keep
    `settled_pending` of their relevance;
    `asks_outcome`: it asks how a matter ended: the turn that settled an issue inherits the
    issue's relevance (as an answer its question), the issue and its thread keep `asking` of theirs;
    `asks_latest`: a status question asking neither what is still open nor how a matter ended
    ("现在什么情况了"): a settled thread is read as for `asks_outcome` (its settler answers), but what
    is still open keeps all of its relevance;
    `repeat_reports`: given when the question asks about an earlier episode of a problem ("上回…那次",
    "last time"): the phrases of a customer turn reporting it again; that later episode (the report and
    what follows it in its session) keeps `settled_pending` of its relevance;
    `time_ranges`: the past periods the question names ("上周五", "last Monday"), epoch seconds:
    memories said then count (`time_match`, 1 inside, decaying over a day outside);
    `about_ranges`: the periods of at most a week the question names, past or not ("today", "明天"):
    a memory whose own times (a visit, an appointment, a deadline of at most two days) fall in one is
    about it and counts as said then (`time_match` 1);
    `cosine_scale`: the embedder's (low, high) cosine calibration: cosine `low` is semantic 0, `high` is 1.
    """
    n = len(batch)
    t = now.timestamp()
    spec = query.class_spec
    eligible, decisions = validity_filter(batch, now, tables, needs_certainty=query.needs_certainty)
    people = confirmed_people(query, batch, known_people)
    if batch.lexical is not None:
        lexical = batch.lexical
    else:
        name_tokens = set(tokenize(" ".join(people), tables.stopwords))
        q_tokens = [tok for tok in tokenize(query.text, tables.stopwords) if tok not in name_tokens]
        lexical = bm25_share(q_tokens, batch.tokens)
    rw = tables.relevance
    lo, hi = cosine_scale
    z = (batch.semantic - lo) / max(hi - lo, 1e-9)
    semantic = np.clip(z, 0.0, 1.0)
    # Ranking reads the cosine over a wider range than the abstain floor: below the calibrated
    # low end, a closer memory still ranks above a farther one instead of all tying at 0.
    m = rw.semantic_rank_margin
    ranked_semantic = np.clip((z + m) / (1.0 + m), 0.0, 1.0)
    content = batch.content if batch.content is not None else np.ones(n, dtype=bool)
    base = (rw.semantic * ranked_semantic + rw.lexical * lexical) * content
    if query.refers_to_open and (asks_status or still_waiting):
        # It names no matter of its own ("where are we on my problem?"): its words say nothing, the
        # open issues and promises are what it is about, for the ranking as for the floor.
        base = np.maximum(base, rw.semantic * (batch.resolution == 0) * content)
    # How a matter stands is what the agent last said about it (the case opened, the ticket logged, "还在跟商户
    # 核实"): for a status question the reply to what the customer said holds the answer, as for `information`.
    # (A still-waiting question keeps its own reading: what is owed is the promise, found by its components.)
    status_focus = query.focus == "answer" and (asks_status or asks_open) and not still_waiting
    focus: Focus = "information" if status_focus else query.focus
    # A unit that may not be recalled (its validity ended) lends its turn no relevance.
    prev, nxt, prev_holds, prev_defers, next_holds, next_defers = _neighbours(
        batch, base * eligible, rw.neighbour_max_gap_s, focus
    )
    wanted = {p.lower() for p in people}
    person = np.array([1.0 if s and s in wanted else 0.0 for s in batch.speakers]) if wanted else np.zeros(n)
    ents = [e.lower() for e in query.entities]
    entity = np.array([1.0 if any(e in txt for e in ents) else 0.0 for txt in batch.lowered]) if ents else np.zeros(n)
    class_topics = spec.topics if spec else frozenset()
    topic = np.array([1.0 if tp in class_topics else 0.0 for tp in batch.topics]) if class_topics else np.zeros(n)
    overdue = batch.overdue if batch.overdue is not None and still_waiting else np.zeros(n)
    open_issue = (batch.resolution == 0).astype(np.float64) if asks_status or still_waiting else np.zeros(n)
    said_in = _time_match(batch.ts, time_ranges)
    time_match = np.maximum(said_in, _about(batch.payloads, about_ranges))
    # Validity ends what a memory says about now, not what was said then: one said inside a past period
    # the question names, or holding the identifier it names, is still an answer ("上个月我办的啥来着").
    with np.errstate(invalid="ignore"):
        revived = ((said_in >= 1.0) | (entity > 0)) & (batch.effective_to < t) & ~(batch.effective_from > t)
    if query.needs_certainty:
        revived &= batch.confidence >= tables.validity.min_confidence
    if revived.any():
        eligible = eligible | revived
        decisions = [d for d in decisions if not revived[d.index]]
    asks_promise = still_waiting or "promise" in query.cue_families
    # A status question naming no matter of its own ("any update on my problem?") refers to the open ones.
    referent = open_issue if query.refers_to_open else np.zeros(n)
    # A question about a promise or still waiting ("you were supposed to…", "still no one called")
    # refers to the promises the user is owed: an overdue one is relevant for the floor.
    if asks_promise and batch.overdue is not None:
        referent = np.maximum(referent, batch.overdue)
    grounded = np.maximum.reduce([entity, time_match, referent]) * content if n else np.zeros(0)
    # A question that refers back to a matter of the user's own ("exports are getting truncated again",
    # "the other refund still hasn't shown up", "did it ever turn up?", "人到现在都没来") is about one of
    # their issues or promises, open or settled, whatever its words share with it; the floor reads
    # this only when the question names nothing the offered memories lack. A referent phrase ("那事",
    # "the thing", "那个…的") points back at one of them as plainly as a repeat word does, and so does a
    # pronoun or demonstrative ("When does that kick in?", "那笔钱呢").
    refers_back = (
        still_waiting or asks_outcome or "repeat" in query.cue_families or query.refers_to_open or query.points_back
    )
    owned = (batch.resolution != _NOT_AN_ISSUE) * content * 1.0 if refers_back and n else np.zeros(n)
    absolute = np.maximum(np.maximum(semantic, lexical) * content, grounded) if n else np.zeros(0)
    follow = asks_outcome or asks_latest  # the end of a settled thread answers
    promise = batch.commitment if asks_promise else np.zeros(n)
    if follow and batch.settled_by is not None and n:
        # The turn that settled an issue answers "how did it end" as far as the issue matches it.
        settled = batch.settled_by >= 0
        np.maximum.at(absolute, batch.settled_by[settled], absolute[settled])
        if asks_promise:
            # "答应了没", "did you ever send it": a kept promise is answered by the turn that kept it, which
            # takes the promise's part of the score; the promise itself is no longer what is owed.
            kept = promise.copy()
            np.maximum.at(kept, batch.settled_by[settled], promise[settled])
            kept[settled] = 0.0
            promise = kept

    # A turn inherits a share of a more relevant neighbour's relevance (an answer its question),
    # never more than it: with absolute scores a sum would lift every turn of a relevant talk.
    def share(holds: B, defers: B) -> F:
        return np.select([holds, defers], [rw.neighbour_prev, rw.neighbour_next], rw.neighbour_adjacent)

    share_prev, share_next = share(prev_holds, prev_defers), share(next_holds, next_defers)
    # A turn that asks, followed by its answer, is not itself the answer: it keeps `asking` of its own.
    defers = (prev_defers & (prev > 0)) | (next_defers & (nxt > 0))
    own = np.where(defers, rw.asking * base, base)
    in_context = np.maximum.reduce([own, share_prev * prev, share_next * nxt]) * content
    if query.focus == "current" and not still_waiting:
        in_context = _newer_versions(batch, in_context, rw.neighbour_prev, rw.asking, rw.version_min_overlap)
    if batch.settled_by is not None and (asks_open or follow):
        # The agent's replies to a settled issue are part of its thread: for a question about what is
        # open they defer with it; for one about how it ended (or whether it was done) the settler
        # inherits their relevance too ("I've approved a full refund…" answers the complaint, "the
        # refund … was processed" ends it).
        settled_by = _with_replies(batch, batch.settled_by, rw.neighbour_max_gap_s)
        in_context = _settled(in_context, settled_by, follow, rw.neighbour_prev, rw.asking, rw.settled_pending)
    if asks_outcome and batch.settled_by is not None and (batch.settled_by >= 0).any():
        # How a matter ended asks about one that did end: an issue or promise still open keeps
        # `settled_pending` of its relevance, as a settled one does for a question about what is open.
        in_context = np.where(batch.resolution == 0, rw.settled_pending * in_context, in_context)
    if repeat_reports and n and not asks_promise:
        in_context = np.where(_later_episodes(batch, repeat_reports), rw.settled_pending * in_context, in_context)
    relevance = (
        in_context
        + (rw.person * person + rw.entity * entity) * content
        + (
            rw.topic * topic
            + rw.overdue * overdue
            + rw.open_issue * open_issue
            + rw.promise * promise
            + rw.time_match * time_match
        )
        * (in_context > 0)
    )

    # How a matter stands, or which one is still open: the agent's latest word on it answers (a still-waiting
    # question otherwise asks for what is owed, the promise itself).
    if ((asks_status and not still_waiting) or asks_open) and query.focus in ("answer", "current", "information"):
        relevance = _later_updates(batch, relevance, int(rw.update_min_shared), rw.asking)

    qe = query.emotion
    norms = np.linalg.norm(batch.emotion, axis=1) * float(np.linalg.norm(qe))
    with np.errstate(invalid="ignore", divide="ignore"):
        emotion_match = np.where(norms > 0, batch.emotion @ qe / norms, 0.0)
        hours = np.maximum(0.0, (t - batch.ts) / 3600.0)
        time_proximity = np.where(np.isnan(hours), 0.0, 1.0 / (1.0 + np.log1p(hours)))
        sev_table = np.array([tables.severity["high"], tables.severity["medium"], tables.severity["low"]])
        severity = sev_table[batch.severity]
        resolved_from = np.where(np.isnan(batch.resolved_at), batch.ts, batch.resolved_at)
        since = np.maximum(0.0, (t - resolved_from) / 3600.0)
        decayed = np.maximum(
            tables.resolution_floor, 1.0 - np.minimum(tables.resolution_cap, since / tables.resolution_decay_hours)
        )
    resolution_gap = np.select(
        [batch.resolution == 0, batch.resolution == 1], [tables.resolution_pending, decayed], tables.resolution_none
    )
    cw = tables.css
    css = (
        cw.emotion_match * emotion_match
        + cw.time_proximity * time_proximity
        + cw.severity * severity
        + cw.resolution_gap * resolution_gap
        + cw.commitment_strength * batch.commitment
    )
    alpha = tables.alpha_base + tables.alpha_cue * query.cue_intensity + (spec.css_boost if spec else 0.0)
    final = relevance * (1.0 + min(alpha, tables.css_bound) * css)
    if factors is not None:
        final = final * factors
        eligible = eligible & (factors > 0)
    final = np.where(eligible, final, -np.inf)
    return PoolScores(
        emotion_match=emotion_match,
        time_proximity=time_proximity,
        severity=severity,
        resolution_gap=resolution_gap,
        commitment_strength=batch.commitment,
        semantic=semantic,
        lexical=lexical,
        person=person,
        entity=entity,
        topic=topic,
        overdue=overdue,
        open_issue=open_issue,
        promise=promise,
        time_match=time_match,
        relevance=relevance,
        absolute=absolute,
        grounded=grounded,
        owned=owned,
        css=css,
        final=final,
        eligible=eligible,
        decisions=tuple(decisions),
        people=people,
    )


def top_indices(scores: PoolScores, k: int, floor: float = 0.0, turn: npt.NDArray[np.int64] | None = None) -> list[int]:
    """Indices of the k best eligible candidates, best first (ties: pool order); with a `floor`,
    only those whose absolute relevance reaches it (the abstain rule: nothing relevant, no cue);
    with `turn` (a turn code per candidate), the best unit of each turn only.
    """
    mask = scores.eligible & (scores.absolute >= floor) if floor > 0 else scores.eligible
    idx = np.flatnonzero(mask)
    if idx.size == 0:
        return []
    order = idx[np.argsort(-scores.final[idx], kind="stable")]
    if turn is None:
        return [int(i) for i in order[:k]]
    out: list[int] = []
    seen: set[int] = set()
    for i in order:
        if int(turn[i]) in seen:
            continue
        seen.add(int(turn[i]))
        out.append(int(i))
        if len(out) == k:
            break
    return out


def replies(batch: CandidateBatch, max_gap_s: float) -> dict[int, int]:
    """Turn code → the code of the turn that replies to it: the next candidate turn of the same session,
    said by the other side within `max_gap_s` (the customer's report → the agent's answer to it)."""
    n = len(batch.payloads)
    if n < 2:
        return {}
    codes = batch.turn if batch.turn is not None else np.arange(n)
    customer = said_by_customer(batch.payloads)
    first: dict[int, int] = {}
    for i in range(n):
        first.setdefault(int(codes[i]), i)
    turns = sorted(first, key=lambda c: (int(batch.session[first[c]]), float(batch.ts[first[c]])))
    out: dict[int, int] = {}
    for a, b in pairwise(turns):
        i, j = first[a], first[b]
        same = batch.session[i] == batch.session[j] and abs(float(batch.ts[j] - batch.ts[i])) <= max_gap_s
        if same and customer[i] != customer[j]:
            out[a] = b
    return out


def keep_retrieved(
    picked: Sequence[int],
    scores: PoolScores,
    cosine: F,
    turn: npt.NDArray[np.int64] | None,
    k: int,
    answered_by: Mapping[int, int] | None = None,
) -> list[int]:
    """At most k cues with plain retrieval as a floor: the eligible turn closest to the question by
    cosine, and every turn that both the cosine and the BM25 ranking put among their first k, are
    among them. The fused ranking keeps the first place; a turn it left out takes the place of the
    last pick that no retriever vouches for (the nearest turn first, then the agreed ones by fused
    score), so neither the cue score nor a label can push out what dense and lexical search both
    rank high. Nothing picked (abstain) stays nothing; evaluation at k > 3 (`top_indices`) is the
    fused ranking alone."""
    out = list(picked)
    if not out:
        return out
    idx = np.flatnonzero(scores.eligible & (scores.relevance > 0))
    if idx.size == 0:
        return out
    codes = turn if turn is not None else np.arange(len(cosine))
    # the first k turns by cosine (with the nearest one's unit), by lexical share, and each turn's best fused unit
    by_cos = idx[np.argsort(-cosine[idx], kind="stable")]
    nearest_unit = int(by_cos[0])
    dense: list[int] = []
    for i in by_cos:
        t = int(codes[i])
        if t not in dense:
            dense.append(t)
        if len(dense) == k:
            break
    lexical = scores.lexical
    with_words = idx[lexical[idx] > 0]
    by_lex = with_words[np.argsort(-lexical[with_words], kind="stable")]
    lexical_top: list[int] = []
    for i in by_lex:
        t = int(codes[i])
        if t not in lexical_top:
            lexical_top.append(t)
        if len(lexical_top) == k:
            break
    agreed = [t for t in dense[:k] if t in lexical_top]
    best: dict[int, int] = {}
    for i in idx[np.argsort(-scores.final[idx], kind="stable")]:
        best.setdefault(int(codes[i]), int(i))
    agreed.sort(key=lambda t: -float(scores.final[best[t]]))
    vouched = list(dict.fromkeys([dense[0], *agreed]))
    present = {int(codes[i]) for i in out}
    replies = answered_by or {}
    for t in vouched:
        if t in present or replies.get(t) in present:
            continue  # there, or the turn that answers it is: the exchange has its place
        unit = nearest_unit if t == dense[0] else best[t]
        if len(out) >= k:
            # the last pick after the first that no retriever vouches for gives its place
            free = [j for j in range(len(out) - 1, 0, -1) if int(codes[out[j]]) not in vouched]
            if not free:
                break
            del out[free[0]]
        out.append(unit)
        present.add(t)
    return out[:k]
