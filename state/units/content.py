"""Does a piece of text carry content on its own, or is it an acknowledgement, a filler, thanks?

Input: a segment, unit or turn text. Output: a bool. State: none; the phrase list is a data
file (`resources/fillers.yaml`). Used by unit assembly (a content-less segment joins a
neighbour instead of becoming a unit) and by recall (a content-less memory is context, never
a cue on its own).
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from pathlib import Path

import yaml

from schemas.errors import ConfigurationError

FILLERS = Path(__file__).resolve().parent / "resources" / "fillers.yaml"
_NOISE = re.compile(r"[\s\W_]+", re.UNICODE)


@cache
def filler_pattern(path: Path = FILLERS) -> re.Pattern[str]:
    """One alternation of every filler phrase, longest first (read once per path)."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigurationError(f"cannot read filler list {path}: {exc}") from exc
    if not isinstance(doc, dict) or not all(isinstance(v, list) for v in doc.values()):
        raise ConfigurationError(f"filler list {path}: a mapping of language -> list of phrases is required")
    phrases = sorted({str(p).lower() for words in doc.values() for p in words}, key=len, reverse=True)
    latin = [re.escape(p) for p in phrases if p.isascii()]
    other = [re.escape(p) for p in phrases if not p.isascii()]
    parts = [rf"\b(?:{'|'.join(latin)})\b"] if latin else []
    parts += [f"(?:{'|'.join(other)})"] if other else []
    return re.compile("|".join(parts))


@lru_cache(maxsize=100_000)  # recall asks it of every candidate of every question: mostly the same texts
def has_content(text: str, path: Path = FILLERS) -> bool:
    """False when the text is only acknowledgements, fillers, thanks or a bare apology.

    >>> has_content("好的"), has_content("行吧。"), has_content("非常抱歉给您带来不好的体验！")
    (False, False, False)
    >>> has_content("Okay, thanks!"), has_content("两天内发到您的账户。"), has_content("I see Maria's note")
    (False, True, True)
    """
    rest = filler_pattern(path).sub(" ", text.lower())
    return bool(_NOISE.sub("", rest))
