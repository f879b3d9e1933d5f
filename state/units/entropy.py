"""Entropy windows over neighbouring segments and the unit cut (docs/design.md#entropy): pure functions.

Each clause segment gets an entropy in 0–1 from two sources, mixed by `state/units/resources/entropy.yaml`:
* novelty: the mean cosine distance to its neighbours in a window of 3 (previous, itself, next),
  which for unit vectors is half the window's variance about the segment, mapped to 0–1 by a
  per-embedder calibration band (e5 cosines run high, so its band is narrow);
* salience: what the tagger read (a request, a refusal, a question, stress or urgency is a
  surprise; smalltalk and status updates are not).
Upstream notes (the term/authority filter's `Turn.sentence_*`) win: an override (a short sentence with a whitelisted
term → 0.1) skips the computation; an authority sentence gets at least `priority_floor` and is
never merged. High-entropy segments become atomic units, runs of low-entropy segments merge.

A turn's last segment has no next neighbour by default (`lookahead` 0: nothing waits for the
session's next turn). With a `lookahead` > 0 the next turn's first segment is that neighbour, so a
turn is held: `EntropyState` keeps the held turn and its vectors, and the last released
segment's vector (the previous neighbour of the next turn). `advance` releases the held turn when
the next turn arrives (using it as neighbour only when it is within `lookahead` of event time),
`flush` releases it without one (timer, end of input, session end).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import yaml

from schemas.errors import ConfigurationError
from state.normalise.segments import SegmentTags, UnitSpan
from state.normalise.turn import Turn
from state.tagging.lexicon import CLASSES

DEFAULT_ENTROPY_TABLE = Path(__file__).resolve().parent / "resources" / "entropy.yaml"
Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class EntropyTable:
    """The data file, parsed: calibration bands and mixing weights."""

    calibration: dict[str, tuple[float, float]]
    salience_weight: float
    novelty_weight: float
    salience: tuple[float, ...]
    smalltalk_factor: float
    status_factor: float
    emotion_boost: float
    no_neighbour_novelty: float
    atomic_threshold: float
    priority_floor: float

    def band(self, embedder_name: str) -> tuple[float, float]:
        return self.calibration.get(embedder_name, self.calibration["default"])


def parse_entropy_table(data: Any) -> EntropyTable:
    if not isinstance(data, dict):
        raise ConfigurationError("entropy table: top level must be a mapping")
    try:
        calibration = {str(k): (float(v["lo"]), float(v["hi"])) for k, v in data["calibration"].items()}
        sal = data["salience"]
        table = EntropyTable(
            calibration=calibration,
            salience_weight=float(data["salience_weight"]),
            novelty_weight=float(data["novelty_weight"]),
            salience=tuple(float(sal[c]) for c in CLASSES),
            smalltalk_factor=float(data.get("smalltalk_factor", 0.2)),
            status_factor=float(data.get("status_factor", 0.4)),
            emotion_boost=float(data.get("emotion_boost", 0.4)),
            no_neighbour_novelty=float(data.get("no_neighbour_novelty", 0.5)),
            atomic_threshold=float(data["atomic_threshold"]),
            priority_floor=float(data.get("priority_floor", 0.5)),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ConfigurationError(f"entropy table: {exc!r}") from exc
    if "default" not in calibration:
        raise ConfigurationError("entropy table: calibration needs a 'default' band")
    if any(hi <= lo for lo, hi in calibration.values()):
        raise ConfigurationError("entropy table: every calibration band needs lo < hi")
    return table


def load_entropy_table(path: Path = DEFAULT_ENTROPY_TABLE) -> EntropyTable:
    """Read the entropy table.

    >>> load_entropy_table().atomic_threshold
    0.45
    """
    try:
        return parse_entropy_table(yaml.safe_load(path.read_text(encoding="utf-8")))
    except OSError as exc:
        raise ConfigurationError(f"cannot read entropy table {path}: {exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"entropy table {path} is not valid YAML: {exc}") from exc


@dataclass(frozen=True, slots=True)
class EntropyConfig:
    lookahead: timedelta = timedelta(0)  # event-time gap within which the next turn is a neighbour (0: none)
    embedder_name: str = "default"


def novelty(vectors: Matrix, prev: Matrix | None, nxt: Matrix | None) -> npt.NDArray[np.float64]:
    """Mean cosine distance of each row to its neighbours (window 3); NaN where a row has none.

    >>> v = np.eye(3, dtype=np.float32)
    >>> novelty(v, None, None).round(2).tolist()
    [1.0, 1.0, 1.0]
    """
    n = len(vectors)
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    rows: list[Matrix] = []
    if prev is not None:
        rows.append(prev.reshape(1, -1))
    rows.append(vectors)
    if nxt is not None:
        rows.append(nxt.reshape(1, -1))
    seq = np.vstack(rows).astype(np.float64)
    offset = 1 if prev is not None else 0
    # Distance between consecutive rows of the sequence: 1 − cos (vectors are unit length).
    step = (1.0 - np.einsum("ij,ij->i", seq[:-1], seq[1:])).tolist()
    out = np.full(n, np.nan)
    for i in range(n):  # a few segments a turn: plain floats, numpy's per-call overhead dominates here
        j = i + offset
        dists = []
        if j > 0:
            dists.append(step[j - 1])
        if j < len(seq) - 1:
            dists.append(step[j])
        if dists:
            out[i] = min(max(sum(dists) / len(dists), 0.0), 2.0)
    return out


def salience(tags: SegmentTags, table: EntropyTable) -> float:
    """How much the tagger found in a segment, 0–1."""
    if len(tags.intent) != len(CLASSES):
        return 0.5
    # Mostly the salience of what the segment was read as, partly the expectation under doubt.
    expected = float(np.dot(tags.intent, table.salience))
    value = 0.7 * table.salience[CLASSES.index(tags.label)] + 0.3 * expected
    if tags.kind == "smalltalk":
        value *= table.smalltalk_factor
    elif tags.kind == "status_update":
        value *= table.status_factor
    value += table.emotion_boost * max(0.0, max(tags.stress, tags.urgency) - 0.5)
    return value


def segment_entropy(
    turn: Turn, vectors: Matrix, prev: Matrix | None, nxt: Matrix | None, table: EntropyTable, embedder_name: str
) -> tuple[float, ...]:
    """Entropy of each segment of a tagged turn, with upstream overrides and priority floors applied."""
    lo, hi = table.band(embedder_name)
    raw = novelty(vectors, prev, nxt).tolist()
    out = []
    for i, seg in enumerate(turn.segments):
        override = _note(turn.sentence_entropy_override, seg.sentence, None)
        if override is not None:
            value = float(override)
        else:
            r = raw[i]
            nov = table.no_neighbour_novelty if math.isnan(r) else min(max((r - lo) / (hi - lo), 0.0), 1.0)
            sal = salience(turn.tags[i], table) if i < len(turn.tags) else 0.5
            value = table.salience_weight * sal + table.novelty_weight * nov
        if _note(turn.sentence_priority, seg.sentence, False):
            value = max(value, table.priority_floor)
        out.append(min(max(float(value), 0.0), 1.0))
    return tuple(out)


def _note(values: tuple[Any, ...], index: int, default: Any) -> Any:
    return values[index] if 0 <= index < len(values) else default


def cut_units(turn: Turn, entropy: tuple[float, ...], table: EntropyTable) -> tuple[UnitSpan, ...]:
    """Atomic units for high-entropy or priority segments; consecutive low-entropy segments merge.

    >>> from state.normalise.segments import Segment
    >>> t = _example_turn(4)
    >>> [(u.first, u.last, u.atomic) for u in cut_units(t, (0.1, 0.8, 0.2, 0.1), load_entropy_table())]
    [(0, 0, False), (1, 1, True), (2, 3, False)]
    """
    units: list[UnitSpan] = []
    run_start: int | None = None
    for i, seg in enumerate(turn.segments):
        priority = bool(_note(turn.sentence_priority, seg.sentence, False))
        if priority or entropy[i] >= table.atomic_threshold:
            if run_start is not None:
                units.append(UnitSpan(run_start, i - 1, atomic=False))
                run_start = None
            units.append(UnitSpan(i, i, atomic=True, priority=priority))
        elif run_start is None:
            run_start = i
    if run_start is not None:
        units.append(UnitSpan(run_start, len(turn.segments) - 1, atomic=False))
    return tuple(units)


def needs_lookahead(turn: Turn) -> bool:
    """Whether the last segment's entropy depends on the next turn (no override, not priority)."""
    if not turn.segments:
        return False
    last = turn.segments[-1].sentence
    return _note(turn.sentence_entropy_override, last, None) is None and not _note(turn.sentence_priority, last, False)


@dataclass(frozen=True)
class EntropyState:
    """Per-session lookahead state; pickles (numpy arrays and frozen records only)."""

    held: Turn | None = None
    held_vectors: Matrix | None = None
    held_prev: Matrix | None = None
    last_vector: Matrix | None = field(default=None)


def finalize(
    turn: Turn, vectors: Matrix, prev: Matrix | None, nxt: Matrix | None, table: EntropyTable, config: EntropyConfig
) -> Turn:
    """The turn with its segment entropies and unit cut filled."""
    entropy = segment_entropy(turn, vectors, prev, nxt, table, config.embedder_name)
    return replace(turn, segment_entropy=entropy, unit_cut=cut_units(turn, entropy, table))


def advance(
    state: EntropyState | None,
    turn: Turn,
    vectors: Matrix,
    table: EntropyTable,
    config: EntropyConfig,
) -> tuple[EntropyState, list[Turn]]:
    """Fold one tagged turn in: release the held turn (with this one as its next neighbour when
    close enough in event time), then hold or release this one."""
    state = state or EntropyState()
    out: list[Turn] = []
    prev = state.last_vector
    if state.held is not None and state.held_vectors is not None:
        close = turn.event.ts - state.held.event.ts <= config.lookahead and len(vectors) > 0
        nxt = vectors[0] if close else None
        out.append(finalize(state.held, state.held_vectors, state.held_prev, nxt, table, config))
        prev = state.held_vectors[-1] if len(state.held_vectors) else prev
    if len(vectors) == 0:
        out.append(finalize(turn, vectors, None, None, table, config))
        return EntropyState(last_vector=prev), out
    if needs_lookahead(turn) and config.lookahead > timedelta(0):
        return EntropyState(held=turn, held_vectors=vectors, held_prev=prev, last_vector=prev), out
    out.append(finalize(turn, vectors, prev, None, table, config))
    return EntropyState(last_vector=vectors[-1]), out


def flush(state: EntropyState | None, table: EntropyTable, config: EntropyConfig) -> tuple[EntropyState, list[Turn]]:
    """Release the held turn without a next neighbour (timer fired, input ended, session closed)."""
    if state is None or state.held is None or state.held_vectors is None:
        return state or EntropyState(), []
    turn = finalize(state.held, state.held_vectors, state.held_prev, None, table, config)
    last = state.held_vectors[-1] if len(state.held_vectors) else state.last_vector
    return EntropyState(last_vector=last), [turn]


def _example_turn(n: int) -> Turn:
    """A tiny turn with `n` segments, for doctests."""
    from datetime import UTC, datetime

    from schemas.events import ConversationEvent
    from state.core.language import Sentence
    from state.normalise.segments import Segment

    text = "。".join(f"句{i}" for i in range(n))
    ev = ConversationEvent(event_id="e", session_id="s", ts=datetime(2026, 1, 1, tzinfo=UTC), text=text)
    segs = tuple(Segment(f"句{i}", 3 * i, 3 * i + 2, i) for i in range(n))
    sents = tuple(Sentence(s.text, s.start, s.end) for s in segs)
    return Turn(event=ev, lang="zh", text=text, sentences=sents, times=(), segments=segs)
