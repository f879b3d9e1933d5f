"""The user's timeline as an incremental index: recall's reads of all of a user's memories, kept
up to date as the memories are written, so that a question costs the memories sharing its words
and the few that take part in resolution, not the whole timeline.

Input: memory payloads as the store writes them (`TimelineIndex.written`, `removed`), and per
question a scope (tenant + user, or tenant + session), the question time and the memories to
leave out. Output: an `IndexedTimeline` (`state.recall.timeline.Timeline`) with the same speakers,
BM25 shares and issue views as a `ScannedTimeline` over the memories the store would return for
`StoreFilter(match=scope, valid_at=now, not_after=now)`. State: per scope, one row per memory
written (its time, end of validity, event, speaker, text and its payload as written, in JSON), the
postings of its tokens (term → rows and counts, for one stopword set) and each row's part in the
resolution pass (`IssueMark`, for one lexicon), computed when first asked for.

Why an index and not the store's own text index: BM25 needs the number of memories, their mean
length and each term's document frequency over the memories *valid at the question time*, which
validity makes a function of that time; Qdrant's full-text index filters but keeps no such
statistics. Here they are one vectorised mask over the scope's rows per question.

Who keeps it: the store handle that owns the data (`sinks/store/qdrant_edge.py`: an embedded
store is locked to one process, so that handle sees every write). A scope is built from the
store on its first question (the owner passes `load`), after a restart or a recovery as well;
from then on each write and delete updates it. An index that has seen the store empty
(`complete=True`: the owner opened an empty store) indexes every user (a memory without a
user: its session) from the first memory on, so a new user's first question reads no store.
At most `max_rows` rows are held; the scopes asked least recently are dropped and rebuilt when
asked again (the first drop ends `complete`: from then on a scope not held is read from the
store as before). One lock serialises writes, builds and the start of each view; a view then
reads rows that are only ever appended to.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from state.recall.lexical import Bm25Stats, bm25_share_rows, tokenize
from state.recall.resolution import IssueMark, IssueView, ResolutionLexicon, issue_mark, settle_marks
from state.recall.timeline import LexicalShares

ScopeKey = tuple[str, str, str]  # (tenant_id, "user_id" | "session_id", value)
Loader = Callable[[Mapping[str, str]], Iterable[tuple[str, Mapping[str, Any]]]]


def instant(value: object) -> float:
    """Epoch seconds of a stored datetime the way the store's datetime filter reads it (no zone:
    UTC); +inf when absent or unreadable (a range on it never matches).

    >>> instant("2025-06-01T09:00:00+00:00") == instant("2025-06-01T09:00:00") == instant("2025-06-01T11:00:00+02:00")
    True
    """
    if isinstance(value, datetime):
        at = value
    else:
        try:
            at = datetime.fromisoformat(str(value))
        except ValueError:
            return math.inf
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return at.timestamp()


def _until(payload: Mapping[str, Any]) -> float:
    """The end of validity: +inf when there is none (such a memory never expires), -inf when unreadable."""
    validity = payload.get("validity")
    end = validity.get("effective_to") if isinstance(validity, Mapping) else None
    if end is None:
        return math.inf
    t = instant(end)
    return -math.inf if math.isinf(t) else t


def scope_keys(payload: Mapping[str, Any]) -> list[ScopeKey]:
    """The scopes a memory belongs to: its tenant's user (when it has one) and its tenant's session."""
    tenant = payload.get("tenant_id")
    if not isinstance(tenant, str):
        return []
    keys: list[ScopeKey] = []
    user = payload.get("user_id")
    if isinstance(user, str):
        keys.append((tenant, "user_id", user))
    session = payload.get("session_id")
    if isinstance(session, str):
        keys.append((tenant, "session_id", session))
    return keys


def scope_key(scope: Mapping[str, str]) -> ScopeKey:
    """The key of a recall scope ({"tenant_id", "user_id"} or {"tenant_id", "session_id"})."""
    field_name = "user_id" if "user_id" in scope else "session_id"
    return (scope["tenant_id"], field_name, scope[field_name])


@dataclass(eq=False, slots=True)
class _Row:
    mid: str
    ts: float
    until: float
    event_id: object
    speaker: str
    # The payload as written, as JSON (~1.6 KB; the same dict as Python objects is ~8 KB): what
    # resolution reads, and what the store's search hands out instead of reading each hit's
    # payload back from the engine (~15 µs a hit there, ~3 µs decoded here).
    blob: bytes

    @classmethod
    def of(cls, mid: str, payload: Mapping[str, Any]) -> _Row:
        return cls(
            mid=mid,
            ts=instant(payload.get("ts")),
            until=_until(payload),
            event_id=payload.get("event_id"),
            speaker=str(payload.get("speaker") or "").lower(),
            blob=orjson.dumps(payload),
        )

    def payload(self) -> dict[str, Any]:
        """A fresh copy of the payload as written."""
        out: dict[str, Any] = orjson.loads(self.blob)
        return out


@dataclass(slots=True)
class _Terms:
    """Postings of the scope's rows for one stopword set: term → rows and counts; each row's length."""

    stopwords: frozenset[str]
    rows: dict[str, list[int]] = field(default_factory=dict)
    counts: dict[str, list[int]] = field(default_factory=dict)
    lengths: list[float] = field(default_factory=list)

    def add(self, row: int, text: str) -> None:
        tokens = tokenize(text, self.stopwords)
        self.lengths.append(float(len(tokens)))
        tf: dict[str, int] = {}
        for tok in tokens:
            tf[tok] = tf.get(tok, 0) + 1
        for tok, c in tf.items():
            self.rows.setdefault(tok, []).append(row)
            self.counts.setdefault(tok, []).append(c)


@dataclass(slots=True)
class _Marks:
    """Each row's part in the resolution pass for one lexicon (None: it plays none), rows [0, upto)."""

    lexicon: ResolutionLexicon
    stopwords: frozenset[str]
    marked: list[tuple[int, IssueMark]] = field(default_factory=list)
    upto: int = 0

    def extend(self, rows: Sequence[_Row], n: int) -> list[tuple[int, IssueMark]]:
        while self.upto < n:
            mark = issue_mark(rows[self.upto].payload(), self.lexicon, self.stopwords)
            if mark is not None:
                self.marked.append((self.upto, mark))
            self.upto += 1
        return self.marked[:]


@dataclass(slots=True)
class _Generation:
    """The rows of a scope between two compactions: only ever appended to (a view holds on to one)."""

    rows: list[_Row] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    alive: list[bool] = field(default_factory=list)
    terms: _Terms | None = None
    marks: _Marks | None = None


class ScopeIndex:
    """One scope's rows; a memory written again gets a new row and its old one is dead."""

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._gen = _Generation()
        self._row_of: dict[str, int] = {}
        self._arrays: tuple[int, npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.bool_]] | None = None

    def __len__(self) -> int:
        return len(self._row_of)

    def ids(self) -> list[str]:
        return list(self._row_of)

    def put(self, mid: str, payload: Mapping[str, Any]) -> int:
        """Write a memory; returns how many live rows it added (0 when it replaced one)."""
        gone = self._kill(mid)
        gen = self._gen
        row = len(gen.rows)
        text = str(payload.get("text", ""))
        gen.rows.append(_Row.of(mid, payload))
        gen.texts.append(text)
        gen.alive.append(True)
        self._row_of[mid] = row
        if gen.terms is not None:
            gen.terms.add(row, text)
        return 1 - gone

    def remove(self, mid: str) -> int:
        """Delete a memory; returns how many live rows went (0 or 1)."""
        return self._kill(mid)

    def payload(self, mid: str) -> dict[str, Any] | None:
        """The memory's payload as last written, None when the scope does not hold it."""
        row = self._row_of.get(mid)
        return None if row is None else self._gen.rows[row].payload()

    def _kill(self, mid: str) -> int:
        row = self._row_of.pop(mid, None)
        if row is None:
            return 0
        self._gen.alive[row] = False
        self._arrays = None
        return 1

    def _compact(self) -> None:
        """A new generation of the live rows; postings and marks are made again on the next question."""
        old = self._gen
        keep = [i for i, alive in enumerate(old.alive) if alive]
        self._gen = _Generation([old.rows[i] for i in keep], [old.texts[i] for i in keep], [True] * len(keep))
        self._row_of = {r.mid: i for i, r in enumerate(self._gen.rows)}
        self._arrays = None

    def view(self, now: datetime, skip: Collection[object], limit: int, stopwords: frozenset[str]) -> IndexedTimeline:
        """The memories valid and said at `now`, the first `limit` by id (as the store's scroll
        returns them), less those of the events in `skip`. Call under the lock."""
        if len(self._gen.rows) > 64 and len(self._row_of) * 2 < len(self._gen.rows):
            self._compact()
        gen = self._gen
        n = len(gen.rows)
        if self._arrays is None or self._arrays[0] != n:
            self._arrays = (
                n,
                np.fromiter((r.ts for r in gen.rows), dtype=np.float64, count=n),
                np.fromiter((r.until for r in gen.rows), dtype=np.float64, count=n),
                np.fromiter(gen.alive, dtype=np.bool_, count=n),
            )
        _, ts, until, alive = self._arrays
        t = instant(now)
        said = _first(alive & (ts <= t), gen.rows, limit)
        valid = _first(alive & (ts <= t) & (until >= t), gen.rows, limit)
        if skip:
            for i in np.flatnonzero(said).tolist():
                if gen.rows[i].event_id in skip:
                    valid[i] = said[i] = False
        if gen.terms is None or gen.terms.stopwords != stopwords:
            gen.terms = _Terms(stopwords)
            for i, text in enumerate(gen.texts):
                gen.terms.add(i, text)
        return IndexedTimeline(self, gen, valid, gen.terms, said)

    def marks(
        self, gen: _Generation, lexicon: ResolutionLexicon, stopwords: frozenset[str], n: int
    ) -> list[tuple[int, IssueMark]]:
        """The rows of `gen` below `n` that take part in resolution, with their part (each computed once)."""
        with self._lock:
            cache = gen.marks
            if cache is None or cache.lexicon is not lexicon or cache.stopwords != stopwords:
                cache = gen.marks = _Marks(lexicon, stopwords)
            return [(i, m) for i, m in cache.extend(gen.rows, n) if i < n]


def _first(mask: npt.NDArray[np.bool_], rows: Sequence[_Row], limit: int) -> npt.NDArray[np.bool_]:
    """The first `limit` rows of the mask by id, as the store's scroll stops at `limit` points in id order."""
    if int(np.count_nonzero(mask)) <= limit:
        return mask
    first = sorted(np.flatnonzero(mask).tolist(), key=lambda i: rows[i].mid)[:limit]
    out = np.zeros(mask.size, dtype=np.bool_)
    out[first] = True
    return out


class IndexedTimeline:
    """One question's view of a scope index (`state.recall.timeline.Timeline`)."""

    def __init__(
        self,
        index: ScopeIndex,
        gen: _Generation,
        valid: npt.NDArray[np.bool_],
        terms: _Terms,
        said: npt.NDArray[np.bool_] | None = None,
    ) -> None:
        self._index = index
        self._said = valid if said is None else said
        self._gen = gen
        self._rows = gen.rows
        self._n = len(valid)
        self._valid = valid
        self._at = np.flatnonzero(valid)
        self._terms = terms

    def __len__(self) -> int:
        return len(self._at)

    def speakers(self) -> set[str]:
        rows = self._rows
        return {rows[i].speaker for i in self._at.tolist()}

    def lexical(self, query_tokens: Sequence[str]) -> LexicalShares:
        rows_ = self._rows
        members = {rows_[i].mid for i in self._at.tolist()}
        terms = list(dict.fromkeys(query_tokens))
        n = len(self._at)
        if not n or not terms:
            return LexicalShares({}, members, n)
        hits = [self._postings(term) for term in terms]
        matched = np.unique(np.concatenate([r for r, _ in hits]))
        if not len(matched):
            return LexicalShares({}, members, n)
        tf = np.zeros((len(matched), len(terms)))
        for j, (rows, counts) in enumerate(hits):
            tf[np.searchsorted(matched, rows), j] = counts
        lengths = np.asarray(self._terms.lengths[: self._n], dtype=np.float64)
        stats = Bm25Stats(n, float(lengths[self._at].mean()), np.array([len(r) for r, _ in hits]))
        shares = bm25_share_rows(tf, lengths[matched], stats)
        positive = {rows_[i].mid: float(v) for i, v in zip(matched.tolist(), shares, strict=True)}
        return LexicalShares(positive, members, n)

    def _postings(self, term: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The rows of this view holding `term`, and how often."""
        rows_list = self._terms.rows.get(term, [])
        counts_list = self._terms.counts.get(term, [])
        k = min(len(rows_list), len(counts_list))  # writes may append while this view reads
        rows = np.asarray(rows_list[:k], dtype=np.int64)
        counts = np.asarray(counts_list[:k], dtype=np.float64)
        keep = rows < self._n
        rows, counts = rows[keep], counts[keep]
        keep = self._valid[rows]
        return rows[keep], counts[keep]

    def issues(self, now: datetime, lexicon: ResolutionLexicon) -> dict[str, IssueView]:
        # Every memory said by `now` takes part, valid or not: a confirmation whose validity ended
        # ("现在用着挺好的", valid for a day) still settled what it answered.
        said, rows = self._said, self._rows
        marks = self._index.marks(self._gen, lexicon, self._terms.stopwords, self._n)
        in_view = [(rows[i].mid, m) for i, m in marks if said[i]]
        in_view.sort(key=lambda x: (x[1].ts, x[1].unit_index, x[0]))
        return settle_marks(in_view, now.timestamp(), lexicon.reopen_min_overlap, lexicon.fulfil_min_overlap)


class TimelineIndex:
    """The per-scope indexes of one store, built on first use from `load` and kept by the writes."""

    def __init__(self, load: Loader, *, max_rows: int = 100_000, complete: bool = False) -> None:
        self._load = load
        self._max_rows = max_rows
        self._scopes: OrderedDict[ScopeKey, ScopeIndex] = OrderedDict()
        self._where: dict[str, set[ScopeKey]] = {}
        self._rows = 0
        # True while every memory of the store went through `written` and no scope was dropped: a
        # scope not held then has no memories, unless it is a session holding memories of a user
        # (those are indexed under their user; the session is read from the store when asked).
        self._complete = complete
        self._partial: set[ScopeKey] = set()
        self.lock = threading.RLock()

    def written(self, points: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
        """Memories written (new or overwritten); call it inside the store write, under `lock`."""
        with self.lock:
            for mid, payload in points:
                keys = scope_keys(payload)
                if self._complete:
                    self._index_new_scope(keys)
                built = {k for k in keys if k in self._scopes}
                for key in self._where.get(mid, set()) - built:
                    self._rows -= self._scopes[key].remove(mid)
                for key in built:
                    self._rows += self._scopes[key].put(mid, payload)
                if built:
                    self._where[mid] = built
                else:
                    self._where.pop(mid, None)
            self._evict()

    def _index_new_scope(self, keys: list[ScopeKey]) -> None:
        """A memory's scope indexed from its first memory on: its user's, else its session's."""
        users = [k for k in keys if k[1] == "user_id"]
        for key in users or keys:
            if key not in self._scopes and key not in self._partial:
                self._scopes[key] = ScopeIndex(self.lock)
        if users:
            self._partial.update(k for k in keys if k[1] == "session_id" and k not in self._scopes)

    def removed(self, ids: Iterable[str]) -> None:
        """Memories deleted; call it inside the store delete, under `lock`."""
        with self.lock:
            for mid in ids:
                for key in self._where.pop(mid, set()):
                    self._rows -= self._scopes[key].remove(mid)

    def view(
        self, scope: Mapping[str, str], now: datetime, skip: Collection[object], limit: int, stopwords: frozenset[str]
    ) -> IndexedTimeline:
        """The scope's timeline at `now` (see `ScopeIndex.view`); builds the scope on its first question."""
        key = scope_key(scope)
        with self.lock:
            index = self._scopes.get(key)
            if index is None:
                index = self._build(key, scope)
            self._scopes.move_to_end(key)
            return index.view(now, skip, limit, stopwords)

    def _build(self, key: ScopeKey, scope: Mapping[str, str]) -> ScopeIndex:
        index = ScopeIndex(self.lock)
        if not self._complete or key in self._partial:  # else: a scope with no memory yet
            for mid, payload in self._load(scope):
                if key in scope_keys(payload):
                    index.put(mid, payload)
                    self._where.setdefault(mid, set()).add(key)
        self._scopes[key] = index
        self._rows += len(index)
        self._evict()
        return index

    def _evict(self) -> None:
        """Drop the scopes asked least recently while more than `max_rows` rows are held."""
        while self._rows > self._max_rows and len(self._scopes) > 1:
            self._complete = False
            self._partial.clear()
            old_key, old = self._scopes.popitem(last=False)
            self._rows -= len(old)
            for mid in old.ids():
                keys = self._where.get(mid)
                if keys is not None:
                    keys.discard(old_key)
                    if not keys:
                        del self._where[mid]

    def payloads(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The payloads, as last written, of the memories among `ids` that an indexed scope holds."""
        out: dict[str, dict[str, Any]] = {}
        with self.lock:
            for mid in ids:
                for key in self._where.get(mid, ()):
                    payload = self._scopes[key].payload(mid)
                    if payload is not None:
                        out[mid] = payload
                        break
        return out

    def scopes(self) -> int:
        return len(self._scopes)
