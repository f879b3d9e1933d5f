"""Recall tables: weights and lexicon as data files, parsed into typed records, hot-reloaded.

Input: `resources/recall_weights.yaml` and `resources/recall_lexicon.yaml` (or paths from
settings). Output: one frozen `RecallTables`; `tables_file()` wraps them in a `HotFile`, whose
`get()` after a file changed re-reads it. A file that fails to parse at start
raises `ConfigurationError`; one that fails on a later reload is logged and the previous
tables stay in force (an operator's typo never takes recall down).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from schemas.errors import ConfigurationError
from state.core.hotfile import HotFile

RESOURCES = Path(__file__).resolve().parent / "resources"
DEFAULT_WEIGHTS = RESOURCES / "recall_weights.yaml"
DEFAULT_LEXICON = RESOURCES / "recall_lexicon.yaml"

QUESTION_CLASSES: tuple[str, ...] = ("order", "logistics", "after_sales", "promotion", "account")


@dataclass(frozen=True, slots=True)
class CssWeights:
    emotion_match: float
    time_proximity: float
    severity: float
    resolution_gap: float
    commitment_strength: float


@dataclass(frozen=True, slots=True)
class RelevanceWeights:
    semantic: float
    lexical: float
    neighbour_prev: float
    neighbour_next: float
    neighbour_adjacent: float
    neighbour_max_gap_s: float
    asking: float
    semantic_rank_margin: float
    person: float
    entity: float
    topic: float
    overdue: float
    open_issue: float
    settled_pending: float
    promise: float
    time_match: float
    version_min_overlap: float
    update_min_shared: float
    unmatched_floor: float
    identifier_mismatch: float
    sibling_mismatch: float


@dataclass(frozen=True, slots=True)
class AbstainPolicy:
    """Per embedder: its cosine range mapped to 0-1 (`cosine_low` → 0, `cosine_high` → 1), one range
    for Latin-script questions and one for questions with Chinese characters (a multilingual model's
    cosines run higher in Chinese), and the absolute relevance a cue needs; an uncalibrated embedder
    never abstains."""

    cosine_low: float
    cosine_high: float
    cosine_low_cjk: float
    cosine_high_cjk: float
    min_relevance: float

    def cosine_scale(self, cjk: bool) -> tuple[float, float]:
        return (self.cosine_low_cjk, self.cosine_high_cjk) if cjk else (self.cosine_low, self.cosine_high)


@dataclass(frozen=True, slots=True)
class ValidityPolicy:
    min_confidence: float
    on_verify_failure: str
    verify_failure_factor: float
    fallback_factor: float
    max_cues: int


@dataclass(frozen=True, slots=True)
class ClassSpec:
    name: str
    keywords: tuple[str, ...]
    topics: frozenset[str]
    needs_certainty: bool
    css_boost: float


@dataclass(frozen=True, slots=True)
class CueFamily:
    name: str
    weight: float
    words: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RecallTables:
    css: CssWeights
    severity: Mapping[str, float]
    resolution_pending: float
    resolution_none: float
    resolution_floor: float
    resolution_cap: float
    resolution_decay_hours: float
    relevance: RelevanceWeights
    alpha_base: float
    alpha_cue: float
    css_bound: float
    abstain: Mapping[str, AbstainPolicy]
    validity: ValidityPolicy
    classes: tuple[ClassSpec, ...]
    cues: tuple[CueFamily, ...]

    query_emotion: Mapping[str, tuple[float, float, float, float]]
    statement_markers: tuple[str, ...]
    question_marks: tuple[str, ...]
    statement_min_overlap: float
    not_people: frozenset[str]
    stopwords: frozenset[str]
    focus_handling: tuple[str, ...]
    focus_own: tuple[str, ...]
    focus_current: tuple[str, ...]
    focus_information: tuple[str, ...]
    open_referents: tuple[str, ...]
    back_references: tuple[str, ...]
    general_terms: frozenset[str]
    kin: Mapping[str, str]  # a kin word → its group ("我爸", "dad" → father): state/recall/siblings.py

    def abstain_for(self, embedder: str) -> AbstainPolicy:
        """The embedder's calibration, else `default`."""
        return self.abstain.get(embedder) or self.abstain["default"]


def _num(section: Mapping[str, Any], key: str, where: str, lo: float = 0.0, hi: float = float("inf")) -> float:
    try:
        value = float(section[key])
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigurationError(f"{where}.{key}: a number is required") from exc
    if not lo <= value <= hi:
        raise ConfigurationError(f"{where}.{key}={value} is outside [{lo}, {hi}]")
    return value


def _section(doc: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = doc.get(key)
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"{where}: section {key!r} is missing or not a mapping")
    return value


def _words(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(w, str) for w in value):
        raise ConfigurationError(f"{where}: a list of strings is required")
    return tuple(value)


def _abstain(doc: Mapping[str, Any]) -> dict[str, AbstainPolicy]:
    out: dict[str, AbstainPolicy] = {}
    for name, spec in doc.items():
        if not isinstance(spec, Mapping):
            raise ConfigurationError(f"weights.abstain.{name}: a mapping is required")
        where = f"weights.abstain.{name}"
        low, high = _num(spec, "cosine_low", where, -1.0, 1.0), _num(spec, "cosine_high", where, -1.0, 1.0)
        out[str(name)] = AbstainPolicy(
            low,
            high,
            _num(spec, "cosine_low_cjk", where, -1.0, 1.0) if "cosine_low_cjk" in spec else low,
            _num(spec, "cosine_high_cjk", where, -1.0, 1.0) if "cosine_high_cjk" in spec else high,
            _num(spec, "min_relevance", where, 0.0, 1.0),
        )
    if "default" not in out:
        raise ConfigurationError("weights.abstain: a 'default' entry is required")
    return out


def parse_tables(weights: Mapping[str, Any], lexicon: Mapping[str, Any]) -> RecallTables:
    """Validate the two documents and build `RecallTables`; ConfigurationError names the bad key."""
    css = _section(weights, "css", "weights")
    sev = _section(weights, "severity", "weights")
    res = _section(weights, "resolution_gap", "weights")
    rel = _section(weights, "relevance", "weights")
    blend = _section(weights, "blend", "weights")
    val = _section(weights, "validity", "weights")
    on_fail = val.get("on_verify_failure")
    if on_fail not in ("downweight", "drop"):
        raise ConfigurationError(f"weights.validity.on_verify_failure must be downweight or drop, not {on_fail!r}")
    classes_doc = _section(lexicon, "classes", "lexicon")
    unknown = set(classes_doc) - set(QUESTION_CLASSES)
    if unknown:
        raise ConfigurationError(f"lexicon.classes: unknown question classes {sorted(unknown)}")
    classes = tuple(
        ClassSpec(
            name=name,
            keywords=tuple(w.lower() for w in _words(spec.get("keywords"), f"lexicon.classes.{name}.keywords")),
            topics=frozenset(_words(spec.get("topics"), f"lexicon.classes.{name}.topics")),
            needs_certainty=bool(spec.get("needs_certainty", False)),
            css_boost=_num(spec, "css_boost", f"lexicon.classes.{name}", 0.0, 2.0) if "css_boost" in spec else 0.0,
        )
        for name, spec in classes_doc.items()
    )
    cues_doc = _section(lexicon, "cues", "lexicon")
    cues = tuple(
        CueFamily(
            name,
            _num(spec, "weight", f"lexicon.cues.{name}", 0.0, 1.0),
            tuple(w.lower() for w in _words(spec.get("words"), f"lexicon.cues.{name}.words")),
        )
        for name, spec in cues_doc.items()
    )
    emo_doc = _section(lexicon, "query_emotion", "lexicon")
    query_emotion: dict[str, tuple[float, float, float, float]] = {}
    for name, vec in emo_doc.items():
        if not isinstance(vec, list) or len(vec) != 4:
            raise ConfigurationError(f"lexicon.query_emotion.{name}: four numbers are required")
        query_emotion[name] = (float(vec[0]), float(vec[1]), float(vec[2]), float(vec[3]))
    if "neutral" not in query_emotion:
        raise ConfigurationError("lexicon.query_emotion: a 'neutral' vector is required")
    stm = _section(lexicon, "statements", "lexicon")
    stop = _section(lexicon, "stopwords", "lexicon")
    focus = _section(lexicon, "focus", "lexicon")
    return RecallTables(
        css=CssWeights(**{k: _num(css, k, "weights.css", 0.0, 1.0) for k in CssWeights.__slots__}),
        severity={k: _num(sev, k, "weights.severity", 0.0, 1.0) for k in ("high", "medium", "low")},
        resolution_pending=_num(res, "pending", "weights.resolution_gap", 0.0, 1.0),
        resolution_none=_num(res, "none", "weights.resolution_gap", 0.0, 1.0),
        resolution_floor=_num(res, "floor", "weights.resolution_gap", 0.0, 1.0),
        resolution_cap=_num(res, "cap", "weights.resolution_gap", 0.0, 1.0),
        resolution_decay_hours=_num(res, "decay_hours", "weights.resolution_gap", 1e-9),
        relevance=RelevanceWeights(**{k: _num(rel, k, "weights.relevance") for k in RelevanceWeights.__slots__}),
        alpha_base=_num(blend, "alpha_base", "weights.blend"),
        alpha_cue=_num(blend, "alpha_cue", "weights.blend"),
        css_bound=_num(blend, "css_bound", "weights.blend", 0.0, 2.0),
        abstain=_abstain(_section(weights, "abstain", "weights")),
        validity=ValidityPolicy(
            min_confidence=_num(val, "min_confidence", "weights.validity", 0.0, 1.0),
            on_verify_failure=str(on_fail),
            verify_failure_factor=_num(val, "verify_failure_factor", "weights.validity", 0.0, 1.0),
            fallback_factor=_num(val, "fallback_factor", "weights.validity", 0.0, 1.0),
            max_cues=int(_num(val, "max_cues", "weights.validity", 1, 3)),
        ),
        classes=classes,
        cues=cues,
        query_emotion=query_emotion,
        statement_markers=tuple(w.lower() for w in _words(stm.get("markers"), "lexicon.statements.markers")),
        question_marks=_words(stm.get("question_marks"), "lexicon.statements.question_marks"),
        statement_min_overlap=_num(stm, "min_overlap", "lexicon.statements", 0.0, 1.0),
        not_people=frozenset(_words(lexicon.get("not_people", []), "lexicon.not_people")),
        stopwords=frozenset(w for lang in stop.values() for w in _words(lang, "lexicon.stopwords")),
        focus_handling=tuple(w.lower() for w in _words(focus.get("handling"), "lexicon.focus.handling")),
        focus_own=tuple(w.lower() for w in _words(focus.get("own"), "lexicon.focus.own")),
        focus_current=tuple(w.lower() for w in _words(focus.get("current"), "lexicon.focus.current")),
        focus_information=tuple(w.lower() for w in _words(focus.get("information"), "lexicon.focus.information")),
        open_referents=tuple(w.lower() for w in _words(lexicon.get("open_referents"), "lexicon.open_referents")),
        back_references=tuple(w.lower() for w in _words(lexicon.get("back_references"), "lexicon.back_references")),
        general_terms=frozenset(
            w.lower()
            for lang in _section(lexicon, "general_terms", "lexicon").values()
            for w in _words(lang, "lexicon.general_terms")
        ),
        kin=MappingProxyType(
            {
                w.lower(): group
                for group, words in _section(lexicon, "kin_groups", "lexicon").items()
                for w in _words(words, f"lexicon.kin_groups.{group}")
            }
        ),
    )


def _read_yaml(path: Path) -> Mapping[str, Any]:
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigurationError(f"cannot read recall table {path}: {exc}") from exc
    if not isinstance(doc, Mapping):
        raise ConfigurationError(f"recall table {path} is not a mapping")
    return doc


def load_tables(weights_path: Path = DEFAULT_WEIGHTS, lexicon_path: Path = DEFAULT_LEXICON) -> RecallTables:
    """Read and validate both files once.

    >>> load_tables().css.emotion_match
    0.4
    """
    return parse_tables(_read_yaml(weights_path), _read_yaml(lexicon_path))


def tables_file(
    weights_path: Path = DEFAULT_WEIGHTS, lexicon_path: Path = DEFAULT_LEXICON, *, check_every_s: float = 0.0
) -> HotFile[RecallTables]:
    """The current `RecallTables`, re-read when either file changes (checked on every `get` by default).

    >>> tables_file().get().validity.on_verify_failure
    'downweight'
    """
    return HotFile((weights_path, lexicon_path), load_tables, check_every_s=check_every_s)
