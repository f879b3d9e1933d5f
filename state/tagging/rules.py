"""Lexicon scoring of one clause segment: the cue form of a text, intent logits, the emotion load,
the hedge test and the commitment strength tier.

Stress cues read negation and intensity adverbs just before them; English stress also reads
VADER's valence. Everything here is a pure function of the text and the lexicon
(`state/tagging/resources/tagging.yaml`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from state.tagging.lexicon import EMOTIONS, CueScope, TagLexicon

_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
_APOS = re.compile(r"\s*\\?\s*['’‘`]\s*(?=(?:ll|s|t|re|ve|d|m)\b)", re.IGNORECASE)
_SPACE_PUNCT = re.compile(r"\s+([,.!?;:，。！？；：])")
_SPACES = re.compile(r"\s+")
Vector = npt.NDArray[np.float64]


def cue_text(text: str) -> str:
    """The form cues match against: lower case, straight quotes, no space before punctuation.

    >>> cue_text("I ’ ll be there , sir .")
    "i'll be there, sir."
    """
    text = _APOS.sub("'", text.replace("’", "'").replace("‘", "'"))
    text = _SPACE_PUNCT.sub(r"\1", text)
    return _SPACES.sub(" ", text).strip().lower()


def cue_langs(text: str) -> tuple[str, ...]:
    """The cue languages a text can match: always "any", plus "zh" and/or "en" by script."""
    langs = ["any"]
    if _CJK.search(text):
        langs.append("zh")
    if _LATIN.search(text):
        langs.append("en")
    return tuple(langs)


def softmax(logits: Vector) -> Vector:
    z = logits - logits.max()
    e = np.exp(z)
    return np.asarray(e / e.sum(), dtype=np.float64)


def rule_logits(text: str, lex: TagLexicon, prev_intent: str | None) -> tuple[Vector, tuple[str, ...]]:
    """Lexicon intent logits for one segment, plus the names of the cues that fired."""
    langs = cue_langs(text)
    logits = np.array(lex.bias, dtype=np.float64)
    fired: list[str] = []
    grouped: dict[str, list[tuple[float, ...]]] = {}
    for cue in lex.intent_cues:
        if cue.lang in langs and cue.regex.search(text):
            fired.append(cue.name)
            if cue.group is None:
                logits += cue.weights
            else:
                grouped.setdefault(cue.group, []).append(cue.weights)
    for members in grouped.values():
        w = np.array(members, dtype=np.float64)
        pos = np.clip(w, 0.0, None)
        # Overlapping evidence (a "?" and a "吗" and a "什么"): the strongest counts, the rest a quarter.
        logits += pos.max(axis=0) + 0.25 * (pos.sum(axis=0) - pos.max(axis=0)) + np.clip(w, None, 0.0).sum(axis=0)
    if prev_intent is not None and prev_intent in lex.context:
        logits += lex.context[prev_intent]
        fired.append(f"after_{prev_intent}")
    for ctx in lex.context_cues:
        if prev_intent in ctx.after and ctx.cue.lang in langs and ctx.cue.regex.search(text):
            logits += ctx.cue.weights
            fired.append(ctx.cue.name)
    return logits, tuple(fired)


def rule_emotion(text: str, lex: TagLexicon) -> tuple[tuple[float, float, float, float], tuple[str, ...]]:
    """The lexicon's emotion load for one segment, plus what beyond plain cues moved it.

    Named in the second value (explainability): `stress_negated` / `stress_intensified` when a
    cue sat in the scope of a negation or an intensity adverb, `stress_valence_neg` /
    `stress_valence_pos` when the English valence library (VADER) raised or lowered stress.

    >>> from state.tagging.lexicon import load_lexicon
    >>> (stress, *_), why = rule_emotion("我不开心", load_lexicon())
    >>> stress > rule_emotion("我开心", load_lexicon())[0][0], why
    (True, ('stress_negated',))
    """
    langs = cue_langs(text)
    out = []
    why: list[str] = []
    for name, dim in zip(EMOTIONS, lex.emotions, strict=True):
        value = dim.base
        scoped = {"negated": False, "intensified": False}
        for cue in dim.cues:
            if cue.lang not in langs:
                continue
            first: dict[str, int] = {}
            for m in cue.regex.finditer(text):
                first.setdefault(m.group(0), m.start())
            # Repeated evidence counts, with diminishing returns: 1, 1.5, 2 × the weight.
            for k, start in enumerate(sorted(first.values())[:3]):
                weight, how = _scoped(text, start, cue.lang, cue.weights[0], dim.scope)
                value += weight * (1.0 if k == 0 else 0.5)
                if how is not None:
                    scoped[how] = True
        why.extend(f"{name}_{how}" for how, hit in scoped.items() if hit)
        if (dim.valence_neg or dim.valence_pos) and "en" in langs:
            compound = english_valence(text)
            shift = dim.valence_neg * max(0.0, -compound) - dim.valence_pos * max(0.0, compound)
            value += shift
            if abs(shift) >= _VALENCE_NOTE:
                why.append(f"{name}_valence_{'neg' if shift > 0 else 'pos'}")
        out.append(min(1.0, max(0.0, value)))
    return (out[0], out[1], out[2], out[3]), tuple(why)


_VALENCE_NOTE = 0.02  # a valence shift this large is named among the cues
_SCOPE_CHARS = 24  # how far back negation and intensity patterns read


def _scoped(text: str, start: int, lang: str, weight: float, scope: CueScope) -> tuple[float, str | None]:
    """A cue match's weight after the words just before it: negated, intensified, or as it is."""
    before = text[max(0, start - _SCOPE_CHARS) : start]
    negation = scope.negation.get(lang)
    if negation is not None and negation.search(before):
        factor, how = (scope.negated_relief if weight < 0 else scope.negated_raise), "negated"
    else:
        intensity = scope.intensity.get(lang)
        if intensity is None or not intensity.search(before):
            return weight, None
        factor, how = scope.intensified, "intensified"
    return weight * factor, (how if factor != 1.0 else None)


@lru_cache(maxsize=1)
def _vader() -> Any:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer()


def english_valence(text: str) -> float:
    """VADER compound valence in −1…1 (a lexicon with rules for negation, boosters, caps, "!").

    >>> english_valence("this is terrible") < 0 < english_valence("this is great")
    True
    """
    return float(_vader().polarity_scores(text)["compound"])
