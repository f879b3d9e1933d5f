"""The tagging lexicon as data: load, validate, compile, hot-reload (docs/design.md#tagging).

Input: `state/tagging/resources/tagging.yaml` (or a path from settings). Output: a compiled,
immutable `TagLexicon`. `lexicon_file()` follows the file's edits (state/core/hotfile.py): a
broken file at start raises `ConfigurationError`; a broken edit while running keeps the last
good lexicon and logs the reason, so a typo never stops the flow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from schemas.errors import ConfigurationError
from state.core.hotfile import HotFile

DEFAULT_LEXICON = Path(__file__).resolve().parent / "resources" / "tagging.yaml"
CLASSES: tuple[str, ...] = ("commitment", "clarify", "question", "request", "refuse", "neutral")
EMOTIONS: tuple[str, ...] = ("stress", "certainty", "urgency", "cooperation")
_LANGS = ("zh", "en", "any")


@dataclass(frozen=True, slots=True)
class Cue:
    """One regular expression and what a match adds (intent logits per class, or one emotion weight)."""

    name: str
    lang: str
    regex: re.Pattern[str]
    weights: tuple[float, ...]
    group: str | None = None  # cues of one group overlap: the strongest counts fully, the rest a quarter


@dataclass(frozen=True, slots=True)
class ContextCue:
    """A cue that counts only in reply to another speaker's turn of one of the `after` intents.

    The same words do different things in different places: 好的 / "sure" answering a question
    ("Would you like a window seat?" – "Sure.") takes up what was offered; said out of the blue it
    only acknowledges.
    """

    after: tuple[str, ...]
    cue: Cue


@dataclass(frozen=True, slots=True)
class CueScope:
    """What the words just before a cue's match do to it: negation and intensity adverbs.

    `negation` / `intensity` match at the end of the text before the match (per language). A negated
    cue that lowers the dimension ("not happy", 不开心) is multiplied by `negated_relief` (negative:
    it raises it instead); one that raises it ("not worried") by `negated_raise`. An intensified
    cue ("so angry", 太过分) by `intensified`.
    """

    negation: dict[str, re.Pattern[str]]
    intensity: dict[str, re.Pattern[str]]
    negated_relief: float = 1.0
    negated_raise: float = 1.0
    intensified: float = 1.0


NO_SCOPE = CueScope({}, {})


@dataclass(frozen=True, slots=True)
class EmotionDim:
    base: float
    cues: tuple[Cue, ...]
    valence_neg: float = 0.0  # weight of English negative valence (VADER), stress only
    valence_pos: float = 0.0
    scope: CueScope = NO_SCOPE  # applies to the cues of one language (zh/en), not to `any` (punctuation)
    carry_weight: float = 0.0  # stress only: share of the speaker's running stress in a unit's final stress
    carry_memory: float = 0.5  # how much of the running stress survives each of their turns


@dataclass(frozen=True, slots=True)
class StrengthRule:
    strength: float
    lang: str
    regex: re.Pattern[str]


@dataclass(frozen=True, slots=True)
class Hedge:
    adverbs: dict[str, tuple[str, ...]]
    objects: dict[str, tuple[str, ...]]
    confidence_score: float
    certainty_drop: float
    # The general rule: a hedge marker (应该, 估计, 吧; maybe, I think …) per language.
    markers: dict[str, re.Pattern[str]] = field(default_factory=dict)
    promise: dict[str, re.Pattern[str]] = field(default_factory=dict)  # the shape of an undertaking
    polite: dict[str, re.Pattern[str]] = field(default_factory=dict)  # a real question or a polite request
    marker_confidence: float = 0.45
    marker_max_certainty: float = 0.35
    marker_strength: float = 0.3


@dataclass(frozen=True, slots=True)
class TagLexicon:
    """Everything the rule tagger reads, compiled once per file version."""

    bias: tuple[float, ...]
    context: dict[str, tuple[float, ...]]
    intent_cues: tuple[Cue, ...]
    emotions: tuple[EmotionDim, ...]
    hedge: Hedge
    strength_rules: tuple[StrengthRule, ...]
    apology: dict[str, re.Pattern[str]]
    apology_threshold: float
    role_weights: dict[str, float]
    pause_min_ms: int
    pause_drop: float
    pause_max_drop: float
    unit_cues: dict[str, dict[str, re.Pattern[str]]]
    topics: tuple[tuple[str, re.Pattern[str]], ...]
    version: int = 1
    context_cues: tuple[ContextCue, ...] = ()


def _compile(pattern: object, where: str) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise ConfigurationError(f"{where}: pattern must be a string, got {type(pattern).__name__}")
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ConfigurationError(f"{where}: bad regular expression {pattern!r}: {exc}") from exc


def _lang(value: object, where: str) -> str:
    if value not in _LANGS:
        raise ConfigurationError(f"{where}: lang must be one of {_LANGS}, got {value!r}")
    return str(value)


def _class_vector(mapping: object, where: str) -> tuple[float, ...]:
    if not isinstance(mapping, dict):
        raise ConfigurationError(f"{where}: expected a mapping of class → weight")
    unknown = set(mapping) - set(CLASSES)
    if unknown:
        raise ConfigurationError(f"{where}: unknown intent classes {sorted(unknown)}")
    return tuple(float(mapping.get(c, 0.0)) for c in CLASSES)


def _section(data: dict[str, Any], key: str) -> Any:
    if key not in data:
        raise ConfigurationError(f"tagging lexicon: missing section {key!r}")
    return data[key]


def _scope(spec: object, where: str) -> CueScope:
    if spec is None:
        return NO_SCOPE
    if not isinstance(spec, dict):
        raise ConfigurationError(f"{where}: expected a mapping")

    def by_lang(key: str) -> dict[str, re.Pattern[str]]:
        patterns = spec.get(key, {})
        if not isinstance(patterns, dict):
            raise ConfigurationError(f"{where}.{key}: expected a mapping of language → pattern")
        return {_lang(lang, f"{where}.{key}"): _compile(p, f"{where}.{key}.{lang}") for lang, p in patterns.items()}

    return CueScope(
        negation=by_lang("negation"),
        intensity=by_lang("intensity"),
        negated_relief=float(spec.get("negated_relief", 1.0)),
        negated_raise=float(spec.get("negated_raise", 1.0)),
        intensified=float(spec.get("intensified", 1.0)),
    )


def _context_cue(spec: object, i: int) -> ContextCue:
    if not isinstance(spec, dict):
        raise ConfigurationError(f"intent.context_cues {i}: expected a mapping")
    name = str(spec.get("name", f"context_cue{i}"))
    after = spec.get("after")
    if isinstance(after, str):
        after = [after]
    if not isinstance(after, list) or not after:
        raise ConfigurationError(f"intent.context_cues {name}: `after` must name one or more intents")
    unknown = set(after) - set(CLASSES) - {"start"}
    if unknown:
        raise ConfigurationError(f"intent.context_cues {name}: unknown intents in `after`: {sorted(unknown)}")
    cue = Cue(
        name=name,
        lang=_lang(spec.get("lang", "any"), f"intent.context_cues {name}"),
        regex=_compile(spec.get("pattern"), f"intent.context_cues {name}"),
        weights=_class_vector(spec.get("w", {}), f"intent.context_cues {name}"),
    )
    return ContextCue(tuple(str(a) for a in after), cue)


def _carry(spec: object, where: str) -> tuple[float, float]:
    if spec is None:
        return 0.0, 0.5
    if not isinstance(spec, dict):
        raise ConfigurationError(f"{where}: expected a mapping with weight and memory")
    weight, memory = float(spec.get("weight", 0.0)), float(spec.get("memory", 0.5))
    if not (0.0 <= weight < 1.0 and 0.0 <= memory < 1.0):
        raise ConfigurationError(f"{where}: weight and memory must lie in [0, 1), got {weight}, {memory}")
    return weight, memory


def parse_lexicon(data: object) -> TagLexicon:
    """Validate and compile a parsed YAML document; raises ConfigurationError on any mistake."""
    if not isinstance(data, dict):
        raise ConfigurationError("tagging lexicon: top level must be a mapping")
    intent = _section(data, "intent")
    if tuple(intent.get("classes", CLASSES)) != CLASSES:
        raise ConfigurationError(f"tagging lexicon: intent.classes must be {list(CLASSES)}")
    cues = tuple(
        Cue(
            name=str(c.get("name", f"cue{i}")),
            lang=_lang(c.get("lang", "any"), f"intent cue {i}"),
            regex=_compile(c.get("pattern"), f"intent cue {c.get('name', i)}"),
            weights=_class_vector(c.get("w", {}), f"intent cue {c.get('name', i)}"),
            group=str(c["group"]) if c.get("group") else None,
        )
        for i, c in enumerate(intent.get("cues", []))
    )
    context = {str(k): _class_vector(v, f"intent.context.{k}") for k, v in intent.get("context", {}).items()}
    context_cues = tuple(_context_cue(c, i) for i, c in enumerate(intent.get("context_cues", [])))
    emotion = _section(data, "emotion")
    dims = []
    for dim in EMOTIONS:
        spec = emotion.get(dim)
        if not isinstance(spec, dict):
            raise ConfigurationError(f"tagging lexicon: emotion.{dim} missing")
        dim_cues = tuple(
            Cue(
                f"{dim}{i}",
                _lang(c.get("lang", "any"), f"emotion.{dim} cue {i}"),
                _compile(c.get("pattern"), f"emotion.{dim} cue {i}"),
                (float(c.get("w", 0.0)),),
            )
            for i, c in enumerate(spec.get("cues", []))
        )
        valence = spec.get("valence", {})
        dims.append(
            EmotionDim(
                float(spec.get("base", 0.0)),
                dim_cues,
                float(valence.get("neg", 0.0)),
                float(valence.get("pos", 0.0)),
                _scope(spec.get("scope"), f"emotion.{dim}.scope"),
                *_carry(spec.get("carry"), f"emotion.{dim}.carry"),
            )
        )
    hedge = _section(data, "hedge")
    strength = tuple(
        StrengthRule(
            float(r["strength"]),
            _lang(r.get("lang", "any"), f"strength rule {i}"),
            _compile(r.get("pattern"), f"strength rule {i}"),
        )
        for i, r in enumerate(_section(data, "commitment_strength"))
    )
    apology = _section(data, "apology")
    pause = data.get("asr_pause", {})
    unit_cues = {
        str(kind): {str(lang): _compile(p, f"unit_cues.{kind}.{lang}") for lang, p in by_lang.items()}
        for kind, by_lang in data.get("unit_cues", {}).items()
    }
    topics = tuple(
        (str(t["topic"]), _compile(t.get("pattern"), f"topic {t.get('topic')}")) for t in data.get("topics", [])
    )
    return TagLexicon(
        bias=_class_vector(intent.get("bias", {}), "intent.bias"),
        context=context,
        intent_cues=cues,
        emotions=tuple(dims),
        hedge=Hedge(
            adverbs={k: tuple(v) for k, v in hedge.get("adverbs", {}).items()},
            objects={k: tuple(v) for k, v in hedge.get("objects", {}).items()},
            confidence_score=float(hedge.get("confidence_score", 0.3)),
            certainty_drop=float(hedge.get("certainty_drop", 0.3)),
            markers={str(k): _compile(v, f"hedge.markers.{k}") for k, v in (hedge.get("markers") or {}).items()},
            promise={str(k): _compile(v, f"hedge.promise.{k}") for k, v in (hedge.get("promise") or {}).items()},
            polite={str(k): _compile(v, f"hedge.polite.{k}") for k, v in (hedge.get("polite") or {}).items()},
            marker_confidence=float(hedge.get("marker_confidence", 0.45)),
            marker_max_certainty=float(hedge.get("marker_max_certainty", 0.35)),
            marker_strength=float(hedge.get("marker_strength", 0.3)),
        ),
        strength_rules=strength,
        apology={k: _compile(v, f"apology.{k}") for k, v in apology.items() if k in ("zh", "en")},
        apology_threshold=float(apology.get("stress_threshold", 0.5)),
        role_weights={str(k): float(v) for k, v in data.get("role_weights", {}).items()},
        pause_min_ms=int(pause.get("min_ms", 1000)),
        pause_drop=float(pause.get("drop", 0.15)),
        pause_max_drop=float(pause.get("max_drop", 0.45)),
        unit_cues=unit_cues,
        topics=topics,
        version=int(data.get("version", 1)),
        context_cues=context_cues,
    )


def load_lexicon(path: Path = DEFAULT_LEXICON) -> TagLexicon:
    """Read and compile a lexicon file.

    >>> lex = load_lexicon()
    >>> lex.role_weights["agent"]
    -0.6
    """
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"cannot read tagging lexicon {path}: {exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"tagging lexicon {path} is not valid YAML: {exc}") from exc
    try:
        return parse_lexicon(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ConfigurationError(f"tagging lexicon {path}: {exc}") from exc


def lexicon_file(path: Path = DEFAULT_LEXICON, *, check_every_s: float = 1.0) -> HotFile[TagLexicon]:
    """The lexicon at `path`, following its edits (hot reload)."""
    return HotFile(path, load_lexicon, check_every_s=check_every_s)
